"""What the primary model receives from a real OpenClaw: no plugin, Tool Search, the resolver.

For a deterministic spread of prompts from ``benchmark-v1-curated.json`` (round robin over the
categories in file order: the first case of every category, then the second, ... until
``--prompts`` cases), one real OpenClaw turn per prompt and configuration, each turn in its
own session (``--session-key``), through one local Gateway per configuration:

* ``none``: no plugin, ``tools.toolSearch=false`` (the plain surface);
* ``toolsearch``: no plugin, ``tools.toolSearch`` left at OpenClaw's default (Tool Search on);
* ``resolver``: the plugin installed with ``resolver install openclaw``, the offline classifier
  (no classifier endpoint, no key), ``tools.toolSearch=false``.

Every configuration first runs one warm-up turn (not measured): it starts the Gateway's agent
and, for the resolver, shows the sidecar the surface (that turn abstains). The primary model is
the loopback mock from ``tests/e2e/mock_llm.py`` (127.0.0.1, started and stopped here); for
each measured turn the script records, from the mock's log, the tools OpenClaw sent (count and
bytes of compact JSON) and the size of the whole request body. Follow-up cases are sent as
their last user message only (no earlier history).

    python benchmark/openclaw-e2e.py --prompts 24 --out benchmark/results/openclaw-e2e.md

Needs the e2e cache (``python tests/e2e/openclaw_env.py`` installs Node 24 + OpenClaw).
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import os
import platform
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

REPO_ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO_ROOT))

from tests.e2e.harness import OpenClawHome, module_sidecar
from tests.e2e.mock_llm import LoggedRequest, MockLLM
from tests.e2e.openclaw_env import OPENCLAW_VERSION, OpenClawInstall, ensure_openclaw

CASES = REPO_ROOT / "benchmark" / "benchmark-v1-curated.json"
CONFIGS = ("none", "toolsearch", "resolver")
LABELS = {
    "none": "no plugin (toolSearch=false)",
    "toolsearch": "Tool Search (default)",
    "resolver": "resolver (offline, toolSearch=false)",
}
WARM_PROMPT = "Hello! What can you help me with today?"


def pick_cases(n: int) -> list[dict[str, Any]]:
    """Round robin over categories (in order of first appearance): deterministic, spread."""
    cases = json.loads(CASES.read_text())["cases"]
    by_cat: dict[str, list[dict[str, Any]]] = {}
    for case in cases:
        by_cat.setdefault(case["category"], []).append(case)
    picked: list[dict[str, Any]] = []
    depth = 0
    while len(picked) < n and any(len(v) > depth for v in by_cat.values()):
        for group in by_cat.values():
            if len(group) > depth and len(picked) < n:
                picked.append(group[depth])
        depth += 1
    return picked


def configure(name: str, home: OpenClawHome) -> Path | None:
    """Write openclaw.json for one configuration; the resolver's telemetry file, if any."""
    if name == "none":
        home.write_config(None, tool_search=False)
        return None
    if name == "toolsearch":
        home.write_config(None, tool_search=None)
        return None
    telemetry = home.home / "resolver-telemetry.jsonl"
    home.write_config(None, tool_search=False)
    home.install_with_resolver_cli(
        module_sidecar(), {"logDecisions": True, "telemetryFile": str(telemetry)}
    )
    return telemetry


def measure(req: LoggedRequest) -> dict[str, Any]:
    return {
        "tools": len(req.tool_names),
        "toolsBytes": req.tools_bytes,
        "bodyBytes": req.body_bytes,
        "toolNames": req.tool_names,
    }


