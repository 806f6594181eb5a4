"""`resolver serve --stdio`: the OpenClaw sidecar (newline-delimited JSON over stdio)."""

from __future__ import annotations

import argparse


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    p = sub.add_parser("serve", help="run the host sidecar (what the OpenClaw extension starts)")
    p.add_argument("--stdio", action="store_true", required=True, help="frames over stdin/stdout")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from ..hosts.openclaw import main

    return main()
