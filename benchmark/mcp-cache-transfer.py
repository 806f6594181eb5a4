#!/usr/bin/env python3
"""What the keyword cache learns from one group of users' MCP turns, measured on another's.

    python benchmark/mcp-cache-transfer.py [--out benchmark/results/mcp-cache-transfer]

A surface without a hand-written lexicon (OpenClaw's MCP tools: the host's descriptions only)
has to learn its users' words from telemetry. This measures the documented loop across case
sets written by different people, so nothing a learning turn says is in a measured turn:

1. Records shadow turns (``shadowSampleRate`` 1) of the learning sets (default: the MCP set and
   the first held-out MCP set) through the real sidecar (``python -m resolver.hosts.openclaw``)
   on the 268-tool surface; after each turn the case's ``must_include`` tools are reported as
   the tools the primary model called (`mcp-tuning.py`'s recorder).
2. ``resolver cache learn`` on that telemetry into a fresh keyword cache file.
3. Replays the measured set (default: the second held-out MCP set, written by another author)
   with and without that cache (``keywordCacheFile``), offline classifier.

Writes summary.md into --out (the telemetry and the cache, ~1.3 MB, are regenerated in
seconds and live in a temporary folder).
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from resolver.bench.cases import CaseSet, load_case_file, parse_case_file
from resolver.bench.harness import benchmark_script

mcp_tuning = benchmark_script(REPO / "benchmark/mcp-tuning.py")

LEARN = ("benchmark/benchmark-v1-mcp.json", "benchmark/benchmark-v1-mcp-heldout.json")
MEASURE = "benchmark/benchmark-v1-mcp-heldout-2.json"


def joined(paths: list[str]) -> CaseSet:
    """The learning sets' cases as one set on their (shared) surface."""
    raws = [json.loads((REPO / p).read_bytes()) for p in paths]
    if len({r["surface"] for r in raws}) != 1:
        raise SystemExit("the learning sets must share one surface")
    data = {
        "name": "+".join(r["name"] for r in raws),
        "source": "; ".join(f"{r['name']}: {r['source'][:80]}…" for r in raws),
        "license": raws[0]["license"],
        "surface": raws[0]["surface"],
        "cases": [c for r in raws for c in r["cases"]],
    }
    return parse_case_file(json.dumps(data).encode(), path=str(REPO / paths[0]))


def run(out: Path, learn_paths: list[str], measure_path: str) -> None:
    os.chdir(REPO)
    out = Path(os.path.relpath(out, REPO))
    out.mkdir(parents=True, exist_ok=True)
    learn = joined(learn_paths)
    measured = load_case_file(REPO / measure_path)
    with tempfile.TemporaryDirectory() as home, tempfile.TemporaryDirectory() as work:
        telemetry = Path(work) / "telemetry.jsonl"
        cache = Path(work) / "keyword-cache.json"
        mcp_tuning.record(telemetry, Path(home), learn)
        learned = mcp_tuning.cli("cache", "learn", str(telemetry), "--file", str(cache))
        shown = mcp_tuning.cli("cache", "show", "--file", str(cache))
        before = mcp_tuning.score(measured, None)
        after = mcp_tuning.score(measured, None, cache)
        learn_before = mcp_tuning.score(learn, None)
        learn_after = mcp_tuning.score(learn, None, cache)
        learned = learned.replace(work + "/", "")
        shown = shown.replace(work + "/", "")
    fixed = sorted(set(before[2]) - set(after[2]))
    broken = sorted(set(after[2]) - set(before[2]))
    command = "python benchmark/mcp-cache-transfer.py --out " + str(out)
    if list(learn_paths) != list(LEARN) or measure_path != MEASURE:
        command += " --learn " + " ".join(learn_paths) + " --measure " + measure_path
    lines = [
        "# The keyword cache across users: learn on some case sets, measure another",
        "",
        f"Command: `{command}`",
        "",
        f"- Learning turns: {len(learn.cases)} ({', '.join(f'`{p}`' for p in learn_paths)}), "
        "recorded as shadow turns through the real sidecar (`shadowSampleRate` 1), each case's "
        "`must_include` reported as the tools the primary model called; then "
        "`resolver cache learn telemetry.jsonl --file keyword-cache.json`",
        f"- Measured: `{measure_path}` ({len(measured.cases)} turns, written by another author; "
        "none of its turns is learned from), offline classifier, no catalog overrides, with and "
        "without the learned cache",
        "",
        "## resolver cache learn / show",
        "",
        "```",
        learned.rstrip(),
        "\n".join(shown.rstrip().splitlines()[:12]),
        "```",
        "",
        "| turns | must-include without the cache | surface | with the learned cache | surface |",
        "|---|---|---|---|---|",
        f"| measured ({len(measured.cases)}, never learned from) | {before[0]:.3f} | "
        f"{before[1]:.2f} | {after[0]:.3f} | {after[1]:.2f} |",
        f"| learning ({len(learn.cases)}) | {learn_before[0]:.3f} | {learn_before[1]:.2f} | "
        f"{learn_after[0]:.3f} | {learn_after[1]:.2f} |",
        "",
        f"Measured turns fixed: {len(fixed)}; newly missed: {len(broken)}"
        f"{' (' + ', '.join(broken) + ')' if broken else ''}.",
        "",
    ]
    (out / "summary.md").write_text("\n".join(lines))
    print("\n".join(lines))


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", default=str(REPO / "benchmark/results/mcp-cache-transfer"))
    parser.add_argument("--learn", nargs="+", default=list(LEARN), help="case files to learn")
    parser.add_argument("--measure", default=MEASURE, help="case file to measure")
    args = parser.parse_args()
    run(Path(args.out).resolve(), args.learn, args.measure)
