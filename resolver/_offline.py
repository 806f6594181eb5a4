"""The embedded offline classifier: no network, no key.

It scores the prompt against each candidate's name, effective description and catalog
keywords with BM25 over three weighted fields (name x3, keywords x2, description x1), adds a
damped contribution from the last user messages (follow-ups), and cuts the ranking where the
score falls below a fraction of the best score. Weak signals widen the surface (recall first).
The index is built once per (catalog fingerprint, candidate set) and cached.
"""

from __future__ import annotations

import math
import threading
from collections import OrderedDict
from collections.abc import Sequence
from dataclasses import dataclass

from ._catalog import EffectiveCatalog
from ._classify import Classification, ClassifyInput
from ._text import tokens

NAME_WEIGHT = 3.0
KEYWORD_WEIGHT = 2.0
DESCRIPTION_WEIGHT = 1.0
HISTORY_WEIGHT = 0.35
K1 = 1.2
B = 0.75
RELATIVE_CUTOFF = 0.45
"""Keep candidates scoring at least this fraction of the best score..."""
WEAK_RELATIVE_CUTOFF = 0.25
"""...or this fraction when the best score is weak (widen for recall)."""
WEAK_SCORE = 4.0
MAX_SELECTED = 8


@dataclass(frozen=True)
class _Index:
    names: tuple[str, ...]
    postings: dict[str, list[tuple[int, float]]]
    """term -> [(tool index, weighted term frequency)]"""
    lengths: tuple[float, ...]
    avg_length: float
    idf: dict[str, float]


def _build_index(tools: Sequence[tuple[str, str]], catalog: EffectiveCatalog) -> _Index:
    names = tuple(name for name, _ in tools)
    tf_per_tool: list[dict[str, float]] = []
    for name, description in tools:
        tf: dict[str, float] = {}
        for term in tokens(name):
            tf[term] = tf.get(term, 0.0) + NAME_WEIGHT
        for phrase in catalog.keywords.get(name, ()):
            for term in set(tokens(phrase)):
                tf[term] = tf.get(term, 0.0) + KEYWORD_WEIGHT
        for term in tokens(description):
            tf[term] = tf.get(term, 0.0) + DESCRIPTION_WEIGHT
        tf_per_tool.append(tf)
    lengths = tuple(sum(tf.values()) for tf in tf_per_tool)
    avg = (sum(lengths) / len(lengths)) if lengths else 1.0
    postings: dict[str, list[tuple[int, float]]] = {}
    for i, tf in enumerate(tf_per_tool):
        for term, freq in tf.items():
            postings.setdefault(term, []).append((i, freq))
    n = len(names)
    idf = {t: math.log(1.0 + (n - len(p) + 0.5) / (len(p) + 0.5)) for t, p in postings.items()}
    return _Index(names, postings, lengths, avg or 1.0, idf)


class OfflineClassifier:
    """BM25F-style lexical classifier over names, keywords and descriptions."""

    name = "offline"

    def __init__(self, *, max_indexes: int = 8) -> None:
        self._indexes: OrderedDict[tuple[str, int], _Index] = OrderedDict()
        self._max_indexes = max_indexes
        self._lock = threading.Lock()

    def _index(self, request: ClassifyInput) -> _Index:
        key = (request.catalog.fingerprint, hash(request.tools))
        with self._lock:
            index = self._indexes.get(key)
            if index is not None:
                self._indexes.move_to_end(key)
                return index
        index = _build_index(request.tools, request.catalog)
        with self._lock:
            self._indexes[key] = index
            while len(self._indexes) > self._max_indexes:
                self._indexes.popitem(last=False)
        return index

    def _score_terms(self, index: _Index, terms: dict[str, float]) -> list[float]:
        scores = [0.0] * len(index.names)
        for term, qweight in terms.items():
            posting = index.postings.get(term)
            if not posting:
                continue
            idf = index.idf[term]
            for i, freq in posting:
                norm = K1 * (1 - B + B * index.lengths[i] / index.avg_length)
                scores[i] += qweight * idf * freq * (K1 + 1) / (freq + norm)
        return scores

    def score(self, request: ClassifyInput) -> dict[str, float]:
        """Score every candidate against the prompt (and, damped, the recent user turns)."""
        index = self._index(request)
        query: dict[str, float] = {}
        for term in tokens(request.prompt):
            query[term] = query.get(term, 0.0) + 1.0
        history = [m.text() for m in request.messages[-4:] if m.role == "user"]
        for text in history[-2:]:
            for term in tokens(text):
                query[term] = query.get(term, 0.0) + HISTORY_WEIGHT
        raw = self._score_terms(index, query)
        return {name: round(s, 4) if s else 0.0 for name, s in zip(index.names, raw, strict=True)}

    async def classify(self, request: ClassifyInput) -> Classification:
        return self.classify_sync(request)

    def classify_sync(self, request: ClassifyInput) -> Classification:
        """Rank candidates and cut where the score drops off."""
        scores = self.score(request)
        ranked = sorted(
            ((n, s) for n, s in scores.items() if s > 0), key=lambda kv: (-kv[1], kv[0])
        )
        top = ranked[0][1] if ranked else 0.0
        if top <= 0.0:
            return Classification(
                selected=(),
                confidence=0.0,
                scores=scores,
                reasoning="no catalog term matched the prompt",
                cutoff=None,
                classifier="offline",
                has_signal=False,
            )
        weak = top < WEAK_SCORE
        cutoff = top * (WEAK_RELATIVE_CUTOFF if weak else RELATIVE_CUTOFF)
        selected = tuple(name for name, s in ranked if s >= cutoff and s > 0)[:MAX_SELECTED]
        second = ranked[1][1] if len(ranked) > 1 else 0.0
        margin = (top - second) / top if top else 0.0
        confidence = min(1.0, 0.35 + 0.08 * top + 0.3 * margin)
        return Classification(
            selected=selected,
            confidence=round(confidence, 3),
            scores=scores,
            reasoning=f"lexical match; best {ranked[0][0]} ({top:.2f})",
            cutoff=round(cutoff, 4),
            classifier="offline",
        )
