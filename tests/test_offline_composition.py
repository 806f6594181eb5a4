"""The offline classifier on multi-part requests, conversation and words that only look alike:
phrase-aware keywords, the coverage pass, camel-case brands, abbreviations, other languages'
function words and conversational clauses."""

from __future__ import annotations

import asyncio
import json
import time
from pathlib import Path

import pytest

from resolver import Resolver, ResolverConfig, ToolInfo, TurnRequest
from resolver._conversation import Markers, conversational, task_text
from resolver._glossary import gloss
from resolver._lang import latin_language, letter_hits
from resolver._offline import clauses_of
from resolver._surface import default_surface
from resolver._text import stem, tokens

TOOLS = [
    ToolInfo(name="ui_theme", description="Change the colour theme of the app."),
    ToolInfo(name="search_web", description="Search the web for current information."),
    ToolInfo(name="send_chat", description="Send a chat message to a person or a group."),
    ToolInfo(name="list_chats", description="List the chats and groups you can reach."),
    ToolInfo(name="get_employee_info", description="Retrieve an employee record."),
    ToolInfo(name="list_dir", description="List a folder."),
]


def resolver_with(tmp_path: Path, keywords: dict[str, list[str]]) -> Resolver:
    catalog = tmp_path / "catalog.json"
    catalog.write_text(json.dumps({"schemaVersion": 1, "keywords": keywords}))
    return Resolver(ResolverConfig(catalogOverridesFile=str(catalog), coreTools=[]))


def run(
    resolver: Resolver, prompt: str, tools: list[ToolInfo] = TOOLS
) -> tuple[list[str], dict[str, float]]:
    res = asyncio.run(resolver.resolve(TurnRequest(prompt=prompt, tools=tools)))
    return list(res.tools_allow or []), {c.name: c.score for c in res.candidates}


def test_a_word_of_a_keyword_phrase_alone_is_weak(tmp_path: Path) -> None:
    """'tokyo' alone is not the 'tokyo night' theme: the flight search outranks the theme."""
    resolver = resolver_with(
        tmp_path, {"ui_theme": ["tokyo night", "dracula"], "search_web": ["flight", "cheapest"]}
    )
    _, scores = run(resolver, "find the cheapest flight to Tokyo")
    assert scores["search_web"] > 2 * scores["ui_theme"]
    _, scores = run(resolver, "switch to the tokyo night theme")
    assert scores["ui_theme"] > scores["search_web"]


def test_each_part_of_a_request_keeps_its_tool_however_strong_the_other(tmp_path: Path) -> None:
    """One tool matching most of the prompt does not push out the tool the other part asks for
    (the coverage pass keeps every tool with enough evidence of its own)."""
    resolver = resolver_with(
        tmp_path,
        {
            "list_chats": ["family group", "whatsapp group", "group chat", "whatsapp"],
            "send_chat": ["send", "whatsapp"],
            "search_web": ["look up", "opening hours"],
        },
    )
    allowed, scores = run(
        resolver, "look up the opening hours and send them to the family group on WhatsApp"
    )
    assert scores["list_chats"] > scores["send_chat"]
    assert {"list_chats", "send_chat", "search_web"} <= set(allowed)


def test_camel_case_brands_match_as_one_word() -> None:
    """'WhatsApp' is the word 'whatsapp' (as keyword lists write it) and its parts."""
    assert tokens("send it on WhatsApp")[:2] == ["send", "whatsapp"]
    assert "weather" in tokens("getWeatherInfo")


def test_abbreviations_meet_the_full_word() -> None:
    """get_employee_info answers 'employee information'; analysis meets analyze."""
    assert stem("info") == stem("information")
    assert stem("analysis") == stem("analyze") == stem("analytics")


def test_another_languages_function_word_does_not_match_a_tool_word(tmp_path: Path) -> None:
    """German 'dir' (you) is not the folder tool's 'dir'; in English it still is."""
    resolver = resolver_with(tmp_path, {"list_dir": ["dir", "folder"]})
    allowed, _ = run(resolver, "Schönen Feierabend dir und danke für alles!")
    assert "list_dir" not in allowed
    allowed, _ = run(resolver, "show me the dir listing")
    assert "list_dir" in allowed


