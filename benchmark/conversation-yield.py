"""What the lexical conversation head buys and what its yield to unlisted tools costs, per surface.

    python benchmark/conversation-yield.py [--md-out benchmark/results/conversation-yield.md]

The offline classifier (lexical, default config otherwise) in three settings: no conversation
head (`offlineConversationHead` false); the head as shipped; the head without
`HEAD_YIELDS_TO_UNLISTED` (a turn whose best tool has no catalog keywords is then emptied too).
Each replays the chit-chat set (124 turns that need no tool) on the default 54-tool surface and on
the MCP host's 268-tool surface (`benchmark/mcp/surface-openclaw-2026.9.6.json`, whose 214 MCP
tools have no catalog keywords), and the task sets whose turns need a tool: curated (54 tools)
and MCP (268 tools). Chit-chat: the share of turns given the core tools only; task sets:
must-include accuracy at the mean surface. All in one run.
"""

from __future__ import annotations

import argparse
import asyncio
import dataclasses
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from resolver import Resolver, ResolverConfig, ToolInfo, _offline
from resolver.bench.cases import load_case_file
from resolver.bench.harness import command_line
from resolver.bench.metrics import summarize
from resolver.bench.runner import replay_cases

ROOT = Path(__file__).resolve().parents[1]
SETTINGS = (
    ("no head", False, True),
    ("head (default)", True, True),
    ("head, no yield to unlisted tools", True, False),
)


def chitchat_on(tools: list[ToolInfo] | None, config: ResolverConfig) -> tuple[float, float]:
    cases = load_case_file(ROOT / "benchmark/benchmark-v1-chitchat.json")
    if tools is not None:  # the same turns on another surface
        cases = dataclasses.replace(cases, candidates=tuple(tools), default_surface=False)
    outcomes = asyncio.run(replay_cases(Resolver(config), cases))
    core = set(config.core_tools)
    alone = sum(1 for o in outcomes if not set(o.surface) - core)
    return alone / len(outcomes), sum(len(o.surface) for o in outcomes) / len(outcomes)


def tasks_of(name: str, config: ResolverConfig) -> tuple[float, float]:
    cases = load_case_file(ROOT / f"benchmark/benchmark-v1-{name}.json")
    m = summarize(asyncio.run(replay_cases(Resolver(config), cases)))
    return m["must_include_accuracy"]["value"], m["mean_surface"]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--md-out")
    args = parser.parse_args()
    mcp_tools = list(load_case_file(ROOT / "benchmark/benchmark-v1-mcp.json").candidates)
    rows = [
        "| setting | chit-chat core-only, 54 tools | chit-chat core-only, MCP host (268) "
        "| curated (54) | MCP set (268) |",
        "| --- | --- | --- | --- | --- |",
    ]
    for label, head, yields in SETTINGS:
        _offline.HEAD_YIELDS_TO_UNLISTED = yields
        config = ResolverConfig(
            catalogOverridesFile=None, keywordCacheFile=None, offlineConversationHead=head
        )
        chat54, s54 = chitchat_on(None, config)
        chat_mcp, s_mcp = chitchat_on(mcp_tools, config)
        cur, cur_s = tasks_of("curated", config)
        mcp, mcp_s = tasks_of("mcp", config)
        rows.append(
            f"| {label} | {chat54:.3f} @ {s54:.2f} | {chat_mcp:.3f} @ {s_mcp:.2f} "
            f"| {cur:.3f} @ {cur_s:.2f} | {mcp:.3f} @ {mcp_s:.2f} |"
        )
    _offline.HEAD_YIELDS_TO_UNLISTED = True
    report = "\n".join(rows)
    print(report)
    if args.md_out:
        Path(args.md_out).write_text(
            "# The lexical conversation head and its yield to unlisted tools\n\n"
            f"Command: `{command_line(sys.argv)}`\n\n{__doc__.split(chr(10), 3)[3].strip()}"
            f"\n\n{report}\n"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
