"""`resolver resolve`: resolve one prompt and print the surface."""

from __future__ import annotations

import argparse

from .._explain import conversation_line
from .._pipeline import as_dict
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
    p = sub.add_parser("resolve", help="resolve one prompt: which tools does this turn need?")
    p.add_argument("prompt", help="the user's message for this turn")
    add_turn_args(p)
    p.add_argument(
        "--no-reuse", action="store_true", help="disable decision reuse (reuse.enabled=false)"
    )
    p.add_argument("--refresh", action="store_true", help="skip a stored decision and replace it")
    add_config_arg(p)
    p.add_argument("--json", action="store_true", help="print the resolution as JSON")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    config = (
        config_from_args(args, reuse={"enabled": False})
        if args.no_reuse
        else config_from_args(args)
    )
    resolver = build_resolver(config)
    resolution = resolve_once(resolver, request_from_args(args, refresh=args.refresh))
    if args.json:
        print_json(as_dict(resolution))
        return 0
    allow = resolution.tools_allow
    print(
        f"classifier: {resolution.classifier}   source: {resolution.source}   "
        f"confidence: {resolution.confidence:.2f}"
    )
    if allow is None:
        print("toolsAllow: (abstain: the host keeps its full surface)")
    else:
        print(f"toolsAllow ({len(allow)} of {resolution.available_tools}): {', '.join(allow)}")
    print(f"reasons: {', '.join(resolution.reason_codes)}")
    if resolution.fallback:
        print(f"LLM fell back: {resolution.fallback}")
    if (line := conversation_line(resolution)) is not None:
        print(line)
    scored = sorted((c for c in resolution.candidates if c.score > 0), key=lambda c: -c.score)
    if scored:
        print("top scores: " + ", ".join(f"{c.name} {c.score:.2f}" for c in scored[:8]))
    return 0