def test_a_letter_only_one_language_writes_tells_a_short_prompt_its_language(
    tmp_path: Path,
) -> None:
    """One German function word is too few to tell German from English; a word with "ö" is a
    second witness. Names with umlauts in an English prompt do not outvote its English words."""
    resolver = resolver_with(tmp_path, {"list_dir": ["dir", "folder"]})
    allowed, _ = run(resolver, "Schönen Feierabend dir!")
    assert "list_dir" not in allowed
    allowed, _ = run(resolver, "send the dir listing to Jürgen Müller")
    assert "list_dir" in allowed


def test_letter_hits_count_words_by_the_letters_only_their_language_writes() -> None:
    # "ö" is German and Swedish: it counts for both, and their function words decide
    assert letter_hits("Schönen Feierabend dir!") == {"de": 1, "sv": 1}
    assert letter_hits("Grüße") == {"de": 1}
    assert letter_hits("Kan du öppna mappen på skrivbordet?") == {"de": 1, "sv": 2}
    assert letter_hits("Ile się jedzie samochodem?") == {"pl": 1}
    assert letter_hits("¿Qué tal? Mañana") == {"es": 2}
    assert letter_hits("Não sei, œuvre") == {"pt": 1, "fr": 1}
    assert letter_hits("SCHO\u0308N") == {"de": 1, "sv": 1}  # decomposed, upper-case
    assert letter_hits("café, à la carte, ação") == {"pt": 1}  # é, à, ç are shared
    assert letter_hits("crème brûlée") == {"fr": 1}  # è is French and Italian
    assert letter_hits("così, può") == {"it": 2}
    assert letter_hits("plain ASCII text") == {}
    assert letter_hits("明天 ü") == {"de": 1}


@pytest.mark.parametrize(
    ("text", "language"),
    [
        ("Kan du öppna mappen på skrivbordet och visa filerna?", "sv"),
        ("Kannst du den Ordner öffnen und mir die Dateien zeigen?", "de"),
        ("Ile się jedzie samochodem z Krakowa do Zakopanego?", "pl"),
        ("Schönen Feierabend dir!", "de"),
        ("please send the files to Jürgen Müller", "en"),
    ],
)
def test_a_prompts_language_among_german_swedish_and_polish(text: str, language: str) -> None:
    """A letter two languages write (ö) is a witness for both; the function words decide."""
    guessed = latin_language(tokens(text, keep_stopwords=True), hints=letter_hits(text))
    assert guessed == language


def test_a_polish_prompt_is_glossed_into_the_tools_words() -> None:
    """Polish and Swedish are in the glossary: "samochodem" (by car) reads as driving."""
    assert "driving" in gloss("Ile się jedzie samochodem z Krakowa do Zakopanego?")
    assert "directory" in gloss("Öppna mappen på skrivbordet och visa filerna")
    english = "How long is the drive from Kraków to Zakopane?"
    assert gloss(english) == english


def test_letter_hits_scan_is_linear_in_the_text() -> None:
    """A long run of ASCII letters in a text that is not ASCII: one scan, not a backtracking
    search from every start of the run (that took 0.5 s for 4,000 letters; this takes about a
    millisecond, so the bound has a wide margin on a busy machine)."""
    text = "a" * 3_990 + " 字"
    started = time.process_time()
    for _ in range(5):
        assert letter_hits(text) == {}
    assert time.process_time() - started < 0.5


def test_a_short_common_word_is_not_read_as_a_typo(tmp_path: Path) -> None:
    """'best' is not a typo of 'test'; 'remnd' still is one of 'remind'."""
    resolver = resolver_with(tmp_path, {"search_web": ["test"], "send_chat": ["remind"]})
    allowed, _ = run(resolver, "you're the best")
    assert "search_web" not in allowed
    allowed, _ = run(resolver, "pls remnd me")
    assert "send_chat" in allowed


@pytest.fixture(scope="module")
def markers() -> Markers:
    resolver = Resolver(ResolverConfig(catalogOverridesFile=None))
    catalog = resolver.catalogs.current()
    found = Markers.of(catalog.markers)
    assert found is not None
    return found


