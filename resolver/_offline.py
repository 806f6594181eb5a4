"""The embedded offline classifier: no network, no key.

How it decides (README, "Offline classifier"):

1. **Index** (built once per catalog fingerprint + candidate set, cached): BM25 over three
   weighted fields — the tool name split into words (x3), the catalog's keyword lexicon (x2,
   any language) and the effective description (x1). Per-posting BM25 weights are precomputed,
   so a turn costs one dictionary lookup per query term.
2. **Query**: the prompt's terms (stemmed words, CJK bigrams, and every CJK keyword word found
   whole in the prompt — a whole word outweighs partial bigram overlap); a query word not in the
   vocabulary is mapped to vocabulary words one edit away (typos: "remnd" -> remind), at a
   discount; the last user messages add a damped contribution (follow-ups).
3. **Segments**: a prompt that asks for several things ("..., then ...; also ..."; the
   full-width "，" and "、" count as commas) is split into clauses, and each clause's best
   tools are kept, so every sub-request is covered.
4. **Cut-off** from the score distribution, not a fixed k: keep tools scoring at least a
   fraction of the best; a weak best score lowers the fraction (widen for recall).
5. **Semantic extra** (optional, ``offlineSemantic``): a packaged multilingual embedding model
   adds a bonus to the tools the prompt stands out for before the cut-off (`_semantic`).
"""

from __future__ import annotations

import heapq
import math
import re
import threading
from collections import OrderedDict
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from ._catalog import EffectiveCatalog
from ._classify import Classification, ClassifyInput
from ._limits import MAX_ID_CHARS
from ._semantic import SemanticScorer, fuse, passage_text
from ._text import cjk_words, fold, has_cjk, tokens

NAME_WEIGHT = 3.0
KEYWORD_WEIGHT = 2.0
DESCRIPTION_WEIGHT = 1.0
DESCRIPTION_TERMS = 4
"""A tool's description contributes its strongest this-many query terms to a turn's score."""
HISTORY_WEIGHT = 0.35
TYPO_WEIGHT = 0.7
K1 = 1.2
B = 0.75
RELATIVE_CUTOFF = 0.5
"""Keep candidates scoring at least this fraction of the best score..."""
WEAK_RELATIVE_CUTOFF = 0.3
"""...or this fraction when the best score is weak (widen for recall)."""
WEAK_SCORE = 5.0
SEGMENT_RELATIVE_CUTOFF = 0.6
SEGMENT_PICKS = 4
MAX_SELECTED = 16
MIN_TYPO_LENGTH = 4
MAX_TYPO_LENGTH = 24
"""Typo matching only looks at word-like terms (letters only) of 4-24 characters: a hash, a
base64 blob or a long run of one letter is not a misspelt word, and its one-deletion variants
would cost O(length²) time and memory."""
CJK_WORD_WEIGHT = 2.0
"""A CJK keyword word found whole in the prompt counts this many keyword matches..."""
CJK_BIGRAM_WEIGHT = 0.5
"""...and each bigram it shares with the prompt only this fraction of one (partial overlap)."""
_WORD_TERM = "\u00a7"
"""Prefix of whole-word CJK keyword terms in the index (never produced by `tokens`)."""

_SEGMENT_SPLIT = re.compile(
    r"(?:[.!?;。！？；，、\n]+\s*"
    r"|,?\s+(?:and then|then|also|additionally|finally|afterwards|after that|next|plus"
    r"|as well as)\s+"
    r"|,\s+(?:and\s+)?)",
    re.IGNORECASE,
)


@dataclass(frozen=True)
class _Index:
    names: tuple[str, ...]
    weights: Mapping[str, tuple[tuple[int, float, float], ...]]
    """term -> ((tool index, precomputed BM25 weight, the part of it from the description),
    ...)"""
    deletes: Mapping[str, tuple[str, ...]]
    """one-deletion variants -> vocabulary terms (for typo matching)"""
    cjk_words: tuple[str, ...] = ()
    """CJK keyword words, matched whole as substrings of the prompt (particles may follow)"""
    key: tuple[str, int] = ("", 0)
    """(catalog fingerprint, candidate-set hash): this index's cache key, also the semantic
    matrix's, so a turn hashes its candidate set once"""


