"""Real OpenClaw + real stdio MCP servers + the real sidecar (offline classifier).

Six pinned MCP servers (``benchmark/mcp/servers.json``; installed and cached by
``mcp_env.ensure_mcp_servers``) are configured under ``mcp.servers``; OpenClaw starts them over
stdio itself. The plugin is installed with ``resolver install openclaw``, with no classifier
endpoint (the offline classifier) and ``tools.toolSearch=false``. The turns of a test go through
one Gateway in one session, whose MCP runtime (the servers' processes) outlives the turn.

* ``test_gateway_narrows_mcp_tools_after_install`` (issue #18, item 2): ``resolver install
  openclaw`` lists the six servers' tools itself (``resolver openclaw sync-mcp``: OpenClaw
  2026.9.6's ``llm_input`` lists only OpenClaw's own tools, never MCP tools). Turn 1 abstains
  (OpenClaw's own surface not yet seen) and the model gets every tool, MCP tools included; turn
  2, a GitHub request, is narrowed to a set holding ``github__create_issue`` and far fewer tools
  than the full surface, exactly the telemetry's ``toolsAllow``; the model calls the MCP tool
  (OpenClaw runs it on the real server, which fails without a real token: that is fine) and its
  second request is narrowed the same way.
* ``test_gateway_narrows_mcp_tools_with_the_llm_classifier`` (issue #18, item 2, "and with the
  LLM classifier"): the same install with a classifier endpoint (the loopback mock stands in for
  a paid model). The surface is over ``LLM_SHORTLIST_ABOVE`` tools, so the classifier reads the
  offline classifier's shortlist, OpenClaw's MCP names and the servers' own descriptions; its
  answer names the GitHub tool, which reaches the model (``source: llm``), and the model's call
  runs on the real server.
* ``test_gateway_keeps_mcp_tools_until_they_are_synced``: installed with ``--no-mcp-sync``, the
  sidecar knows the servers exist (the extension passes ``mcp.servers``) but not their tools, so
  the GitHub turn keeps the full surface (``mcp_surface_unknown_abstain``) instead of narrowing
  every MCP tool away. ``resolver openclaw sync-mcp`` run beside the live Gateway is picked up
  by the running sidecar: the next turn is narrowed, ``github__create_issue`` in it.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from .harness import OpenClawHome, module_sidecar
from .mcp_env import (
    McpServer,
    ensure_mcp_servers,
    load_pins,
    mcp_server_pids,
    openclaw_mcp_config,
    pins_hash,
)
from .mock_llm import ClassifierReply, LoggedRequest, MockLLM, PrimaryReply, ToolCall
from .openclaw_env import REPO_ROOT, OpenClawInstall, cache_dir
from .test_openclaw_real_sidecar import (
    CLASSIFIER_KEY,
    GATEWAY_FULL_SURFACE,
    TELEMETRY_TAG,
    assert_attributed,
    assert_key_never_leaks,
    host_expected,
    receipt,
    surface_state_path,
    telemetry_path,
    wait_for,
    wait_telemetry,
)

pytestmark = pytest.mark.e2e

SERVERS = ("filesystem", "memory", "everything", "sequential-thinking", "github", "slack")
MCP_TOOLS = {  # tools each server adds to the model's surface (docs/mcp-host-notes.md)
    "filesystem": 14,
    "memory": 11,
    "everything": 16,
    "sequential-thinking": 1,
    "github": 26,
    "slack": 8,
}
FULL = GATEWAY_FULL_SURFACE + sum(MCP_TOOLS.values())  # 55 + 76 = 131
NEEDED = "github__create_issue"
WARM_PROMPT = "Hello! What can you help me with today?"
GITHUB_PROMPT = "Open an issue in acme/webapp on GitHub titled 'login broken'"
SURFACE_FILE = REPO_ROOT / "benchmark" / "mcp" / "surface-openclaw-2026.9.6.json"
REQUEST_TIMEOUT_MS = 20_000
"""Per-server ``requestTimeoutMs``: also the ``tools/list`` deadline at catalog time (1.5 s
without it), which six servers starting at once on two busy cores can miss."""


def user_text(req: LoggedRequest) -> str:
    """Every user message of the request (OpenClaw may append its own context as a user
    message after the prompt)."""
    return " ".join(
        json.dumps(m.get("content"), ensure_ascii=False)
        for m in req.body.get("messages") or []
        if m.get("role") == "user"
    )


def github_model(req: LoggedRequest) -> PrimaryReply:
    """The mock model: on the GitHub turn, call the MCP tool if it was sent; then answer."""
    answered = any(m.get("role") == "tool" for m in req.body.get("messages") or [])
    if "login broken" in user_text(req) and NEEDED in req.tool_names and not answered:
        args = {"owner": "acme", "repo": "webapp", "title": "login broken"}
        return PrimaryReply(tool_calls=(ToolCall(NEEDED, args, id="call_gh1"),))
    return PrimaryReply(text="Done.")


def install(
    tmp_path: Path,
    openclaw_install: OpenClawInstall,
    home: OpenClawHome,
    *args: str,
    **plugin: Any,
) -> tuple[dict[str, McpServer], str]:
    """The six servers under ``mcp.servers``, then the plugin via ``resolver install openclaw``
    (offline classifier: no endpoint, no key; ``tools.toolSearch=false``). Returns the servers
    and the install's output."""
    servers = ensure_mcp_servers(tmp_path / "mcp-data", openclaw_install, only=list(SERVERS))
    assert set(servers) == set(SERVERS)
    mcp = openclaw_mcp_config(servers, requestTimeoutMs=REQUEST_TIMEOUT_MS)
    home.write_config(None, extra={"mcp": mcp})
    done = home.install_with_resolver_cli(
        module_sidecar(),
        {"logDecisions": True, "telemetryFile": str(telemetry_path(home)), **plugin},
        args=args,
    )
    config = home.read_config()
    assert set(config["mcp"]["servers"]) == set(SERVERS)  # the install kept the mcp section
    assert config["tools"]["toolSearch"] is False
    return servers, done.stdout


