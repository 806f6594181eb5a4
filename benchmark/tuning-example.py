#!/usr/bin/env python3
"""The tuning loop on shadow telemetry recorded by the real OpenClaw sidecar (a child process).

    python benchmark/tuning-example.py [--out benchmark/results/tuning-example]

1. Records shadow turns (shadowSampleRate 1) through ``python -m resolver.hosts.openclaw``:
   the OpenClaw 2026.9.6 surface plus three tools of a small business deployment; after each
   turn the tools the primary model called are reported with ``observe_tool_calls``.
2. ``resolver telemetry recall`` on that file.
3. ``resolver tune propose`` against the full curated set and the default frozen margins.
4. ``resolver tune apply --dry-run`` of the first entry that passed, and how a fresh resolver
   with the entry applied answers held-out prompts (never in the telemetry).

Writes telemetry.jsonl, tools.json, the proposal (.json/.md) and summary.md into --out.
"""

from __future__ import annotations

import argparse
import contextlib
import io
import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from resolver import Resolver, ResolverConfig, ToolInfo, TurnRequest
from resolver._surface import default_surface
from resolver.cli import main
from resolver.tuning import load_proposal

CUSTOM = [
    {"name": "ledger_post", "description": "Record a transaction in the accounting ledger."},
    {"name": "flight_status", "description": "Look up the status of a flight by flight number."},
    {"name": "crm_lookup", "description": "Look up a customer record in the CRM."},
]
TURNS = [
    ("I paid 40 euros for groceries today, log it", ["ledger_post"]),
    ("spent 12 euros on lunch, keep track of that expense", ["ledger_post"]),
    ("log that I paid the plumber 80 euros", ["ledger_post"]),
    ("note the expense: taxi 25 euros, paid cash", ["ledger_post"]),
    ("the hotel was 210 euros, add the expense please", ["ledger_post"]),
    ("what does customer Acme Corp owe us? check their account", ["crm_lookup"]),
    ("pull up the account of customer Baker & Sons", ["crm_lookup"]),
    ("is flight LH123 delayed?", ["flight_status"]),
    ("what's the status of flight BA2490", ["flight_status"]),
    ("search the web for the latest PostgreSQL release", ["web_search"]),
    ("read notes.txt and summarise it", ["read"]),
    ("remind me tomorrow at 9 to call mom", ["cron"]),
    ("send a message to the team channel saying I'm late", ["message"]),
    ("thanks, that's all", []),
]
HELD_OUT = [
    ("I spent 30 euros on books yesterday", "ledger_post"),
    ("my expense for dinner was 45 euros, paid by card", "ledger_post"),
    ("which plan is customer Delta Ltd on? look at their account", "crm_lookup"),
]


def record(telemetry: Path, home: Path) -> None:
    tools = [{"name": t.name, "description": t.description} for t in default_surface()] + CUSTOM
    proc = subprocess.Popen(
        [sys.executable, "-m", "resolver.hosts.openclaw"],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
        env={**os.environ, "HOME": str(home), "PYTHONPATH": str(REPO)},
    )
    assert proc.stdin is not None and proc.stdout is not None

    def send(method: str, **params: object) -> None:
        assert proc.stdin is not None and proc.stdout is not None
        proc.stdin.write(json.dumps({"id": method, "method": method, "params": params}) + "\n")
        proc.stdin.flush()
        proc.stdout.readline()

    config = {"telemetryFile": str(telemetry), "shadowSampleRate": 1, "catalogOverridesFile": None}
    send("configure", config=config)
    send("observe_surface", tools=tools, ctx={"runId": "r0"})
    ctx = {"sessionId": "example", "agentId": "main"}
    send("resolve", event={"prompt": "hello"}, ctx={**ctx, "runId": "r0"})
    for i, (prompt, used) in enumerate(TURNS, start=1):
        run = {**ctx, "runId": f"r{i}"}
        send("resolve", event={"prompt": prompt}, ctx=run)
        for name in used:
            send("observe_tool_calls", calls=[{"name": name, "ok": True}], ctx=run)
    proc.stdin.close()
    proc.wait(timeout=60)
    telemetry.with_name(telemetry.name + ".lock").unlink(missing_ok=True)  # the writer's flock
    (telemetry.parent / "tools.json").write_text(json.dumps(tools, indent=1) + "\n")


def cli(*argv: str) -> str:
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        code = main(list(argv))
    if code:
        raise SystemExit(f"resolver {' '.join(argv)} exited {code}")
    return out.getvalue()


def run(out: Path) -> None:
    os.chdir(REPO)  # relative paths in the proposal and the summary
    out = Path(os.path.relpath(out, REPO))
    out.mkdir(parents=True, exist_ok=True)
    for old in out.glob("*-tuning.*"):
        old.unlink()
    telemetry = out / "telemetry.jsonl"
    telemetry.unlink(missing_ok=True)
    with tempfile.TemporaryDirectory() as home:
        record(telemetry, Path(home))
        overrides = Path(home) / "resolver-catalog.json"
        config = Path(home) / "config.json"
        config.write_text(json.dumps({"catalogOverridesFile": str(overrides)}))
        rel = str(out)
        recall = cli("telemetry", "recall", str(telemetry))
        propose = cli(
            "tune", "propose", "--telemetry", str(telemetry), "--out", str(out),
            "--tools-file", str(out / "tools.json"), "--config", str(config),
            "--cases", "benchmark/benchmark-v1-curated.json",
            "--margins", "benchmark/margins-default.json",
        )  # fmt: skip
        (proposal_path,) = out.glob("*-tuning.json")
        proposal = load_proposal(proposal_path)
        passed = [e for e in proposal.entries if e.gate.passed]
        lines = [
            "# Tuning loop example",
            "",
            f"Command: `python benchmark/tuning-example.py --out {rel}`",
            "",
            "## resolver telemetry recall",
            "",
            "```",
            recall.replace(str(out) + "/", "").rstrip(),
            "```",
            "",
            "## resolver tune propose (full curated set, default margins)",
            "",
            "```",
            propose.replace(str(out) + "/", "").rstrip(),
            "```",
            "",
        ]
        tools = [ToolInfo(**t) for t in json.loads((out / "tools.json").read_text())]
        before = Resolver(
            ResolverConfig(catalogOverridesFile=str(overrides), keywordCacheFile=None), llm=None
        )
        rows = []
        for prompt, tool in HELD_OUT:
            res = before.resolve_sync(TurnRequest(prompt=prompt, tools=tools))
            rows.append([prompt, tool, tool in (res.tools_allow or [])])
        if passed:
            ids = ",".join(e.id for e in passed)
            cli("tune", "apply", str(proposal_path), "--approve", ids, "--config", str(config))
            for row in rows:
                res = before.resolve_sync(TurnRequest(prompt=row[0], tools=tools))
                row.append(row[1] in (res.tools_allow or []))  # the same live resolver
            lines += [
                f"## Held-out prompts, before and after `resolver tune apply --approve {ids}`",
                "",
                "| prompt | needs | surfaced before | surfaced after |",
                "|---|---|---|---|",
                *[f"| {p} | `{t}` | {b} | {a} |" for p, t, b, a in rows],
                "",
            ]
    (out / "summary.md").write_text("\n".join(lines))
    print("\n".join(lines))


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", default=str(REPO / "benchmark/results/tuning-example"))
    run(Path(parser.parse_args().out).resolve())
