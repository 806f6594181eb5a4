"""The offline classifier's look-up rule: a question about the current state of the world
(an ask cue and a current cue in one clause) gets the catalog's look-up tools, though no word of
the prompt names them."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import pytest

from resolver import Resolver, ResolverConfig, ToolInfo, TurnRequest
from resolver._catalog import parse_catalog_bytes
from resolver._errors import CatalogError
from resolver._surface import default_surface

TOOLS = [
    ToolInfo(name="search_web", description="Search the web."),
    ToolInfo(name="schedule_job", description="Schedule a job or a reminder at a time."),
    ToolInfo(name="send_chat", description="Send a chat message to a person."),
    ToolInfo(name="ui_theme", description="Change the colour theme of the app."),
]
CUES = {"tools": ["search_web"], "ask": ["when", "how much", "check if"], "current": ["today"]}


def resolver_with(tmp_path: Path, catalog: dict[str, object]) -> Resolver:
    path = tmp_path / "catalog.json"
    path.write_text(json.dumps({"schemaVersion": 1, **catalog}))
    return Resolver(ResolverConfig(catalogOverridesFile=str(path), coreTools=[]))


def allowed(resolver: Resolver, prompt: str, tools: list[ToolInfo] = TOOLS) -> list[str]:
    res = asyncio.run(resolver.resolve(TurnRequest(prompt=prompt, tools=tools)))
    return list(res.tools_allow or [])


@pytest.mark.parametrize(
    "prompt",
    [
        "when does the last ferry to the island leave today, then message Ana",
        "check if the bakery on Elm street opens today and tell Ana on chat",
    ],
)
def test_a_question_about_today_gets_the_look_up_tool(tmp_path: Path, prompt: str) -> None:
    """No word names a search, yet the clause asks about the current state of the world."""
    assert "search_web" in allowed(resolver_with(tmp_path, {"lookup": CUES}), prompt)
    without = resolver_with(tmp_path, {"lookup": {**CUES, "ask": []}})
    assert "search_web" not in allowed(without, prompt)


@pytest.mark.parametrize(
    "prompt",
    [
        "when did the Roman empire fall?",  # a question, nothing current: stable knowledge
        "today was a long day",  # a current word, no question
    ],
)
def test_one_cue_alone_is_not_a_look_up(tmp_path: Path, prompt: str) -> None:
    assert "search_web" not in allowed(resolver_with(tmp_path, {"lookup": CUES}), prompt)


def test_both_cues_must_be_in_the_same_clause(tmp_path: Path) -> None:
    """'when' in one clause and 'today' in another do not make a question about today."""
    resolver = resolver_with(tmp_path, {"lookup": CUES})
    assert "search_web" not in allowed(resolver, "remind me when I land. today was long")
    assert "search_web" in allowed(resolver, "remind me when the shop opens today")


def test_the_look_up_tool_must_be_a_candidate(tmp_path: Path) -> None:
    """The rule only narrows what the host offers: a look-up tool the surface lacks is not
    granted."""
    tools = [t for t in TOOLS if t.name != "search_web"]
    got = allowed(resolver_with(tmp_path, {"lookup": CUES}), "when does it open today?", tools)
    assert "search_web" not in got
    assert set(got) <= {t.name for t in tools}


def test_an_override_layer_names_another_look_up_tool(tmp_path: Path) -> None:
    """An operator whose search comes from an MCP server names that tool; the shipped cues stay
    (a layer replaces only the lists it sets)."""
    tools = [*default_surface(), ToolInfo(name="brave__web_search", description="Brave search.")]
    resolver = resolver_with(tmp_path, {"lookup": {"tools": ["brave__web_search"]}})
    got = allowed(resolver, "what time does the pharmacy on Main street close today?", tools)
    assert "brave__web_search" in got


def test_the_shipped_catalog_sends_a_question_about_today_to_web_search() -> None:
    """On the default OpenClaw surface, with the shipped cues, in two languages."""
    resolver = Resolver(ResolverConfig(keywordCacheFile=""))
    tools = default_surface()
    for prompt in (
        "what time does the last tram to the airport run tonight?",
        "¿a qué hora abre mañana el museo del Prado?",
    ):
        assert "web_search" in allowed(resolver, prompt, tools), prompt


def test_an_oversized_cue_list_is_refused_with_the_field_named() -> None:
    raw = json.dumps({"schemaVersion": 1, "lookup": {"ask": ["x"] * 5000}}).encode()
    with pytest.raises(CatalogError, match=r"lookup\.ask"):
        parse_catalog_bytes(raw, path="over.json")