def _script(term: str) -> str:
    return "cjk" if term.startswith(_WORD_TERM) or has_cjk(term) else "latin"


def _typo_term(term: str, min_length: int) -> bool:
    """Whether `term` takes part in typo matching (a word-like ASCII term of bounded length)."""
    return min_length <= len(term) <= MAX_TYPO_LENGTH and term.isascii() and term.isalpha()


def _deletions(term: str) -> set[str]:
    return {term[:i] + term[i + 1 :] for i in range(len(term))}


def _build_index(
    tools: Sequence[tuple[str, str]], catalog: EffectiveCatalog, key: tuple[str, int]
) -> _Index:
    names = tuple(name for name, _ in tools)
    tf_per_tool: list[dict[str, float]] = []
    desc_per_tool: list[dict[str, float]] = []
    for name, description in tools:
        tf: dict[str, float] = {}
        for term in tokens(name[:MAX_ID_CHARS]):
            tf[term] = tf.get(term, 0.0) + NAME_WEIGHT
        seen: set[str] = set()
        for phrase in catalog.keywords.get(name, ()):
            for term in tokens(phrase):
                if term not in seen:
                    seen.add(term)
                    scale = CJK_BIGRAM_WEIGHT if has_cjk(term) else 1.0
                    tf[term] = tf.get(term, 0.0) + KEYWORD_WEIGHT * scale
            for word in cjk_words(phrase):
                if _WORD_TERM + word not in seen:
                    seen.add(_WORD_TERM + word)
                    tf[_WORD_TERM + word] = KEYWORD_WEIGHT * CJK_WORD_WEIGHT
        # A description counts each of its terms once: repeating a word adds nothing.
        desc = dict.fromkeys(tokens(description), DESCRIPTION_WEIGHT)
        for term in desc:
            tf[term] = tf.get(term, 0.0) + DESCRIPTION_WEIGHT
        tf_per_tool.append(tf)
        desc_per_tool.append(desc)
    # Length normalisation per script: a tool's Chinese/Japanese/Korean keywords do not make it
    # "longer" for an English query, nor its English text for a CJK one (adding words in one
    # language leaves every other language's ranking as it was).
    lengths = {"latin": [0.0] * len(tf_per_tool), "cjk": [0.0] * len(tf_per_tool)}
    for i, tf in enumerate(tf_per_tool):
        for term, freq in tf.items():
            lengths[_script(term)][i] += freq
    avg = {s: (sum(v) / len(v) if v and sum(v) else 1.0) for s, v in lengths.items()}
    postings: dict[str, list[tuple[int, float]]] = {}
    for i, tf in enumerate(tf_per_tool):
        for term, freq in tf.items():
            postings.setdefault(term, []).append((i, freq))
    n = len(names)
    weights: dict[str, tuple[tuple[int, float, float], ...]] = {}
    for term, plist in postings.items():
        idf = math.log(1.0 + (n - len(plist) + 0.5) / (len(plist) + 0.5))
        length, mean = lengths[_script(term)], avg[_script(term)]
        rows = []
        for i, f in plist:
            w = idf * f * (K1 + 1) / (f + K1 * (1 - B + B * length[i] / mean))
            rows.append((i, w, w * desc_per_tool[i].get(term, 0.0) / f if f else 0.0))
        weights[term] = tuple(rows)
    deletes: dict[str, list[str]] = {}
    for term in weights:
        if _typo_term(term, MIN_TYPO_LENGTH):
            for variant in _deletions(term) | {term}:
                deletes.setdefault(variant, []).append(term)
    words = tuple(t[len(_WORD_TERM) :] for t in weights if t.startswith(_WORD_TERM))
    return _Index(names, weights, {k: tuple(v) for k, v in deletes.items()}, words, key)


