"""`resolver install openclaw` / `resolver uninstall openclaw`: put the extension in place."""

from __future__ import annotations

import argparse
import sys

from ._common import config_from_args

OFF_WHEN_EMPTY = frozenset({"catalog_overrides_file", "keyword_cache_file", "surface_state_file"})
"""File keys whose ``""``/null turns the file off (OpenClaw's schema takes strings only)."""


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    p = sub.add_parser("install", help="install the resolver into a host (openclaw)")
    p.add_argument("host", choices=["openclaw"])
    p.add_argument("--openclaw-home", metavar="DIR", help="OpenClaw home (default ~/.openclaw)")
    p.add_argument("--link", action="store_true", help="symlink the extension (for development)")
    p.add_argument(
        "--config",
        metavar="FILE",
        help="resolver config JSON to write into the plugin entry's config",
    )
    p.set_defaults(func=run_install)
    u = sub.add_parser("uninstall", help="remove the resolver from a host (openclaw)")
    u.add_argument("host", choices=["openclaw"])
    u.add_argument("--openclaw-home", metavar="DIR", help="OpenClaw home (default ~/.openclaw)")
    u.set_defaults(func=run_uninstall)


def run_install(args: argparse.Namespace) -> int:
    from .._config import PLUGIN_CONFIG_PATH
    from ..hosts.openclaw._install import install

    extra = {}
    if args.config:
        config = config_from_args(args)  # validated: a bad file fails here, nothing written
        extra = config.model_dump(by_alias=True, exclude_unset=True, exclude_none=True)
        if config.llm_api_key is not None:
            extra["llmApiKey"] = config.llm_api_key.get_secret_value()
        for name in OFF_WHEN_EMPTY & config.model_fields_set:
            if getattr(config, name) is None:  # "" or null in the file: off, as a string
                extra[type(config).model_fields[name].alias or name] = ""
    done = install(home=args.openclaw_home, link=args.link, config=extra)
    print(f"extension: {done.extension}")
    state = "" if done.changed else ", already up to date: not rewritten"
    print(f"config:    {done.config} ({PLUGIN_CONFIG_PATH.removesuffix('.config')}{state})")
    if done.deprecation:
        print(f"resolver: {done.deprecation}", file=sys.stderr)
        moved = ", ".join(done.moved) or "no new keys"
        print(f"moved:     plugins.openclaw-tool-resolver -> {PLUGIN_CONFIG_PATH} ({moved})")
    if done.json5:
        lost = (
            f"{done.comments_lost} comment(s) could not be kept"
            if done.comments_lost
            else "no comments were lost"
        )
        print(
            f"note:      {done.config} was JSON5; it is now plain indented JSON (OpenClaw reads "
            f"both): {lost} — the original is in {done.backup}"
        )
    if done.backup:
        print(f"backup:    {done.backup}")
    print("Start a new OpenClaw session (or `openclaw plugins reload`) to activate it.")
    return 0


def run_uninstall(args: argparse.Namespace) -> int:
    from ..hosts.openclaw._install import uninstall

    done = uninstall(home=args.openclaw_home)
    if not done.removed:
        print(f"nothing to remove: openclaw-tool-resolver is not installed ({done.config})")
    for item in done.removed:
        print(f"removed:   {item}")
    if done.backup:
        lost = f"; {done.comments_lost} comment(s) could not be kept" if done.comments_lost else ""
        print(f"backup:    {done.backup} (openclaw.json before this change{lost})")
    for path, why in done.left:
        print(f"left:      {path} ({why}; delete it yourself if you no longer want it)")
    return 0
