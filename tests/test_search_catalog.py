"""The searchable catalog (`apply_search_catalog`, `searchCatalogSize`): when the host's own tool
search is among the candidates, `toolsAllow` bounds what that search can find, so the
resolver's picks are widened with the next best-scored candidates — never narrowed, never with a
state-excluded or unscored tool; and the OpenClaw sidecar offers the search control to the
resolver only while the host still shows it."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from sidecar_support import InProcessHost

from resolver import Resolver, ResolverConfig, TurnRequest
from resolver._surface import default_surface
from resolver._types import Resolution, ToolInfo

SEARCH = ToolInfo(name="tool_search", description="Search the tool catalog by words")
PROMPT = "find the cheapest flight to Tokyo and email it to my boss"
TOOLS = default_surface()


def resolve(prompt: str, tools: list[ToolInfo], **config: Any) -> Resolution:
    resolver = Resolver(ResolverConfig(keywordCacheFile="", catalogOverridesFile="", **config))
    return resolver.resolve_sync(TurnRequest(prompt=prompt, tools=tools))


def test_with_the_host_search_the_picks_grow_by_best_score() -> None:
    plain = resolve(PROMPT, TOOLS)
    wide = resolve(PROMPT, [*TOOLS, SEARCH])
    assert plain.tools_allow is not None and wide.tools_allow is not None
    assert set(plain.tools_allow) < set(wide.tools_allow)  # only adds
    assert "search_catalog_widened" in wide.reason_codes
    assert "search_catalog_widened" not in plain.reason_codes
    cards = {c.name: c for c in wide.candidates}
    added = [n for n in wide.tools_allow if n not in plain.tools_allow]
    assert all(cards[n].signals == ("search",) and cards[n].score > 0 for n in added)
    # the best-scored tools that were left out: none left out scores above one added
    left = [c.score for c in wide.candidates if not c.selected]
    assert min(cards[n].score for n in added) >= max(left, default=0.0)


def test_the_catalog_stops_at_its_size() -> None:
    plain = resolve(PROMPT, TOOLS)
    assert plain.tools_allow is not None
    size = len(plain.tools_allow) + 3
    wide = resolve(PROMPT, [*TOOLS, SEARCH], searchCatalogSize=size)
    assert wide.tools_allow is not None and len(wide.tools_allow) == size
    # a size below what the resolver picked removes nothing
    small = resolve(PROMPT, [*TOOLS, SEARCH], searchCatalogSize=2)
    assert small.tools_allow is not None
    assert set(plain.tools_allow) <= set(small.tools_allow)
    assert "search_catalog_widened" not in small.reason_codes


def test_off_without_the_search_control_or_at_size_zero() -> None:
    plain = resolve(PROMPT, TOOLS)
    off = resolve(PROMPT, [*TOOLS, SEARCH], searchCatalogSize=0)
    other = resolve(PROMPT, [*TOOLS, SEARCH], hostSearchTools=["catalog_lookup"])
    assert plain.tools_allow is not None
    for res in (off, other):
        assert res.tools_allow is not None
        assert set(res.tools_allow) == set(plain.tools_allow)
        assert "search_catalog_widened" not in res.reason_codes


def test_a_prompt_with_no_signal_stays_with_the_core_tools() -> None:
    """Chit-chat matches no tool: there is no score to widen by."""
    plain = resolve("thanks, that's all", TOOLS)
    wide = resolve("thanks, that's all", [*TOOLS, SEARCH])
    assert wide.tools_allow is not None and plain.tools_allow is not None
    assert set(wide.tools_allow) == set(plain.tools_allow)


def test_a_tool_excluded_by_state_is_never_added(tmp_path: Path) -> None:
    prompt = "send a message to the team channel on telegram"
    free = resolve(prompt, [*TOOLS, SEARCH])
    assert free.tools_allow is not None and "message" in free.tools_allow
    path = tmp_path / "resolver-catalog.json"
    reqs = {"message": {"channel": {"type": "string", "enum": ["never-this"]}}}
    path.write_text(json.dumps({"schemaVersion": 1, "stateRequirements": reqs}))
    resolver = Resolver(ResolverConfig(keywordCacheFile="", catalogOverridesFile=str(path)))
    res = resolver.resolve_sync(
        TurnRequest(prompt=prompt, tools=[*TOOLS, SEARCH], state={"channel": "telegram"})
    )
    assert res.tools_allow is not None and "message" not in res.tools_allow
    assert "search_catalog_widened" in res.reason_codes


CONTROL = {"name": "tool_search", "description": "Search the tool catalog"}
PLAIN = [{"name": "web_search", "description": "Search the web"}]


async def test_the_sidecar_widens_while_the_host_shows_its_search_control() -> None:
    """OpenClaw lists the control in ``llm_input`` only for a whole (un-narrowed) surface: a
    narrowed turn's list leaves it out, which must not switch the widening off; a whole
    surface without it (Tool Search turned off) does."""
    host = InProcessHost([*PLAIN, CONTROL], PROMPT)
    await host.start(host={})  # Tool Search on: the whole surface shows the control
    first = await host.turn(session=None, shown=PLAIN)  # narrowed: llm_input lacks it
    assert first["toolsAllow"] is not None
    assert "search_catalog_widened" in first["reasonCodes"]
    second = await host.turn(session=None, shown=PLAIN)
    assert "search_catalog_widened" in second["reasonCodes"]
    await host.call("observe_surface", tools=PLAIN, ctx={})  # a whole surface, no control
    off = await host.turn(session=None, shown=PLAIN)
    assert off["toolsAllow"] is not None
    assert "search_catalog_widened" not in off["reasonCodes"]


async def test_the_sidecar_follows_the_hosts_tool_search_setting() -> None:
    """``tools.toolSearch: false`` in OpenClaw's config (passed by the extension) is off,
    whatever the view once saw; unset or true leaves it to the surface."""
    for setting, widened in ((False, False), (None, True), (True, True)):
        host = InProcessHost([*PLAIN, CONTROL], PROMPT)
        await host.start(host={"toolSearch": setting})
        result = await host.turn(session=None, shown=PLAIN)
        assert result["toolsAllow"] is not None
        assert ("search_catalog_widened" in result["reasonCodes"]) is widened, setting
