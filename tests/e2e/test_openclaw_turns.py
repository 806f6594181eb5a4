"""Real OpenClaw turns with the extension loaded and a fake sidecar behind it.

Each test runs ``openclaw agent --local`` once (about 13-17 s on 2 cores) against the loopback
mock model and checks the ``tools`` OpenClaw sent to the primary model.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path

import pytest

from .harness import AgentRun, OpenClawHome, SidecarSpec
from .mock_llm import LoggedRequest, MockLLM, PrimaryReply, ToolCall

pytestmark = pytest.mark.e2e

PROMPT = "Read notes.txt and search the web for today's news about it."
FULL_SURFACE = 54
FULL_SURFACE_BYTES = 104_829  # OPENCLAW.md, measured on 2026.9.6 with tools.toolSearch=false
SHORT_DEADLINE_MS = 1500  # sidecarTimeoutMs for the tests that wait for a deadline
MakeSidecar = Callable[..., SidecarSpec]


def run_turn(home: OpenClawHome, prompt: str = PROMPT) -> AgentRun:
    run = home.run_agent(prompt)
    assert run.returncode == 0, f"openclaw failed:\n{run.stdout[-2000:]}\n{run.stderr[-4000:]}"
    reply = run.json()
    assert reply is not None, run.stdout[-2000:]
    return run


def single_primary(mock: MockLLM) -> LoggedRequest:
    assert len(mock.primary_requests) == 1, [r.tool_names for r in mock.primary_requests]
    return mock.primary_requests[0]


def assert_full_surface(mock: MockLLM) -> None:
    req = single_primary(mock)
    assert len(req.tool_names) == FULL_SURFACE, req.tool_names
    assert req.tools_bytes == FULL_SURFACE_BYTES


def test_without_the_plugin_the_model_gets_all_54_tools(
    openclaw_home: OpenClawHome, mock_llm: MockLLM
) -> None:
    """Baseline: no plugin configured, the primary request carries the default 54-tool surface."""
    openclaw_home.write_config(None)
    run_turn(openclaw_home)
    assert_full_surface(mock_llm)
    assert mock_llm.classifier_requests == []


def test_sidecar_answer_narrows_the_primary_request_to_exactly_those_tools(
    openclaw_home: OpenClawHome, mock_llm: MockLLM, make_sidecar: MakeSidecar
) -> None:
    """A sidecar toolsAllow of read + web_search reaches the model as exactly those two tools."""
    sidecar = make_sidecar("fixed", tools=["read", "web_search"])
    openclaw_home.write_config(sidecar, {"logDecisions": True})
    run = run_turn(openclaw_home)

    req = single_primary(mock_llm)
    assert sorted(req.tool_names) == ["read", "web_search"]
    assert "toolsAllow=2 source=fake" in run.stderr

    # The protocol as the sidecar saw it: configure first in every child, then resolve.
    frames = sidecar.frames()
    starts = [i for i, f in enumerate(frames) if f.get("event") == "start"]
    assert starts, frames
    for i in starts:
        nxt = frames[i + 1] if i + 1 < len(frames) else None
        assert nxt is None or nxt.get("method") == "configure", frames
    (configure, *_) = sidecar.requests("configure")
    # Exactly the keys set in openclaw.json: the manifest declares no defaults for OpenClaw
    # to fill in, so the resolver's own defaults apply.
    assert configure["params"]["config"] == {
        "pythonPath": sidecar.python_path,
        "logDecisions": True,
    }
    (resolve,) = sidecar.requests("resolve")
    params = resolve["params"]
    assert params["event"]["prompt"].endswith(PROMPT)
    assert isinstance(params["event"]["messages"], list)
    ctx = params["ctx"]
    assert ctx["agentId"] == "main"
    for key in ("sessionId", "sessionKey", "runId", "modelId"):
        assert isinstance(ctx.get(key), str) and ctx[key], (key, ctx)
    # llm_input reports the surface actually sent: the narrowed one, with descriptions.
    (surface,) = sidecar.requests("observe_surface")
    sent = surface["params"]["tools"]
    assert sorted(t["name"] for t in sent) == ["read", "web_search"]
    assert all(t["description"] for t in sent)
    assert surface["params"]["ctx"]["runId"] == ctx["runId"]


def test_abstaining_sidecar_leaves_the_full_surface(
    openclaw_home: OpenClawHome, mock_llm: MockLLM, make_sidecar: MakeSidecar
) -> None:
    """toolsAllow null means abstain: the hook returns nothing and all 54 tools are sent."""
    sidecar = make_sidecar("fixed", tools=None)
    openclaw_home.write_config(sidecar)
    run_turn(openclaw_home)
    assert_full_surface(mock_llm)
    assert len(sidecar.requests("resolve")) == 1
    # The full surface is what llm_input reports when nothing narrowed it.
    (surface,) = sidecar.requests("observe_surface")
    assert len(surface["params"]["tools"]) == FULL_SURFACE


@pytest.mark.parametrize("mode", ["hang", "hang_start"], ids=["hang-on-resolve", "hang-at-start"])
def test_hanging_sidecar_costs_one_deadline_then_full_surface(
    openclaw_home: OpenClawHome, mock_llm: MockLLM, make_sidecar: MakeSidecar, mode: str
) -> None:
    """A sidecar that never answers: the turn goes on with all 54 tools after sidecarTimeoutMs."""
    sidecar = make_sidecar(mode)
    openclaw_home.write_config(sidecar, {"sidecarTimeoutMs": SHORT_DEADLINE_MS})
    run = run_turn(openclaw_home)
    assert_full_surface(mock_llm)
    if mode == "hang":
        assert "resolve timed out after 1500 ms" in run.stderr
    else:
        # Hung at start: the turn's resolve times out, unless a slow host start-up already
        # let the (off-turn) configure time out, in which case the resolve finds the child
        # retired and abstains at once. Either way: one recorded failure, full surface.
        assert any(
            text in run.stderr
            for text in ("resolve timed out after 1500 ms", "configure timed out after")
        ), run.stderr[-2000:]
    if mode == "hang":
        (resolve,) = sidecar.requests("resolve")
        waited = mock_llm.primary_requests[0].received_at - resolve["t"]
        assert SHORT_DEADLINE_MS / 1000 - 0.1 <= waited <= SHORT_DEADLINE_MS / 1000 + 4.0, waited
    # The killed child was replaced by a fresh one (configured, idle). (For a child hung at
    # start a replacement may still be in its back-off when the one-shot CLI exits.)
    starts = [f for f in sidecar.frames() if f.get("event") == "start"]
    assert len(starts) >= (2 if mode == "hang" else 1)


@pytest.mark.parametrize("mode", ["crash", "crash_on_resolve"])
def test_crashing_sidecar_gives_the_full_surface(
    openclaw_home: OpenClawHome, mock_llm: MockLLM, make_sidecar: MakeSidecar, mode: str
) -> None:
    """A sidecar that exits (at start, or mid-call) fails open at once: all 54 tools."""
    sidecar = make_sidecar(mode)
    openclaw_home.write_config(sidecar)
    run = run_turn(openclaw_home)
    assert_full_surface(mock_llm)
    assert "sidecar failure" in run.stderr
    assert "fake sidecar: crashing" in run.stderr  # stderr tail is reported


def test_sidecar_printing_garbage_gives_the_full_surface(
    openclaw_home: OpenClawHome, mock_llm: MockLLM, make_sidecar: MakeSidecar
) -> None:
    """A sidecar whose stdout is not frames is retired: all 54 tools, no waiting."""
    sidecar = make_sidecar("garbage")
    openclaw_home.write_config(sidecar, {"sidecarTimeoutMs": 14_000})
    run = run_turn(openclaw_home)
    assert_full_surface(mock_llm)
    assert "non-frame on stdout" in run.stderr
    assert "timed out" not in run.stderr


def test_malformed_answer_never_becomes_a_malformed_toolsAllow(
    openclaw_home: OpenClawHome, mock_llm: MockLLM, make_sidecar: MakeSidecar
) -> None:
    """OpenClaw turns a malformed toolsAllow into [] (no tools); the extension abstains instead.

    The other malformed shapes (non-string items, empty names, objects, error frames) are
    covered without OpenClaw in extension_unit.test.mjs.
    """
    sidecar = make_sidecar("bad_result", tools="read")
    openclaw_home.write_config(sidecar)
    run_turn(openclaw_home)
    assert_full_surface(mock_llm)


def test_tool_calls_the_model_makes_are_reported_after_the_call(
    openclaw_home: OpenClawHome, mock_llm: MockLLM, make_sidecar: MakeSidecar
) -> None:
    """after_tool_call sends observe_tool_calls with the tool's name for each executed call."""
    workspace = openclaw_home.home / ".openclaw" / "workspace"
    workspace.mkdir(parents=True, exist_ok=True)
    (workspace / "notes.txt").write_text("the mock's notes\n")

    def primary(req: LoggedRequest) -> PrimaryReply:
        answered = any(m.get("role") == "tool" for m in req.body.get("messages", []))
        if answered:
            return PrimaryReply(text="Done reading.")
        return PrimaryReply(tool_calls=(ToolCall("read", {"path": "notes.txt"}, id="call_r1"),))

    mock_llm.primary_responder = primary
    sidecar = make_sidecar("fixed", tools=["read", "web_search"])
    openclaw_home.write_config(sidecar)
    run_turn(openclaw_home)

    assert len(mock_llm.primary_requests) == 2
    for req in mock_llm.primary_requests:
        assert sorted(req.tool_names) == ["read", "web_search"]
    tool_msgs = [
        m for m in mock_llm.primary_requests[1].body["messages"] if m.get("role") == "tool"
    ]
    assert tool_msgs and "the mock's notes" in str(tool_msgs[0].get("content"))

    (calls,) = sidecar.requests("observe_tool_calls")
    (call,) = calls["params"]["calls"]
    assert call["name"] == "read"
    assert call["ok"] is True
    assert call["toolCallId"] == "call_r1"
    (resolve,) = sidecar.requests("resolve")  # one resolve per turn, not per model call
    assert len(sidecar.requests("observe_surface")) == 1  # llm_input: once per turn, too
    assert calls["params"]["ctx"]["runId"] == resolve["params"]["ctx"]["runId"]


