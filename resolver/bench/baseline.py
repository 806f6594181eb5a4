"""The BM25 top-k baseline (``bm25s``), with k matched to the resolver's mean surface.

Each candidate is one document: its name split into words plus the same effective description
the resolver sees (catalog layers first, the case file's description where none has the tool).
The query is the turn's prompt. English stop words, no stemming (bm25s defaults otherwise).

Surfaces are counted the same way for both: the always-on core tools that are candidates are
in every surface (for Seal-Tools there are none among the candidates), and the baseline adds its
top-k of the other candidates. k is matched so the baseline's mean surface equals the
resolver's mean surface on the same run: with ``want = resolver mean surface - core
candidates`` and ``base = floor(want)``, ``round(n * (want - base))`` of the n cases get
``base + 1`` tools and the rest ``base``, spread evenly over the case order, so the means agree
to within 1/(2n) while every case still gets a plain top-k list.
"""

from __future__ import annotations

import logging
import math
import time
from collections.abc import Sequence

from .cases import CaseSet
from .metrics import CaseOutcome, score_case


def matched_ks(target_mean: float, n: int, *, fixed: int, cap: int) -> list[int]:
    """Per-case k (each ``base`` or ``base + 1``) whose mean plus `fixed` is `target_mean`."""
    want = min(float(cap), max(0.0, target_mean - fixed))
    base = math.floor(want)
    extra = round(n * (want - base))
    return [min(cap, base + (1 if (i + 1) * extra // n > i * extra // n else 0)) for i in range(n)]


class BM25Baseline:
    """Top-k retrieval over candidate descriptions with bm25s."""

    def __init__(self, documents: Sequence[tuple[str, str]]) -> None:
        import bm25s  # late import: the `bench` extra

        logging.getLogger("bm25s").setLevel(logging.WARNING)  # it logs index building loudly
        self._bm25s = bm25s
        self.names = [name for name, _ in documents]
        corpus = [f"{name.replace('_', ' ')} {text}" for name, text in documents]
        self._retriever = bm25s.BM25()
        if corpus:
            self._retriever.index(
                bm25s.tokenize(corpus, stopwords="en", show_progress=False), show_progress=False
            )

    def top(self, prompt: str, k: int) -> list[str]:
        """The k best candidates for `prompt`, best first."""
        k = min(k, len(self.names))
        if k <= 0:
            return []
        tokens = self._bm25s.tokenize(
            [prompt], stopwords="en", show_progress=False, return_ids=False
        )
        if not tokens[0]:
            tokens = [[""]]
        docs, _ = self._retriever.retrieve(tokens, k=k, show_progress=False)
        return [self.names[int(i)] for i in docs[0]]


def run_bm25(
    cases: CaseSet,
    descriptions: Sequence[tuple[str, str]],
    *,
    core: frozenset[str],
    target_mean_surface: float,
) -> tuple[list[CaseOutcome], dict[str, float | int]]:
    """Score the BM25 baseline on every case; returns outcomes and how k was matched."""
    names = tuple(name for name, _ in descriptions)
    always = tuple(n for n in names if n in core)
    others = [(n, d) for n, d in descriptions if n not in core]
    baseline = BM25Baseline(others)
    ks = matched_ks(target_mean_surface, len(cases.cases), fixed=len(always), cap=len(others))
    outcomes: list[CaseOutcome] = []
    for case, k in zip(cases.cases, ks, strict=True):
        start = time.perf_counter()
        surface = (*always, *baseline.top(case.prompt, k))
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
                source="bm25",
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
