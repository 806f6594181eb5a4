"""`resolver explain`: resolve one prompt and print its ranked card (why each tool is there)."""

from __future__ import annotations

import argparse

from .._explain import explain_data, explain_lines
from ._common import (
    add_config_arg,
    add_turn_args,
    build_resolver,
    config_from_args,
    print_json,
    request_from_args,
    resolve_once,
)


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    p = sub.add_parser(
        "explain", help="show the ranked candidates of one prompt: scores, signals, exclusions"
    )
    p.add_argument("prompt", help="the user's message for this turn")
    add_turn_args(p)
    add_config_arg(p)
    p.add_argument("--json", action="store_true", help="print the card as JSON")
    p.add_argument(
        "--top",
        metavar="N",
        type=_rows,
        default=None,
        help="rows to show (default: every kept or excluded tool and 5 more; 0: all)",
    )
    p.set_defaults(func=run)


def _rows(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a whole number, got {text!r}") from None
    if value < 0:
        raise argparse.ArgumentTypeError("must be 0 (all) or a positive number")
    return value


def run(args: argparse.Namespace) -> int:
    resolver = build_resolver(config_from_args(args))
    resolution = resolve_once(resolver, request_from_args(args))
    if args.json:
        print_json(explain_data(resolution, args.top))
    else:
        print("\n".join(explain_lines(resolution, args.top)))
    return 0
