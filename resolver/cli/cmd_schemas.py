"""`resolver schemas`: write or check the JSON Schemas generated from the models."""

from __future__ import annotations

import argparse
from pathlib import Path

import orjson

from .._data import data_dir
from .._schemas import generate


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    p = sub.add_parser("schemas", help="write or check schemas/*.json (generated from the models)")
    p.add_argument("--dir", default=None, help="target folder (default: the shipped schemas/)")
    p.add_argument("--check", action="store_true", help="exit 1 if a file differs from the models")
    p.set_defaults(func=run)


def render(schema: object) -> bytes:
    return orjson.dumps(schema, option=orjson.OPT_INDENT_2 | orjson.OPT_SORT_KEYS) + b"\n"


def run(args: argparse.Namespace) -> int:
    target = Path(args.dir) if args.dir else data_dir("schemas")
    drift = []
    for name, schema in generate().items():
        path = target / name
        wanted = render(schema)
        if args.check:
            if not path.exists() or path.read_bytes() != wanted:
                drift.append(name)
        else:
            target.mkdir(parents=True, exist_ok=True)
            path.write_bytes(wanted)
            print(f"wrote {path}")
    if drift:
        print("schemas out of date (run `resolver schemas`): " + ", ".join(drift))
        return 1
    return 0
