"""Train the semantic extra's conversation head and report how well it does.

    python benchmark/train-conversation.py [--data FILE ...]
        [--out catalogs/conversation-e5.json] [--md-out benchmark/results/conversation-head.md]

With ``offlineSemantic`` on, every turn's prompt is embedded by multilingual-e5-small anyway;
this head is a logistic regression on that embedding that says "conversation, no tool needed"
(thanks, small talk, explain/translate/write-a-poem requests) — what words alone cannot tell
("thanks for the reminder earlier" vs "remind me at 9"). It is trained on 1,600 utterances in
eight languages written for the purpose by an author who never saw the benchmark cases
(benchmark/training/conversation-acts.json). The script reports 5-fold cross-validated accuracy
and chooses the threshold on the cross-validated probabilities: the lowest at which at most
`MAX_TASK_LOSS` of the tasks would be taken for conversation. The benchmark case files are not
used: benchmark/results/ measures the head where it is used.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import numpy as np

from resolver._semantic import load_encoder
from resolver.bench.harness import command_line
from resolver.bench.heads import report_lines, threshold_for

L2 = 1e-3
STEPS = 3000
RATE = 0.5
SCALE = 10.0
"""Embeddings are unit vectors; scaled so the regression converges in a few thousand steps."""
FOLDS = 5
SEED = 20261201
MAX_TASK_LOSS = 0.01


def fit(x: np.ndarray, y: np.ndarray) -> tuple[np.ndarray, float]:
    w = np.zeros(x.shape[1])
    b = 0.0
    for _ in range(STEPS):
        p = 1.0 / (1.0 + np.exp(-(x @ w + b)))
        w -= RATE * (x.T @ (p - y) / len(y) + L2 * w)
        b -= RATE * float((p - y).mean())
    return w, b


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--data",
        nargs="+",
        default=["benchmark/training/conversation-acts.json"],
        help="training files (their examples are pooled)",
    )
    parser.add_argument("--out", default="catalogs/conversation-e5.json")
    parser.add_argument("--md-out")
    args = parser.parse_args()
    examples = [e for path in args.data for e in json.loads(Path(path).read_text())["examples"]]
    texts = [e["text"] for e in examples]
    langs = [e["lang"] for e in examples]
    y = np.array([1.0 if e["label"] == "conversation" else 0.0 for e in examples])
    encoder = load_encoder()
    started = time.time()
    x = np.array([encoder.query(t) for t in texts], dtype=np.float64) * SCALE
    embed_s = time.time() - started
    folds = np.array_split(np.random.default_rng(SEED).permutation(len(texts)), FOLDS)
    p = np.zeros(len(texts))
    for k, held in enumerate(folds):
        keep = np.concatenate([f for j, f in enumerate(folds) if j != k])
        w, b = fit(x[keep], y[keep])
        p[held] = 1.0 / (1.0 + np.exp(-(x[held] @ w + b)))
    threshold = threshold_for(p, y, MAX_TASK_LOSS)
    lines = [
        f"{len(texts)} examples ({embed_s:.0f} s to embed)",
        *report_lines(p, y, langs, threshold, MAX_TASK_LOSS),
    ]
    w, b = fit(x, y)
    payload = {
        "format": "resolver-conversation-head/1",
        "model": encoder.model_id,
        "scale": SCALE,
        "weights": [round(float(v), 6) for v in w],
        "bias": round(float(b), 6),
        "threshold": round(float(threshold), 2),
        "_meta": {
            "trainedOn": args.data,
            "examples": len(texts),
            "command": command_line(sys.argv),
            "cvAccuracy": round(float(((p >= 0.5) == (y == 1.0)).mean()), 4),
            "maxTaskLoss": MAX_TASK_LOSS,
        },
    }
    Path(args.out).write_text(json.dumps(payload, indent=1) + "\n")
    report = "\n".join(lines)
    print(report)
    if args.md_out:
        Path(args.md_out).write_text(
            f"# The semantic extra's conversation head\n\nCommand: `{command_line(sys.argv)}`"
            f"\n\n{report}\n"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