@pytest.mark.parametrize(
    ("prompt", "task"),
    [
        ("haha thanks, you're the best", ""),
        ("thanks! now remind me at 9 to call mom", "now remind me at 9 to call mom"),
        ("ok cool, send that to Tom", "send that to Tom"),
        ("translate 'I'm running late, start without me' to Spanish", ""),
        ("remind me at 9", "remind me at 9"),
        ("ok now the pricing page", "ok now the pricing page"),
        # a full stop inside a word ends no clause ("what is in budget" + "xlsx" was one
        # conversation clause and a task of one word)
        ("thanks! what is in budget.xlsx", "what is in budget.xlsx"),
        ("hi,how are you", ""),
    ],
    ids=[
        "social",
        "thanks-then-task",
        "ack-then-task",
        "translate-quoted",
        "task",
        "ack-task",
        "file-name",
        "comma-without-space",
    ],
)
def test_conversational_clauses_are_set_aside(markers: Markers, prompt: str, task: str) -> None:
    """A clause made of a conversation marker and at most one other word is conversation; the
    task clauses stay; quoted text neither makes nor splits a clause."""
    assert task_text(markers, prompt) == task


def test_no_content_word_comes_between_a_markers_function_words(markers: Markers) -> None:
    """'what is' is a marker (a request to define something); 'what address is at 35.6586,
    139.7454' asks about one address: the marker's function words may not be split by a noun.
    A content word may still come before a marker's content word or after one."""
    assert conversational(markers, "what is recursion")
    assert not conversational(markers, "what address is at 35.6586, 139.7454")
    assert task_text(markers, "What address is there?") == "What address is there?"
    assert conversational(markers, "write me a short haiku")
    assert conversational(markers, "explain recursion like I'm five")


def test_a_clause_with_a_marker_and_a_task_is_a_task(markers: Markers) -> None:
    """'ok search the web for cheap flights to Tokyo' has a marker and far more."""
    assert not conversational(markers, "ok search the web for cheap flights to Tokyo")
    assert conversational(markers, "good night")


def test_chit_chat_gets_the_core_tools_only_on_the_default_surface() -> None:
    """'haha thanks, you're the best' and the README's 'thanks, that's all' get the core
    tools only."""
    resolver = Resolver(ResolverConfig(catalogOverridesFile=None))
    core = set(resolver.config.core_tools)
    for prompt in ("haha thanks, you're the best", "thanks, that's all"):
        res = asyncio.run(resolver.resolve(TurnRequest(prompt=prompt, tools=default_surface())))
        assert set(res.tools_allow or []) == core, prompt


def test_parameter_words_tell_siblings_apart(tmp_path: Path) -> None:
    """Two tools of one server with the same description words: the one whose parameter
    schema has the prompt's enum value ("undo") ranks first; parameters reach no LLM."""
    tools = [
        ToolInfo(
            name="kube__kubectl_rollout",
            description="Manage a deployment on the cluster",
            parameters={"properties": {"subCommand": {"enum": ["history", "undo", "status"]}}},
        ),
        ToolInfo(
            name="kube__kubectl_scale",
            description="Manage a deployment on the cluster",
            parameters={"properties": {"replicas": {"type": "integer"}}},
        ),
    ]
    assert tools[0].parameters == "subCommand history undo status"
    resolver = Resolver(ResolverConfig(catalogOverridesFile=None, coreTools=[]))
    _, scores = run(resolver, "undo the last deployment change on the cluster", tools)
    assert scores["kube__kubectl_rollout"] > scores["kube__kubectl_scale"]
    _, scores = run(resolver, "set the deployment to 3 replicas", tools)
    assert scores["kube__kubectl_scale"] > scores["kube__kubectl_rollout"]


def test_the_sidecar_keeps_the_parameter_words_it_was_shown(tmp_path: Path) -> None:
    """observe_surface's parameter words become the candidates' `parameters` and survive a
    restart (the surface state file)."""
    from resolver.hosts.openclaw._sidecar import SurfaceView

    state = tmp_path / "surface.json"
    view = SurfaceView(path=state)
    view.observe(
        [{"name": "kube__kubectl_rollout", "description": "d", "parameters": "subCommand undo"}],
        None,
        1.0,
    )
    view.save()
    again = SurfaceView.load(state)
    assert again.params == {"kube__kubectl_rollout": "subCommand undo"}


