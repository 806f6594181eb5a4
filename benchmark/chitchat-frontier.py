"""What it would cost the lexical classifier to answer more chit-chat with the core tools only.

    python benchmark/chitchat-frontier.py [--data benchmark/training/conversation-acts.json]
        [--md-out benchmark/results/chitchat-frontier.md]

Runs the real pipeline (offline, lexical, default OpenClaw surface) on the 1,600 utterances of
the conversation training set — written for the purpose by an author who never saw the
benchmark cases, half conversation (thanks, small talk, explain/translate/write requests,
including hard ones that mention tool words), half tasks that need a tool — and reports:

- how many conversation turns get the core tools only today, and how many tasks do (a task
  given the core tools only has lost its tool, unless the tool it needs is a core one);
- for simple gates a reviewer would try ("the best non-core score is below t", "a conversation
  marker and the best score below t"): how many more conversation turns they would answer with
  the core tools only, and how many tasks that keep a tool today they would strip.

The set is independent of `benchmark-v1-chitchat.json`, so the trade-off it shows is not fitted
to the chit-chat cases. Nothing here changes the classifier.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from resolver import Resolver, ResolverConfig, TurnRequest
from resolver._catalog import CatalogStore
from resolver._conversation import Markers, has_marker
from resolver._surface import default_surface
from resolver.bench.harness import command_line

THRESHOLDS = (2.0, 3.0, 4.0, 5.0, 6.0, 8.0)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", default="benchmark/training/conversation-acts.json")
    parser.add_argument("--md-out")
    args = parser.parse_args()
    examples = json.loads(Path(args.data).read_text())["examples"]
    config = ResolverConfig(keywordCacheFile="")
    resolver = Resolver(config)
    tools = default_surface()
    resolver.warm(tools)
    core = set(config.core_tools)
    catalog = CatalogStore(config).current()
    markers = Markers.of(catalog.social + catalog.self_contained)
    rows = []
    for i, example in enumerate(examples):
        res = resolver.resolve_sync(
            TurnRequest(prompt=example["text"], tools=tools, sessionId=f"frontier:{i}")
        )
        extra = [t for t in res.tools_allow or [] if t not in core]
        best = max((c.score for c in res.candidates if c.name not in core), default=0.0)
        rows.append(
            {
                "conversation": example["label"] == "conversation",
                "tools": bool(extra),
                "best": best,
                "marker": has_marker(markers, example["text"]),
            }
        )
    conv = [r for r in rows if r["conversation"]]
    tasks = [r for r in rows if not r["conversation"]]

    def share(part: list[dict[str, object]], whole: list[dict[str, object]]) -> str:
        return f"{len(part) / len(whole):.3f} ({len(part)})"

    lines = [
        f"{len(rows)} utterances ({len(conv)} conversation, {len(tasks)} tasks), lexical "
        f"classifier on the default surface ({len(tools)} tools).",
        "",
        f"- Today: conversation answered with the core tools only "
        f"{share([r for r in conv if not r['tools']], conv)}; tasks answered with the core "
        f"tools only {share([r for r in tasks if not r['tools']], tasks)}.",
        "",
        "| gate: core tools only when ... | conversation with core tools only | "
        "tasks stripped of the tools they keep today |",
        "|---|---:|---:|",
    ]
    gates = [(f"best non-core score < {t:g}", t, False) for t in THRESHOLDS]
    gates += [(f"a conversation marker and best < {t:g}", t, True) for t in THRESHOLDS]
    for label, t, need_marker in gates:

        def gate(r: dict[str, object], t: float = t, need_marker: bool = need_marker) -> bool:
            return bool(r["marker"] or not need_marker) and float(r["best"]) < t

        won = [r for r in conv if not r["tools"] or gate(r)]
        lost = [r for r in tasks if r["tools"] and gate(r)]
        lines.append(f"| {label} | {share(won, conv)} | {share(lost, tasks)} |")
    report = "\n".join(lines)
    print(report)
    if args.md_out:
        Path(args.md_out).write_text(
            "# Chit-chat: what core-tools-only would cost the lexical classifier\n\n"
            f"Command: `{command_line(sys.argv)}`\n\n{report}\n"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
