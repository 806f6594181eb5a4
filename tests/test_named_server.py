"""A prompt that names an MCP server (resolver/_offline.py, `_prefer_named`): the named
server's tools outrank other servers' tools that match the same words, and a tool the prompt
asks for with words of its own keeps its score."""

from __future__ import annotations

import asyncio

import pytest

import resolver._offline as offline
from resolver import Resolution, Resolver, ResolverConfig, ToolInfo, TurnRequest
from resolver._surface import default_surface

OTHER_JOBS = ["screenshot", "evaluate", "hover", "select", "pdf", "upload", "drag", "wait"]
"""Each browser server has a dozen tools, as real ones do: its name is a common word among them."""

TOOLS = [
    ToolInfo(name="puppeteer__click", description="Click an element"),
    ToolInfo(name="puppeteer__fill", description="Fill out an input field"),
    ToolInfo(name="puppeteer__navigate", description="Navigate to a URL"),
    *(ToolInfo(name=f"puppeteer__{job}", description=f"Browser {job}") for job in OTHER_JOBS),
    ToolInfo(
        name="devtools__click",
        description="Clicks on the provided element of the page, such as a button or a link",
    ),
    ToolInfo(
        name="devtools__fill_form",
        description="Fill out the form: type into several input fields, then click its button",
    ),
    ToolInfo(
        name="devtools__navigate_page",
        description="Navigate the currently selected page to a URL, or go back and forward",
    ),
    *(ToolInfo(name=f"devtools__{job}", description=f"Page {job}") for job in OTHER_JOBS),
    ToolInfo(name="graph__add_observations", description="Remember new facts about people"),
    ToolInfo(name="chat__post_message", description="Post a message to a chat channel"),
    ToolInfo(name="chat__list_users", description="List the users of the chat workspace"),
]


def scores_of(prompt: str, tools: list[ToolInfo] = TOOLS) -> dict[str, float]:
    config = ResolverConfig(catalogOverridesFile=None, keywordCacheFile=None, coreTools=[])
    res = asyncio.run(Resolver(config).resolve(TurnRequest(prompt=prompt, tools=tools)))
    return {c.name: c.score for c in res.candidates}