@pytest.mark.parametrize(
    ("prompt", "clauses"),
    [
        (
            "Screenshot the board at http://grafana.local:3000/d/api?tab=1 and text it to Sam.",
            ["Screenshot the board at http://grafana.local:3000/d/api?tab=1", "text it to Sam"],
        ),
        (
            "Read notes/diary.md. Then email it to Lena",
            ["Read notes/diary.md", "Then email it to Lena"],
        ),
        ("what's on www.example.org? read it out", ["what's on www.example.org", "read it out"]),
    ],
)
def test_a_url_or_a_file_name_does_not_end_a_clause(prompt: str, clauses: list[str]) -> None:
    """A sentence mark ends a clause before a space or at the end, never inside a host or a
    file name (each stray fragment would be a clause of its own and keep its own tools)."""
    assert clauses_of(prompt) == clauses


@pytest.mark.parametrize(
    ("prompt", "clauses"),
    [
        (
            "First, look up the weather in Oslo. Finally, email it to Bob.",
            ["First, look up the weather in Oslo", "Finally, email it to Bob"],
        ),
        (
            "With Playwright, go to https://shop.example.com and take a screenshot",
            ["With Playwright, go to https://shop.example.com", "take a screenshot"],
        ),
        ("首先，查一下东京的天气。然后发给小王", ["首先，查一下东京的天气", "发给小王"]),
        (
            "check my calendar, email Bob the summary",
            ["check my calendar", "email Bob the summary"],
        ),
    ],
)
def test_a_lead_in_opens_the_next_clause(prompt: str, clauses: list[str]) -> None:
    """ "First," or "With Playwright," is no request of its own: as a clause, one word would
    pick tools for it. A comma between two requests still splits them."""
    assert clauses_of(prompt) == clauses


OPENER = ToolInfo(name="open_page", description="Open a web page by its URL and show it.")


def test_a_link_in_the_prompt_is_evidence_for_the_tools_that_take_a_url(tmp_path: Path) -> None:
    """ "have a look at https://..." names no tool word, but a tool taking a URL is asked for;
    without the link nothing points at it."""
    resolver = resolver_with(tmp_path, {})
    tools = [*TOOLS, OPENER]
    allowed, scores = run(resolver, "have a look at https://shop.example.com/pricing", tools)
    assert "open_page" in allowed and scores["open_page"] > 0
    allowed, scores = run(resolver, "have a look at the shop's pricing", tools)
    assert "open_page" not in allowed and scores.get("open_page", 0.0) == 0.0


@pytest.mark.parametrize(
    ("prompt", "needed"),
    [
        ("take a screenshot of https://status.example.com", {"browser"}),
        (
            "grab a screenshot of https://status.example.com and send it to Lena on WhatsApp",
            {"browser", "message"},
        ),
    ],
)
def test_the_default_catalog_says_the_browser_opens_a_url(prompt: str, needed: set[str]) -> None:
    """The browser's catalog description says it opens a URL (its `targetUrl`): a screenshot of
    a link is the browser's, not only the page fetcher's, whose description says URL."""
    resolver = Resolver(ResolverConfig(catalogOverridesFile=None))
    res = asyncio.run(resolver.resolve(TurnRequest(prompt=prompt, tools=default_surface())))
    assert needed <= set(res.tools_allow or [])


SQL_RUNNER = ToolInfo(name="db_run", description="Run a read-only SQL statement.")


