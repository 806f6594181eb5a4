"""resolver.bench.intervals: Wilson interval, percentiles, task-cluster bootstrap."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from resolver.bench.intervals import cluster_bootstrap, percentile, wilson


@pytest.mark.parametrize(
    ("k", "n", "lo", "hi"),
    [
        pytest.param(0, 10, 0.0, 0.2775, id="none"),
        pytest.param(5, 10, 0.2366, 0.7634, id="half"),
        pytest.param(10, 10, 0.7225, 1.0, id="all"),
        pytest.param(81, 100, 0.7222, 0.8749, id="81-of-100"),
    ],
)
def test_wilson_known_values(k: int, n: int, lo: float, hi: float) -> None:
    """Matches the published Wilson 95% bounds (z = 1.96)."""
    got = wilson(k, n)
    assert got[0] == pytest.approx(lo, abs=1e-4)
    assert got[1] == pytest.approx(hi, abs=1e-4)


def test_wilson_no_cases_is_uninformative() -> None:
    """With n = 0 the interval is the whole [0, 1]."""
    assert wilson(0, 0) == (0.0, 1.0)


@given(n=st.integers(1, 5000), frac=st.floats(0, 1))
def test_wilson_contains_the_estimate(n: int, frac: float) -> None:
    """The interval lies in [0, 1] and contains the observed proportion."""
    k = round(frac * n)
    lo, hi = wilson(k, n)
    assert 0.0 <= lo <= k / n + 1e-12
    assert k / n - 1e-12 <= hi <= 1.0


def test_percentile_interpolates() -> None:
    """Linear interpolation between closest ranks."""
    assert percentile([4, 1, 3, 2], 50) == 2.5
    assert percentile([1, 2, 3, 4], 95) == pytest.approx(3.85)
    assert percentile([7.0], 99) == 7.0
    assert percentile([], 50) == 0.0


def mean0(rows: list[tuple[float, ...]]) -> float:
    return sum(r[0] for r in rows) / len(rows)


def test_bootstrap_is_seeded() -> None:
    """The same data and seed give the same interval; another seed may differ."""
    clusters = {f"c{i}": [(float(i % 3 == 0),), (float(i % 2),)] for i in range(20)}
    first = cluster_bootstrap(clusters, mean0, reps=500, seed=7)
    assert first == cluster_bootstrap(clusters, mean0, reps=500, seed=7)
    assert first[1] <= first[0] <= first[2]


def test_bootstrap_constant_difference_has_zero_width() -> None:
    """When every case moves by -0.1 the interval is exactly [-0.1, -0.1]."""
    clusters = {f"c{i}": [(-0.1,)] * (i + 1) for i in range(12)}
    est, lo, hi = cluster_bootstrap(clusters, mean0, reps=300, seed=1)
    assert est == pytest.approx(-0.1)
    assert lo == pytest.approx(-0.1)
    assert hi == pytest.approx(-0.1)


def test_bootstrap_resamples_whole_clusters() -> None:
    """Two clusters of opposite sign: replicates are mixtures of whole clusters only."""
    clusters = {"a": [(1.0,), (1.0,)], "b": [(-1.0,), (-1.0,)]}
    est, lo, hi = cluster_bootstrap(clusters, mean0, reps=400, seed=3)
    assert est == 0.0
    assert lo == pytest.approx(-1.0)
    assert hi == pytest.approx(1.0)
