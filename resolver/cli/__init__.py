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
from ._printable import Printable


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
    _remember_parsers(parser)
    return parser


def _remember_parsers(parser: argparse.ArgumentParser) -> None:
    """Every (sub)parser records itself as ``args.cli_parser``: the deepest one that parsed
    is the command the user typed, whose usage an error shows."""
    parser.set_defaults(cli_parser=parser)
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for child in action.choices.values():
                _remember_parsers(child)


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of the `resolver` console script."""
    parser = build_parser()
    args, unknown = parser.parse_known_args(argv)
    if unknown:  # `resolver resolve --jsn`: the subcommand's usage, not the top level's
        args.cli_parser.error(f"unrecognized arguments: {' '.join(unknown)}")
    args.argv = list(sys.argv[1:] if argv is None else argv)  # as typed, for result files
    if args.command == "serve":  # stdout is the sidecar's frame protocol
        return _run(args)
    out, err = sys.stdout, sys.stderr
    sys.stdout, sys.stderr = Printable(out), Printable(err)
    try:
        return _run(args)
    finally:
        sys.stdout, sys.stderr = out, err


def _run(args: argparse.Namespace) -> int:
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
