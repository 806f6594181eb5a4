"""Interval estimates: the Wilson score interval, a task-cluster bootstrap, percentiles."""

from __future__ import annotations

import math
import random
from collections.abc import Callable, Mapping, Sequence

Z95 = 1.959963984540054
"""The standard normal quantile for a two-sided 95% interval."""


def wilson(successes: float, n: int, z: float = Z95) -> tuple[float, float]:
    """The Wilson score interval for `successes` out of `n` (``(0, 1)`` when n is 0).

    `successes` may be fractional (a mean of per-case fractions times n, e.g. average
    recall); the interval then treats the mean as a proportion, an approximation.
    """
    if n <= 0:
        return (0.0, 1.0)
    p = min(1.0, max(0.0, successes / n))
    denom = 1.0 + z * z / n
    centre = (p + z * z / (2 * n)) / denom
    half = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / denom
    return (max(0.0, centre - half), min(1.0, centre + half))


def percentile(values: Sequence[float], q: float) -> float:
    """The q-th percentile (0..100) with linear interpolation between closest ranks."""
    if not values:
        return 0.0
    ordered = sorted(values)
    pos = (len(ordered) - 1) * q / 100.0
    lo = math.floor(pos)
    hi = math.ceil(pos)
    return ordered[lo] + (ordered[hi] - ordered[lo]) * (pos - lo)


def cluster_bootstrap(
    clusters: Mapping[str, Sequence[tuple[float, ...]]],
    statistic: Callable[[list[tuple[float, ...]]], float],
    *,
    reps: int,
    seed: int,
    level: float = 0.95,
) -> tuple[float, float, float]:
    """Point estimate and percentile interval of `statistic` under a cluster bootstrap.

    Each replicate draws as many clusters as there are, with replacement, and keeps every row
    of each drawn cluster (rows within a task cluster are not independent). The generator is
    seeded, so the same input always gives the same interval.
    """
    keys = sorted(clusters)
    rows_all = [row for key in keys for row in clusters[key]]
    estimate = statistic(rows_all)
    if not keys:
        return (estimate, estimate, estimate)
    rng = random.Random(seed)
    values: list[float] = []
    for _ in range(reps):
        rows: list[tuple[float, ...]] = []
        for _ in keys:
            rows.extend(clusters[keys[rng.randrange(len(keys))]])
        values.append(statistic(rows))
    alpha = (1.0 - level) / 2.0
    return (estimate, percentile(values, 100 * alpha), percentile(values, 100 * (1 - alpha)))
