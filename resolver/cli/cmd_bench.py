"""`resolver bench`: replay case files through the pipeline; gate, models, generate, overhead.

The harness lives in `resolver.bench` and is imported only when a bench command runs (never on
the hook path). docs/benchmark.md describes the case format, metrics and gate.
"""

from __future__ import annotations

import argparse
import asyncio
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any

import orjson

from .._data import shipped_benchmark
from ._common import print_json

if TYPE_CHECKING:
    from ..bench.harness import ClassifierKind, RunOutput, RunSpec
    from ..bench.metrics import CaseOutcome


def _add_run_args(p: argparse.ArgumentParser, *, file_required: bool = False) -> None:
    p.add_argument("--file", required=file_required, metavar="CASES.json", help="case file")
    p.add_argument(
        "--classifier",
        choices=("offline", "llm"),
        default=None,
        help="offline or llm (LLM_API_BASE, LLM_MODEL, LLM_API_KEY select the LLM); default: "
        "llm when any of those variables is set, else offline",
    )
    rec = p.add_mutually_exclusive_group()
    rec.add_argument("--record", metavar="DIR", help="record the LLM's decisions into DIR")
    rec.add_argument("--replay", metavar="DIR", help="re-score recorded decisions (no network)")
    p.add_argument("--concurrency", type=int, default=1, metavar="N", help="turns in flight")
    p.add_argument("--limit", type=int, default=None, metavar="N", help="first N cases only")
    p.add_argument("--json-out", metavar="OUT.json", help="write the result JSON here")
    p.add_argument("--md-out", metavar="OUT.md", help="write the markdown summary here")
    p.add_argument("--no-progress", action="store_true", help="no progress bar")
    p.add_argument("--quiet", action="store_true", help="no tables on the terminal")


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    p = sub.add_parser("bench", help="replay a case file through the real pipeline and score it")
    _add_run_args(p)
    p.add_argument("--config", metavar="FILE", help="resolver config JSON (default: defaults)")
    p.add_argument(
        "--baseline",
        choices=("bm25", "dense", "rrf", "all"),
        action="append",
        default=[],
        help="also score a baseline in the same run, top-k with k matched to the resolver's "
        "mean surface: bm25 (identifier-splitting, stemmed BM25), dense (multilingual e5), "
        "rrf (their reciprocal-rank fusion), all (the three); repeatable",
    )
    p.add_argument("--verbose", dest="bench_verbose", action="store_true", help="print every case")
    p.set_defaults(func=run_bench)
    bsub = p.add_subparsers(dest="bench_command", metavar="ACTION")

    g = bsub.add_parser("gate", help="non-inferiority gate: treatment vs control config")
    _add_run_args(g, file_required=True)
    g.add_argument("--control", required=True, metavar="CFG", help="control config JSON")
    g.add_argument("--treatment", required=True, metavar="CFG", help="treatment config JSON")
    g.add_argument("--margins", required=True, metavar="MARGINS.json", help="frozen margins")
    g.set_defaults(func=run_gate)

    m = bsub.add_parser("models", help="the same cases across several models -> one table")
    _add_run_args(m, file_required=True)
    m.add_argument("--config", metavar="FILE", help="base resolver config JSON")
    m.add_argument("--models", required=True, metavar="MODELS.json", help="models to compare")
    m.set_defaults(func=run_models)

    gen = bsub.add_parser("generate", help="cases from telemetry (turns with known used tools)")
    gen.add_argument("telemetry", nargs="*", metavar="TELEMETRY.jsonl")
    gen.add_argument(
        "--input",
        action="append",
        default=[],
        metavar="TELEMETRY.jsonl",
        help="a telemetry file (the same as naming it; repeatable)",
    )
    gen.add_argument("--out", required=True, metavar="CASES.json")
    gen.add_argument("--name", default="telemetry-cases")
    gen.add_argument("--include-empty", action="store_true", help="keep turns that used no tool")
    gen.set_defaults(func=run_generate)

    o = bsub.add_parser("overhead", help="the offline pipeline's per-turn cost (p50/p99)")
    o.add_argument(
        "--curated", default=str(shipped_benchmark("benchmark-v1-curated.json")), metavar="CASES"
    )
    o.add_argument("--seal", default=None, metavar="CASES", help="a large case file (Seal-Tools)")
    o.add_argument(
        "--file",
        dest="extra_files",
        action="append",
        default=[],
        metavar="CASES",
        help="another surface to time (a case file; repeatable), e.g. the MCP host's",
    )
    o.add_argument("--turns", type=int, default=2000, metavar="N", help="timed turns per surface")
    o.add_argument("--md-out", metavar="OUT.md")
    o.add_argument(
        "--semantic",
        action="store_true",
        help="also time each surface with offlineSemantic on (needs the 'semantic' extra)",
    )
    o.add_argument(
        "--no-settle",
        dest="settle",
        action="store_false",
        help="time without freezing the heap after the warm-up (as a library in a host's own "
        "process runs, unless the host calls resolver.settle_heap); the sidecar freezes it",
    )
    o.set_defaults(func=run_overhead)