@pytest.mark.parametrize(
    "statement",
    [
        "SELECT count(*) FROM users WHERE created_at > now() - interval '7 days';",
        "insert into audit_log (who, what) values ('me', 'test')",
        "UPDATE \"orders\" SET status = 'paid' WHERE id = 4",
        "select name, email from customers limit 5",
        "check max(loaded_at) on raw.orders",
        "what's count(distinct user_id) over last week's events",
        # a database table named by its name
        "check the charges table for that account over the last 30 days",
        "how many rows are in table `user_events` since Monday?",
        "Kündigungen pro Tarif aus der Tabelle subscriptions",
        "查一下 orders 表里上周的退款总额",
    ],
)
def test_an_sql_statement_in_the_prompt_is_evidence_for_the_tools_that_take_sql(
    tmp_path: Path, statement: str
) -> None:
    """A pasted statement names no tool word ("run this: SELECT ..."), but it is SQL, and so is
    a table named by its name ("the charges table", "orders 表"); prose that uses the same words
    ("select the photos from yesterday", "a markdown table") is not."""
    resolver = resolver_with(tmp_path, {})
    tools = [*TOOLS, SQL_RUNNER]
    allowed, scores = run(resolver, f"try this one: {statement}", tools)
    assert "db_run" in allowed and scores["db_run"] > 0
    for prose in (
        "select the photos from yesterday",
        "update my notes, then delete from the list",
        "pick the max (3 or 4) of the photos",
        "format the list as a markdown table",
        "put the cards on the table and pick one from the table below",
        "the table shows our three plans; put it in the same table as last time",
        "把这个表格发给团队",
    ):
        allowed, scores = run(resolver, prose, tools)
        assert "db_run" not in allowed and scores.get("db_run", 0.0) == 0.0


CODE_HOST = [
    ToolInfo(
        name="code__list_pull_requests",
        description="List and filter pull requests",
        parameters={
            "type": "object",
            "properties": {
                "owner": {"type": "string", "description": "Repository owner"},
                "repo": {"type": "string", "description": "Repository name"},
                "state": {"type": "string", "enum": ["open", "closed", "all"]},
            },
        },
    ),
    ToolInfo(name="ops__update_release", description="Update a release note and mark it stale"),
    ToolInfo(name="ops__open_ports", description="Open ports on the firewall"),
]


def test_a_repository_after_a_preposition_is_evidence_for_the_tools_that_take_one(
    tmp_path: Path,
) -> None:
    """ "stale PRs in acme/checkout? open ones" says neither "repository" nor "pull request"
    but names a repository, as the code host's tools' owner/repo parameters take it; "and/or"
    and a file name are no repository."""
    resolver = resolver_with(tmp_path, {})
    tools = [*TOOLS, *CODE_HOST]
    allowed, scores = run(resolver, "stale ones in acme/checkout? open ones first", tools)
    assert "code__list_pull_requests" in allowed
    _, plain = run(resolver, "stale ones in the checkout? open ones first", tools)
    assert scores["code__list_pull_requests"] > plain.get("code__list_pull_requests", 0.0)
    for other in ("in and/or out", "in notes/retro.md", "in HTML/CSS", "in km/h"):
        _, scores = run(resolver, f"keep the stale ones {other}", tools)
        assert scores.get("code__list_pull_requests", 0.0) == 0.0


FILE_WRITER = ToolInfo(name="store__write_file", description="Create or overwrite a file.")


@pytest.mark.parametrize(
    "name", ["todo.txt", "notes/retro-2026.md", "Q3 report.final.PDF", "data/export.v2.csv"]
)
def test_a_file_name_is_evidence_for_the_file_tools_without_keywords(
    tmp_path: Path, name: str
) -> None:
    """ "put these three lines in todo.txt" says no "file", but names one; a host name or an
    e-mail address with a dot is not a file name."""
    resolver = resolver_with(tmp_path, {})
    tools = [*TOOLS, FILE_WRITER]
    allowed, scores = run(resolver, f"put these three lines in {name}", tools)
    assert "store__write_file" in allowed and scores["store__write_file"] > 0
    for other in ("example.com", "ana@example.org", "version 1.2.3"):
        allowed, scores = run(resolver, f"put these three lines in {other}", tools)
        assert scores.get("store__write_file", 0.0) == 0.0


