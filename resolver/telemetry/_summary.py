"""Reading telemetry files and summarising them (`resolver telemetry summary`).

Each quantity is measured on its own, never folded into one number: surface size (tools,
bytes, tokens), source mix, fallbacks by cause, latency, confidence, tokens saved (in the unit
the lines carry), classifier tokens and an *estimated* classifier cost.
"""

from __future__ import annotations

import math
import re
from collections import Counter
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import orjson
from pydantic import ValidationError

from .._errors import ConfigError
from .._types import LLM_FALLBACK_CODES
from ._event import TelemetryEvent

PRICES_CHECKED = "2026-11"
PRICES_PER_MTOK: dict[str, tuple[float, float, float]] = {
    # model -> (input, cached input, output) in USD per million tokens, as published by the
    # provider (checked 2026-11). An estimate: discounts, batch and regional pricing differ.
    "gpt-5.4": (2.50, 0.25, 15.00),
    "gpt-5.4-mini": (0.75, 0.075, 4.50),
    "gpt-5.4-nano": (0.20, 0.02, 1.25),
    "gpt-5-mini": (0.25, 0.025, 2.00),
    "gpt-5-nano": (0.05, 0.005, 0.40),
    "gpt-4.1-mini": (0.40, 0.10, 1.60),
    "gpt-4.1-nano": (0.10, 0.025, 0.40),
    "gpt-4o-mini": (0.15, 0.075, 0.60),
}
"""Built-in classifier prices; override with ``--price-per-mtok-in/--price-per-mtok-out``."""

FALLBACK_CODES = (
    *sorted(LLM_FALLBACK_CODES),
    "deadline_exceeded",
    "low_confidence_full_surface",
    "no_signal_full_surface",
    "surface_unknown_abstain",
    "empty_surface_abstain",
    "internal_error_abstain",
    "catalog_layer_invalid",
)
"""Reason codes that mean "the resolver fell back" (counted per cause)."""

_ROTATED = re.compile(r"\.(\d+)$")
_FIELDS = {f.alias or name for name, f in TelemetryEvent.model_fields.items()}


def with_rotated(path: str | Path) -> list[Path]:
    """`path` and its existing rotated backups, oldest first (``file.2, file.1, file``)."""
    path = Path(path).expanduser()
    backups: list[tuple[int, Path]] = []
    for sibling in path.parent.glob(path.name + ".*"):
        match = _ROTATED.search(sibling.name)
        if match and sibling.name == f"{path.name}.{match.group(1)}":
            backups.append((int(match.group(1)), sibling))
    ordered = [p for _, p in sorted(backups, reverse=True)]
    return [*ordered, path] if path.exists() else ordered


@dataclass
class ReadResult:
    """Events read from telemetry files, and what was skipped."""

    events: list[TelemetryEvent] = field(default_factory=list)
    skipped: int = 0
    first_error: str | None = None


def read_events(paths: Iterable[str | Path]) -> ReadResult:
    """Parse every line of `paths`; lines that are not valid events are counted, not fatal.

    Unknown fields (written by a newer version) are ignored. A missing file is an error that
    names it.
    """
    result = ReadResult()
    for path in paths:
        path = Path(path)
        try:
            handle = path.open("rb")
        except OSError as exc:
            raise ConfigError(
                f"{path}: cannot read telemetry file ({exc.strerror})", source=str(path)
            ) from None
        with handle:
            for number, raw in enumerate(handle, start=1):
                if not raw.strip():
                    continue
                try:
                    data = orjson.loads(raw)
                    if not isinstance(data, dict):
                        raise ValueError("not a JSON object")
                    known = {k: v for k, v in data.items() if k in _FIELDS}
                    result.events.append(TelemetryEvent.model_validate(known))
                except (orjson.JSONDecodeError, ValueError, ValidationError) as exc:
                    result.skipped += 1
                    if result.first_error is None:
                        reason = str(exc).splitlines()[0]
                        result.first_error = f"{path}:{number}: {reason}"
    result.events.sort(key=lambda e: e.ts)
    return result


def percentile(values: Sequence[float], q: float) -> float | None:
    """Linear-interpolated percentile (q in 0..100); None for no values."""
    if not values:
        return None
    ordered = sorted(values)
    rank = (len(ordered) - 1) * q / 100.0
    low, high = math.floor(rank), math.ceil(rank)
    return ordered[low] + (ordered[high] - ordered[low]) * (rank - low)


