"""Conversation markers that take a topic ("thanks for ...", "write a limerick about ...",
"explain ...", "tips for ..."; the catalog's ``conversation.topical``): their clause needs no
tool however long its topic, unless the rest asks for one (`OfflineClassifier._asks_nothing`)."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import pytest

import resolver._offline as offline
from resolver import Resolver, ResolverConfig, TurnRequest
from resolver._surface import default_surface

CHAT = [
    "write me a limerick about a grumpy penguin who hates the cold",
    "sorry for rambling so much about my weekend plans",
    "any tips for keeping sourdough starter alive while I travel?",
    "explain how compound interest works for a monthly savings plan",
    "给我解释一下黑洞是怎么形成的",
    "猫についての短い物語を書いて",
]

TASKS = [
    # a second request after the topic
    ("write a haiku about autumn and remind me at 9 to call mom", "automations"),
    ("thanks for the reminder earlier! can you set another one for tomorrow?", "automations"),
    # a value a tool acts on: a channel, a handle, a link, a path
    ("write a haiku about autumn and post it in #poetry", "conversations_send"),
    ("write a short poem for my wife and send it to @anna on telegram", "message"),
    ("translate this page https://example.com/a into French", "web_fetch"),
    ("explain what's in /var/log/syslog", "file_fetch"),
    # strong evidence in the topic itself
    ("tips for setting up a cron job that runs every hour", "automations"),
]


def extra_tools(resolver: Resolver, prompt: str) -> set[str]:
    """The tools of the default surface's answer beyond the core ones."""
    res = asyncio.run(resolver.resolve(TurnRequest(prompt=prompt, tools=default_surface())))
    return set(res.tools_allow or []) - set(resolver.config.core_tools)


WORDS_ONLY = {"catalogOverridesFile": None, "offlineConversationHead": False}
"""The markers' rule alone: no conversation head (`_ngram_head`) to take the turn for small talk
by other means."""


@pytest.fixture(scope="module")
def resolver() -> Resolver:
    return Resolver(ResolverConfig(**WORDS_ONLY))


@pytest.mark.parametrize("prompt", CHAT)
def test_a_topical_marker_takes_its_topic_as_conversation(
    resolver: Resolver, prompt: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The core tools only; without the topical rule each of these prompts got tools from words
    of its topic ("cold", "plans", "travel", "savings plan")."""
    assert extra_tools(resolver, prompt) == set()
    monkeypatch.setattr(offline, "TOPICAL", False)
    assert extra_tools(Resolver(ResolverConfig(**WORDS_ONLY)), prompt)


@pytest.mark.parametrize(("prompt", "tool"), TASKS)
def test_a_topical_clause_that_asks_for_a_tool_stays_a_task(
    resolver: Resolver, prompt: str, tool: str
) -> None:
    """A second request, a value (channel, handle, link, path) or strong evidence keep the
    clause a task: recall first; with the default conversation head too."""
    assert tool in extra_tools(resolver, prompt)
    assert tool in extra_tools(Resolver(ResolverConfig(catalogOverridesFile=None)), prompt)


def test_a_topical_clause_too_long_to_read_whole_stays_a_task(resolver: Resolver) -> None:
    """Values are looked for in a clause's first `ENTITY_CHARS` characters: a longer topical
    clause stays a task (a value past that point would not have been seen), and its words get
    their tools as any task's do."""
    filler = " ".join(["very"] * (offline.ENTITY_CHARS // 5))
    assert extra_tools(resolver, f"explain this {filler} long story") != set()
    assert extra_tools(resolver, "explain this very long story") == set()


def test_the_topic_is_judged_without_the_markers_own_words(resolver: Resolver) -> None:
    """ "difference" alone is evidence for a tool on the default surface; in "explain the
    difference between TCP and UDP" it is the marker's word, and "UDP" after the "and" is no
    second request."""
    assert extra_tools(resolver, "explain the difference between TCP and UDP") == set()
    assert extra_tools(resolver, "the difference") != set()


def test_an_override_catalog_can_empty_the_topical_list(tmp_path: Path) -> None:
    """The markers are data: an operator's ``conversation.topical: []`` turns the rule off (the
    conversation head off too: it would answer the limerick by itself)."""
    catalog = tmp_path / "catalog.json"
    catalog.write_text(json.dumps({"schemaVersion": 1, "conversation": {"topical": []}}))
    resolver = Resolver(
        ResolverConfig(catalogOverridesFile=str(catalog), offlineConversationHead=False)
    )
    assert extra_tools(resolver, CHAT[0])


def test_a_turn_looks_at_a_bounded_number_of_topical_clauses(
    resolver: Resolver, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Each look scores the whole surface: a prompt of 300 "thanks for ..." clauses gets at most
    `TOPICAL_CHECKS` of them (each of at most `TOPICAL_PARTS` parts); the rest stay tasks."""
    calls = []
    real = offline.without_markers

    def counted(*args: object) -> object:
        calls.append(args)
        return real(*args)  # type: ignore[arg-type]

    monkeypatch.setattr(offline, "without_markers", counted)
    prompt = " ".join(f"thanks for the cake number {i}." for i in range(300))
    extra_tools(resolver, prompt)
    assert 0 < len(calls) <= offline.TOPICAL_CHECKS * offline.TOPICAL_PARTS


@pytest.mark.parametrize(
    "prompt",
    ["ugh, what a day. just venting", "my mistake, wrong chat", "off to bed, sweet dreams"],
)
def test_the_supplements_social_markers_answer_with_the_core_tools(
    resolver: Resolver, prompt: str
) -> None:
    """Markers of `_meta.conversationSupplement`: before it, these got 1 to 12 tools from
    "day", "chat" and "bed"/"dreams"."""
    assert extra_tools(resolver, prompt) == set()


@pytest.mark.parametrize(
    ("prompt", "tool"),
    [
        ("my mistake, wrong chat. send the invoice to the #billing channel", "conversations_send"),
        ("ugh, what a day. remind me to call the dentist at 9", "automations"),
    ],
)
def test_a_task_after_a_social_marker_keeps_its_tools(
    resolver: Resolver, prompt: str, tool: str
) -> None:
    assert tool in extra_tools(resolver, prompt)
