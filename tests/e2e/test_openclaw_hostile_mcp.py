"""Real OpenClaw + a hostile stdio MCP server + the real sidecar (offline classifier).

The server (``tests/fixtures/mini_mcp_server.py`` with ``MINI_MCP_FLOOD``) lists 1,200 tools of
about 1.9 KB each — 2.3 MB of descriptions, over the resolver's 2,000,000-character surface
budget — among them 300 decoys whose descriptions copy the request's words and order the
classifier to pick them alone, and names past OpenClaw's 64 characters and with spaces and
accents, which OpenClaw renames; plus the one plain tool the request needs. It is what a
careless or malicious MCP server can publish, and what the issue's 515-tool server did to an
agent that timed out until its tools were filtered.

``test_a_hostile_mcp_surface_is_narrowed_and_the_turn_completes``: ``resolver install openclaw``
lists the server's tools (``resolver openclaw sync-mcp``), the Gateway starts the server over
stdio, the first turn abstains (OpenClaw's own surface not yet seen: every tool is sent), and
the export turn is narrowed to a small set that holds the needed tool; the mock model calls it,
OpenClaw runs it on the server and the model gets its result. Nothing a tool list holds breaks
the turn.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

from .harness import OpenClawHome, module_sidecar
from .mock_llm import LoggedRequest, MockLLM, PrimaryReply, ToolCall
from .openclaw_env import REPO_ROOT, OpenClawInstall
from .test_openclaw_real_sidecar import (
    GATEWAY_FULL_SURFACE,
    host_expected,
    receipt,
    telemetry_path,
    wait_telemetry,
)

pytestmark = pytest.mark.e2e

SERVER = REPO_ROOT / "tests" / "fixtures" / "mini_mcp_server.py"
FLOOD = 1200
LISTED = FLOOD + 1  # and the plain tool
NEEDED = "flood__export_ledger_csv"
WARM_PROMPT = "Hello! What can you help me with today?"
EXPORT_PROMPT = "Export the ledger as a CSV file with the flood server"
MAX_ALLOWED = 40
"""The narrowed set: the core tools and the classifier's picks (at most 24) — not the decoys'."""


def flood_server() -> dict[str, object]:
    return {
        "command": sys.executable,
        "args": [str(SERVER)],
        "env": {"MINI_MCP_FLOOD": str(FLOOD), "MINI_MCP_PAGE": "400"},
        "requestTimeoutMs": 20_000,
    }


def export_model(req: LoggedRequest) -> PrimaryReply:
    """The mock model: on the export turn, call the tool if it was sent; then answer."""
    answered = any(m.get("role") == "tool" for m in req.body.get("messages") or [])
    user = " ".join(
        json.dumps(m.get("content")) for m in req.body.get("messages") or [] if m["role"] == "user"
    )
    if "Export the ledger" in user and NEEDED in req.tool_names and not answered:
        return PrimaryReply(tool_calls=(ToolCall(NEEDED, {"path": "ledger.csv"}, id="call_x1"),))
    return PrimaryReply(text="Done.")


def test_a_hostile_mcp_surface_is_narrowed_and_the_turn_completes(
    tmp_path: Path,
    openclaw_install: OpenClawInstall,
    openclaw_home: OpenClawHome,
    mock_llm: MockLLM,
) -> None:
    mock_llm.primary_responder = export_model
    openclaw_home.write_config(None, extra={"mcp": {"servers": {"flood": flood_server()}}})
    done = openclaw_home.install_with_resolver_cli(
        module_sidecar(),
        {"logDecisions": True, "telemetryFile": str(telemetry_path(openclaw_home))},
    )
    assert f"flood: {LISTED} tools" in done.stdout, done.stdout + done.stderr

    (_, second), log = openclaw_home.gateway_turns(WARM_PROMPT, EXPORT_PROMPT, timeout=300)

    turn1, *turn2 = mock_llm.primary_requests
    full = set(turn1.tool_names)
    flood = {n for n in full if n.startswith("flood__")}
    assert len(flood) == LISTED, (
        len(flood),
        [x for x in log.splitlines() if "mcp" in x.lower() or "flood" in x.lower()][-30:],
    )  # OpenClaw sent every one on the abstaining turn
    assert len(full) == GATEWAY_FULL_SURFACE + LISTED

    lines = wait_telemetry(openclaw_home, 2)
    assert lines[0]["toolsAllow"] is None  # OpenClaw's own surface not seen yet
    line = lines[1]
    assert line["sessionId"] == receipt(second)["sessionId"]
    assert line["source"] == "offline", line
    assert "description_truncated" in line["reasonCodes"], line["reasonCodes"]
    allowed = set(line["toolsAllow"] or [])
    assert NEEDED in allowed, sorted(allowed)
    assert allowed <= full and len(allowed) <= MAX_ALLOWED, sorted(allowed)

    # The export turn: narrowed to exactly toolsAllow (the call, then the request after its
    # result), a small fraction of the bytes, and OpenClaw ran the call on the server.
    assert len(turn2) == 2, [len(r.tool_names) for r in turn2]
    for req in turn2:
        assert set(req.tool_names) == host_expected(allowed, full), sorted(req.tool_names)
    assert turn2[0].tools_bytes * 20 <= turn1.tools_bytes, (turn2[0].tools_bytes, turn1.tools_bytes)
    results = [m for m in turn2[1].body["messages"] if m.get("role") == "tool"]
    assert len(results) == 1 and "done, 3 rows" in json.dumps(results[0]), results
