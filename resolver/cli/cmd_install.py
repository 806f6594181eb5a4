"""`resolver install openclaw` / `resolver uninstall openclaw`: put the extension in place;
`resolver openclaw sync-mcp`: list the MCP servers' tools for the sidecar."""

from __future__ import annotations

import argparse
import sys
from typing import TYPE_CHECKING

from .._errors import ConfigError
from ._common import config_from_args

if TYPE_CHECKING:
    from ..hosts.openclaw._mcp import SyncReport

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
    p.add_argument(
        "--no-mcp-sync",
        action="store_true",
        help="do not list the tools of openclaw.json's MCP servers now "
        "(see `resolver openclaw sync-mcp`)",
    )
    p.set_defaults(func=run_install)
    u = sub.add_parser("uninstall", help="remove the resolver from a host (openclaw)")
    u.add_argument("host", choices=["openclaw"])
    u.add_argument("--openclaw-home", metavar="DIR", help="OpenClaw home (default ~/.openclaw)")
    u.set_defaults(func=run_uninstall)
    o = sub.add_parser("openclaw", help="OpenClaw host tasks: sync-mcp")
    osub = o.add_subparsers(dest="openclaw_command", metavar="ACTION")
    osub.required = True
    m = osub.add_parser(
        "sync-mcp",
        help="list the tools of openclaw.json's MCP servers for the sidecar",
        description=(
            "Starts every enabled stdio server under mcp.servers in openclaw.json (as "
            "`openclaw mcp probe` does), lists its tools under the names OpenClaw gives them "
            "(<server>__<tool>) and writes them into the sidecar's surface state "
            "(surfaceStateFile). OpenClaw 2026.9.6 does not show MCP tools to plugins, so until "
            "a server is synced every turn keeps the full surface (mcp_surface_unknown_abstain). "
            "Run it again after adding or changing an MCP server."
        ),
    )
    m.add_argument("--openclaw-home", metavar="DIR", help="OpenClaw home (default ~/.openclaw)")
    m.add_argument(
        "--server",
        action="append",
        metavar="NAME",
        help="only this server (repeatable; default every enabled stdio server)",
    )
    m.add_argument(
        "--timeout",
        type=float,
        default=None,
        metavar="SECONDS",
        help="per server, from start to its last tools/list page (default 30)",
    )
    m.set_defaults(func=run_sync_mcp)


def run_install(args: argparse.Namespace) -> int:
    from .._config import PLUGIN_CONFIG_PATH
    from ..hosts.openclaw._install import install, sync_mcp

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
    code = 0
    if not args.no_mcp_sync:
        code = _print_sync(sync_mcp(home=args.openclaw_home))
    print("Start a new OpenClaw session (or `openclaw plugins reload`) to activate it.")
    return code


def run_sync_mcp(args: argparse.Namespace) -> int:
    from ..hosts.openclaw._install import sync_mcp

    if args.timeout is not None and not 0 < args.timeout <= 600:
        raise ConfigError("--timeout: give seconds between 0 and 600")
    done = sync_mcp(home=args.openclaw_home, only=args.server, timeout=args.timeout)
    if done is None:
        print("nothing to sync: openclaw.json has no mcp.servers (or surfaceStateFile is off)")
        return 0
    return _print_sync(done)


def _print_sync(done: SyncReport | None) -> int:
    """One line per MCP server; 1 when a server could not be listed (its tools stay unknown,
    and the sidecar keeps the full surface)."""
    if done is None:
        return 0
    failed = 0
    for server in done.servers:
        if server.error is not None:
            failed += 1
            print(f"mcp:       {server.name}: FAILED ({server.error}); its turns keep every tool")
        elif server.skipped is not None:
            print(f"mcp:       {server.name}: skipped ({server.skipped})")
        else:
            print(f"mcp:       {server.name}: {len(server.tools)} tools ({server.seconds:.1f} s)")
    print(f"surface:   {done.state_file} ({done.tools} MCP tools listed)")
    if failed:
        print(
            f"resolver: {failed} MCP server(s) could not be listed; fix them (`openclaw mcp "
            "probe`) and run `resolver openclaw sync-mcp` again",
            file=sys.stderr,
        )
    return 1 if failed else 0


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