# ---------------------------------------------------------------- helpers


def _write(path: str | None, data: bytes) -> None:
    if path:
        Path(path).parent.mkdir(parents=True, exist_ok=True)
        Path(path).write_bytes(data)


def _write_json(path: str | None, doc: dict[str, Any]) -> None:
    _write(path, orjson.dumps(doc, option=orjson.OPT_INDENT_2) + b"\n")


def _execute(spec: RunSpec, args: argparse.Namespace, verbose: bool = False) -> RunOutput:
    """Run one spec with a progress bar (rich) and optional per-case lines."""
    from ..bench.harness import run

    total = len(spec.cases.cases)

    def show(outcome: CaseOutcome) -> None:
        if verbose:
            mark = "ok  " if outcome.score.hit else "MISS"
            missing = f" missing {','.join(outcome.score.missing)}" if outcome.score.missing else ""
            print(
                f"{mark} {outcome.id} [{outcome.category}] surface {outcome.score.surface}"
                f" via {outcome.source}{missing}",
                file=sys.stderr,
            )

    if args.no_progress:
        return asyncio.run(run(spec, progress=show))
    from rich.console import Console
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TimeElapsedColumn

    with Progress(
        "[progress.description]{task.description}",
        BarColumn(),
        MofNCompleteColumn(),
        TimeElapsedColumn(),
        console=Console(stderr=True),
        transient=True,
    ) as bar:
        task = bar.add_task(spec.label, total=total)

        def tick(outcome: CaseOutcome) -> None:
            show(outcome)
            bar.advance(task)

        return asyncio.run(run(spec, progress=tick))


def _spec(args: argparse.Namespace, config_path: str | None, label: str) -> RunSpec:
    from ..bench.cases import load_case_file
    from ..bench.harness import RunSpec, base_config, choose_classifier, with_llm_env

    kind: ClassifierKind
    if args.classifier is None and (args.record or args.replay):
        kind, why = "llm", "--record/--replay (LLM decisions)"
    else:
        kind, why = choose_classifier(args.classifier)
    config = base_config(config_path)
    if kind == "llm":
        config = with_llm_env(config)
    return RunSpec(
        cases=load_case_file(args.file).limited(args.limit),
        config=config,
        classifier=kind,
        classifier_reason=why,
        config_path=config_path,
        record=args.record,
        replay=args.replay,
        concurrency=args.concurrency,
        label=label,
    )


# ---------------------------------------------------------------- commands


def run_bench(args: argparse.Namespace) -> int:
    """Replay a case file; print tables; write the result JSON and markdown."""
    if not args.file:
        print("resolver bench: --file CASES.json is required", file=sys.stderr)
        return 2
    from ..bench.baseline import BASELINES, run_baselines
    from ..bench.harness import classifier_line, command_line, effective_descriptions, run_document
    from ..bench.metrics import by_category, summarize
    from ..bench.report import print_tables, run_markdown

    spec = _spec(args, args.config, "resolver")
    if not args.quiet:
        print(f"resolver bench: {spec.cases.path}: {classifier_line(spec)}", file=sys.stderr)
    out = _execute(spec, args, verbose=args.bench_verbose)
    doc = run_document(out, command=command_line(args.argv))
    wanted = [b for b in BASELINES if b in args.baseline or "all" in args.baseline]
    if wanted:
        doc["baselines"] = run_baselines(
            wanted,
            spec.cases,
            effective_descriptions(spec.config, spec.cases),
            core=frozenset(spec.config.core_tools),
            target_mean_surface=doc["metrics"]["mean_surface"],
            summarize=summarize,
            by_category=by_category,
        )
    _write_json(args.json_out, doc)
    markdown = run_markdown(doc)
    _write(args.md_out, markdown.encode())
    if not args.quiet:
        print_tables(doc)
    if not args.json_out and not args.md_out:
        print(markdown)
    return 0


