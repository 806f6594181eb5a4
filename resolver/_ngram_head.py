"""The lexical conversation head: is a turn conversation (no tool needed), from its characters.

The offline classifier matches words against tool text. A turn that needs no tool still shares
words with some tool ("I GOT THE JOB!!!" and a cron job, "the message you helped me write was
great" and a messaging tool), so word matching alone gives it tools. This head reads the turn
the other way: a logistic regression on the turn's character n-grams (1 to `MAX_N` characters,
across word boundaries; tf-idf, unit length), trained on utterances labelled conversation or task
(``benchmark/training/``, written for the purpose; ``benchmark/train-conversation-ngrams.py``).
It works in every language the training data has, needs no model and no third-party package,
and costs well under a millisecond a turn.

It is the default install's head; with the ``semantic`` extra, the embedding model's head
(`resolver._semantic`) reads the turn instead. The classifier treats both the same way
(`resolver._offline`): a turn at or above the head's threshold gets the core tools only, unless
it says a tool's name, holds a value a tool acts on, names a server, or a clause of it is a task
on its own.
"""

from __future__ import annotations

import itertools
import math
from collections import Counter
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from ._data import built_once, shipped_table
from ._text import fold

FORMAT = "resolver-conversation-ngrams/2"
"""/2: n-grams run across word boundaries (/1 read within words only)."""
FILE = "conversation-ngrams.json"
MAX_N = 6
"""The longest n-gram (characters, spaces included)."""
MAX_CHARS = 400
"""A longer text is not judged (no probability: the turn stays a task). The training utterances
are at most about 200 characters; a longer prompt is outside what the head learnt, and the
bound keeps a turn's cost under a millisecond. `ngrams` reads at most this many characters."""


def ngrams(text: str, max_n: int = MAX_N) -> Counter[str]:
    """How often each n-gram of 1 to `max_n` characters occurs in `text` (folded, each run of
    white space one space, padded with one space on each side, so "hi you" gives " h", "i y",
    "hi yo"...). N-grams span word boundaries: "how are you" and "기분 어때" are read as the
    phrases they are, not as separate words. At most `MAX_CHARS` characters are read; a text of
    white space only has none."""
    counts: Counter[str] = Counter()
    words = fold(text[:MAX_CHARS]).split()
    if not words:
        return counts
    padded = f" {' '.join(words)} "
    size = len(padded)
    for n in range(1, max_n + 1):
        counts.update(padded[i : i + n] for i in range(size - n + 1))
    return counts


def features(counts: Counter[str], idf: dict[str, float]) -> dict[str, float]:
    """The tf-idf vector of `counts` over the known n-grams (sublinear tf: 1 + ln tf), unit
    length; empty when no n-gram is known."""
    vec = {g: (1.0 + math.log(c)) * idf[g] for g, c in counts.items() if g in idf}
    norm = math.sqrt(sum(v * v for v in vec.values()))
    return {g: v / norm for g, v in vec.items()} if norm > 0.0 else {}


@dataclass(frozen=True)
class NgramHead:
    """p(conversation) = sigmoid(bias + w · tfidf(text))."""

    idf: dict[str, float]
    weights: dict[str, float]
    bias: float
    threshold: float
    max_n: int = MAX_N
    _rows: dict[str, int] = field(init=False, repr=False, compare=False)
    _idf: Any = field(init=False, repr=False, compare=False)
    _w: Any = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        # the same numbers as arrays: a turn maps its n-grams to rows once and lets numpy do
        # the tf-idf and the dot product (a dict comprehension over ~1,000 n-grams cost more)
        rows = {g: i for i, g in enumerate(self.idf)}
        object.__setattr__(self, "_rows", rows)
        object.__setattr__(self, "_idf", np.fromiter(self.idf.values(), dtype=np.float64))
        w = np.zeros(len(rows))
        for g, v in self.weights.items():
            if g in rows:
                w[rows[g]] = v
        object.__setattr__(self, "_w", w)

    def probability(self, text: str) -> float | None:
        """How likely `text` is conversation; None when it is longer than `MAX_CHARS` or has
        no known n-gram (nothing to judge by: the turn goes on as a task)."""
        if len(text) > MAX_CHARS:
            return None
        counts = ngrams(text, self.max_n)
        at = np.fromiter(
            map(self._rows.get, counts, itertools.repeat(-1)), dtype=np.intp, count=len(counts)
        )
        known = at >= 0
        if not known.any():
            return None
        at = at[known]
        tf = np.fromiter(counts.values(), dtype=np.float64, count=len(counts))[known]
        values = (1.0 + np.log(tf)) * self._idf[at]  # `features`, in numpy
        z = self.bias + float(values @ self._w[at]) / math.sqrt(float(values @ values))
        z = max(-60.0, min(60.0, z))
        return 1.0 / (1.0 + math.exp(-z))


@built_once
def ngram_head() -> NgramHead | None:
    """The shipped head (``catalogs/conversation-ngrams.json``); None when it is missing or
    malformed (the classifier then works without one)."""
    data = shipped_table(FILE)
    if data is None or data.get("format") != FORMAT:
        return None
    try:
        table = data["ngrams"]
        idf = {str(g): float(v[0]) for g, v in table.items()}
        weights = {str(g): float(v[1]) for g, v in table.items() if float(v[1]) != 0.0}
        head = NgramHead(
            idf=idf,
            weights=weights,
            bias=float(data["bias"]),
            threshold=float(data["threshold"]),
            max_n=int(data.get("maxN", MAX_N)),
        )
    except (KeyError, TypeError, ValueError, AttributeError, IndexError):
        return None
    if not (0.0 <= head.threshold <= 1.0 and 1 <= head.max_n <= 8 and idf):
        return None
    return head


class NgramConversation:
    """The lexical head as the offline classifier asks for it (the same two questions as the
    semantic extra's `SemanticScorer`): p(conversation) of a text and the bar, the head's own
    threshold (``conversationThreshold`` is the semantic head's)."""

    def warm(self) -> None:
        """Load the shipped head now (the index's warm-up), not on the first turn."""
        ngram_head()

    def conversation(self, text: str) -> float | None:
        head = ngram_head()
        return head.probability(text) if head is not None else None

    def conversation_bar(self) -> float:
        head = ngram_head()
        return head.threshold if head is not None else 1.0

    def bias(self) -> float | None:
        """The shipped head's bias (what identifies it to the semantic head's pair bar), None
        when it is missing."""
        head = ngram_head()
        return head.bias if head is not None else None