def _mean(values: Sequence[float]) -> float | None:
    return sum(values) / len(values) if values else None


@dataclass(frozen=True)
class Price:
    """USD per million classifier tokens."""

    input: float
    cached_input: float
    output: float
    source: str
    """"table:<model>" or "command line"."""


def price_for(
    model: str | None, override_in: float | None, override_out: float | None
) -> Price | None:
    """The price of `model`: the command-line override, else the built-in table, else None."""
    if override_in is not None or override_out is not None:
        base = PRICES_PER_MTOK.get(model or "", (0.0, 0.0, 0.0))
        p_in = override_in if override_in is not None else base[0]
        p_out = override_out if override_out is not None else base[2]
        return Price(p_in, p_in, p_out, "command line")
    if model in PRICES_PER_MTOK:
        p_in, p_cached, p_out = PRICES_PER_MTOK[model]
        return Price(p_in, p_cached, p_out, f"table:{model} ({PRICES_CHECKED})")
    return None


@dataclass
class ModelUsage:
    """Classifier usage of one model, with its estimated cost."""

    model: str
    requests: int = 0
    prompt_tokens: int = 0
    cached_tokens: int = 0
    completion_tokens: int = 0
    cost_usd: float | None = None
    price_source: str | None = None


@dataclass
class Summary:
    """What `resolver telemetry summary` prints (see `summarize`)."""

    turns: int
    sessions: int
    first_ts: str | None
    last_ts: str | None
    skipped_lines: int
    lost_lines: int
    mean_tools_before: float | None
    mean_tools_after: float | None
    tools_reduction: float | None
    mean_bytes_before: float | None
    mean_bytes_after: float | None
    bytes_reduction: float | None
    mean_tokens_before: float | None
    mean_tokens_after: float | None
    tokens_reduction: float | None
    sources: dict[str, int]
    fallbacks: dict[str, int]
    latency_p50: float | None
    latency_p95: float | None
    """In-hook latency (``latencyMs``) of every turn."""
    warm_turns: int
    """Turns whose offline index was already built (``indexCold: false``)."""
    latency_warm_p50: float | None
    latency_warm_p95: float | None
    cold_turns: int
    """Turns that built the offline index first (``indexCold: true``): every turn of a one-shot
    process, the first on a new surface."""
    latency_cold_p50: float | None
    latency_cold_p95: float | None
    llm_latency_p50: float | None
    llm_latency_p95: float | None
    confidence_mean: float | None
    confidence_p50: float | None
    saved_by_unit: dict[str, int]
    """Total tokensSaved per unit ("tokens:o200k_base", "bytes"); units are never mixed."""
    size_basis: dict[str, int]
    models: list[ModelUsage]
    conversation_turns: int = 0
    """Turns the semantic extra's conversation head read (``conversation`` not null)."""
    conversation_taken: int = 0
    """Of those, turns it took for conversation (``conversation_core_only``)."""
    conversation_at: dict[str, list[int]] = field(default_factory=dict)
    """For moving ``conversationThreshold``: per threshold (`CONVERSATION_BARS`), the read
    turns at or above it, how many of those have ``usedTools`` reported, and how many of those
    called a tool (what that threshold would have left without its tools)."""

    @property
    def estimated_cost(self) -> float | None:
        costs = [m.cost_usd for m in self.models if m.cost_usd is not None]
        return sum(costs) if costs else None

    def as_dict(self) -> dict[str, Any]:
        from dataclasses import asdict

        out = asdict(self)
        out["estimated_cost_usd"] = self.estimated_cost
        return out


CONVERSATION_BARS = (0.9, 0.8, 0.7, 0.6, 0.5, 0.4, 0.3)
"""The ``conversationThreshold`` values `summarize` counts turns at (`Summary.conversation_at`)."""


def _conversation_at(read: Sequence[tuple[float, TelemetryEvent]]) -> dict[str, list[int]]:
    """`Summary.conversation_at` from the turns the head read: (probability, event)."""
    if not read:
        return {}
    out: dict[str, list[int]] = {}
    for bar in CONVERSATION_BARS:
        above = [e for p, e in read if p >= bar]
        reported = [e for e in above if e.used_tools is not None]
        out[f"{bar:.1f}"] = [len(above), len(reported), sum(1 for e in reported if e.used_tools)]
    return out


def _reduction(before: float | None, after: float | None) -> float | None:
    if before is None or after is None or before <= 0:
        return None
    return 1.0 - after / before


