"""The non-inferiority gate: a treatment configuration against a control, margins frozen.

Both configurations replay the same cases. Per case we keep (hit, recall, surface) for each
arm; the differences treatment - control of must-include accuracy, average recall and mean
surface get 95% task-cluster bootstrap intervals (clusters: a case's ``cluster`` field, or its
``category`` when it has none; a fixed seed from the margins file). The gate passes only when

- the lower bound of the accuracy difference is >= -margin (non-inferior), and
- the lower bound of the average-recall difference is >= -margin, and
- when the margins file claims a surface reduction, the upper bound of the surface
  difference is < 0 (the gain is real, not noise).

The margins file is read, hashed (sha256, recorded in every gate output) and never adjusted.
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import orjson
from pydantic import BaseModel, ConfigDict, Field, ValidationError

from .._errors import ConfigError
from .._files import read_user_file
from .intervals import cluster_bootstrap
from .metrics import CaseOutcome

MIN_CLUSTERS = 10
"""Below this many clusters the bootstrap interval is unreliable (reported as a warning)."""


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True, populate_by_name=True)


class MarginValues(_Strict):
    """Largest tolerated drop (treatment - control), as a fraction."""

    must_include_accuracy: float = Field(ge=0.0, le=1.0)
    avg_recall: float = Field(ge=0.0, le=1.0)


class BootstrapOptions(_Strict):
    reps: int = Field(default=2000, ge=100, le=100_000)
    seed: int = 20260906


class MarginsFile(_Strict):
    """A frozen margins file (``benchmark/margins-default.json``)."""

    schema_version: int = Field(alias="schemaVersion", ge=1, le=1)
    margins: MarginValues
    claim_surface_reduction: bool = Field(default=False, alias="claimSurfaceReduction")
    """True when the treatment claims a smaller surface: then it must be real."""
    bootstrap: BootstrapOptions = Field(default_factory=BootstrapOptions)
    note: str = ""


def load_margins(path: str | Path) -> tuple[MarginsFile, str]:
    """The margins file and the sha256 of its bytes."""
    path, raw = read_user_file(path, "margins")
    try:
        margins = MarginsFile.model_validate(orjson.loads(raw))
    except orjson.JSONDecodeError as exc:
        raise ConfigError(f"{path}: invalid JSON ({exc})", source=str(path)) from None
    except ValidationError as exc:
        problems = "; ".join(
            f"{'.'.join(str(p) for p in e['loc']) or '(root)'}: {e['msg']}" for e in exc.errors()
        )
        raise ConfigError(
            f"{path}: invalid margins file: {problems} (see benchmark/margins-default.json)",
            source=str(path),
        ) from None
    return margins, hashlib.sha256(raw).hexdigest()


def _mean(rows: Sequence[tuple[float, ...]], i: int) -> float:
    return sum(r[i] for r in rows) / len(rows) if rows else 0.0


def compare(
    control: Sequence[CaseOutcome], treatment: Sequence[CaseOutcome], margins: MarginsFile
) -> dict[str, Any]:
    """The gate's verdict with the bootstrap intervals of each difference."""
    by_id = {o.id: o for o in treatment}
    if set(by_id) != {o.id for o in control}:
        raise ConfigError("gate: control and treatment must score the same cases")
    clusters: dict[str, list[tuple[float, ...]]] = {}
    for c in control:
        t = by_id[c.id]
        clusters.setdefault(c.cluster, []).append(
            (
                float(t.score.hit) - float(c.score.hit),
                t.score.recall - c.score.recall,
                float(t.score.surface - c.score.surface),
            )
        )
    reps, seed = margins.bootstrap.reps, margins.bootstrap.seed
    out: dict[str, Any] = {}
    checks: list[str] = []
    passed = True
    for index, metric in enumerate(("must_include_accuracy", "avg_recall", "mean_surface")):

        def statistic(rows: list[tuple[float, ...]], i: int = index) -> float:
            return _mean(rows, i)

        estimate, lo, hi = cluster_bootstrap(clusters, statistic, reps=reps, seed=seed)
        entry: dict[str, Any] = {
            "difference": round(estimate, 4),
            "ci95": [round(lo, 4), round(hi, 4)],
        }
        if metric == "mean_surface":
            claimed = margins.claim_surface_reduction
            ok = hi < 0 if claimed else True
            entry["claimed_reduction"] = claimed
            if claimed:
                checks.append(
                    f"surface reduction claimed: upper bound {hi:+.4f} "
                    f"{'<' if ok else '>='} 0 -> {'real' if ok else 'not shown'}"
                )
        else:
            margin = getattr(margins.margins, metric)
            ok = lo >= -margin
            entry["margin"] = margin
            checks.append(
                f"{metric}: lower bound {lo:+.4f} {'>=' if ok else '<'} -{margin} -> "
                f"{'non-inferior' if ok else 'inferior'}"
            )
        entry["pass"] = ok
        passed = passed and ok
        out[metric] = entry
    result: dict[str, Any] = {
        "pass": passed,
        "differences": out,
        "checks": checks,
        "clusters": len(clusters),
        "cases": len(control),
        "bootstrap": {"reps": reps, "seed": seed, "level": 0.95},
    }
    if len(clusters) < MIN_CLUSTERS:
        result["warning"] = (
            f"only {len(clusters)} clusters: the bootstrap interval is unreliable; add a "
            '"cluster" field to the cases (e.g. one per session or task)'
        )
    return result
