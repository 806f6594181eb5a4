"""The semantic extra's conversation threshold: chit-chat answered with the core tools only
against the tasks' must-include accuracy, at several values of ``conversationThreshold``.

    python benchmark/conversation-frontier.py [--thresholds 0.8 0.7 ...]
        [--md-out benchmark/results/conversation-frontier.md]

Every row replays the chit-chat set (no-tool turns, eight languages) and the task sets
(curated, parallel, compositional, MCP) through the real pipeline with ``offlineSemantic`` on
and ``conversationThreshold`` at the row's value; the first row is the default (the head's own
threshold, chosen on its training data: at most 1% of the training tasks taken for
conversation — not on these cases). The table is a trade-off for operators to read, not a
search: the shipped default does not come from it. The last column is the share of the head's
own training tasks (benchmark/training/conversation-acts.json) that the head would take for
conversation at the row's bar, on 5-fold cross-validated probabilities (each fold's head never
saw the utterance), reading every clause as the classifier does (`HEAD_PER_CLAUSE`); the check
for values and server names is left out (it needs a surface), so the share is an upper bound.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from resolver import Resolver, ResolverConfig
from resolver._offline import CLAUSE_PICK_MAX, CLAUSE_TASK_P, clauses_of
from resolver._semantic import conversation_head, load_encoder
from resolver.bench.cases import load_case_file
from resolver.bench.harness import benchmark_script, command_line
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
TRAINING = "benchmark/training/conversation-acts.json"


def training_losses(bars: list[float]) -> list[float]:
    """Per bar, the share of the head's training tasks taken for conversation on 5-fold
    cross-validated probabilities, the whole prompt and (`HEAD_PER_CLAUSE`) each of its clauses
    read as `classify_sync` reads them; the folds and the fit are `train-conversation.py`'s."""
    import numpy as np

    train = benchmark_script(REPO / "benchmark/train-conversation.py")
    examples = json.loads((REPO / TRAINING).read_text())["examples"]
    y = np.array([1.0 if e["label"] == "conversation" else 0.0 for e in examples])
    encoder = load_encoder()
    x = np.array([encoder.query(e["text"]) for e in examples]) * train.SCALE
    parts = [clauses_of(e["text"]) for e in examples]
    read = [i for i, p in enumerate(parts) if 1 < len(p) <= CLAUSE_PICK_MAX]
    xs = {i: np.array([encoder.query(p) for p in parts[i]]) * train.SCALE for i in read}
    folds = np.array_split(np.random.default_rng(train.SEED).permutation(len(y)), train.FOLDS)
    whole, least = np.zeros(len(y)), np.ones(len(y))
    for k, held in enumerate(folds):
        w, b = train.fit(*(a[np.concatenate(folds[:k] + folds[k + 1 :])] for a in (x, y)))
        whole[held] = 1.0 / (1.0 + np.exp(-(x[held] @ w + b)))
        for i in set(held.tolist()) & xs.keys():
            least[i] = float(np.min(1.0 / (1.0 + np.exp(-(xs[i] @ w + b)))))
    tasks = y == 0.0
    return [
        float(((whole >= bar) & (least >= min(bar, CLAUSE_TASK_P)))[tasks].mean()) for bar in bars
    ]


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
    header += " | training tasks taken for conversation (cross-validated)"
    lines = [header + " |", "|---" * (3 + len(TASKS)) + "|"]
    bars = [None, *args.thresholds]
    losses = training_losses([head.threshold if t is None else t for t in bars])
    for threshold, loss in zip(bars, losses, strict=True):
        _, chat_core, chat_surface = run(CHITCHAT, threshold)
        cells = [f"{chat_core:.3f} ({chat_surface:.2f})"]
        for path in TASKS.values():
            accuracy, _, surface = run(path, threshold)
            cells.append(f"{accuracy:.3f} ({surface:.2f})")
        cells.append(f"{loss:.3f}")
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
