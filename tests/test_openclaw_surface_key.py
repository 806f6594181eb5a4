"""When the sidecar re-takes the host's whole surface (resolver/hosts/openclaw/_sidecar.py):
on a change of the host's surface key (a fingerprint of OpenClaw's live config, sent with each
`resolve`), else by age — an hour with a key, ten minutes without one."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from conftest import FakeClock
from sidecar_support import InProcessHost

from resolver.hosts.openclaw._sidecar import (
    MAX_SURFACE_KEY_CHARS,
    SURFACE_REFRESH_KEYED_S,
    SURFACE_REFRESH_S,
)

PROMPT = "search the jira tickets about the login bug"
TOOLS = [{"name": "jira_search", "description": "Search Jira tickets"}]
NEW_TOOL = {"name": "jira_create", "description": "Create a new Jira ticket"}
REFRESH = ["surface_refresh_abstain"]
PATIENT = {"llmTimeoutMs": 14000}
"""A turn's deadline well above what building the index takes on a loaded host (a turn that
ran out of time would abstain for that reason instead)."""


def keyed(key: str, **extra: Any) -> dict[str, Any]:
    return {"surfaceKey": key, **extra}


async def started(clock: FakeClock, key: str = "k1") -> InProcessHost:
    """A host whose first keyed turn re-took the view under `key` (a view taken without a
    key is re-taken once a key arrives)."""
    host = InProcessHost(TOOLS, PROMPT, clock=clock)
    await host.start(**PATIENT)
    assert (await host.turn(host=keyed(key)))["reasonCodes"] == REFRESH
    return host


async def test_same_key_keeps_narrowing_past_ten_minutes(clock: FakeClock) -> None:
    """With an unchanged key the ten-minute rule is off; the hour rule still applies."""
    host = await started(clock)
    clock.advance(SURFACE_REFRESH_S * 3)
    answer = await host.turn(host=keyed("k1"))
    assert answer["toolsAllow"] and "jira_search" in answer["toolsAllow"]
    clock.advance(SURFACE_REFRESH_KEYED_S + 1)
    assert (await host.turn(host=keyed("k1")))["reasonCodes"] == REFRESH
    assert (await host.turn(host=keyed("k1")))["toolsAllow"] is not None  # view re-taken


async def test_changed_key_refreshes_at_once_and_offers_the_new_tool(clock: FakeClock) -> None:
    """A config change (another plugin, a tool policy): the next turn keeps the whole surface,
    the host shows its new tool, and the turn after narrows with it among the candidates."""
    host = await started(clock)
    before = await host.turn("create a jira ticket for the login bug", host=keyed("k1"))
    assert before["toolsAllow"] is not None and "jira_create" not in before["toolsAllow"]
    host.tools = [*TOOLS, NEW_TOOL]
    changed = await host.turn(host=keyed("k2"))
    assert changed["toolsAllow"] is None and changed["reasonCodes"] == REFRESH
    after = await host.turn("create a jira ticket for the login bug", host=keyed("k2"))
    assert after["toolsAllow"] and "jira_create" in after["toolsAllow"]


async def test_without_a_key_the_ten_minute_rule_stays(clock: FakeClock) -> None:
    """A host that sends no key (or a malformed one) keeps the ten-minute age rule."""
    host = InProcessHost(TOOLS, PROMPT, clock=clock)
    await host.start(**PATIENT)
    bad_keys: list[Any] = [None, 5, "", "x" * (MAX_SURFACE_KEY_CHARS + 1)]
    for bad in bad_keys:
        assert (await host.turn(host={"surfaceKey": bad}))["toolsAllow"] is not None
    clock.advance(SURFACE_REFRESH_S + 1)
    assert (await host.turn())["reasonCodes"] == REFRESH
    assert (await host.turn())["toolsAllow"] is not None


async def test_refresh_all_makes_the_next_turn_retake_the_view(clock: FakeClock) -> None:
    """`refresh {"all": true}` marks the view stale: the next turn, whatever its session,
    keeps the whole surface (it did not before: a view stamped 0.0 read as fresh)."""
    host = await started(clock)
    assert (await host.call("refresh", all=True))["result"]["ok"] is True
    assert (await host.turn(session="other", host=keyed("k1")))["reasonCodes"] == REFRESH
    assert (await host.turn(host=keyed("k1")))["toolsAllow"] is not None


async def test_live_mcp_servers_arrive_with_the_turn(clock: FakeClock) -> None:
    """An MCP server added to the config while the host runs (mcp.* hot-applies without a new
    configure) reaches the sidecar with the turn: its unknown tools make the turn abstain."""
    host = await started(clock)
    servers = [{"name": "github", "enabled": True}]
    answer = await host.turn(host=keyed("k2", mcpServers=servers))
    assert answer["toolsAllow"] is None and answer["reasonCodes"] == REFRESH  # key changed
    again = await host.turn(host=keyed("k2", mcpServers=servers))
    assert again["reasonCodes"] == ["mcp_surface_unknown_abstain"]
    off = [{"name": "github", "enabled": False}]
    assert (await host.turn(host=keyed("k2", mcpServers=off)))["toolsAllow"] is not None


async def test_the_key_is_kept_in_the_state_file(tmp_path: Path, clock: FakeClock) -> None:
    """A one-shot host (a new sidecar per turn) with the same key narrows at once; another
    key re-takes the view. The file holds the key, which is a fingerprint, not config."""
    state = tmp_path / "surface.json"

    async def one_shot(key: str, run: str) -> dict[str, Any]:
        host = InProcessHost(TOOLS, PROMPT, clock=clock)
        config = {"surfaceStateFile": str(state), **PATIENT}
        assert (await host.call("configure", config=config))["result"]["ok"]
        ctx = {"sessionId": "s1", "runId": run}
        answer = await host.call("resolve", event={"prompt": PROMPT}, ctx=ctx, host=keyed(key))
        await host.call("observe_surface", tools=TOOLS, ctx={"runId": run})
        return dict(answer["result"])

    assert (await one_shot("k1", "r1"))["reasonCodes"] == ["surface_unknown_abstain"]
    assert json.loads(state.read_text())["surfaceKey"] == "k1"
    clock.advance(SURFACE_REFRESH_S * 2)
    assert (await one_shot("k1", "r2"))["toolsAllow"] is not None
    assert (await one_shot("k2", "r3"))["reasonCodes"] == REFRESH
    assert json.loads(state.read_text())["surfaceKey"] == "k2"
    assert (await one_shot("k2", "r4"))["toolsAllow"] is not None


async def test_each_agent_sees_its_own_surface_once_per_key(clock: FakeClock) -> None:
    """Agents can have their own tool policies: the view taken on one agent's turn does not
    show a tool only another agent has, so each agent's first turn under a key re-takes it."""
    host = InProcessHost(TOOLS, PROMPT, clock=clock)
    await host.start(**PATIENT)
    first = await host.turn(host=keyed("k1"), agent="main")
    assert first["reasonCodes"] == REFRESH  # the view taken without a key
    assert (await host.turn(host=keyed("k1"), agent="main"))["toolsAllow"] is not None
    prompt = "create a jira ticket for the login bug"
    coder = await host.turn(prompt, host=keyed("k1"), agent="coder", shown=[*TOOLS, NEW_TOOL])
    assert coder["reasonCodes"] == REFRESH  # coder's first turn under k1
    again = await host.turn(prompt, host=keyed("k1"), agent="coder")
    assert again["toolsAllow"] and "jira_create" in again["toolsAllow"]
    assert (await host.turn(host=keyed("k1"), agent="main"))["toolsAllow"] is not None
    changed = await host.turn(host=keyed("k2"), agent="main")
    assert changed["reasonCodes"] == REFRESH  # a new key: every agent re-takes it once
    assert (await host.turn(prompt, host=keyed("k2"), agent="coder"))["reasonCodes"] == REFRESH
    assert (await host.turn(host=keyed("k2"), agent="coder"))["toolsAllow"] is not None
    huge = await host.turn(host=keyed("k2"), agent="a" * 300)  # not kept: no per-agent view
    assert huge["toolsAllow"] is not None
