"""`resolver catalog validate|show|diff`: inspect and check description catalogs."""

from __future__ import annotations

import argparse
import sys

from .._catalog import CatalogStore, load_catalog_file
from .._data import default_catalog_path
from ._common import add_config_arg, config_from_args, print_json


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    p = sub.add_parser("catalog", help="validate, show or diff description catalogs")
    csub = p.add_subparsers(dest="catalog_command", metavar="ACTION")
    csub.required = True

    v = csub.add_parser("validate", help="check a catalog file against schemas/catalog.v1.json")
    v.add_argument("file")
    v.set_defaults(func=validate)

    s = csub.add_parser("show", help="print the shipped default catalog (or the effective one)")
    s.add_argument(
        "--effective",
        action="store_true",
        help="merge defaults <- inline overrides <- override file, as the resolver sees it",
    )
    add_config_arg(s)
    s.set_defaults(func=show)

    d = csub.add_parser("diff", help="show description changes from catalog A to catalog B")
    d.add_argument("a")
    d.add_argument("b")
    d.set_defaults(func=diff)


def validate(args: argparse.Namespace) -> int:
    catalog = load_catalog_file(args.file)  # raises CatalogError -> exit 2 with the message
    print(
        f"{args.file}: valid catalog (schemaVersion {catalog.schema_version}): "
        f"{len(catalog.tools)} tools, {len(catalog.skills)} skills, "
        f"{len(catalog.keywords)} keyword sets, "
        f"{len(catalog.state_requirements)} tools with state requirements, "
        f"{len(catalog.companions)} tools with companions, "
        f"{len(catalog.implied)} tools with implied phrases"
    )
    return 0


def show(args: argparse.Namespace) -> int:
    if not args.effective:
        catalog = load_catalog_file(default_catalog_path())
        print_json({"tools": catalog.tools, "skills": catalog.skills})
        return 0
    store = CatalogStore(config_from_args(args))
    effective = store.current()
    if store.error:
        print(f"warning: {store.error}", file=sys.stderr)
    print_json(
        {
            "fingerprint": effective.fingerprint,
            "tools": {
                name: {"description": text, "from": effective.origins.get(name, "default")}
                for name, text in sorted(effective.tools.items())
            },
            "skills": dict(sorted(effective.skills.items())),
            "companions": {
                name: list(others) for name, others in sorted(effective.companions.items())
            },
            "implied": {name: list(phrases) for name, phrases in sorted(effective.implied.items())},
        }
    )
    return 0


def diff(args: argparse.Namespace) -> int:
    a, b = load_catalog_file(args.a), load_catalog_file(args.b)
    changes = 0
    for section in ("tools", "skills"):
        left: dict[str, str] = getattr(a, section)
        right: dict[str, str] = getattr(b, section)
        for key in sorted(set(left) | set(right)):
            if left.get(key) == right.get(key):
                continue
            changes += 1
            if key not in right:
                print(f"- {section}.{key}: {left[key]}")
            elif key not in left:
                print(f"+ {section}.{key}: {right[key]}")
            else:
                print(f"~ {section}.{key}:\n    - {left[key]}\n    + {right[key]}")
    print(f"{changes} change(s)")
    return 0
