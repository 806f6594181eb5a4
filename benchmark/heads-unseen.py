"""The two conversation heads side by side on a training file neither has seen.

    python benchmark/heads-unseen.py [--train FILE ...] [--test FILE] [--md-out FILE]

Both heads are trained on the same files (``--train``, by default the first three of
``benchmark/training/``) exactly as their training scripts train them — the threshold from
5-fold cross-validation at 1% of the tasks taken for conversation, then one fit on everything —
and read the utterances of ``--test`` (by default the fourth file, written after the others
and before it was pooled). The semantic extra's shipped head is a row, and so is the pair the
classifier reads with the extra (`resolver._offline.BothHeads`): both heads trained on the same
files, their log-odds averaged, with a threshold chosen the same way on the same folds. Each
row: the share of the test file's conversation it recognises and of its tasks it takes for
conversation. The benchmark case files are not used.

``benchmark/results/heads-unseen.md``: trained on the first three files, tested on the fourth
(when the pair was not yet shipped). ``heads-unseen-5.md``: trained on the first four, tested on
the fifth, before it was pooled. ``heads-unseen-6.md``: trained on the first five, tested on the
sixth (written to a brief aimed at what cross-validation missed), before it was pooled.
``heads-unseen-7.md``: trained on the first six, tested on the seventh, before it was pooled.
``heads-unseen-8.md``: trained on the first seven, tested on the eighth (its brief adds long
multi-clause messages), before it was pooled.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

import numpy as np

from resolver._ngram_head import ngrams
from resolver._semantic import conversation_head, load_encoder
from resolver.bench.harness import benchmark_script, command_line
from resolver.bench.heads import logit_mean, threshold_for

TRAIN = [
    "benchmark/training/conversation-acts.json",
    "benchmark/training/conversation-acts-2.json",
    "benchmark/training/conversation-acts-3.json",
]
TEST = "benchmark/training/conversation-acts-4.json"


def examples(paths: list[str]) -> tuple[list[str], np.ndarray]:
    rows = [e for p in paths for e in json.loads((REPO / p).read_text())["examples"]]
    return [e["text"] for e in rows], np.array([e["label"] == "conversation" for e in rows])


def cross_validated(
    fit_predict, n: int, y: np.ndarray, folds: int, seed: int
) -> tuple[np.ndarray, float]:
    """`folds`-fold cross-validated probabilities and the threshold at 1% of tasks lost."""
    p = np.zeros(n)
    for held in np.array_split(np.random.default_rng(seed).permutation(n), folds):
        keep = np.setdiff1d(np.arange(n), held)
        p[held] = fit_predict(keep, held)
    return p, threshold_for(p, y.astype(float), 0.01)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--train", nargs="+", default=TRAIN)
    parser.add_argument("--test", default=TEST)
    parser.add_argument("--md-out")
    args = parser.parse_args()
    texts, y = examples(args.train)
    test_texts, test_y = examples([args.test])
    rows: list[tuple[str, float, np.ndarray]] = []

    lexical = benchmark_script(REPO / "benchmark/train-conversation-ngrams.py")
    grams = [ngrams(t) for t in texts]
    yf = y.astype(float)

    def lexical_fold(keep: np.ndarray, held: np.ndarray) -> np.ndarray:
        idf, index, w, b = lexical.train([grams[i] for i in keep], yf[keep])
        return lexical.predict([grams[i] for i in held], idf, index, w, b)

    cv_lexical, bar = cross_validated(lexical_fold, len(texts), y, lexical.FOLDS, lexical.SEED)
    idf, index, w, b = lexical.train(grams, yf)
    p = test_lexical = lexical.predict([ngrams(t) for t in test_texts], idf, index, w, b)
    rows.append((f"lexical head (character n-grams), trained on {len(texts)}", bar, p))

    semantic = benchmark_script(REPO / "benchmark/train-conversation.py")
    encoder = load_encoder()
    x = np.array([encoder.query(t) for t in texts], dtype=np.float64) * semantic.SCALE
    x_test = np.array([encoder.query(t) for t in test_texts], dtype=np.float64)

    def semantic_fold(keep: np.ndarray, held: np.ndarray) -> np.ndarray:
        w, b = semantic.fit(x[keep], yf[keep])
        return 1.0 / (1.0 + np.exp(-(x[held] @ w + b)))

    cv_semantic, bar = cross_validated(semantic_fold, len(texts), y, semantic.FOLDS, semantic.SEED)
    w, b = semantic.fit(x, yf)
    p = 1.0 / (1.0 + np.exp(-(x_test * semantic.SCALE @ w + b)))
    rows.append((f"semantic head (e5 embedding), trained on {len(texts)}", bar, p))
    # both heads read the turn, their log-odds averaged, one threshold chosen the same way on
    # the same folds (both scripts use the same seed and fold count)
    bar = threshold_for(logit_mean(cv_lexical, cv_semantic), yf, 0.01)
    rows.append(("both heads, log-odds averaged", bar, logit_mean(test_lexical, p)))

    shipped = conversation_head()
    meta = json.loads((REPO / "catalogs/conversation-e5.json").read_text())["_meta"]
    trained_on = meta["trainedOn"] if isinstance(meta["trainedOn"], list) else [meta["trainedOn"]]
    if shipped is not None and args.test not in trained_on:  # no row for a head that read it
        z = shipped.bias + shipped.scale * (x_test @ np.array(shipped.weights))
        p = 1.0 / (1.0 + np.exp(-np.clip(z, -30.0, 30.0)))
        label = f"semantic head as shipped (trained on {meta['examples']})"
        rows.append((label, shipped.threshold, p))

    conv = test_y
    lines = [
        f"Test file: {args.test} ({int(conv.sum())} conversation, {int((~conv).sum())} tasks); "
        f"trained on: {', '.join(args.train)}",
        "",
        "| head | threshold | conversation recognised | tasks taken for conversation |",
        "| --- | ---: | ---: | ---: |",
    ]
    for label, bar, p in rows:
        chat = p >= bar
        lines.append(
            f"| {label} | {bar:.2f} | {chat[conv].mean():.3f} | {chat[~conv].mean():.4f} |"
        )
    report = "\n".join(lines)
    print(report)
    if args.md_out:
        Path(args.md_out).write_text(
            "# The conversation heads on an unseen training file\n\n"
            f"Command: `{command_line(sys.argv)}`\n\n{report}\n"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