@pytest.mark.parametrize(
    ("tool_search", "expected"),
    [
        (None, ["read", "tool_call", "tool_describe", "tool_search"]),
        (True, ["read", "tool_search_code"]),
    ],
    ids=["toolSearch-default", "toolSearch-true"],
)
def test_with_tool_search_on_the_host_adds_its_control_tools(
    openclaw_home: OpenClawHome,
    mock_llm: MockLLM,
    make_sidecar: MakeSidecar,
    tool_search: bool | None,
    expected: list[str],
) -> None:
    """Host-required tools: with Tool Search on, toolsAllow ["read"] still sends its controls.

    Left at OpenClaw's default, Tool Search adds tool_search, tool_describe and tool_call;
    ``tools.toolSearch: true`` selects the code-mode control, tool_search_code.
    """
    sidecar = make_sidecar("fixed", tools=["read"])
    openclaw_home.write_config(sidecar, tool_search=tool_search)
    run_turn(openclaw_home)
    assert sorted(single_primary(mock_llm).tool_names) == expected


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except OSError:
        return False
    # A zombie still answers kill(0); it has exited all the same.
    stat = Path(f"/proc/{pid}/stat")
    return stat.exists() and stat.read_text().split(") ", 1)[-1][:1] != "Z"


def test_gateway_plugin_reload_replaces_the_sidecar_and_leaves_no_orphan(
    openclaw_home: OpenClawHome, mock_llm: MockLLM, make_sidecar: MakeSidecar
) -> None:
    """`openclaw plugins reload` disposes the old instance: its child gets EOF and exits."""
    sidecar = make_sidecar("fixed", tools=["read", "web_search"])
    openclaw_home.write_config(sidecar)

    def pids() -> list[int]:
        return [f["pid"] for f in sidecar.frames() if f.get("event") == "start"]

    with openclaw_home.start_gateway() as gateway:
        assert gateway.turn("Read notes.txt").returncode == 0
        (first,) = pids()
        reload = openclaw_home.openclaw("plugins", "reload", "openclaw-tool-resolver", "--json")
        assert reload.returncode == 0, reload.stderr[-2000:]
        assert gateway.turn("Read notes.txt again").returncode == 0
        assert not _alive(first)
        assert len(pids()) == 2
        assert [pid for pid in pids() if _alive(pid)] == [pids()[1]]  # exactly one child
    assert [f.get("event") for f in sidecar.frames()].count("eof") >= 1
    assert [len(r.tool_names) for r in mock_llm.primary_requests] == [2, 2]
    assert not any(_alive(pid) for pid in pids())