@pytest.fixture
def off(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(offline, "NAMED_SERVER_OTHERS", 1.0)


def ranking(scores: dict[str, float]) -> list[str]:
    return sorted(scores, key=lambda name: (-scores[name], name))


PROMPT = "with puppeteer, fill out the form fields and click the button"


def test_the_named_servers_tools_outrank_another_servers_tool_for_the_same_words() -> None:
    assert ranking(scores_of(PROMPT))[:3] == [
        "puppeteer__fill",
        "puppeteer__click",
        "devtools__fill_form",
    ]


def test_without_the_preference_the_other_servers_richer_text_comes_second(off: None) -> None:
    """What the preference changes: the other server's description matches more words."""
    assert ranking(scores_of(PROMPT))[:2] == ["puppeteer__fill", "devtools__fill_form"]


def test_only_the_shared_words_evidence_is_discounted(monkeypatch: pytest.MonkeyPatch) -> None:
    """devtools__fill_form also matches "form" and "button", which no puppeteer tool has: it
    keeps that part of its score, so it loses less than half."""
    preferred = scores_of(PROMPT)["devtools__fill_form"]
    monkeypatch.setattr(offline, "NAMED_SERVER_OTHERS", 1.0)
    plain = scores_of(PROMPT)["devtools__fill_form"]
    assert plain * 0.5 < preferred < plain * 0.9


def test_other_tools_keep_the_evidence_of_their_own_words() -> None:
    """ "remember" and "facts" are the graph server's words only: naming the chat server costs
    it nothing."""
    prompt = "remember the facts that Ana's team chats on the chat server now"
    named = scores_of(prompt)
    assert named["graph__add_observations"] > 0.0
    unnamed = scores_of(prompt.replace("chat server", "other place"))
    assert named["graph__add_observations"] == pytest.approx(unnamed["graph__add_observations"])


def test_a_prompt_naming_no_server_is_scored_as_before(monkeypatch: pytest.MonkeyPatch) -> None:
    prompt = "fill out the form fields and click the button"
    preferred = scores_of(prompt)
    monkeypatch.setattr(offline, "NAMED_SERVER_OTHERS", 1.0)
    assert scores_of(prompt) == preferred


def test_two_named_servers_keep_each_others_tools(monkeypatch: pytest.MonkeyPatch) -> None:
    prompt = "with puppeteer fill out the field, then with devtools click the button"
    preferred = scores_of(prompt)
    monkeypatch.setattr(offline, "NAMED_SERVER_OTHERS", 1.0)
    assert scores_of(prompt) == preferred


def test_core_tools_keep_their_scores(monkeypatch: pytest.MonkeyPatch) -> None:
    tools = [*TOOLS, ToolInfo(name="browser", description="Click and fill in a web page")]
    config = ResolverConfig(catalogOverridesFile=None, keywordCacheFile=None, coreTools=["browser"])

    def browser_score() -> float:
        res = asyncio.run(Resolver(config).resolve(TurnRequest(prompt=PROMPT, tools=tools)))
        return next(c.score for c in res.candidates if c.name == "browser")

    preferred = browser_score()
    monkeypatch.setattr(offline, "NAMED_SERVER_OTHERS", 1.0)
    assert browser_score() == preferred > 0.0


def clause_lists(prompt: str) -> list[list[str]]:
    resolver = Resolver(ResolverConfig(catalogOverridesFile=None, keywordCacheFile=None))
    prepared = resolver._prepare(TOOLS)
    classifier = offline.OfflineClassifier()
    index = classifier._index_for(prepared.described, prepared.catalog, prepared.params)
    named = offline._named_families(index, prompt)
    return classifier._segment_lists(index, prompt, named=named)


CLAUSED = "with puppeteer open the shop, then navigate to the cart page"


def test_each_clause_prefers_the_named_servers_tools() -> None:
    """The second clause does not say the server's name; the prompt does, and the clause's
    picks follow it as the whole prompt's ranking does."""
    assert clause_lists(CLAUSED)[1] == ["puppeteer__navigate", "devtools__navigate_page"]


def test_without_the_preference_a_clause_picks_the_look_alike_first(off: None) -> None:
    assert clause_lists(CLAUSED)[1] == ["devtools__navigate_page", "puppeteer__navigate"]


THINKING = ToolInfo(
    name="sequential-thinking__sequentialthinking",
    description="A detailed tool for dynamic and reflective problem-solving through thoughts.",
)
"""The one tool of its server, as the reference sequential-thinking MCP server has it."""


def named_servers(prompt: str, *, single: bool = False) -> set[str]:
    """The servers `_named_families` reads in `prompt` (one-tool servers too with `single`, as
    the conversation heads' yield reads them)."""
    resolver = Resolver(ResolverConfig(catalogOverridesFile=None, keywordCacheFile=None))
    tools = [
        *TOOLS,
        ToolInfo(name="slack__post_message", description="Post a message"),
        ToolInfo(name="slack__list_channels", description="List the channels"),
        THINKING,
    ]
    prepared = resolver._prepare(tools)
    index = offline.OfflineClassifier()._index_for(
        prepared.described, prepared.catalog, prepared.params
    )
    return {
        index.names[members[0]].partition("__")[0]
        for members in offline._named_families(index, prompt, single=single)
    }


@pytest.mark.parametrize(
    ("prompt", "server"),
    [
        ("pls ping the deployments channel on slak", "slack"),  # a letter left out
        ("post it on slackk", "slack"),  # one added
        ("with puppeteer open the shop", "puppeteer"),
        ("with pupeteer open the shop", "puppeteer"),
        ("post it on slcak", "slack"),  # two swapped
    ],
)
def test_a_mistyped_server_name_still_names_it(prompt: str, server: str) -> None:
    assert named_servers(prompt) == {server}


@pytest.mark.parametrize(
    "prompt",
    [
        "the stack trace of the crash",  # a letter replaced: a word of its own
        "show me the chat log",  # "chat" is shorter than MIN_SERVER_TYPO_LENGTH: as written only
        "with devtools open the page",
    ],
)
def test_a_word_one_replaced_letter_away_names_no_server(prompt: str) -> None:
    assert not named_servers(prompt) - {"devtools", "chat"}
    assert "slack" not in named_servers(prompt)


def test_mistyped_names_switched_off(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(offline, "SERVER_TYPOS", False)
    assert named_servers("pls ping the deployments channel on slak") == set()


def test_a_one_tool_server_is_named_for_the_heads_yield_only() -> None:
    prompt = "think it through with sequential thinking"
    assert named_servers(prompt, single=True) == {"sequential-thinking"}
    assert named_servers(prompt) == set()  # not for the preference and the server's picks


FETCH = ToolInfo(
    name="fetch__fetch",
    description="Fetches a URL from the internet and optionally extracts its contents as markdown.",
)
"""The one tool of the reference fetch MCP server: its server is named by a plain word."""


def test_a_one_tool_servers_plain_word_name_does_not_drop_the_tools_that_word_matches() -> None:
    """ "fetch" names the fetch server, but the built-in fetch tools the same word matches keep
    their evidence: the named server's preference is for servers of two or more tools."""
    tools = [*default_surface(), FETCH]
    resolver = Resolver(ResolverConfig(catalogOverridesFile=None, keywordCacheFile=None))
    res = asyncio.run(
        resolver.resolve(
            TurnRequest(prompt="can you fetch the latest release notes of react", tools=tools)
        )
    )
    assert {"fetch__fetch", "web_fetch"} <= set(res.tools_allow or [])


def test_naming_a_one_tool_server_keeps_its_tool_on_a_turn_the_head_calls_conversation(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """ "Explain step by step ..." is conversation (core tools only); said with a server's name,
    it asks for that server's only tool. The yield to tools without catalog keywords is off, so
    the server's name is what keeps it (on a large MCP surface a catalogued tool that matches
    another word often leads, and that yield does not apply)."""
    monkeypatch.setattr(offline, "HEAD_YIELDS_TO_UNLISTED", False)
    tools = [*default_surface(), THINKING]
    resolver = Resolver(ResolverConfig(catalogOverridesFile=None, keywordCacheFile=None))

    def resolve(prompt: str) -> Resolution:
        return asyncio.run(resolver.resolve(TurnRequest(prompt=prompt, tools=tools)))

    asked = "explain step by step how to split the costs of a shared flat fairly"
    assert "conversation_core_only" in resolve(asked).reason_codes
    named = resolve(f"with sequential thinking, {asked}")
    assert "conversation_core_only" not in named.reason_codes
    assert THINKING.name in (named.tools_allow or [])
