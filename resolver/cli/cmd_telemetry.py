"""`resolver telemetry summary|report`: read the JSONL telemetry and show what happened."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import TYPE_CHECKING

from .._errors import ConfigError
from ._common import print_json

if TYPE_CHECKING:
    from ..telemetry._summary import ReadResult


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    p = sub.add_parser("telemetry", help="summarise telemetry files or render an HTML report")
    tsub = p.add_subparsers(dest="telemetry_command", metavar="ACTION")
    tsub.required = True

    s = tsub.add_parser("summary", help="a table: surface, sources, fallbacks, latency, cost")
    _add_files(s)
    s.add_argument(
        "--price-per-mtok-in",
        type=float,
        metavar="USD",
        help="classifier input price per million tokens (overrides the built-in table)",
    )
    s.add_argument(
        "--price-per-mtok-out",
        type=float,
        metavar="USD",
        help="classifier output price per million tokens (overrides the built-in table)",
    )
    s.add_argument("--json", action="store_true", help="print the summary as JSON")
    s.set_defaults(func=summary)

    r = tsub.add_parser("report", help="a self-contained HTML page with charts")
    _add_files(r)
    r.add_argument("--html", required=True, metavar="OUT", help="the HTML file to write")
    r.set_defaults(func=report)

    rc = tsub.add_parser(
        "recall",
        help="production must-include recall from shadow turns, with misses by tool",
        description="A shadow turn is a hit when every tool the primary model called "
        "(usedTools) is in what the resolver would have allowed (shadowToolsAllow).",
    )
    _add_files(rc)
    rc.add_argument("--json", action="store_true", help="print the report as JSON")
    rc.set_defaults(func=recall)


def _add_files(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("files", nargs="+", metavar="FILE", help="telemetry JSONL file(s)")
    parser.add_argument(
        "--no-rotated",
        dest="rotated",
        action="store_false",
        help="read only FILE, not its rotated backups FILE.1, FILE.2, ...",
    )


def _load(args: argparse.Namespace) -> tuple[list[Path], ReadResult]:
    from ..telemetry import read_events, with_rotated

    paths: list[Path] = []
    for name in args.files:
        found = with_rotated(name) if args.rotated else [Path(name)]
        if not found:
            raise ConfigError(f"{name}: no such telemetry file", source=name)
        paths.extend(found)
    result = read_events(paths)
    if result.skipped:
        print(
            f"warning: skipped {result.skipped} line(s) that are not telemetry events "
            f"(first: {result.first_error})",
            file=sys.stderr,
        )
    return paths, result


def summary(args: argparse.Namespace) -> int:
    from ..telemetry import summarize

    _, result = _load(args)
    s = summarize(
        result.events,
        skipped=result.skipped,
        price_in=args.price_per_mtok_in,
        price_out=args.price_per_mtok_out,
    )
    if args.json:
        print_json(s.as_dict())
        return 0
    from rich.console import Console
    from rich.table import Table

    def num(value: float | None, digits: int = 1, suffix: str = "") -> str:
        return "–" if value is None else f"{value:,.{digits}f}{suffix}"

    def pct(value: float | None) -> str:
        return "–" if value is None else f"{value * 100:.1f}%"

    table = Table(title="Tool resolver telemetry", show_header=True, header_style="bold")
    table.add_column("measure")
    table.add_column("value", overflow="fold")
    table.add_row("turns", f"{s.turns:,} ({s.sessions:,} sessions)")
    table.add_row("period", f"{s.first_ts or '–'} → {s.last_ts or '–'}")
    table.add_row(
        "mean surface, tools",
        f"{num(s.mean_tools_before)} → {num(s.mean_tools_after)}  (−{pct(s.tools_reduction)})",
    )
    table.add_row(
        "mean surface, bytes",
        f"{num(s.mean_bytes_before, 0)} → {num(s.mean_bytes_after, 0)}  "
        f"(−{pct(s.bytes_reduction)})",
    )
    if s.mean_tokens_before is not None:
        table.add_row(
            "mean surface, o200k tokens",
            f"{num(s.mean_tokens_before, 0)} → {num(s.mean_tokens_after, 0)}  "
            f"(−{pct(s.tokens_reduction)})",
        )
    for unit, total in s.saved_by_unit.items():
        table.add_row(
            f"saved ({unit})", f"{total:,} total, {num(total / max(1, s.turns), 0)} per turn"
        )
    if any(k != "schemas" for k in s.size_basis):
        table.add_row(
            "sized by",
            ", ".join(f"{k} {v}" for k, v in s.size_basis.items())
            + "  (nameDescription/mixed: tools without a shipped schema, parameters not counted)",
        )
    table.add_row(
        "source mix",
        ", ".join(f"{k} {v} ({v / max(1, s.turns) * 100:.0f}%)" for k, v in s.sources.items())
        or "–",
    )
    table.add_row(
        "fallbacks by cause", ", ".join(f"{k} {v}" for k, v in s.fallbacks.items()) or "none"
    )
    table.add_row(
        "latency p50 / p95 (in-hook)",
        f"{num(s.latency_p50)} / {num(s.latency_p95)} ms, all turns"
        + ("" if s.warm_turns or s.cold_turns else " (lines without indexCold)"),
    )
    if s.warm_turns:
        table.add_row(
            "  warm (index built)",
            f"{num(s.latency_warm_p50)} / {num(s.latency_warm_p95)} ms ({s.warm_turns:,} turns)",
        )
    if s.cold_turns:
        table.add_row(
            "  cold (built the index)",
            f"{num(s.latency_cold_p50)} / {num(s.latency_cold_p95)} ms ({s.cold_turns:,} "
            "turns: a one-shot process, or the first turn on a new surface)",
        )
    table.add_row(
        "LLM latency p50 / p95", f"{num(s.llm_latency_p50)} / {num(s.llm_latency_p95)} ms"
    )
    table.add_row(
        "confidence mean / median", f"{num(s.confidence_mean, 2)} / {num(s.confidence_p50, 2)}"
    )
    if not s.models:
        table.add_row("classifier tokens", "none (no LLM requests recorded)")
    for m in s.models:
        cost = (
            f"≈ ${m.cost_usd:.4f} (estimate, {m.price_source})"
            if m.cost_usd is not None
            else "no price known: pass --price-per-mtok-in/--price-per-mtok-out"
        )
        table.add_row(
            f"classifier {m.model}",
            f"{m.requests:,} requests: {m.prompt_tokens:,} in ({m.cached_tokens:,} cached), "
            f"{m.completion_tokens:,} out; {cost}",
        )
    if s.estimated_cost is not None and len(s.models) > 1:
        table.add_row("estimated classifier cost", f"≈ ${s.estimated_cost:.4f}")
    if s.conversation_turns:
        table.add_row(
            "conversation head (semantic extra)",
            f"{s.conversation_turns:,} turns read, {s.conversation_taken:,} taken for "
            "conversation (core tools only)",
        )
        for bar, (above, reported, called) in s.conversation_at.items():
            table.add_row(
                f"  conversationThreshold {bar}",
                f"{above:,} turn{'' if above == 1 else 's'} at or above"
                + (
                    f"; {called} of the {reported} with usedTools called a tool" if reported else ""
                ),
            )
    if s.skipped_lines or s.lost_lines:
        table.add_row(
            "data quality",
            f"{s.skipped_lines} unreadable line(s); {s.lost_lines} line(s) lost by writers",
        )
    Console(soft_wrap=False).print(table)
    return 0


def report(args: argparse.Namespace) -> int:
    from ..telemetry import render_html, summarize

    paths, result = _load(args)
    s = summarize(result.events, skipped=result.skipped)
    page = render_html(result.events, s, source=", ".join(str(p) for p in paths))
    out = Path(args.html).expanduser()
    try:
        out.parent.mkdir(parents=True, exist_ok=True)
        out.write_text(page, encoding="utf-8")
    except OSError as exc:
        raise ConfigError(
            f"{out}: cannot write the report ({exc.strerror})", source=str(out)
        ) from None
    print(f"wrote {out} ({s.turns:,} turns, {len(page):,} bytes)")
    return 0


def recall(args: argparse.Namespace) -> int:
    from ..tuning import recall_report, shadow_set

    _, result = _load(args)
    r = recall_report(shadow_set(result.events, skipped=result.skipped))
    if args.json:
        print_json(r)
        return 0
    print(
        f"{r['lines']} lines, {r['shadowLines']} shadow turns: {r['measuredTurns']} with used "
        f"tools, {r['noToolTurns']} that called no tool, {r['withoutUsedTools']} not reported"
    )
    if not r["measuredTurns"]:
        print(
            "no measured shadow turn: set shadowSampleRate > 0 (and capturePrompts for "
            "examples) on a host that reports tool calls (docs/tuning.md)"
        )
        return 0
    lo, hi = r["ci95"]
    print(
        f"must-include recall {r['mustIncludeRecall'] * 100:.1f}% ({r['hits']}/"
        f"{r['measuredTurns']}), Wilson 95% [{lo * 100:.1f}%, {hi * 100:.1f}%]; "
        f"tool recall {r['toolRecall'] * 100:.1f}%"
    )
    if not r["misses"]:
        print("no misses")
    for miss in r["misses"]:
        print(f"  {miss['tool']}: missed {miss['misses']} of {miss['used']} turns that used it")
        for example in miss["examples"]:
            print(f"    - {example}")
    return 0