def run_config(
    name: str, install: OpenClawInstall, workdir: Path, cases: list[dict[str, Any]], log: Callable
) -> dict[str, Any]:
    with MockLLM() as mock:
        home_dir = workdir / name
        home_dir.mkdir(parents=True)
        home = OpenClawHome(install=install, home=home_dir, base_url=mock.base_url)
        telemetry = configure(name, home)
        t0 = time.monotonic()
        with home.start_gateway() as gateway:
            log(f"[{name}] gateway ready in {gateway.started_in:.1f}s")
            warm = gateway.turn(WARM_PROMPT, session_key="bench-warmup")
            if warm.returncode != 0:
                raise RuntimeError(
                    f"warm-up failed:\n{warm.stderr[-3000:]}\n{gateway.log()[-3000:]}"
                )
            log(f"[{name}] warm-up turn {warm.seconds:.1f}s")
            rows: list[dict[str, Any]] = []
            for case in cases:
                mark = len(mock.primary_requests)
                run = gateway.turn(case["prompt"], session_key=f"bench-{case['id']}")
                if run.returncode != 0:
                    raise RuntimeError(f"{case['id']} failed:\n{run.stderr[-3000:]}")
                turn_reqs = mock.primary_requests[mark:]
                if not turn_reqs:
                    raise RuntimeError(f"{case['id']}: no primary request logged")
                row = {"id": case["id"], "seconds": round(run.seconds, 2), **measure(turn_reqs[0])}
                rows.append(row)
                log(
                    f"[{name}] {case['id']}: {row['tools']} tools, {row['toolsBytes']} B tools, "
                    f"{row['bodyBytes']} B body ({run.seconds:.1f}s)"
                )
            gw_log = gateway.log()
        lines: list[dict[str, Any]] = []
        if telemetry is not None and telemetry.exists():
            lines = [json.loads(x) for x in telemetry.read_text().splitlines() if x.strip()]
        if telemetry is not None:
            # line 0 is the warm-up turn; then one line per measured turn, in order
            if len(lines) != len(cases) + 1:
                raise RuntimeError(f"expected {len(cases) + 1} telemetry lines, got {len(lines)}")
            for row, line in zip(rows, lines[1:], strict=True):
                row["source"] = line["source"]
                row["reasonCodes"] = line["reasonCodes"]
                row["toolsAllow"] = line["toolsAllow"]
                row["latencyMs"] = line["latencyMs"]
        return {
            "config": name,
            "rows": rows,
            "gatewayStartS": round(gateway.started_in, 1),
            "wallS": round(time.monotonic() - t0, 1),
            "warmup": lines[0] if lines else None,
            "gatewayLogTail": gw_log[-2000:] if telemetry is not None and not lines else "",
        }


def _pct(new: float, base: float) -> str:
    return f"{(1 - new / base) * 100:.1f}%" if base else "-"


