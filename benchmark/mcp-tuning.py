#!/usr/bin/env python3
"""The tuning loop on the MCP surface: learn from one half of the MCP set, measure the other.

    python benchmark/mcp-tuning.py [--out benchmark/results/mcp-tuning] [--min-support N]

A surface without a hand-written lexicon (OpenClaw's MCP tools: the host's descriptions only)
is where an operator's own telemetry has to teach the resolver its users' words. This measures
how far one round of the documented loop gets, on turns it never saw:

1. Splits `benchmark/benchmark-v1-mcp.json` by position: even positions learn, odd positions
   are held out (each of the 18 categories lands in both halves).
2. Records shadow turns (``shadowSampleRate`` 1) of the learning half through the real sidecar
   (``python -m resolver.hosts.openclaw``) on the 268-tool surface; after each turn the case's
   ``must_include`` tools are reported as the tools the primary model called.
3. ``resolver tune propose`` on that telemetry, gated on the learning half (the regression set:
   nothing of the held-out half is read) with the default frozen margins.
4. ``resolver tune apply`` of every entry whose gate passed, then replays the held-out half with
   and without the written override catalog.

Writes telemetry.jsonl, learn-cases.json (the learning half), the proposal (.json/.md) and
summary.md into --out.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import io
import json
import os
import sys
import tempfile
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from resolver import Resolver, ResolverConfig
from resolver._text import schema_text
from resolver.bench.cases import CaseSet, load_case_file, parse_case_file
from resolver.bench.runner import replay_cases
from resolver.cli import main
from resolver.tuning import load_proposal
from tests.sidecar_support import Sidecar

CASES = REPO / "benchmark" / "benchmark-v1-mcp.json"


def halves(cases: CaseSet) -> tuple[CaseSet, CaseSet]:
    """(learning half, held-out half): the case file's cases at even and odd positions, on its
    surface."""
    raw = json.loads(Path(cases.path).read_bytes())
    out = []
    for parity, label in ((0, "learn"), (1, "held-out")):
        data = {
            "name": f"{raw['name']}-{label}",
            "source": f"{raw['name']}, cases at {'even' if parity == 0 else 'odd'} positions",
            "license": raw["license"],
            "surface": raw["surface"],  # relative to the case file's folder, as `path` says
            "cases": [c for i, c in enumerate(raw["cases"]) if i % 2 == parity],
        }
        out.append(parse_case_file(json.dumps(data).encode(), path=cases.path))
    learn, held = out
    return learn, held


def record(telemetry: Path, home: Path, learn: CaseSet) -> None:
    """Shadow turns of the learning half through the real sidecar."""
    surface = [
        {"name": t.name, "description": t.description, "parameters": schema_text(t.parameters)}
        for t in learn.candidates
    ]
    config = {
        "telemetryFile": str(telemetry),
        "shadowSampleRate": 1,
        "catalogOverridesFile": None,
        "keywordCacheFile": None,
    }
    env = {**os.environ, "HOME": str(home), "PYTHONPATH": str(REPO)}
    with Sidecar(env=env) as sidecar:
        sidecar.call("c", "configure", config=config)
        sidecar.call("o", "observe_surface", tools=surface, ctx={"runId": "r0"})
        for i, case in enumerate(learn.cases, start=1):
            run = {"sessionId": f"learn-{case.id}", "agentId": "main", "runId": f"r{i}"}
            sidecar.call(f"r{i}", "resolve", event={"prompt": case.prompt}, ctx=run)
            calls = [{"name": name, "ok": True} for name in case.must_include]
            sidecar.call(f"t{i}", "observe_tool_calls", calls=calls, ctx=run)
        assert sidecar.close(timeout=120) == 0, sidecar.stderr()
    telemetry.with_name(telemetry.name + ".lock").unlink(missing_ok=True)  # the writer's flock


def cli(*argv: str) -> str:
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        code = main(list(argv))
    if code:
        raise SystemExit(f"resolver {' '.join(argv)} exited {code}")
    return out.getvalue()


def score(
    cases: CaseSet, overrides: Path | None, cache: Path | None = None
) -> tuple[float, float, list[str]]:
    """(must-include accuracy, mean surface, ids of the misses) of a fresh resolver (no LLM),
    with the override catalog and keyword cache files given (None: none)."""
    config = ResolverConfig(
        catalogOverridesFile=str(overrides) if overrides else None,
        keywordCacheFile=str(cache) if cache else None,
    )
    outcomes = asyncio.run(replay_cases(Resolver(config, llm=None), cases))
    hits = sum(o.score.hit for o in outcomes)
    surface = sum(o.score.surface for o in outcomes) / len(outcomes)
    return hits / len(outcomes), surface, [o.id for o in outcomes if not o.score.hit]


def run(out: Path, min_support: int) -> None:
    os.chdir(REPO)  # relative paths in the proposal and the summary
    out = Path(os.path.relpath(out, REPO))
    out.mkdir(parents=True, exist_ok=True)
    for old in out.glob("*-tuning.*"):
        old.unlink()
    telemetry = out / "telemetry.jsonl"
    telemetry.unlink(missing_ok=True)
    learn, held = halves(load_case_file(CASES))
    with tempfile.TemporaryDirectory() as home:
        home_path = Path(home)
        record(telemetry, home_path, learn)
        surface = REPO / "benchmark" / "mcp" / "surface-openclaw-2026.9.6.json"
        learn_file = out / "learn-cases.json"  # the regression set the gate names
        learn_file.write_text(
            json.dumps(
                {
                    "name": learn.file.name,
                    "source": learn.file.source,
                    "license": learn.file.license,
                    "surface": os.path.relpath(surface, out),
                    "cases": [c.model_dump(exclude_none=True) for c in learn.cases],
                },
                indent=1,
                ensure_ascii=False,
            )
            + "\n"
        )
        overrides = home_path / "resolver-catalog.json"
        config = home_path / "config.json"
        config.write_text(json.dumps({"catalogOverridesFile": str(overrides)}))
        recall = cli("telemetry", "recall", str(telemetry))
        propose = cli(
            "tune", "propose", "--telemetry", str(telemetry), "--out", str(out),
            "--tools-file", os.path.relpath(surface, REPO), "--config", str(config),
            "--cases", str(learn_file), "--margins", "benchmark/margins-default.json",
            "--min-support", str(min_support),
        )  # fmt: skip
        (proposal_path,) = out.glob("*-tuning.json")
        proposal = load_proposal(proposal_path)
        passed = [e for e in proposal.entries if e.gate.passed]
        before = score(held, None)
        learn_before = score(learn, None)
        if passed:
            ids = ",".join(e.id for e in passed)
            cli("tune", "apply", str(proposal_path), "--approve", ids, "--config", str(config))
        after = score(held, overrides if passed else None)
        learn_after = score(learn, overrides if passed else None)
    fixed = sorted(set(before[2]) - set(after[2]))
    broken = sorted(set(after[2]) - set(before[2]))
    lines = [
        "# The tuning loop on the MCP surface",
        "",
        f"Command: `python benchmark/mcp-tuning.py --out {out} --min-support {min_support}`",
        "",
        f"- Case file: `{os.path.relpath(CASES, REPO)}`, {len(learn.cases) + len(held.cases)} "
        f"cases on {len(learn.candidates)} tools; learning half (even positions) "
        f"{len(learn.cases)} cases, held-out half (odd positions) {len(held.cases)} cases",
        "- Shadow turns recorded through the real sidecar (`python -m resolver.hosts.openclaw`, "
        "`shadowSampleRate` 1); the case's `must_include` tools reported as the tools called",
        f"- `resolver tune propose --min-support {min_support}`, gated on the learning half only, "
        "default margins "
        "(`benchmark/margins-default.json`); every entry whose gate passed was applied with "
        "`resolver tune apply --approve`",
        "",
        "## resolver telemetry recall (learning half)",
        "",
        "```",
        recall.replace(str(out) + "/", "").rstrip(),
        "```",
        "",
        "## resolver tune propose",
        "",
        "```",
        propose.replace(str(out) + "/", "").replace(home, "$TMP").rstrip(),
        "```",
        "",
        f"Entries: {len(proposal.entries)}; gate passed: {len(passed)} "
        f"({', '.join(f'`{e.tool}`' for e in passed) or 'none'}).",
        "",
        "## Before and after applying them (offline classifier)",
        "",
        "| half | must-include before | surface before | after | surface after |",
        "|---|---|---|---|---|",
        f"| held out ({len(held.cases)}, never seen) | {before[0]:.3f} | {before[1]:.2f} | "
        f"{after[0]:.3f} | {after[1]:.2f} |",
        f"| learning ({len(learn.cases)}) | {learn_before[0]:.3f} | {learn_before[1]:.2f} | "
        f"{learn_after[0]:.3f} | {learn_after[1]:.2f} |",
        "",
        f"Held-out turns fixed: {', '.join(fixed) or 'none'}; newly missed: "
        f"{', '.join(broken) or 'none'}.",
        "",
    ]
    (out / "summary.md").write_text("\n".join(lines))
    print("\n".join(lines))


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", default=str(REPO / "benchmark/results/mcp-tuning"))
    parser.add_argument(
        "--min-support", type=int, default=2, help="passed to resolver tune propose (default 2)"
    )
    args = parser.parse_args()
    run(Path(args.out).resolve(), args.min_support)
