"""The `resolver` command line.

Each ``cmd_*.py`` module in this package adds its subcommands through ``register(subparsers)``;
a command's one-line docstring is its help. Exit codes: 0 ok, 1 failure, 2 bad input.
"""

from __future__ import annotations

import argparse
import importlib
import logging
import pkgutil
import sys
from collections.abc import Sequence

from .._errors import ResolverError


def build_parser() -> argparse.ArgumentParser:
    """The argument parser with every ``cmd_*`` module's subcommands."""
    parser = argparse.ArgumentParser(
        prog="resolver",
        description="Per-turn tool-surface resolver for LLM agents.",
    )
    parser.add_argument("-v", "--verbose", action="store_true", help="log to stderr")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    sub.required = True
    for info in sorted(pkgutil.iter_modules(__path__), key=lambda m: m.name):
        if info.name.startswith("cmd_"):
            module = importlib.import_module(f"{__name__}.{info.name}")
            module.register(sub)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of the `resolver` console script."""
    parser = build_parser()
    args = parser.parse_args(argv)
    args.argv = list(sys.argv[1:] if argv is None else argv)  # as typed, for result files
    logging.basicConfig(
        level=logging.INFO if args.verbose else logging.WARNING,
        stream=sys.stderr,
        format="%(message)s",
    )
    try:
        code = args.func(args)
        sys.stdout.flush()  # the answer is out even if a cut-short worker thread lingers
    except ResolverError as exc:
        print(f"resolver: {exc}", file=sys.stderr)
        return 2
    except BrokenPipeError:  # pragma: no cover - e.g. `resolver ... | head`
        return 0
    return int(code or 0)


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