def one_edit(a: str, b: str) -> bool:
    """True when `b` is `a` with one character inserted, deleted, substituted, or two
    neighbours swapped (Damerau distance 1)."""
    if a == b or abs(len(a) - len(b)) > 1:
        return False
    if len(a) == len(b):
        diff = [i for i in range(len(a)) if a[i] != b[i]]
        if len(diff) == 1:
            return True
        i, j = diff[0], diff[-1]
        return len(diff) == 2 and j == i + 1 and a[i] == b[j] and a[j] == b[i]
    short, long_ = (a, b) if len(a) < len(b) else (b, a)
    i = next((k for k in range(len(short)) if short[k] != long_[k]), len(short))
    return short[i:] == long_[i + 1 :]


def _near_terms(index: _Index, term: str) -> list[str]:
    """Vocabulary terms one edit (insert, delete, substitute, swap) from `term`.

    The deletion index proposes candidates (a deletion on both sides can also pair words two
    edits apart, e.g. "remnd" and "rendu"); `one_edit` keeps only the true one-edit ones."""
    if not _typo_term(term, MIN_TYPO_LENGTH - 1):
        return []
    found: set[str] = set()
    for variant in _deletions(term) | {term}:
        found.update(index.deletes.get(variant, ()))
    return sorted(t for t in found if one_edit(term, t))