def run_gate(args: argparse.Namespace) -> int:
    """Run control and treatment on the same cases; exit 0 on pass, 1 on fail."""
    from ..bench.gate import compare, load_margins
    from ..bench.harness import command_line, run_document
    from ..bench.report import gate_markdown

    margins, margins_sha = load_margins(args.margins)
    docs: dict[str, dict[str, Any]] = {}
    outcomes: dict[str, list[CaseOutcome]] = {}
    for arm, config_path in (("control", args.control), ("treatment", args.treatment)):
        spec = _spec(args, config_path, arm)
        if args.record:
            spec.record = str(Path(args.record) / arm)
        if args.replay:
            spec.replay = str(Path(args.replay) / arm)
        out = _execute(spec, args)
        outcomes[arm] = out.outcomes
        docs[arm] = run_document(out, command="")
    verdict = compare(outcomes["control"], outcomes["treatment"], margins)
    doc = {
        "format": "resolver-bench-gate/1",
        "command": command_line(args.argv),
        "caseFile": docs["control"]["caseFile"],
        "margins": {
            "path": args.margins,
            "sha256": margins_sha,
            **margins.model_dump(by_alias=True),
        },
        "gate": verdict,
        **{
            arm: {
                "configFile": d["config"]["configFile"],
                "config": d["config"],
                "metrics": d["metrics"],
                "by_category": d["by_category"],
            }
            for arm, d in docs.items()
        },
    }
    _write_json(args.json_out, doc)
    markdown = gate_markdown(doc)
    _write(args.md_out, markdown.encode())
    print(markdown)
    return 0 if verdict["pass"] else 1


def run_models(args: argparse.Namespace) -> int:
    """Compare models/endpoints on the same cases in one table."""
    from ..bench.models import compare_models

    doc, markdown = compare_models(args, _execute)
    _write_json(args.json_out, doc)
    _write(args.md_out, markdown.encode())
    print(markdown)
    return 0


def run_generate(args: argparse.Namespace) -> int:
    """Write a case file from telemetry lines."""
    from ..bench.telemetry import cases_from_telemetry, write_cases

    files = [*args.telemetry, *args.input]
    if not files:
        args.cli_parser.error("name a telemetry file: TELEMETRY.jsonl or --input TELEMETRY.jsonl")
    generated = cases_from_telemetry(files, name=args.name, include_empty=args.include_empty)
    surface = write_cases(generated, args.out)
    count, skipped = len(generated.doc["cases"]), generated.skipped
    print(f"wrote {count} case(s) to {args.out} ({skipped} line(s) skipped)")
    if surface is not None:
        ids = generated.surface_ids
        union = f"the union of {len(ids)} surfaces" if len(ids) > 1 else f"surface {ids[0]}"
        print(f"surface: {surface} ({union}, {len(generated.surface or [])} tools)")
    return 0


def run_overhead(args: argparse.Namespace) -> int:
    """Time the offline pipeline per turn on the default and a large surface."""
    from ..bench.harness import command_line
    from ..bench.overhead import measure, overhead_markdown

    files = [args.curated, *args.extra_files] + ([args.seal] if args.seal else [])
    results = [
        measure(path, turns=args.turns, semantic=semantic, settle=args.settle)
        for semantic in ((False, True) if args.semantic else (False,))
        for path in files
    ]
    markdown = overhead_markdown(results, command=command_line(args.argv))
    _write(args.md_out, markdown.encode())
    print(markdown)
    if not args.md_out:
        print_json([r.as_dict() for r in results])
    return 0