def render(
    results: dict[str, dict[str, Any]], cases: list[dict[str, Any]], meta: dict[str, Any]
) -> str:
    out: list[str] = []
    add = out.append
    add("# OpenClaw end to end: what the primary model receives\n")
    add(f"Measured {meta['date']} with `{meta['command']}`.\n")
    add(
        f"- OpenClaw {meta['openclaw']}, Node {meta['node']}, Python {meta['python']}, "
        f"{meta['platform']}, {meta['cpus']} CPUs (load average at start {meta['load']})"
    )
    add(f"- resolver commit `{meta['commit']}`")
    add("- one local Gateway per configuration (127.0.0.1), one warm-up turn each (not measured),")
    add("  then one turn per prompt, each in its own session (`--session-key bench-<id>`);")
    add("  the primary model is the loopback mock (`tests/e2e/mock_llm.py`), which logs each")
    add("  request: tools = compact JSON of the request's `tools` (UTF-8), body = the whole")
    add("  request body as received. Only the turn's first model request is counted (the mock")
    add("  answers with text, so there is one per turn).")
    add("- configurations: " + "; ".join(f"`{c}` = {LABELS[c]}" for c in CONFIGS))
    add(f"- prompts: {len(cases)} cases of `benchmark/benchmark-v1-curated.json`, round robin over")
    add("  its categories in file order (first case of every category, then the second, ...);")
    add("  follow-up cases are sent as their last user message alone.")
    add("- the mock never calls a tool, so this counts one request per turn; with Tool Search a")
    add("  real model needs extra `tool_search`/`tool_describe` requests before it can use a tool")
    add("  it has not loaded, which these figures do not include.\n")

    add("## Totals and means\n")
    base = results["none"]["rows"]
    base_tb = sum(r["toolsBytes"] for r in base)
    base_bb = sum(r["bodyBytes"] for r in base)
    add(
        "| configuration | mean tools | total tools bytes | mean tools bytes | tools bytes vs none "
        "| total request bytes | mean request bytes | request bytes vs none |"
    )
    add("| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: |")
    n = len(cases)
    for c in CONFIGS:
        rows = results[c]["rows"]
        tb = sum(r["toolsBytes"] for r in rows)
        bb = sum(r["bodyBytes"] for r in rows)
        nt = sum(r["tools"] for r in rows)
        add(
            f"| {LABELS[c]} | {nt / n:.1f} | {tb:,} | {tb / n:,.0f} | {_pct(tb, base_tb)} "
            f"| {bb:,} | {bb / n:,.0f} | {_pct(bb, base_bb)} |"
        )
    add("")
    res_rows = results["resolver"]["rows"]
    narrowed = sum(1 for r in res_rows if r.get("toolsAllow") is not None)
    add(
        f"Resolver: narrowed {narrowed} of {n} turns; sources: "
        + ", ".join(
            f"{s} {sum(1 for r in res_rows if r.get('source') == s)}"
            for s in sorted({str(r.get("source")) for r in res_rows})
        )
        + f". Mean resolution latency {sum(r.get('latencyMs') or 0 for r in res_rows) / n:.1f} ms "
        "(telemetry `latencyMs`).\n"
    )
    add(
        "Gateway start / wall time per configuration: "
        + "; ".join(
            f"{c} {results[c]['gatewayStartS']} s / {results[c]['wallS']} s" for c in CONFIGS
        )
        + ".\n"
    )

    add("## Per prompt\n")
    add("tools = tools sent / tools JSON bytes; body = request body bytes.\n")
    add(
        "| case | category | none tools | none body | Tool Search tools | Tool Search body "
        "| resolver tools | resolver body | resolver source | resolver tools sent |"
    )
    add("| --- | --- | ---: | ---: | ---: | ---: | ---: | ---: | --- | --- |")
    for i, case in enumerate(cases):
        a, b, r = (results[c]["rows"][i] for c in CONFIGS)
        sent = ", ".join(sorted(r["toolNames"])) if r["tools"] < a["tools"] else "(all)"
        add(
            f"| {case['id']} | {case['category']} | {a['tools']} / {a['toolsBytes']:,} "
            f"| {a['bodyBytes']:,} | {b['tools']} / {b['toolsBytes']:,} | {b['bodyBytes']:,} "
            f"| {r['tools']} / {r['toolsBytes']:,} | {r['bodyBytes']:,} | {r.get('source')} "
            f"| {sent} |"
        )
    add("")
    return "\n".join(out)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--prompts", type=int, default=24, help="how many cases (default 24)")
    parser.add_argument("--out", type=Path, help="write the markdown report here")
    parser.add_argument("--json", type=Path, help="write the raw measurements here")
    parser.add_argument("--configs", default=",".join(CONFIGS), help=argparse.SUPPRESS)
    parser.add_argument(
        "--render", type=Path, metavar="JSON", help="only re-render a --json file's report"
    )
    args = parser.parse_args()
    if args.render:
        saved = json.loads(args.render.read_text())
        cases = pick_cases(len(saved["results"]["none"]["rows"]))
        report = render(saved["results"], cases, saved["meta"])
        print(report)
        if args.out:
            args.out.write_text(report)
        return 0

    def log(msg: str) -> None:
        print(msg, file=sys.stderr, flush=True)

    install = ensure_openclaw()
    cases = pick_cases(args.prompts)
    node_version = subprocess.run(
        [str(install.node), "--version"], capture_output=True, text=True, check=True
    ).stdout.strip()
    commit = subprocess.run(
        ["git", "-C", str(REPO_ROOT), "rev-parse", "--short", "HEAD"],
        capture_output=True,
        text=True,
    ).stdout.strip()
    argv = " ".join(a if " " not in a else repr(a) for a in sys.argv[1:])
    meta = {
        "date": dt.datetime.now(dt.UTC).strftime("%Y-%m-%d %H:%M UTC"),
        "command": f"python benchmark/openclaw-e2e.py {argv}".strip(),
        "openclaw": OPENCLAW_VERSION,
        "node": node_version,
        "python": platform.python_version(),
        "platform": f"{platform.system()} {platform.machine()}",
        "cpus": os.cpu_count(),
        "load": ", ".join(f"{x:.1f}" for x in os.getloadavg()),
        "commit": commit,
    }
    results: dict[str, dict[str, Any]] = {}
    with tempfile.TemporaryDirectory(prefix="openclaw-bench-") as tmp:
        for name in args.configs.split(","):
            results[name] = run_config(name, install, Path(tmp), cases, log)
    report = render(results, cases, meta)
    print(report)
    if args.out:
        args.out.write_text(report)
    if args.json:
        args.json.write_text(json.dumps({"meta": meta, "results": results}, indent=1) + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
