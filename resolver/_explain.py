"""The ranked card of a resolution (the explain view) and top-K over it.

`Resolution.candidates` is the global ranking: tools some signal wanted first (selected ones,
and excluded ones at the place they would have had without state), then the rest, each group
by descending score. `top_k` reads it two ways:

- ``"filter"`` (filter-after-rank): take the first K of the ranking, then drop the ineligible
  ones. Keeps the original top-K semantics; may return fewer than K.
- ``"backfill"``: skip ineligible candidates and fill K from the rest of the ranking, keeping
  the original order. Returns K whenever K eligible candidates exist.

`explain_data` and `explain_lines` render the card for ``resolver explain``.
"""

from __future__ import annotations

from typing import Any, Literal, assert_never

from ._types import Candidate, Resolution

TopKMode = Literal["filter", "backfill"]
"""How `top_k` treats candidates excluded by state: see the module docstring."""

DEFAULT_EXTRA_ROWS = 5
"""Rows shown below the last selected/excluded candidate when no row limit is given."""


def top_k(resolution: Resolution, k: int, mode: TopKMode = "filter") -> tuple[Candidate, ...]:
    """The top `k` eligible candidates of `resolution`, in global rank order.

    ``mode="filter"``: the original top K minus the excluded ones (may be fewer than K).
    ``mode="backfill"``: the first K eligible candidates of the whole ranking.
    """
    if k < 0:
        raise ValueError(f"k must be >= 0, got {k}")
    ranked = resolution.candidates
    if mode == "filter":
        return tuple(c for c in ranked[:k] if c.excluded is None)
    if mode == "backfill":
        return tuple(c for c in ranked if c.excluded is None)[:k]
    assert_never(mode)


def _default_rows(resolution: Resolution) -> int:
    last = max(
        (i for i, c in enumerate(resolution.candidates) if c.selected or c.excluded),
        default=-1,
    )
    return min(len(resolution.candidates), last + 1 + DEFAULT_EXTRA_ROWS)


def _rows(resolution: Resolution, top: int | None) -> tuple[Candidate, ...]:
    """`top` rows (None: every wanted candidate and a few more; 0: all)."""
    if top is None:
        top = _default_rows(resolution)
    elif top == 0:
        top = len(resolution.candidates)
    return resolution.candidates[:top]


def explain_data(resolution: Resolution, top: int | None = None) -> dict[str, Any]:
    """The ranked card as JSON-ready data (names, scores, signals; no descriptions)."""
    rows = _rows(resolution, top)
    return {
        "summary": resolution.summary,
        "toolsAllow": resolution.tools_allow,
        "source": resolution.source,
        "classifier": resolution.classifier,
        "confidence": resolution.confidence,
        "reasonCodes": list(resolution.reason_codes),
        "conversation": resolution.conversation,
        "cutoff": resolution.cutoff,
        "belowCutoff": resolution.below_cutoff,
        "availableTools": resolution.available_tools,
        "ranked": [
            {
                "rank": rank,
                "name": c.name,
                "score": c.score,
                "selected": c.selected,
                "signals": list(c.signals),
                "excluded": c.excluded,
            }
            for rank, c in enumerate(rows, start=1)
        ],
        "notShown": len(resolution.candidates) - len(rows),
        "exclusions": [e.model_dump() for e in resolution.exclusions],
    }


def conversation_line(resolution: Resolution) -> str | None:
    """The semantic extra's conversation head on this turn, when it ran: its probability and
    what became of the turn."""
    if resolution.conversation is None:
        return None
    chat = "conversation_core_only" in resolution.reason_codes
    verdict = "taken for conversation: core tools only" if chat else "kept as a task"
    return f"conversation head: p {resolution.conversation:.2f} ({verdict})"


def explain_lines(resolution: Resolution, top: int | None = None) -> list[str]:
    """The ranked card as readable lines."""
    lines = [f"summary: {resolution.summary}"]
    lines.append(
        f"classifier: {resolution.classifier}   source: {resolution.source}   "
        f"confidence: {resolution.confidence:.2f}"
    )
    if resolution.tools_allow is None:
        lines.append("toolsAllow: (abstain: the host keeps its full surface)")
        lines.append(f"reasons: {', '.join(resolution.reason_codes)}")
        return lines
    cutoff = "none" if resolution.cutoff is None else f"{resolution.cutoff:.3f}"
    lines.append(
        f"cut-off: {cutoff}   below the cut-off: {resolution.below_cutoff}   "
        f"excluded by state: {len({e.tool for e in resolution.exclusions})}   "
        f"kept: {len(resolution.tools_allow)} of {resolution.available_tools}"
    )
    rows = _rows(resolution, top)
    width = max([len("tool"), *(len(c.name) for c in rows)])
    lines.append(f"{'rank':>4}  {'tool':<{width}}  {'score':>8}  {'kept':<4}  signals")
    for rank, c in enumerate(rows, start=1):
        kept = "yes" if c.selected else ("OUT" if c.excluded else "no")
        signals = ", ".join(c.signals) if c.signals else "-"
        lines.append(f"{rank:>4}  {c.name:<{width}}  {c.score:>8.3f}  {kept:<4}  {signals}")
    hidden = len(resolution.candidates) - len(rows)
    if hidden:
        lines.append(f"      ... {hidden} more below (--top 0 shows all)")
    if resolution.exclusions:
        lines.append("exclusions (state_ineligible_excluded):")
        for e in resolution.exclusions:
            lines.append(f"  {e.tool}  {e.field}: {e.why}")
    lines.append(f"reasons: {', '.join(resolution.reason_codes)}")
    if (line := conversation_line(resolution)) is not None:
        lines.append(line)
    return lines