def test_a_file_name_leaves_the_catalogued_tools_scores_as_they_were(tmp_path: Path) -> None:
    """A tool with catalog keywords: its users' words are in them; the file name adds nothing."""
    resolver = resolver_with(tmp_path, {"store__write_file": ["save to disk"]})
    tools = [*TOOLS, FILE_WRITER]
    _, named = run(resolver, "save these lines to disk in todo.txt", tools)
    _, plain = run(resolver, "save these lines to disk in my todo", tools)
    assert named["store__write_file"] == plain["store__write_file"] > 0.0


def test_a_deprecated_tool_ranks_below_the_tool_it_names_as_its_replacement(
    tmp_path: Path,
) -> None:
    """An MCP server's deprecated tool ("DEPRECATED: Use read_text_file instead.") has the short
    description that BM25 favours; its replacement, named by the server's own name for it,
    ranks first. Without the note the short description wins."""
    replacement = ToolInfo(
        name="files__read_text_file",
        description="Read the complete contents of a file from the file system as text. Handles "
        "various text encodings and gives detailed errors when the file cannot be read. Use "
        "the head or tail parameter to read only the first or last lines of a file.",
    )
    note = " DEPRECATED: Use read_text_file instead."
    resolver = resolver_with(tmp_path, {})
    ranked = {}
    for deprecated in (True, False):
        old = ToolInfo(
            name="files__read_file",
            description="Read the complete contents of a file as text."
            + (note if deprecated else ""),
        )
        _, scores = run(resolver, "read notes.md with the files server", [*TOOLS, old, replacement])
        ranked[deprecated] = scores["files__read_text_file"] > scores["files__read_file"]
    assert ranked == {True: True, False: False}


@pytest.mark.parametrize(
    "prompt",
    ["how long's the drive from the station to the airport?", "How long by car to Lyon"],
)
def test_how_long_asks_for_a_duration(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, prompt: str
) -> None:
    """'how long' asks for a duration: it reaches a tool that gives travel durations, not one
    named for a long-running operation — which wins with the rule off."""
    tools = [
        ToolInfo(
            name="trigger_long_running_operation",
            description="Trigger a long-running operation and report its progress.",
        ),
        ToolInfo(name="distance_matrix", description="Travel distance and duration by car."),
    ]
    resolver = resolver_with(tmp_path, {})
    allowed, _ = run(resolver, prompt, tools)
    assert "distance_matrix" in allowed
    assert "trigger_long_running_operation" not in allowed
    monkeypatch.setattr("resolver._offline.HOW_LONG", False)
    _, off = run(resolver_with(tmp_path, {}), prompt, tools)
    assert off.get("trigger_long_running_operation", 0.0) > off.get("distance_matrix", 0.0)


def test_close_to_is_near(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """An English "close to" is "near": a venue close to a square reaches the tool that finds
    places near a location, not the one named for closing a browser page — which wins with the
    rule off."""
    tools = [
        ToolInfo(name="browser_close", description="Close the page."),
        ToolInfo(name="search_places", description="Search for places near a location."),
    ]
    prompt = "find a venue close to Cais do Sodré for 120 people"
    allowed, _ = run(resolver_with(tmp_path, {}), prompt, tools)
    assert "search_places" in allowed
    assert "browser_close" not in allowed
    monkeypatch.setattr("resolver._offline.CLOSE_TO", False)
    _, off = run(resolver_with(tmp_path, {}), prompt, tools)
    assert off.get("browser_close", 0.0) > off.get("search_places", 0.0)


def test_take_is_a_light_verb(tmp_path: Path) -> None:
    """'take' asks for nothing by itself, like 'get' and 'make': "how long would it take to
    bike there" and "take a look at the route" do not reach a screenshot tool named
    take_screenshot, while "take a screenshot" still does (through 'screenshot')."""
    tools = [
        ToolInfo(name="take_screenshot", description="Take a screenshot of the current page."),
        ToolInfo(name="maps_directions", description="Get directions between two places."),
    ]
    for prompt in ("how long would it take to bike there?", "take a look at the route for me"):
        allowed, scores = run(resolver_with(tmp_path, {}), prompt, tools)
        assert "take_screenshot" not in allowed
        assert scores.get("take_screenshot", 0.0) == 0.0
    allowed, _ = run(resolver_with(tmp_path, {}), "take a screenshot of the homepage", tools)
    assert "take_screenshot" in allowed