class OfflineClassifier:
    """BM25F-style lexical classifier over names, keywords and descriptions."""

    name = "offline"

    def __init__(self, *, max_indexes: int = 8, semantic: SemanticScorer | None = None) -> None:
        self._indexes: OrderedDict[tuple[str, int], _Index] = OrderedDict()
        self._max_indexes = max_indexes
        self._lock = threading.Lock()
        self.semantic = semantic
        """The optional semantic extra (None: lexical only)."""

    def warm(self, tools: tuple[tuple[str, str], ...], catalog: EffectiveCatalog) -> None:
        """Build (and cache) the index for a candidate set now, off the turn's path."""
        index = self._index_for(tools, catalog)
        if self.semantic is not None:
            self.semantic.build(index.key, _passages(tools, catalog))

    def _index(self, request: ClassifyInput) -> _Index:
        return self._index_for(request.tools, request.catalog)

    def _index_for(self, tools: tuple[tuple[str, str], ...], catalog: EffectiveCatalog) -> _Index:
        key = (catalog.fingerprint, hash(tools))
        with self._lock:
            index = self._indexes.get(key)
            if index is not None:
                self._indexes.move_to_end(key)
                return index
        index = _build_index(tools, catalog, key)
        with self._lock:
            self._indexes[key] = index
            while len(self._indexes) > self._max_indexes:
                self._indexes.popitem(last=False)
        return index

    def _query(self, index: _Index, text: str, weight: float = 1.0) -> dict[str, float]:
        query: dict[str, float] = {}
        if index.cjk_words and has_cjk(text):
            folded = fold(text)
            for word in index.cjk_words:
                if word in folded:
                    query[_WORD_TERM + word] = query.get(_WORD_TERM + word, 0.0) + weight
        for term in tokens(text):
            if term in index.weights:
                query[term] = query.get(term, 0.0) + weight
                continue
            for near in _near_terms(index, term):
                query[near] = query.get(near, 0.0) + weight * TYPO_WEIGHT
        return query

    @staticmethod
    def _score(index: _Index, query: Mapping[str, float]) -> list[float]:
        """BM25F scores; a tool's description adds only its `DESCRIPTION_TERMS` strongest
        query terms (a description that lists every word of the prompt cannot outscore the
        tools whose names and keywords the prompt asks for)."""
        scores = [0.0] * len(index.names)
        described: dict[int, list[float]] = {}
        for term, qweight in query.items():
            for i, w, wd in index.weights.get(term, ()):
                scores[i] += qweight * (w - wd)
                if wd:
                    described.setdefault(i, []).append(qweight * wd)
        for i, parts in described.items():
            if len(parts) > DESCRIPTION_TERMS:
                parts = heapq.nlargest(DESCRIPTION_TERMS, parts)
            scores[i] += sum(parts)
        return scores

    def score(self, request: ClassifyInput) -> dict[str, float]:
        """Score every candidate against the prompt (and, damped, the recent user turns)."""
        index = self._index(request)
        return dict(zip(index.names, self._full_scores(index, request), strict=True))

    def _full_scores(self, index: _Index, request: ClassifyInput) -> list[float]:
        return self._scored(index, request)[0]

    def _scored(self, index: _Index, request: ClassifyInput) -> tuple[list[float], bool]:
        """Per-candidate scores, and whether the semantic extra contributed to them."""
        query = self._query(index, request.prompt)
        history = [m.text() for m in request.messages[-4:] if m.role == "user"]
        for text in history[-2:]:
            for term, w in self._query(index, text, HISTORY_WEIGHT).items():
                query[term] = query.get(term, 0.0) + w
        scores = self._score(index, query)
        if self.semantic is None or not tokens(request.prompt):
            # a prompt with no content words ("thanks, that's all") stays without a signal
            return scores, False
        z = self.semantic.zscores(
            index.key,
            lambda: _passages(request.tools, request.catalog),
            request.prompt,
        )
        return (scores, False) if z is None else (fuse(scores, z), True)

    async def classify(self, request: ClassifyInput) -> Classification:
        return self.classify_sync(request)

    def classify_sync(self, request: ClassifyInput) -> Classification:
        """Rank candidates and cut where the score drops off; cover every clause."""
        index = self._index(request)
        scores, semantic = self._scored(index, request)
        label = "offline+semantic" if semantic else "offline"
        names = index.names
        positive = [i for i, v in enumerate(scores) if v > 0]
        ranked = sorted(positive, key=lambda i: (-scores[i], names[i]))
        top = scores[ranked[0]] if ranked else 0.0
        rounded = {names[i]: round(scores[i], 4) for i in ranked}
        if top <= 0.0:
            return Classification(
                selected=(),
                confidence=0.0,
                scores=rounded,
                reasoning="no catalog term matched the prompt",
                classifier=label,
                has_signal=False,
            )
        weak = top < WEAK_SCORE
        cutoff = top * (WEAK_RELATIVE_CUTOFF if weak else RELATIVE_CUTOFF)
        lists = [[names[i] for i in ranked if scores[i] >= cutoff]]
        lists.extend(self._segment_lists(index, request.prompt))
        chosen = _round_robin(lists, MAX_SELECTED)
        second = scores[ranked[1]] if len(ranked) > 1 else 0.0
        margin = (top - second) / top
        confidence = min(1.0, 0.3 + 0.06 * top + 0.3 * margin)
        return Classification(
            selected=chosen,
            confidence=round(confidence, 3),
            scores=rounded,
            reasoning=f"lexical match; best {names[ranked[0]]} ({top:.2f})",
            cutoff=round(cutoff, 4),
            classifier=label,
        )

    def _segment_lists(self, index: _Index, prompt: str) -> list[list[str]]:
        """Per clause of a multi-part prompt: its best tools, best first."""
        segments = [s for s in _SEGMENT_SPLIT.split(prompt) if s and len(s.strip()) > 2]
        if len(segments) < 2:
            return []
        lists: list[list[str]] = []
        for segment in segments:
            seg_scores = self._score(index, self._query(index, segment))
            order = heapq.nlargest(
                SEGMENT_PICKS, range(len(index.names)), key=seg_scores.__getitem__
            )
            best = seg_scores[order[0]] if order else 0.0
            if best > 0:
                floor = best * SEGMENT_RELATIVE_CUTOFF
                lists.append([index.names[i] for i in order if seg_scores[i] >= floor])
        return lists


def _round_robin(lists: Sequence[Sequence[str]], cap: int) -> tuple[str, ...]:
    """Take the 1st of every list, then the 2nd of every list, ... up to `cap` names.

    The whole-prompt ranking comes first, so a single-clause prompt is a plain top-of-ranking;
    every clause of a multi-part prompt gets its best tool before any gets its second.
    """
    chosen: dict[str, None] = {}
    depth = max((len(x) for x in lists), default=0)
    for level in range(depth):
        for items in lists:
            if level < len(items) and len(chosen) < cap:
                chosen.setdefault(items[level], None)
    return tuple(chosen)


def _passages(tools: Sequence[tuple[str, str]], catalog: EffectiveCatalog) -> list[str]:
    return [passage_text(n, d, catalog.keywords.get(n, ())) for n, d in tools]
