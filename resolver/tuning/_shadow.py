"""Shadow turns from telemetry and the production must-include recall they measure.

A shadow turn (``source: "shadow"``) is a turn the resolver resolved but did not apply: the
host kept its whole surface, so the tools the primary model called (``usedTools``) show what
the turn needed, unbiased by the resolver. It is a **hit** when every used tool is in what the
resolver would have allowed (``shadowToolsAllow``), else a **miss**. Only shadow turns whose
``usedTools`` is known and non-empty are measured; turns that called no tool are counted apart
(they would be hits whatever the resolver answered).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..bench.intervals import wilson
from ..telemetry import TelemetryEvent, read_events, with_rotated

EXCERPT_CHARS = 120
"""Prompt excerpts shown in reports are cut to this many characters."""
EXAMPLES_PER_TOOL = 3


@dataclass(frozen=True)
class ShadowTurn:
    """One measured shadow turn."""

    prompt: str | None
    """The redacted prompt excerpt (None when capturePrompts was off)."""
    used: tuple[str, ...]
    allowed: tuple[str, ...]
    session: str | None
    reason_codes: tuple[str, ...]
    confidence: float

    @property
    def missing(self) -> tuple[str, ...]:
        """Used tools the resolver would have left out."""
        allowed = set(self.allowed)
        return tuple(t for t in self.used if t not in allowed)

    @property
    def hit(self) -> bool:
        return not self.missing


@dataclass
class ShadowSet:
    """What a telemetry file holds for tuning."""

    turns: list[ShadowTurn] = field(default_factory=list)
    """Shadow turns with known, non-empty usedTools."""
    lines: int = 0
    shadow_lines: int = 0
    without_used: int = 0
    """Shadow lines whose host reported no tool calls (usedTools null)."""
    no_tool_turns: int = 0
    """Shadow lines whose usedTools is empty (the model called no tool)."""
    skipped: int = 0
    low_confidence: int = 0
    """Non-shadow lines that fell back to the full surface on low confidence."""
    fallbacks: Counter[str] = field(default_factory=Counter)
    """Fallback reason codes over every line."""


def telemetry_paths(files: Iterable[str], *, rotated: bool = True) -> list[Path]:
    paths: list[Path] = []
    for name in files:
        paths.extend(with_rotated(name) if rotated else [Path(name)])
    return paths


def shadow_set(events: Sequence[TelemetryEvent], *, skipped: int = 0) -> ShadowSet:
    """The measured shadow turns and the fallback counts of `events`."""
    from ..telemetry._summary import FALLBACK_CODES

    found = ShadowSet(lines=len(events), skipped=skipped)
    for event in events:
        for code in event.reason_codes:
            if code in FALLBACK_CODES:
                found.fallbacks[code] += 1
        if "low_confidence_full_surface" in event.reason_codes:
            found.low_confidence += 1
        if event.source != "shadow" or event.shadow_tools_allow is None:
            continue
        found.shadow_lines += 1
        if event.used_tools is None:
            found.without_used += 1
            continue
        if not event.used_tools:
            found.no_tool_turns += 1
            continue
        found.turns.append(
            ShadowTurn(
                prompt=event.prompt_excerpt,
                used=tuple(dict.fromkeys(event.used_tools)),
                allowed=tuple(event.shadow_tools_allow),
                session=event.session_id,
                reason_codes=tuple(event.reason_codes),
                confidence=event.confidence,
            )
        )
    return found


def load_shadow_set(files: Iterable[str], *, rotated: bool = True) -> ShadowSet:
    """Read telemetry files (and their rotated backups) into a `ShadowSet`."""
    result = read_events(telemetry_paths(files, rotated=rotated))
    return shadow_set(result.events, skipped=result.skipped)


def excerpt(prompt: str | None) -> str:
    if not prompt:
        return "(no prompt captured)"
    flat = " ".join(prompt.split())
    return flat if len(flat) <= EXCERPT_CHARS else flat[: EXCERPT_CHARS - 1] + "…"


def recall_report(shadow: ShadowSet) -> dict[str, Any]:
    """Production must-include recall with its Wilson 95% interval, and misses by tool."""
    n = len(shadow.turns)
    hits = sum(1 for t in shadow.turns if t.hit)
    lo, hi = wilson(hits, n)
    need = sum(len(t.used) for t in shadow.turns)
    found = sum(len(t.used) - len(t.missing) for t in shadow.turns)
    misses: dict[str, dict[str, Any]] = {}
    for turn in shadow.turns:
        for tool in turn.missing:
            entry = misses.setdefault(tool, {"tool": tool, "misses": 0, "examples": []})
            entry["misses"] += 1
            if len(entry["examples"]) < EXAMPLES_PER_TOOL:
                entry["examples"].append(excerpt(turn.prompt))
    used_counts = Counter(t for turn in shadow.turns for t in turn.used)
    for tool, entry in misses.items():
        entry["used"] = used_counts[tool]
    ordered = sorted(misses.values(), key=lambda e: (-e["misses"], e["tool"]))
    return {
        "lines": shadow.lines,
        "shadowLines": shadow.shadow_lines,
        "measuredTurns": n,
        "withoutUsedTools": shadow.without_used,
        "noToolTurns": shadow.no_tool_turns,
        "hits": hits,
        "mustIncludeRecall": round(hits / n, 4) if n else None,
        "ci95": [round(lo, 4), round(hi, 4)] if n else None,
        "toolRecall": round(found / need, 4) if need else None,
        "misses": ordered,
    }