def mcp_servers_in(state: Path) -> dict[str, Any]:
    """The servers a listing wrote into the sidecar's surface state (none: {})."""
    try:
        found = json.loads(state.read_text()).get("mcpServers")
    except (OSError, ValueError):
        return {}
    return found if isinstance(found, dict) else {}


def marker_of(servers: dict[str, McpServer]) -> str:
    marker = str(cache_dir() / f"mcp-{pins_hash(load_pins())}")  # every server's script
    assert all(s.args[0].startswith(marker) for s in servers.values())
    return marker


def assert_narrowed_call(
    turn: list[LoggedRequest],
    line: dict[str, Any],
    full: set[str],
    full_bytes: int,
    source: str = "offline",
) -> None:
    """The GitHub turn: narrowed to exactly toolsAllow (both model calls), the MCP tool in it,
    far smaller than the full surface, and OpenClaw ran the call on the real server."""
    assert line["toolsAllow"] is not None, line
    assert line["source"] == source, line
    allowed = set(line["toolsAllow"])
    assert NEEDED in allowed, sorted(allowed)
    for req in turn:  # the call, then the request after the tool result
        assert set(req.tool_names) == host_expected(allowed, full), sorted(req.tool_names)
        assert len(req.tool_names) == len(set(req.tool_names))
    assert len(turn) == 2, [(len(r.tool_names), r.body.get("messages")) for r in turn]
    assert len(turn[0].tool_names) <= FULL // 4, sorted(turn[0].tool_names)
    assert turn[0].tools_bytes * 4 <= full_bytes
    assert line["surfaceAfter"]["tools"] == len(allowed)
    # OpenClaw ran the MCP tool and gave the model its result (an error without a real token).
    results = [m for m in turn[1].body["messages"] if m.get("role") == "tool"]
    assert len(results) == 1, results
    assert "fetch failed" in json.dumps(results[0]) or "github" in json.dumps(results[0]).lower()


def mcp_state_tools(home: OpenClawHome) -> dict[str, str]:
    state = json.loads(surface_state_path(home).read_text())
    return {n: d for n, d in state["tools"].items() if "__" in n}


