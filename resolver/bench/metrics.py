"""Per-case scores and the summary metrics.

Definitions (docs/benchmark.md, "Metrics"):

- a case's *surface* is the ``toolsAllow`` the pipeline returned; when it abstained the host
  keeps its whole surface, so the surface is every candidate;
- *hit*: every ``must_include`` tool is in the surface (a case with an empty list is a hit);
- *recall*: the share of ``must_include`` tools in the surface (1 when the list is empty);
- *precision*: ``|surface ∩ must_include| / |surface|``; an empty surface scores 1 when nothing
  was required and 0 otherwise;
- *exact*: the surface minus the always-on core tools equals ``must_include`` minus them (the
  pipeline adds core tools to every surface, so they are left out of the comparison);
- an *error* is a turn that ended in a fault code (internal error, deadline, an LLM fallback).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any

from .._types import LLM_FALLBACK_CODES
from .intervals import percentile, wilson

ERROR_CODES = LLM_FALLBACK_CODES | {"internal_error_abstain", "deadline_exceeded"}
"""Reason codes that mark a turn as an error (it still has a defined answer, and is scored)."""


@dataclass(frozen=True)
class CaseScore:
    """How one surface scores against one case's required tools."""

    hit: bool
    recall: float
    precision: float
    exact: bool
    surface: int
    missing: tuple[str, ...]


def score_case(
    required: Iterable[str], surface: Iterable[str], core: Iterable[str] = ()
) -> CaseScore:
    """Score a surface against the required tools (definitions in the module docstring)."""
    need = set(required)
    got = set(surface)
    always = set(core)
    missing = tuple(sorted(need - got))
    recall = 1.0 if not need else len(need & got) / len(need)
    # An empty surface is precise only when nothing was needed.
    precision = len(got & need) / len(got) if got else float(not need)
    return CaseScore(
        hit=not missing,
        recall=recall,
        precision=precision,
        exact=(got - always) == (need - always),
        surface=len(got),
        missing=missing,
    )


@dataclass(frozen=True)
class CaseOutcome:
    """One replayed case: what it needed, what the pipeline surfaced and how long it took."""

    id: str
    category: str
    cluster: str
    required: tuple[str, ...]
    surface: tuple[str, ...]
    candidates: int
    score: CaseScore
    latency_ms: float
    source: str
    reason_codes: tuple[str, ...] = ()
    error: str | None = None
    llm_ms: float | None = None

    def row(self) -> dict[str, Any]:
        """A compact JSON row (for the per-case list of a result file)."""
        return {
            "id": self.id,
            "category": self.category,
            "hit": self.score.hit,
            "recall": round(self.score.recall, 4),
            "surface": self.score.surface,
            "missing": list(self.score.missing),
            "source": self.source,
            **({"error": self.error} if self.error else {}),
        }


def _rate(successes: float, n: int) -> dict[str, Any]:
    lo, hi = wilson(successes, n)
    value = successes / n if n else 0.0
    return {"value": round(value, 4), "ci95": [round(lo, 4), round(hi, 4)]}


def summarize(outcomes: Sequence[CaseOutcome]) -> dict[str, Any]:
    """The summary metrics of a run (or of one category)."""
    n = len(outcomes)
    hits = sum(1 for o in outcomes if o.score.hit)
    recall = sum(o.score.recall for o in outcomes)
    precision = sum(o.score.precision for o in outcomes)
    exact = sum(1 for o in outcomes if o.score.exact)
    surface = sum(o.score.surface for o in outcomes) / n if n else 0.0
    candidates = sum(o.candidates for o in outcomes) / n if n else 0.0
    latencies = [o.latency_ms for o in outcomes]
    llm = [o.llm_ms for o in outcomes if o.llm_ms is not None]
    out: dict[str, Any] = {
        "cases": n,
        "must_include_accuracy": {**_rate(hits, n), "hits": hits},
        "avg_recall": _rate(recall, n),
        "precision": _rate(precision, n),
        "exact_match": {**_rate(exact, n), "hits": exact},
        "mean_surface": round(surface, 4),
        "mean_candidates": round(candidates, 4),
        "surface_reduction": round(1.0 - surface / candidates, 4) if candidates else 0.0,
        "p50_ms": round(percentile(latencies, 50), 3),
        "p95_ms": round(percentile(latencies, 95), 3),
        "errors": sum(1 for o in outcomes if o.error),
        "abstained": sum(1 for o in outcomes if o.source in ("abstain", "disabled")),
    }
    if llm:
        out["llm_p50_ms"] = round(percentile(llm, 50), 3)
        out["llm_p95_ms"] = round(percentile(llm, 95), 3)
    return out


def by_category(outcomes: Sequence[CaseOutcome]) -> dict[str, dict[str, Any]]:
    """`summarize` per category, categories sorted by name."""
    groups: dict[str, list[CaseOutcome]] = {}
    for outcome in outcomes:
        groups.setdefault(outcome.category, []).append(outcome)
    return {name: summarize(groups[name]) for name in sorted(groups)}
