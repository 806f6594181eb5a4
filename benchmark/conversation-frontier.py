"""The semantic extra's conversation threshold: chit-chat answered with the core tools only
against the tasks' must-include accuracy, at several values of ``conversationThreshold``.

    python benchmark/conversation-frontier.py [--thresholds 0.8 0.7 ...]
        [--md-out benchmark/results/conversation-frontier.md]

Every row replays the chit-chat set (no-tool turns, eight languages) and the task sets
(curated, parallel, compositional, MCP) through the real pipeline with ``offlineSemantic`` on
and ``conversationThreshold`` at the row's value; the first row is the default (the head's own
threshold, chosen on its training data: at most 1% of the training tasks taken for
conversation — not on these cases). The table is a trade-off for operators to read, not a
search: the shipped default does not come from it.
"""

from __future__ import annotations

import argparse
import asyncio
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from resolver import Resolver, ResolverConfig
from resolver._semantic import conversation_head
from resolver.bench.cases import load_case_file
from resolver.bench.harness import command_line
from resolver.bench.metrics import summarize
from resolver.bench.runner import replay_cases

CHITCHAT = "benchmark/benchmark-v1-chitchat.json"
TASKS = {
    "curated": "benchmark/benchmark-v1-curated.json",
    "parallel": "benchmark/benchmark-v1-parallel.json",
    "compositional": "benchmark/benchmark-v1-compositional.json",
    "MCP": "benchmark/benchmark-v1-mcp.json",
}
THRESHOLDS = (0.95, 0.8, 0.7, 0.6, 0.5, 0.4, 0.3)


def run(path: str, threshold: float | None) -> tuple[float, float, float]:
    """(must-include accuracy, share of turns with the core tools only, mean surface)."""
    config = ResolverConfig(
        catalogOverridesFile=None,
        keywordCacheFile=None,
        offlineSemantic=True,
        conversationThreshold=threshold,
    )
    cases = load_case_file(REPO / path)
    m = summarize(asyncio.run(replay_cases(Resolver(config), cases)))
    # on a no-tool case an exact match is a surface of core tools only
    return m["must_include_accuracy"]["value"], m["exact_match"]["value"], m["mean_surface"]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--thresholds", nargs="+", type=float, default=list(THRESHOLDS))
    parser.add_argument("--md-out")
    args = parser.parse_args()
    head = conversation_head()
    if head is None:
        print("the semantic extra's conversation head is missing", file=sys.stderr)
        return 2
    started = time.time()
    header = "| conversationThreshold | chit-chat: core tools only (surface) | " + " | ".join(
        f"{name}: must-include (surface)" for name in TASKS
    )
    lines = [header + " |", "|---" * (2 + len(TASKS)) + "|"]
    for threshold in [None, *args.thresholds]:
        _, chat_core, chat_surface = run(CHITCHAT, threshold)
        cells = [f"{chat_core:.3f} ({chat_surface:.2f})"]
        for path in TASKS.values():
            accuracy, _, surface = run(path, threshold)
            cells.append(f"{accuracy:.3f} ({surface:.2f})")
        label = f"{head.threshold:.2f} (default)" if threshold is None else f"{threshold:.2f}"
        lines.append(f"| {label} | " + " | ".join(cells) + " |")
        print(lines[-1], flush=True)
    report = "\n".join(lines)
    if args.md_out:
        Path(args.md_out).write_text(
            "# The semantic extra's conversation threshold: chit-chat against tasks\n\n"
            f"Command: `{command_line(sys.argv)}`\n\n"
            f"{__doc__.split(chr(10) + chr(10), 2)[2].strip()}\n\n"
            f"Ran in {time.time() - started:.0f} s. Offline classifier with the semantic extra, "
            "default catalogs, no keyword cache; surface = mean tools per turn, core tools "
            "included.\n\n"
            f"{report}\n"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
