"""`resolver install openclaw` / `resolver uninstall openclaw`: put the extension in place."""

from __future__ import annotations

import argparse

from ._common import config_from_args


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
    from ..hosts.openclaw._install import install

    extra = {}
    if args.config:
        config = config_from_args(args)  # validated: a bad file fails here, nothing written
        extra = config.model_dump(by_alias=True, exclude_unset=True, exclude_none=True)
        if config.llm_api_key is not None:
            extra["llmApiKey"] = config.llm_api_key.get_secret_value()
    done = install(home=args.openclaw_home, link=args.link, config=extra)
    print(f"extension: {done['extension']}")
    print(f"config:    {done['config']} (plugins.entries.openclaw-tool-resolver)")
    if done["backup"]:
        print(f"backup:    {done['backup']}")
    print("Start a new OpenClaw session (or `openclaw plugins reload`) to activate it.")
    return 0


def run_uninstall(args: argparse.Namespace) -> int:
    from ..hosts.openclaw._install import uninstall

    done = uninstall(home=args.openclaw_home)
    print(f"removed {done['extension']} and the plugin entry in {done['config']}")
    return 0
