"""Shared by the conversation heads' training scripts (``benchmark/train-conversation*.py``):
the threshold chosen on cross-validated probabilities, the two heads read together, and the
per-language report."""

from __future__ import annotations

import json
import math
import sys
from collections import Counter
from collections.abc import Sequence
from pathlib import Path
from typing import Any


def vocabulary(grams: Sequence[Counter[str]], min_df: int) -> dict[str, float]:
    """n-gram -> smoothed idf, over the n-grams in at least `min_df` of the texts."""
    df: Counter[str] = Counter()
    for g in grams:
        df.update(g.keys())
    n = len(grams)
    return {g: math.log((1 + n) / (1 + c)) + 1.0 for g, c in df.items() if c >= min_df}


def threshold_for(p: Any, y: Any, max_task_loss: float) -> float:
    """The lowest threshold in 0.50, 0.51, ... 0.99 at which at most `max_task_loss` of the
    tasks (``y == 0``) have a probability of conversation at or above it (numpy arrays)."""
    tasks = p[y == 0.0]
    for step in range(50, 100):
        t = step / 100
        if (tasks >= t).mean() <= max_task_loss:
            return t
    return 0.99


def logit_mean(a: Any, b: Any) -> Any:
    """Two heads read together, element by element over numpy arrays: the classifier's own
    `resolver._offline.log_odds_mean`, so the pair threshold is chosen on the formula the
    turn is judged by."""
    import numpy as np

    from resolver._offline import log_odds_mean

    return np.vectorize(log_odds_mean, otypes=[float])(a, b)


def report_lines(
    p: Any, y: Any, langs: Sequence[str], threshold: float, max_task_loss: float
) -> list[str]:
    """The cross-validated summary at `threshold` and a table per language."""
    import numpy as np

    tasks, convs = p[y == 0.0], p[y == 1.0]
    lines = [
        f"5-fold cross-validated accuracy at 0.5: {((p >= 0.5) == (y == 1.0)).mean():.3f}",
        f"Threshold {threshold:.2f} (at most {max_task_loss:.0%} of tasks taken for "
        f"conversation): tasks lost {(tasks >= threshold).mean():.3f}, conversation "
        f"recognised {(convs >= threshold).mean():.3f}",
        "",
        "| language | conversation recognised | tasks lost |",
        "|---|---:|---:|",
    ]
    for lang in sorted(set(langs)):
        idx = np.array([i for i, x in enumerate(langs) if x == lang])
        c = idx[y[idx] == 1.0]
        t = idx[y[idx] == 0.0]
        lines.append(
            f"| {lang} | {(p[c] >= threshold).mean():.3f} | {(p[t] >= threshold).mean():.3f} |"
        )
    return lines


def write_head(out: str, data: dict[str, Any], title: str, report: str, md_out: str | None) -> None:
    """A trained head's file (compact JSON) at `out`; its report printed, and written as
    Markdown under `title` with the command that made it when `md_out` is given."""
    from .harness import command_line

    Path(out).write_text(json.dumps(data, ensure_ascii=False, separators=(",", ":")) + "\n")
    print(report)
    if md_out:
        Path(md_out).write_text(f"# {title}\n\nCommand: `{command_line(sys.argv)}`\n\n{report}\n")
