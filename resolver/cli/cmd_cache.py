"""`resolver cache learn|show|clear`: the learned keyword cache (docs/cache-and-reuse.md)."""

from __future__ import annotations

import argparse
from pathlib import Path

from .._cache import KeywordCache, learn_telemetry
from .._config import ResolverConfig
from .._errors import ConfigError
from ._common import add_config_arg, config_from_args, print_json


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    p = sub.add_parser("cache", help="learn from telemetry, show or clear the keyword cache")
    csub = p.add_subparsers(dest="cache_command", metavar="ACTION")
    csub.required = True

    learn = csub.add_parser(
        "learn",
        help="learn term -> tool associations from a telemetry JSONL file",
        description=(
            "Learns from lines with source 'llm' and confidence >= the threshold (promptExcerpt "
            "+ llmTools, else toolsAllow minus core tools) and from lines carrying usedTools."
        ),
    )
    learn.add_argument("telemetry", help="telemetry JSONL file (one event per line)")
    learn.add_argument(
        "--min-confidence",
        type=float,
        default=None,
        help="learn from LLM decisions at or above this confidence "
        "(default: the higher of confidenceThreshold and 0.7)",
    )
    _common(learn)
    learn.set_defaults(func=learn_cmd)

    show = csub.add_parser("show", help="print the cache's size and its usable associations")
    show.add_argument("--json", action="store_true", help="print as JSON")
    show.add_argument("--limit", type=int, default=10, help="terms shown per tool (default 10)")
    _common(show)
    show.set_defaults(func=show_cmd)

    clear = csub.add_parser("clear", help="empty the cache file (written atomically)")
    _common(clear)
    clear.set_defaults(func=clear_cmd)


def _common(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--file",
        metavar="FILE",
        help="the cache file (default: keywordCacheFile from --config, else the state "
        "directory's $XDG_STATE_HOME/openclaw-tool-resolver/keyword-cache.json, "
        "~/.local/state/... when unset: the one the CLI and the OpenClaw sidecar use)",
    )
    add_config_arg(parser)


def _cache_path(args: argparse.Namespace, config: ResolverConfig) -> Path:
    chosen = args.file or config.keyword_cache_file
    if not chosen:
        raise ConfigError(
            f'no keyword cache file: {args.config} sets keywordCacheFile to "" (the cache '
            "lives in memory only); pass --file FILE to work on a file",
            source="keywordCacheFile",
        )
    return Path(chosen).expanduser()


def _where(args: argparse.Namespace, config: ResolverConfig) -> str:
    """Where the path came from, as `show` prints it."""
    if args.file:
        return "--file"
    if "keyword_cache_file" in config.model_fields_set:
        return f"keywordCacheFile in {args.config}"
    return "default location"


def learn_cmd(args: argparse.Namespace) -> int:
    config = config_from_args(args)
    path = _cache_path(args, config)
    cache = KeywordCache(path)
    threshold = args.min_confidence
    if threshold is None:
        threshold = max(config.confidence_threshold, cache.limits.min_confidence)
    source = Path(args.telemetry).expanduser()
    try:
        with source.open("rb") as handle:
            report = learn_telemetry(
                cache, handle, min_confidence=threshold, core_tools=config.core_tools
            )
    except OSError as exc:
        raise ConfigError(
            f"{source}: cannot read telemetry ({exc.strerror})", source=str(source)
        ) from None
    if report.learned:
        cache.save()
    print(
        f"{source}: {report.lines} lines, learned from {report.learned} "
        f"({report.from_llm} confident llm decisions, {report.from_used_tools} with usedTools); "
        f"cache {path}: {len(cache)} terms"
    )
    for why, count in sorted(report.skipped.items()):
        print(f"  skipped {count}: {why}")
    if not report.learned:
        print("  nothing learned; the cache file was not changed")
    return 0


def show_cmd(args: argparse.Namespace) -> int:
    config = config_from_args(args)
    path = _cache_path(args, config)
    cache = KeywordCache(path)
    table = cache.associations()
    if args.json:
        print_json(
            {
                "file": str(path),
                "from": _where(args, config),
                "exists": path.exists(),
                "corrupt": cache.corrupt,
                "terms": len(cache),
                "learned": cache.learned,
                "associations": {
                    tool: [
                        {"term": term, "count": count, "seen": seen}
                        for term, count, seen in rows[: args.limit]
                    ]
                    for tool, rows in table.items()
                },
            }
        )
        return 0
    state = (
        "missing (nothing learned yet)"
        if not path.exists()
        else f"ignored ({cache.corrupt})"
        if cache.corrupt
        else "ok"
    )
    where = _where(args, config)
    print(f"{path} ({where}): {state}; {len(cache)} terms from {cache.learned} learn events")
    if not table:
        print("no usable associations yet (each needs support >= 3 and precision >= 0.5)")
    for tool, rows in table.items():
        shown = ", ".join(f"{term} ({count}/{seen})" for term, count, seen in rows[: args.limit])
        print(f"  {tool}: {shown}")
    return 0


def clear_cmd(args: argparse.Namespace) -> int:
    config = config_from_args(args)
    path = _cache_path(args, config)
    cache = KeywordCache(path)
    before = len(cache)
    cache.clear()
    cache.save()
    print(f"{path}: cleared ({before} terms removed)")
    return 0