def surface_mcp_tools() -> dict[str, str]:
    """The six servers' tools as OpenClaw sends them (benchmark/mcp/surface-*.json)."""
    surface = json.loads(SURFACE_FILE.read_text())["tools"]
    return {t["name"]: t["description"] for t in surface if t["name"].split("__")[0] in SERVERS}


def test_gateway_narrows_mcp_tools_after_install(
    tmp_path: Path,
    openclaw_install: OpenClawInstall,
    openclaw_home: OpenClawHome,
    mock_llm: MockLLM,
) -> None:
    mock_llm.primary_responder = github_model
    servers, installed = install(tmp_path, openclaw_install, openclaw_home)
    for server, count in MCP_TOOLS.items():
        assert f"mcp:       {server}: {count} tools" in installed, installed
    synced = mcp_state_tools(openclaw_home)
    assert set(synced) == set(surface_mcp_tools())  # OpenClaw's names, every one
    marker = marker_of(servers)

    with openclaw_home.start_gateway() as gateway:
        first = gateway.turn(WARM_PROMPT, timeout=240)
        pids_after_first = mcp_server_pids(gateway.proc.pid, marker)
        second = gateway.turn(GITHUB_PROMPT, timeout=240)
        pids_after_second = mcp_server_pids(gateway.proc.pid, marker)
        log = gateway.log()
    assert first.returncode == 0, first.stderr[-3000:] + log[-3000:]
    assert second.returncode == 0, second.stderr[-3000:] + log[-3000:]
    assert "failed to start server" not in log, log[-4000:]

    # One session: its MCP runtime started the servers once and kept them for turn 2.
    assert len(pids_after_first) >= len(SERVERS), (pids_after_first, log[-3000:])
    assert pids_after_second == pids_after_first

    turn1, *turn2 = mock_llm.primary_requests
    full = set(turn1.tool_names)

    # Turn 1: OpenClaw's own surface not seen yet -> abstain -> every OpenClaw and MCP tool.
    assert len(turn1.tool_names) == FULL, sorted(full)
    for server, count in MCP_TOOLS.items():
        assert sum(1 for n in full if n.startswith(f"{server}__")) == count, server
    assert set(synced) <= full  # the sync named every MCP tool as OpenClaw does
    lines = wait_telemetry(openclaw_home, 2)
    assert lines[0]["toolsAllow"] is None
    assert "surface_unknown_abstain" in lines[0]["reasonCodes"]

    # Turn 2: narrowed to exactly the resolved set, the GitHub MCP tool in it; it is called.
    line = lines[1]
    assert line["sessionId"] == receipt(second)["sessionId"]
    assert set(line["toolsAllow"] or []) <= full
    assert_narrowed_call(turn2, line, full, turn1.tools_bytes)


def listed_tools(req: LoggedRequest) -> list[str]:
    """The candidate tools a classifier request lists (``- name: description`` lines of its
    system message, inside the fenced tools block)."""
    system = next(m["content"] for m in req.body["messages"] if m.get("role") == "system")
    block = system.split("<tools>", 1)[1].split("</tools>", 1)[0]
    return [line[2:].split(":", 1)[0] for line in block.splitlines() if line.startswith("- ")]


