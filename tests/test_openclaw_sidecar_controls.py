"""The sidecar's controls (resolver/hosts/openclaw/_sidecar.py): `refresh`, `clear_reuse`, the
``/resolver refresh`` prompt form, and configure's null file keys."""

from __future__ import annotations

from typing import Any

from sidecar_support import InProcessHost
from sidecar_support import Sidecar as ChildSidecar

from resolver.hosts.openclaw._sidecar import control_prompt

PROMPT = "search the web for flights to Lisbon"
TOOLS = [{"name": "jira_search", "description": "Search Jira tickets"}]


async def test_refresh_keeps_the_full_surface_next_turn_then_picks_afresh() -> None:
    """After `refresh` the session's next turn abstains (the host shows its whole surface) and
    the turn after it is classified again instead of reusing the stored decision."""
    host = InProcessHost(TOOLS, PROMPT)
    await host.start()
    first = await host.turn()
    assert first["toolsAllow"] and "web_search" in first["toolsAllow"]
    assert "route_reused" in (await host.turn())["reasonCodes"]
    done = await host.call("refresh", ctx={"sessionKey": "agent:main:s1"})
    assert done["result"]["ok"] is True
    refreshed = await host.turn()
    assert refreshed["toolsAllow"] is None
    assert refreshed["reasonCodes"] == ["surface_refresh_abstain"]
    fresh = await host.turn()
    assert fresh["toolsAllow"] and "reuse_miss_refresh" in fresh["reasonCodes"]
    assert "route_reused" in (await host.turn())["reasonCodes"]  # back to normal


async def test_refresh_concerns_only_the_named_session() -> None:
    """Another session's turns go on as before."""
    host = InProcessHost(TOOLS, PROMPT)
    await host.start()
    await host.turn(session="s2")
    await host.call("refresh", ctx={"sessionId": "s1"})
    assert "route_reused" in (await host.turn(session="s2"))["reasonCodes"]


async def test_refresh_without_the_surface_only_skips_reuse() -> None:
    """``surface: false``: the next turn is narrowed, classified afresh."""
    host = InProcessHost(TOOLS, PROMPT)
    await host.start()
    await host.turn()
    await host.call("refresh", sessionId="s1", surface=False)
    answer = await host.turn()
    assert answer["toolsAllow"] and "reuse_miss_refresh" in answer["reasonCodes"]


async def test_clear_reuse_for_one_session_or_all() -> None:
    """clear_reuse drops one session's decisions (counted) or everyone's with all: true."""
    host = InProcessHost(TOOLS, PROMPT)
    await host.start()
    await host.turn(session="s1")
    await host.turn(session="s2")
    one = await host.call("clear_reuse", ctx={"sessionId": "s1"})
    assert one["result"] == {"ok": True, "cleared": 1}
    assert "reuse_miss_new" in (await host.turn(session="s1"))["reasonCodes"]
    assert "route_reused" in (await host.turn(session="s2"))["reasonCodes"]
    everyone = await host.call("clear_reuse", all=True)
    assert everyone["result"] == {"ok": True, "cleared": 2}


async def test_a_control_without_a_session_is_an_error_frame() -> None:
    """refresh/clear_reuse must name a session or pass all: true (invalid_params)."""
    host = InProcessHost(TOOLS, PROMPT)
    await host.start()
    for method in ("refresh", "clear_reuse"):
        answer = await host.call(method)
        assert answer["error"]["code"] == "invalid_params"
        assert '"all": true' in answer["error"]["message"]


async def test_configure_keeps_a_null_file_key_as_off() -> None:
    """keywordCacheFile null (or "") in the plugin config keeps the cache in memory."""
    for value in (None, ""):
        host = InProcessHost(TOOLS, PROMPT)
        assert (await host.call("configure", config={"keywordCacheFile": value}))["result"]
        assert host.sidecar.resolver is not None and host.sidecar.resolver.cache.path is None


def test_control_prompt_forms() -> None:
    """Only a message that is just the command counts (a host's [envelope] prefix is fine)."""
    assert control_prompt({"prompt": "/resolver refresh"}) == ("refresh", False)
    assert control_prompt({"prompt": "[Mon 09:00] /Resolver  clear all"}) == ("clear", True)
    assert control_prompt({"prompt": "x", "currentUserMessage": "/resolver clear"}) == (
        "clear",
        False,
    )
    assert control_prompt({"prompt": "what does /resolver refresh do?"}) is None
    assert control_prompt({"prompt": "please /resolver refresh the list"}) is None


def test_prompt_form_refreshes_over_stdio() -> None:
    """A turn whose message is `/resolver refresh` (openclaw agent --message does not run chat
    commands) keeps the full surface, and the next turn of the session is classified afresh."""
    with ChildSidecar() as child:
        child.call("c", "configure", config={"surfaceStateFile": ""})
        child.call("o", "observe_surface", tools=TOOLS, ctx={})

        def turn(run: str, prompt: str) -> dict[str, Any]:
            ctx = {"sessionId": "s1", "runId": run}
            answer = child.call(run, "resolve", event={"prompt": prompt}, ctx=ctx)
            child.call(f"o-{run}", "observe_surface", tools=TOOLS, ctx={"runId": run})
            return dict(answer["result"])

        turn("r1", PROMPT)
        assert "route_reused" in turn("r2", PROMPT)["reasonCodes"]
        control = turn("r3", "/resolver refresh")
        assert control["toolsAllow"] is None
        assert control["reasonCodes"] == ["surface_refresh_abstain"]
        fresh = turn("r4", PROMPT)
        assert fresh["toolsAllow"] and "reuse_miss_refresh" in fresh["reasonCodes"]
        assert child.close() == 0
