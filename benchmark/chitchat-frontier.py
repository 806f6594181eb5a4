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
  marker and the best score below t", "no non-core tool's name word or whole catalog keyword is
  in the prompt": only description words, parts of keyword phrases and typo matches found
  something): how many more conversation turns they would answer with the core tools only, and
  how many tasks that keep a tool today they would strip.

The set is independent of `benchmark-v1-chitchat.json`, so the trade-off it shows is not fitted
to the chit-chat cases. Nothing here changes the classifier.
"""

from __future__ import annotations

import argparse
import json
import math
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from resolver import Resolver, ResolverConfig, TurnRequest
from resolver._catalog import CatalogStore
from resolver._conversation import Markers, has_marker
from resolver._surface import default_surface
from resolver._text import fold, has_cjk, tokens
from resolver.bench.harness import command_line

THRESHOLDS = (2.0, 3.0, 4.0, 5.0, 6.0, 8.0)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", default="benchmark/training/conversation-acts.json")
    parser.add_argument("--md-out")
    args = parser.parse_args()
    examples = json.loads(Path(args.data).read_text())["examples"]
    # words alone: the lexical conversation head is trained on this set (its own
    # cross-validated figures: benchmark/results/conversation-ngrams.md)
    config = ResolverConfig(keywordCacheFile="", offlineConversationHead=False)
    resolver = Resolver(config)
    tools = default_surface()
    resolver.warm(tools)
    core = set(config.core_tools)
    catalog = CatalogStore(config).current()
    markers = Markers.of(catalog.markers)
    # per non-core tool: its name words and catalog keywords (each as its Latin terms, or as
    # folded CJK text), the evidence a gate can call strong
    named: list[tuple[set[str], list[tuple[str, ...]], list[str]]] = []
    for tool in tools:
        if tool.name in core:
            continue
        latin, cjk = [], []
        for phrase in catalog.keywords.get(tool.name, ()):
            if has_cjk(phrase):
                cjk.append(fold(phrase).replace(" ", ""))
            elif terms := tuple(tokens(phrase)):
                latin.append(terms)
        named.append((set(tokens(tool.name)), latin, cjk))

    def says_a_tool(text: str) -> bool:
        words = set(tokens(text))
        folded = fold(text).replace(" ", "")
        return any(
            not name.isdisjoint(words)
            or any(all(t in words for t in terms) for terms in latin)
            or any(k in folded for k in cjk)
            for name, latin, cjk in named
        )

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
                "says": says_a_tool(example["text"]),
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
    gates = [(f"best non-core score < {t:g}", t, "") for t in THRESHOLDS]
    gates += [(f"a conversation marker and best < {t:g}", t, "marker") for t in THRESHOLDS]
    gates += [
        (f"no non-core tool's name word or whole keyword, best < {t:g}", t, "unsaid")
        for t in (*THRESHOLDS, math.inf)
    ]
    for label, t, kind in gates:

        def gate(r: dict[str, object], t: float = t, kind: str = kind) -> bool:
            if kind == "marker" and not r["marker"]:
                return False
            if kind == "unsaid" and r["says"]:
                return False
            return float(r["best"]) < t

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
