"""The semantic extra's conversation threshold: chit-chat answered with the core tools only
against the tasks' must-include accuracy, at several values of ``conversationThreshold``.

    python benchmark/conversation-frontier.py [--thresholds 0.8 0.7 ...]
        [--md-out benchmark/results/conversation-frontier.md]

Every row replays the chit-chat set (no-tool turns, eight languages) and the task sets
(curated, parallel, compositional, MCP) through the real pipeline with ``offlineSemantic`` on
and ``conversationThreshold`` at the row's value (with the extra, the bar of both conversation
heads read together: `resolver._offline.BothHeads`); the first row is the default (the pair's
own threshold, chosen on the heads' training data: at most 1% of the training tasks taken for
conversation — not on these cases). The table is a trade-off for operators to read, not a
search: the shipped default does not come from it. The last column is the share of the heads'
own training tasks (the eight files of benchmark/training/) that the pair would take for
conversation at the row's bar, on 5-fold cross-validated probabilities (each fold's heads never
saw the utterance), reading every clause as the classifier does (`HEAD_PER_CLAUSE`: the pair up
to `CLAUSE_PICK_MAX` clauses, the lexical head alone up to `MAX_SEGMENTS`); the check for values
and server names is left out (it needs a surface), so the share is an upper bound.
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
from resolver._offline import CLAUSE_PICK_MAX, CLAUSE_TASK_P, MAX_SEGMENTS, clauses_of
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
THRESHOLDS = (0.95, 0.9, 0.7, 0.6, 0.5, 0.4, 0.3)


def training_losses(bars: list[float]) -> list[float]:
    """Per bar, the share of the heads' training tasks the pair takes for conversation on
    5-fold cross-validated probabilities, the whole prompt and (`HEAD_PER_CLAUSE`) each of its
    clauses read as `classify_sync` reads them; the folds and the fits are the training
    scripts'."""
    import numpy as np

    from resolver._ngram_head import ngrams
    from resolver.bench.heads import logit_mean

    train = benchmark_script(REPO / "benchmark/train-conversation.py")
    lexical = train.LEXICAL
    examples = [
        e for path in lexical.DATA for e in json.loads((REPO / path).read_text())["examples"]
    ]
    y = np.array([1.0 if e["label"] == "conversation" else 0.0 for e in examples])
    encoder = load_encoder()
    x = np.array([encoder.query(e["text"]) for e in examples]) * train.SCALE
    grams = [ngrams(e["text"]) for e in examples]
    parts = [clauses_of(e["text"]) for e in examples]
    read = {i: p for i, p in enumerate(parts) if 1 < len(p) <= MAX_SEGMENTS}
    xs = {
        i: np.array([encoder.query(c) for c in p]) * train.SCALE
        for i, p in read.items()
        if len(p) <= CLAUSE_PICK_MAX
    }
    folds = np.array_split(np.random.default_rng(train.SEED).permutation(len(y)), train.FOLDS)
    whole, least = np.zeros(len(y)), np.ones(len(y))
    for k, held in enumerate(folds):
        keep = np.concatenate(folds[:k] + folds[k + 1 :])
        w, b = train.fit(x[keep], y[keep])
        idf, index, lw, lb = lexical.train([grams[i] for i in keep], y[keep])
        semantic = 1.0 / (1.0 + np.exp(-(x[held] @ w + b)))
        whole[held] = logit_mean(
            semantic, lexical.predict([grams[i] for i in held], idf, index, lw, lb)
        )
        for i in set(held.tolist()) & read.keys():
            p = lexical.predict([ngrams(c) for c in read[i]], idf, index, lw, lb)
            if i in xs:
                p = logit_mean(1.0 / (1.0 + np.exp(-(xs[i] @ w + b))), p)
            least[i] = float(np.min(p))
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
    if head.pair_threshold is None:
        print("the semantic extra's head holds no bar for the pair", file=sys.stderr)
        return 1
    default = head.pair_threshold
    losses = training_losses([default if t is None else t for t in bars])
    for threshold, loss in zip(bars, losses, strict=True):
        _, chat_core, chat_surface = run(CHITCHAT, threshold)
        cells = [f"{chat_core:.3f} ({chat_surface:.2f})"]
        for path in TASKS.values():
            accuracy, _, surface = run(path, threshold)
            cells.append(f"{accuracy:.3f} ({surface:.2f})")
        cells.append(f"{loss:.3f}")
        label = f"{default:.2f} (default)" if threshold is None else f"{threshold:.2f}"
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