def summarize(
    events: Sequence[TelemetryEvent],
    *,
    skipped: int = 0,
    price_in: float | None = None,
    price_out: float | None = None,
) -> Summary:
    """Aggregate events (one per turn) into a `Summary`."""
    tokens_before = [e.surface_before.tokens for e in events if e.surface_before.tokens is not None]
    tokens_after = [e.surface_after.tokens for e in events if e.surface_after.tokens is not None]
    saved: Counter[str] = Counter()
    for e in events:
        saved[e.tokens_saved_unit] += e.tokens_saved
    fallbacks: Counter[str] = Counter()
    for e in events:
        for code in e.reason_codes:
            if code in FALLBACK_CODES:
                fallbacks[code] += 1
    models: dict[str, ModelUsage] = {}
    for e in events:
        if e.usage is None:
            continue
        name = e.classifier_model or e.classifier
        usage = models.setdefault(name, ModelUsage(model=name))
        usage.requests += 1
        usage.prompt_tokens += e.usage.prompt_tokens
        usage.cached_tokens += e.usage.cached_tokens
        usage.completion_tokens += e.usage.completion_tokens
    for usage in models.values():
        price = price_for(usage.model, price_in, price_out)
        if price is not None:
            fresh = max(0, usage.prompt_tokens - usage.cached_tokens)
            usage.cost_usd = (
                fresh * price.input
                + usage.cached_tokens * price.cached_input
                + usage.completion_tokens * price.output
            ) / 1_000_000
            usage.price_source = price.source
    lost: dict[int, int] = {}
    for e in events:
        lost[e.pid] = max(lost.get(e.pid, 0), e.dropped_events)
    llm = [e.llm_latency_ms for e in events if e.llm_latency_ms is not None]
    latency = [e.latency_ms for e in events]
    warm = [e.latency_ms for e in events if e.index_cold is False]
    cold = [e.latency_ms for e in events if e.index_cold is True]
    confidence = [e.confidence for e in events if e.tools_allow is not None]
    mtb = _mean([e.surface_before.tools for e in events])
    mta = _mean([e.surface_after.tools for e in events])
    mbb = _mean([e.surface_before.bytes for e in events])
    mba = _mean([e.surface_after.bytes for e in events])
    mkb = _mean(tokens_before)
    mka = _mean(tokens_after)
    read = [(e.conversation, e) for e in events if e.conversation is not None]
    return Summary(
        turns=len(events),
        sessions=len({e.session_id for e in events if e.session_id}),
        first_ts=events[0].ts if events else None,
        last_ts=events[-1].ts if events else None,
        skipped_lines=skipped,
        lost_lines=sum(lost.values()),
        mean_tools_before=mtb,
        mean_tools_after=mta,
        tools_reduction=_reduction(mtb, mta),
        mean_bytes_before=mbb,
        mean_bytes_after=mba,
        bytes_reduction=_reduction(mbb, mba),
        mean_tokens_before=mkb,
        mean_tokens_after=mka,
        tokens_reduction=_reduction(mkb, mka),
        sources=dict(Counter(e.source for e in events).most_common()),
        fallbacks=dict(fallbacks.most_common()),
        latency_p50=percentile(latency, 50),
        latency_p95=percentile(latency, 95),
        warm_turns=len(warm),
        latency_warm_p50=percentile(warm, 50),
        latency_warm_p95=percentile(warm, 95),
        cold_turns=len(cold),
        latency_cold_p50=percentile(cold, 50),
        latency_cold_p95=percentile(cold, 95),
        llm_latency_p50=percentile(llm, 50),
        llm_latency_p95=percentile(llm, 95),
        confidence_mean=_mean(confidence),
        confidence_p50=percentile(confidence, 50),
        saved_by_unit=dict(saved),
        size_basis=dict(Counter(e.size_basis for e in events)),
        models=sorted(models.values(), key=lambda m: -m.requests),
        conversation_turns=len(read),
        conversation_taken=sum(1 for e in events if "conversation_core_only" in e.reason_codes),
        conversation_at=_conversation_at(read),
    )


def iter_lines_of(paths: Iterable[Path]) -> Iterator[bytes]:
    """Raw non-empty lines of `paths`, in order (used by tests and tools)."""
    for path in paths:
        with path.open("rb") as handle:
            for raw in handle:
                if raw.strip():
                    yield raw
