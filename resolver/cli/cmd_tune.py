"""`resolver tune propose|apply`: the human-approved tuning loop (docs/tuning.md)."""

from __future__ import annotations

import argparse
import asyncio
from datetime import UTC, datetime
from pathlib import Path

from .._data import shipped_benchmark
from .._errors import ConfigError
from ._common import add_config_arg, config_from_args, tools_from_args


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    p = sub.add_parser("tune", help="propose validated description changes; apply approved ones")
    tsub = p.add_subparsers(dest="tune_command", metavar="ACTION")
    tsub.required = True

    pr = tsub.add_parser(
        "propose",
        help="shadow-telemetry misses -> description changes, each validated by the gate",
        description="Writes DIR/YYYY-MM-DD-tuning.json and .md; never the override file.",
    )
    pr.add_argument("--telemetry", required=True, nargs="+", metavar="FILE", help="JSONL file(s)")
    pr.add_argument("--out", required=True, metavar="DIR", help="folder for the proposal files")
    pr.add_argument(
        "--cases",
        default=str(shipped_benchmark("benchmark-v1-curated.json")),
        metavar="CASES.json",
        help="curated regression case file (default: %(default)s); 'none' to use only the "
        "shadow turns that were hits",
    )
    pr.add_argument(
        "--margins",
        default=str(shipped_benchmark("margins-default.json")),
        metavar="MARGINS.json",
        help="frozen gate margins (default: %(default)s)",
    )
    pr.add_argument(
        "--tools-file",
        metavar="FILE",
        help="the host's candidate tools on the shadow turns (JSON list of {name, "
        "description}); default: OpenClaw 2026.9.6",
    )
    pr.add_argument(
        "--min-support",
        type=int,
        default=2,
        metavar="N",
        help="a tool needs at least N missed shadow turns for an entry (default 2)",
    )
    pr.add_argument(
        "--classifier",
        choices=("offline", "llm"),
        default="offline",
        help="classifier the gate replays with (llm: LLM_API_BASE, LLM_MODEL, LLM_API_KEY)",
    )
    pr.add_argument(
        "--no-rotated",
        dest="rotated",
        action="store_false",
        help="read only the named files, not their rotated backups",
    )
    add_config_arg(pr)
    pr.set_defaults(func=propose_cmd)

    ap = tsub.add_parser(
        "apply",
        help="write approved entries into the override catalog (atomic, backup, _meta)",
    )
    ap.add_argument("proposal", metavar="PROPOSAL.json")
    ap.add_argument(
        "--approve", required=True, metavar="ID[,ID...]", help="entry ids to apply (e.g. e1,e3)"
    )
    ap.add_argument("--dry-run", action="store_true", help="print the diff, write nothing")
    ap.add_argument(
        "--force",
        action="store_true",
        help="apply entries whose gate failed, or whose tool was edited since the proposal",
    )
    add_config_arg(ap)
    ap.set_defaults(func=apply_cmd)


def propose_cmd(args: argparse.Namespace) -> int:
    from ..bench.harness import with_llm_env
    from ..telemetry import read_events
    from ..tuning import ProposeOptions, propose, shadow_set, write_proposal
    from ..tuning._shadow import telemetry_paths

    if args.min_support < 1:
        raise ConfigError("--min-support must be at least 1", source="--min-support")
    config = config_from_args(args)
    if args.classifier == "llm":
        config = with_llm_env(config)
    paths = telemetry_paths(args.telemetry, rotated=args.rotated)
    if not paths:
        raise ConfigError(f"{args.telemetry[0]}: no such telemetry file", source="--telemetry")
    result = read_events(paths)
    shadow = shadow_set(result.events, skipped=result.skipped)
    cases = None if args.cases in ("", "none") else Path(args.cases)
    now = datetime.now(UTC)
    options = ProposeOptions(
        telemetry=tuple(paths),
        cases=cases,
        margins=Path(args.margins),
        surface=tuple(tools_from_args(args)),
        min_support=args.min_support,
        classifier=args.classifier,
        now=now,
    )
    proposal = asyncio.run(propose(config, shadow, options, result.events))
    json_path, md_path = write_proposal(proposal, Path(args.out).expanduser(), f"{now:%Y-%m-%d}")
    passed = sum(e.gate.passed for e in proposal.entries)
    print(
        f"{proposal.shadow_turns} shadow turns, {proposal.shadow_misses} with a miss; "
        f"{len(proposal.entries)} entries ({passed} passed the gate), "
        f"{len(proposal.findings)} findings"
    )
    for e in proposal.entries:
        print(
            f"  {e.id} {e.tool}: gate {'pass' if e.gate.passed else 'FAIL'}; "
            f"+ {', '.join(e.evidence.added_terms)}"
        )
    print(f"wrote {json_path}\nwrote {md_path}")
    print(f"approve with: resolver tune apply {json_path} --approve ID[,ID...] [--dry-run]")
    return 0


def apply_cmd(args: argparse.Namespace) -> int:
    from ..tuning import apply_proposal, load_proposal

    proposal = load_proposal(args.proposal)
    ids = [i.strip() for i in args.approve.split(",") if i.strip()]
    config = config_from_args(args)
    result = apply_proposal(proposal, ids, config, dry_run=args.dry_run, force=args.force)
    if result.diff:
        print(result.diff, end="" if result.diff.endswith("\n") else "\n")
    if result.unchanged:
        print(f"already in force (nothing to do): {', '.join(result.unchanged)}")
    if args.dry_run:
        print(f"dry run: {result.path} not written")
    elif result.written:
        backup = f" (backup: {result.backup})" if result.backup else ""
        print(f"wrote {result.path}: applied {', '.join(result.entries)}{backup}")
        print("a running resolver picks the change up on its next turn")
    else:
        print(f"{result.path}: nothing to change")
    return 0
