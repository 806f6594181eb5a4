"""Shadow telemetry recorded by the real OpenClaw sidecar (a child process over stdio).

A plain module (not a conftest): the tuning tests import it by name.

The host surface is the default OpenClaw surface plus three tools of a small business
deployment. The offline classifier misses `ledger_post` and `crm_lookup` on the way users
actually ask for them; the primary model called them (reported with ``observe_tool_calls``).
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

from sidecar_support import Sidecar

from resolver._surface import default_surface

CUSTOM_TOOLS = [
    {"name": "ledger_post", "description": "Record a transaction in the accounting ledger."},
    {"name": "flight_status", "description": "Look up the status of a flight by flight number."},
    {"name": "crm_lookup", "description": "Look up a customer record in the CRM."},
]

TRAINING: list[tuple[str, list[str]]] = [
    # (prompt, tools the primary model called)
    ("I paid 40 euros for groceries today, log it", ["ledger_post"]),
    ("spent 12 euros on lunch, keep track of that expense", ["ledger_post"]),
    ("log that I paid the plumber 80 euros", ["ledger_post"]),
    ("note the expense: taxi 25 euros, paid cash", ["ledger_post"]),
    ("send a message to Anna saying the meeting moved", ["message", "crm_lookup"]),
    ("message Anna that I will call her tomorrow", ["message", "crm_lookup"]),
    ("is flight LH123 delayed?", ["flight_status"]),
    ("what's the status of flight BA2490", ["flight_status"]),
    ("search the web for the latest PostgreSQL release", ["web_search"]),
    ("thanks, that's all", []),
]
"""Shadow turns of one session (after a first "hello" turn)."""

HELD_OUT = [
    "I spent 30 euros on books yesterday",
    "my expense for dinner was 45 euros, paid by card",
]
"""Prompts that are not in the telemetry: the fix must generalize to them."""


def host_tools() -> list[dict[str, str]]:
    base = [{"name": t.name, "description": t.description} for t in default_surface()]
    return base + CUSTOM_TOOLS


def record_shadow_telemetry(config: dict[str, Any], home: Path) -> dict[str, Any]:
    """Run the sidecar over `TRAINING` with `config`, one frame at a time as a host would
    (each answered before the next is sent); return the answers by frame id."""
    ctx = {"sessionId": "s1", "agentId": "main"}
    answers: dict[str, Any] = {}
    with Sidecar(env={**os.environ, "HOME": str(home)}) as sidecar:

        def send(frame_id: str, method: str, **params: Any) -> None:
            answers[frame_id] = sidecar.call(frame_id, method, **params)

        send("c", "configure", config=config)
        send("o", "observe_surface", tools=host_tools(), ctx={"runId": "r0"})
        send("r0", "resolve", event={"prompt": "hello"}, ctx={**ctx, "runId": "r0"})
        for i, (prompt, used) in enumerate(TRAINING, start=1):
            run = {**ctx, "runId": f"r{i}"}
            send(f"r{i}", "resolve", event={"prompt": prompt}, ctx=run)
            for j, name in enumerate(used):
                call = {"name": name, "ok": True, "toolCallId": f"call-{i}-{j}"}
                send(f"t{i}-{j}", "observe_tool_calls", calls=[call], ctx=run)
        assert sidecar.close(timeout=60) == 0, sidecar.stderr()
    return answers


def read_lines(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]