def test_gateway_narrows_mcp_tools_with_the_llm_classifier(
    tmp_path: Path,
    openclaw_install: OpenClawInstall,
    openclaw_home: OpenClawHome,
    mock_llm: MockLLM,
) -> None:
    def classify(req: LoggedRequest) -> ClassifierReply:
        # a model that reads the request: the GitHub issue tool, when it was offered
        offered = [name for name in listed_tools(req) if name.endswith("create_issue")]
        return ClassifierReply(tools=tuple(offered), confidence=0.9)

    mock_llm.primary_responder = github_model
    mock_llm.classifier_responder = classify
    install(
        tmp_path,
        openclaw_install,
        openclaw_home,
        llmApiBase=mock_llm.base_url,
        llmApiKey=CLASSIFIER_KEY,
        llmModel="mock-classifier",
        llmTimeoutMs=10_000,
        telemetry={"tags": [TELEMETRY_TAG]},
    )
    (openclaw_home.home / "resolver-config.json").unlink()  # the key lives in openclaw.json

    (first, second), log = openclaw_home.gateway_turns(WARM_PROMPT, GITHUB_PROMPT)

    turn1, *turn2 = mock_llm.primary_requests
    full = set(turn1.tool_names)
    assert len(full) == FULL
    line1, line2 = wait_telemetry(openclaw_home, 2)
    assert line1["toolsAllow"] is None  # the surface is not known before turn 1
    assert "llm_selected" in line2["reasonCodes"], line2
    assert_narrowed_call(turn2, line2, full, turn1.tools_bytes, source="llm")

    # The classifier read a shortlist of the surface (not all 131 tools), with OpenClaw's MCP
    # names and the servers' own descriptions (no catalog entry for them).
    (classify_req,) = mock_llm.classifier_requests
    listed = listed_tools(classify_req)
    assert NEEDED in listed, listed
    assert sum(1 for n in listed if "__" in n) >= 10, listed
    assert len(listed) < FULL // 2, len(listed)
    system = classify_req.body["messages"][0]["content"]
    assert surface_mcp_tools()[NEEDED][:40] in system
    assert_attributed(classify_req)
    assert_key_never_leaks(openclaw_home, [first.stdout, first.stderr, second.stderr, log])


@pytest.mark.parametrize("auto", [False, True], ids=["by-command", "in-the-background"])
def test_gateway_keeps_mcp_tools_until_they_are_synced(
    tmp_path: Path,
    openclaw_install: OpenClawInstall,
    openclaw_home: OpenClawHome,
    mock_llm: MockLLM,
    auto: bool,
) -> None:
    """Installed without listing the MCP tools: the GitHub turn keeps the full surface; then
    either `resolver openclaw sync-mcp` (mcpAutoSync false) or the sidecar itself (default)
    lists them, and the next turn is narrowed with the GitHub tool in it."""
    servers, installed = install(
        tmp_path, openclaw_install, openclaw_home, "--no-mcp-sync", mcpAutoSync=auto
    )
    assert "mcp:" not in installed
    marker_of(servers)
    sidecar = module_sidecar()
    state = surface_state_path(openclaw_home)

    with openclaw_home.start_gateway() as gateway:
        gateway.turn(WARM_PROMPT, timeout=240)  # abstains: OpenClaw's own surface not seen yet
        wait_telemetry(openclaw_home, 1)
        unsynced = gateway.turn(GITHUB_PROMPT, timeout=240)
        lines = wait_telemetry(openclaw_home, 2)
        if auto:
            listed = lambda: "github" in mcp_servers_in(state)  # noqa: E731
            wait_for(listed, "the sidecar's background listing", timeout=180)
        else:
            assert mcp_servers_in(state) == {}  # nothing lists them but the command
            where = str(openclaw_home.config_path.parent)
            synced = openclaw_home.resolver_cli(
                sidecar, "openclaw", "sync-mcp", "--openclaw-home", where
            )
            assert synced.returncode == 0, synced.stdout + synced.stderr
            assert "github: 26 tools" in synced.stdout
        after = gateway.turn("Open a GitHub issue in acme/api titled 'flaky test'", timeout=240)
        log = gateway.log()
    assert unsynced.returncode == 0 and after.returncode == 0, log[-3000:]
    if auto:
        assert "listing them in the background" in log, log[-3000:]

    requests = mock_llm.primary_requests
    full = set(requests[0].tool_names)
    assert len(full) == FULL
    # The GitHub turn before the sync: the full surface (MCP tools kept), with the reason.
    assert lines[1]["toolsAllow"] is None
    assert lines[1]["reasonCodes"] == ["mcp_surface_unknown_abstain"]
    assert set(requests[1].tool_names) == full
    assert "are not known" in log and "resolver openclaw sync-mcp" in log
    # After the sync (the live sidecar re-read the state file): narrowed, MCP tool included.
    (line,) = wait_telemetry(openclaw_home, 3)[2:]
    allowed = set(line["toolsAllow"] or [])
    assert NEEDED in allowed, line
    assert set(requests[-1].tool_names) == host_expected(allowed, full)
    assert len(allowed) <= FULL // 4
