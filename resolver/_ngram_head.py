"""The lexical conversation head: is a turn conversation (no tool needed), from its characters.

The offline classifier matches words against tool text. A turn that needs no tool still shares
words with some tool ("I GOT THE JOB!!!" and a cron job, "the message you helped me write was
great" and a messaging tool), so word matching alone gives it tools. This head reads the turn
the other way: a logistic regression on the turn's character n-grams (1 to `MAX_N` characters,
across word boundaries; tf-idf, unit length), trained on utterances labelled conversation or task
(``benchmark/training/``, written for the purpose; ``benchmark/train-conversation-ngrams.py``).
It works in every language the training data has, needs no model (numpy only),
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
from collections.abc import Mapping
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


def padded(text: str) -> str:
    """`text` as the heads read it: its first `MAX_CHARS` characters folded, each run of white
    space one space, one space on each side ("" for white space only)."""
    words = fold(text[:MAX_CHARS]).split()
    return f" {' '.join(words)} " if words else ""


def ngrams(text: str, max_n: int = MAX_N) -> Counter[str]:
    """How often each n-gram of 1 to `max_n` characters occurs in `text` (`padded`, so "hi you"
    gives " h", "i y", "hi yo"...). N-grams span word boundaries: "how are you" and "기분 어때"
    are read as the phrases they are, not as separate words. At most `MAX_CHARS` characters
    are read; a text of white space only has none."""
    counts: Counter[str] = Counter()
    read = padded(text)
    size = len(read)
    for n in range(1, max_n + 1):
        counts.update(read[i : i + n] for i in range(size - n + 1))
    return counts


def features(counts: Counter[str], idf: dict[str, float]) -> dict[str, float]:
    """The tf-idf vector of `counts` over the known n-grams (sublinear tf: 1 + ln tf), unit
    length; empty when no n-gram is known."""
    vec = {g: (1.0 + math.log(c)) * idf[g] for g, c in counts.items() if g in idf}
    norm = math.sqrt(sum(v * v for v in vec.values()))
    return {g: v / norm for g, v in vec.items()} if norm > 0.0 else {}


_BASE = np.uint64(0x9E3779B97F4A7C15)
"""The odd multiplier of the n-gram hash (`_hashes`)."""


def _hashes(read: str, max_n: int) -> list[Any]:
    """The hash of each n-gram of `read` by its position, for n = 1 .. `max_n`: out[n - 1][i]
    is the hash of read[i : i + n] (a polynomial over the code points plus one, modulo 2**64;
    numpy does all positions at once, where a loop over ~1,000 n-gram strings a text cost the
    heads most of their time)."""
    codes = np.frombuffer(read.encode("utf-32-le", "surrogatepass"), dtype="<u4")
    codes = codes.astype(np.uint64) + np.uint64(1)
    out = [codes]
    for n in range(2, max_n + 1):
        if len(codes) < n:
            out.append(codes[:0])
            continue
        out.append(out[-1][:-1] * _BASE + codes[n - 1 :])
    return out


class Table:
    """A head's n-grams as sorted hashes, to find the rows of a text's n-grams in numpy.

    `clash` says whether two n-grams of the table share a hash (one of them could not be
    found); the shipped heads' do not (tests/test_ngram_head.py). A text's n-gram outside the
    table could share a hash with one in it by chance (64 bits: about one in 10**14 per n-gram
    read for the larger head); it then counts as that n-gram, which moves one head's
    probability a little, as one more n-gram in the prompt would: the tool head only adds
    tools, and the conversation head only decides whether a turn is chat."""

    def __init__(self, rows: Mapping[str, int]) -> None:
        self.named = rows
        """The n-grams by name (`Positions` looks a clause's few own n-grams up there)."""
        by_length: dict[int, list[str]] = {}
        for gram in rows:
            by_length.setdefault(len(gram), []).append(gram)
        keys, values = [], []
        for size, grams in by_length.items():
            if size == 0:
                continue
            # the grams of one length end to end: each one's hash is the one at its start
            keys.append(_hashes("".join(grams), size)[size - 1][::size])
            values.append(np.fromiter((rows[g] for g in grams), dtype=np.intp, count=len(grams)))
        key = np.concatenate(keys) if keys else np.empty(0, dtype=np.uint64)
        value = np.concatenate(values) if values else np.empty(0, dtype=np.intp)
        order = np.argsort(key, kind="stable")
        self.keys = key[order]
        self.values = value[order]
        self.clash = bool(len(self.keys) > 1 and (self.keys[1:] == self.keys[:-1]).any())

    def rows(self, hashed: Any) -> Any:
        """The row of each hash in `hashed`, -1 for one not in the table."""
        if not len(self.keys):
            return np.full(len(hashed), -1, dtype=np.intp)
        at = np.searchsorted(self.keys, hashed)
        at[at == len(self.keys)] = 0
        return np.where(self.keys[at] == hashed, self.values[at], -1)


class Positions:
    """A text's n-grams at each position, as rows of one head's table (-1: not in it), found
    once, so that any stretch of the text (a clause of the prompt) is counted by slicing them
    (`counts`): a head that reads a prompt and its clauses finds each n-gram once, not once per
    part that holds it. The counts are `ngrams`' exactly, as rows."""

    def __init__(self, table: Table, max_n: int, text: str) -> None:
        self.table = table
        self.max_n = max_n
        self.read = padded(text)
        hashed = _hashes(self.read, max_n)
        found = table.rows(np.concatenate(hashed))
        self.at = np.split(found, np.cumsum([len(h) for h in hashed])[:-1])

    def counts(self, text: str | None = None) -> tuple[Any, Any]:
        """The known rows of `text` (the whole text when None) and how often each occurs,
        ascending by row: `ngrams(text)` as rows. A text that is not a stretch of this one is
        read on its own."""
        if text is None:
            return _counted(np.concatenate(self.at))
        read = padded(text)
        if not read:
            return _counted(np.empty(0, dtype=np.intp))
        if read == self.read:
            return self.counts()
        size = len(read)
        whole = self.read.find(read)  # the stretch with a space on each side, as it is padded
        if whole >= 0:
            return _counted(
                np.concatenate(
                    [self.at[n - 1][whole : whole + size - n + 1] for n in self._ns(size)]
                )
            )
        start = self.read.find(read[1:-1], 1) if size > 2 else -1
        if start < 0:
            return Positions(self.table, self.max_n, text).counts()
        # n-grams inside the stretch are the long text's; those that touch a padding space (its
        # first and its last) are the stretch's own
        pieces = [self.at[n - 1][start : start + size - 1 - n] for n in self._ns(size)]
        grams = [read[:n] for n in self._ns(size)]
        grams += [read[size - n :] for n in self._ns(size - 1)]
        get = self.table.named.get  # a few n-grams: a dict is cheaper than a search of all
        pieces.append(np.fromiter(map(get, grams, itertools.repeat(-1)), dtype=np.intp))
        return _counted(np.concatenate(pieces))

    def _ns(self, size: int) -> range:
        """The n-gram lengths a padded text of `size` characters has."""
        return range(1, min(self.max_n, size) + 1)


def _counted(at: Any) -> tuple[Any, Any]:
    """The distinct rows >= 0 of `at`, ascending, and how often each occurs."""
    return np.unique(at[at >= 0], return_counts=True)


@dataclass(frozen=True)
class NgramHead:
    """p(conversation) = sigmoid(bias + w · tfidf(text))."""

    idf: dict[str, float]
    weights: dict[str, float]
    bias: float
    threshold: float
    max_n: int = MAX_N
    _rows: Table = field(init=False, repr=False, compare=False)
    _idf: Any = field(init=False, repr=False, compare=False)
    _w: Any = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        # the same numbers as arrays: a turn maps its n-grams to rows once and lets numpy do
        # the tf-idf and the dot product (a dict comprehension over ~1,000 n-grams cost more)
        rows = {g: i for i, g in enumerate(self.idf)}
        object.__setattr__(self, "_rows", Table(rows))
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
        at, tf = Positions(self._rows, self.max_n, text).counts()
        if not len(at):
            return None
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
