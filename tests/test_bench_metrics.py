"""resolver.bench.metrics: per-case scores and summaries, hand-checked."""

from __future__ import annotations

import pytest

from resolver.bench.metrics import CaseOutcome, by_category, score_case, summarize


@pytest.mark.parametrize(
    ("required", "surface", "core", "hit", "recall", "precision", "exact"),
    [
        pytest.param(["a"], ["a"], [], True, 1.0, 1.0, True, id="exact-single"),
        pytest.param(["a", "b"], ["a", "c", "read"], ["read"], False, 0.5, 1 / 3, False, id="half"),
        pytest.param(
            ["a"],
            ["a", "read", "write"],
            ["read", "write"],
            True,
            1.0,
            1 / 3,
            True,
            id="core-ignored-for-exact",
        ),
        pytest.param([], ["read"], ["read"], True, 1.0, 0.0, True, id="empty-required-core-only"),
        pytest.param([], ["x"], [], True, 1.0, 0.0, False, id="empty-required-extra-tool"),
        pytest.param([], [], [], True, 1.0, 1.0, True, id="empty-both"),
        pytest.param(["a"], [], [], False, 0.0, 0.0, False, id="empty-surface"),
        pytest.param(["a", "b", "c"], ["c", "b", "a", "d"], [], True, 1.0, 0.75, False, id="extra"),
    ],
)
def test_score_case_by_hand(
    required: list[str],
    surface: list[str],
    core: list[str],
    hit: bool,
    recall: float,
    precision: float,
    exact: bool,
) -> None:
    """hit, recall, precision and exact match follow the documented definitions."""
    score = score_case(required, surface, core)
    assert (score.hit, score.exact) == (hit, exact)
    assert score.recall == pytest.approx(recall)
    assert score.precision == pytest.approx(precision)
    assert score.surface == len(set(surface))
    assert set(score.missing) == set(required) - set(surface)


def outcome(
    cid: str, category: str, required: list[str], surface: list[str], ms: float
) -> CaseOutcome:
    return CaseOutcome(
        id=cid,
        category=category,
        cluster=category,
        required=tuple(required),
        surface=tuple(surface),
        candidates=10,
        score=score_case(required, surface),
        latency_ms=ms,
        source="offline",
        error="llm_timeout_fallback" if cid == "e" else None,
    )


def test_summarize_by_hand() -> None:
    """Three cases: 2/3 accuracy, mean recall (1 + 0.5 + 1)/3, surface 2, reduction 0.8."""
    outcomes = [
        outcome("a", "x", ["t1"], ["t1", "t2"], 1.0),
        outcome("b", "x", ["t1", "t3"], ["t1", "t2"], 2.0),
        outcome("e", "y", [], ["t4", "t5"], 9.0),
    ]
    m = summarize(outcomes)
    assert m["cases"] == 3
    assert m["must_include_accuracy"]["value"] == pytest.approx(0.6667, abs=1e-4)
    assert m["must_include_accuracy"]["hits"] == 2
    assert m["avg_recall"]["value"] == pytest.approx(2.5 / 3, abs=1e-4)
    assert m["precision"]["value"] == pytest.approx((0.5 + 0.5 + 0.0) / 3, abs=1e-4)
    assert m["exact_match"]["value"] == 0.0
    assert m["mean_surface"] == 2.0
    assert m["surface_reduction"] == pytest.approx(0.8)
    assert m["p50_ms"] == 2.0
    assert m["p95_ms"] == pytest.approx(2.0 + 0.9 * 7.0)
    assert m["errors"] == 1
    lo, hi = m["must_include_accuracy"]["ci95"]
    assert lo < 0.6667 < hi
    cats = by_category(outcomes)
    assert list(cats) == ["x", "y"]
    assert cats["x"]["must_include_accuracy"]["value"] == 0.5
    assert cats["y"]["avg_recall"]["value"] == 1.0
