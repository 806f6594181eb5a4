"""The telemetry event: one JSON line per turn (``schemas/telemetry-event.v1.json``).

`snapshot()` runs on the caller (the hook path): it copies what the line needs into an
immutable `TurnSnapshot` (strings, numbers, tuples; no live objects) in a few microseconds,
whatever the prompt's size. `TurnSnapshot.event()` runs on the writer's background thread:
it redacts the prompt and the reasoning, hashes the prompt, sizes the surfaces (exact token
counting is the slow part) and builds the validated `TelemetryEvent`. The raw prompt exists
only in memory, in the queue, until then; it is never written.
"""

from __future__ import annotations

import hashlib
import os
from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from datetime import UTC, datetime
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field
from pydantic.alias_generators import to_camel

from .._config import ResolverConfig
from .._redact import HIGH_ENTROPY, prompt_hash, redact, without_secret_like
from .._types import ReasonCode, Resolution, Source, ToolInfo, TurnRequest
from ._surfaces import surface_fingerprint
from ._tokens import ByteOrTokenUnit, SizeBasis, SurfaceMeter

SCHEMA_VERSION: Literal[1] = 1
TOP_SCORES = 5
"""How many ranked candidates each line keeps (names and scores, never descriptions)."""
REASONING_LIMIT = 1000
"""The classifier's reasoning is redacted and cut to this many characters."""


class _Model(BaseModel):
    model_config = ConfigDict(
        alias_generator=to_camel, populate_by_name=True, extra="forbid", frozen=True
    )


class SurfaceRecord(_Model):
    """The size of one tools array (before or after the resolver narrowed it)."""

    tools: int = Field(ge=0)
    """Number of tools."""
    bytes: int = Field(ge=0)
    """UTF-8 bytes of the compact tools JSON as the host sends it (0 = no tools key)."""
    tokens: int | None = Field(default=None, ge=0)
    """Exact o200k_base tokens of that JSON; null when no exact tokenizer was installed."""


class UsageRecord(_Model):
    """Classifier token usage as the endpoint reported it."""

    prompt_tokens: int = Field(ge=0)
    cached_tokens: int = Field(ge=0)
    completion_tokens: int = Field(ge=0)


class ScoredTool(_Model):
    """One ranked candidate."""

    name: str
    score: float


class TelemetryEvent(_Model):
    """One resolved turn. Field meanings: docs/telemetry.md ("Fields")."""

    schema_version: Literal[1] = SCHEMA_VERSION
    ts: str
    """When the turn was resolved: ISO 8601, UTC, milliseconds (``2026-11-29T16:21:53.123Z``)."""
    turn: int = Field(ge=1)
    """1-based count of turns this process's telemetry observer recorded for this sessionId
    (one shared count for lines without a session id). ``(pid, sessionId, turn)`` identifies
    a line."""
    pid: int
    """The writing process."""
    session_id: str | None = None
    agent_id: str | None = None
    source: Source
    reason_codes: list[ReasonCode]
    tools_allow: list[str] | None
    """The answer; null = abstain (the host kept its own surface)."""
    available_tools: int = Field(ge=0)
    """How many distinct candidate tools the host offered (0 when its surface was unknown)."""
    surface_id: str | None = None
    """Fingerprint of the candidate surface (names and host descriptions, 16 hex digits); the
    surface itself is written once to ``<telemetryFile>.surfaces/<surfaceId>.json``. Null when
    the host's surface was unknown or empty."""
    shadow_tools_allow: list[str] | None = None
    """Shadow turns only: what the resolver would have allowed (``toolsAllow`` is null, the
    host kept its whole surface)."""
    used_tools: list[str] | None = None
    """Tools the primary model actually called on this turn, when the host reported them
    (shadow turns; docs/tuning.md, "Used tools")."""
    run_id: str | None = None
    """The host's run id of the turn, when it sent one (links reported tool calls)."""
    llm_tools: list[str] | None = None
    """The LLM classifier's own selection, when an LLM answered."""
    dropped_tools: list[str] = Field(default_factory=list)
    """Names the classifier returned that were not candidates."""
    validation: str | None = None
    """How the keyword cache judged the LLM's selection ("agree", "cache_added", ...)."""
    confidence: float
    reasoning: str | None = None
    """The classifier's short reasoning, redacted; null when capturePrompts is off."""
    conversation: float | None = Field(default=None, ge=0, le=1)
    """Semantic extra: the conversation head's probability that the turn needs no tool (a
    turn at or above ``conversationThreshold`` gets the core tools only); null when the head
    did not run."""
    classifier: str
    """Which classifier answered: "offline", "llm:<model>", "reuse", "none"."""
    classifier_model: str | None = None
    """The LLM model when an LLM answered, else null."""
    tags: list[str]
    """Attribution tags: "openclaw-resolver", "resolver:classify", then telemetry.tags."""
    usage: UsageRecord | None = None
    latency_ms: float = Field(ge=0)
    """Wall time of the whole resolution inside the hook (a one-shot process's start-up and
    imports are not in it; see `index_cold`)."""
    index_cold: bool | None = None
    """True when this was the first turn this process resolved on its candidate surface with
    no warm-up before it, so `latency_ms` includes building the offline index (every turn of a
    one-shot CLI process is one); false when the index was already built; null when no surface
    was known (or the line predates the field)."""
    classifier_ms: float = Field(ge=0)
    llm_latency_ms: float | None = None
    """Wall time of the LLM request, when one was made."""
    surface_before: SurfaceRecord
    """The surface the host offered."""
    surface_after: SurfaceRecord
    """The surface the primary model gets (= before when the resolver abstained)."""
    size_basis: SizeBasis
    """How tools were sized: "schemas" (all from shipped schemas), "nameDescription" (none
    were known: name + description only), "mixed", or "empty"."""
    unknown_schemas: int = Field(ge=0)
    """Candidates sized by name + description only (their parameters are not counted)."""
    tokens_saved: int
    """surfaceBefore - surfaceAfter, in tokensSavedUnit."""
    tokens_saved_unit: ByteOrTokenUnit
    top_scores: list[ScoredTool]
    """The best-ranked candidates (at most 5): names and scores only."""
    prompt_excerpt: str | None = None
    """Redacted prompt, at most promptExcerptLength chars; only when capturePrompts is on."""
    prompt_hash: str
    """sha256 of the redacted prompt (groups identical prompts; not a secrecy guarantee)."""
    prompt_length: int = Field(ge=0)
    """Length of the prompt in characters."""
    dropped_events: int = Field(default=0, ge=0)
    """Lines this process dropped before this one (queue full or file not writable)."""


def redact_id(value: object, secrets: Sequence[str] = ()) -> str | None:
    """An id as a line records it: as it is, unless redaction would change it (a token used as
    a session id): then ``[REDACTED:<kind>]#<hash>``, which still groups the session's lines."""
    if not isinstance(value, str):
        return None
    redacted = redact(value, secrets)
    if redacted == value:  # (UUID-like ids stay readable: only known secret shapes go)
        return value
    kind = redacted.split("]", 1)[0] + "]" if redacted.startswith("[REDACTED") else "[REDACTED]"
    digest = hashlib.sha256(value.encode("utf-8", "surrogatepass")).hexdigest()[:12]
    return f"{kind}#{digest}"


def iso_utc(epoch_seconds: float) -> str:
    """``2026-11-29T16:21:53.123Z``."""
    stamp = datetime.fromtimestamp(epoch_seconds, tz=UTC)
    return stamp.strftime("%Y-%m-%dT%H:%M:%S.") + f"{stamp.microsecond // 1000:03d}Z"


@dataclass(frozen=True)
class TurnSnapshot:
    """Everything one line needs, taken on the caller: immutable, no live objects."""

    fields: tuple[tuple[str, object], ...]
    """Event fields known on the caller (python names)."""
    candidates: tuple[tuple[str, str], ...]
    """The host's candidate tools: (name, host description), in the host's order."""
    allowed: tuple[str, ...] | None
    """toolsAllow, or None when the resolver abstained."""
    prompt: str = field(default="", repr=False)
    """The raw prompt (redacted in `event()`, never written as is)."""
    reasoning: str = field(default="", repr=False)
    secrets: tuple[str, ...] = field(default=(), repr=False)
    """Literal secrets to remove (the configured key)."""
    capture_prompts: bool = True
    excerpt_length: int = 1500
    surface_known: bool = False
    """The host's surface was known (the line gets a `surfaceId`)."""

    def with_used_tools(self, used: Sequence[str]) -> TurnSnapshot:
        """A copy whose line records `used` as the turn's usedTools."""
        fields = tuple((k, tuple(used) if k == "used_tools" else v) for k, v in self.fields)
        return replace(self, fields=fields)

    def event(self, meter: SurfaceMeter, *, dropped_events: int = 0) -> TelemetryEvent:
        """Redact, hash, size the surfaces and build the validated event (background thread)."""
        redacted = without_secret_like(self.prompt, self.secrets, marker=HIGH_ENTROPY)
        capture = self.capture_prompts
        before = meter.measure(self.candidates)
        if self.allowed is None:
            after = before
        else:
            keep = set(self.allowed)
            after = meter.measure(tuple(t for t in self.candidates if t[0] in keep))
        unit = meter.unit
        if unit == "bytes":
            saved = before.bytes - after.bytes
        else:
            saved = (before.tokens or 0) - (after.tokens or 0)
        fields = dict(self.fields)
        if self.surface_known and self.candidates:
            fields["surface_id"] = surface_fingerprint(self.candidates)
        for name in ("session_id", "agent_id", "run_id"):
            fields[name] = redact_id(fields.get(name), self.secrets)
        return TelemetryEvent.model_validate(
            {
                **fields,
                "surface_before": SurfaceRecord(
                    tools=before.tools, bytes=before.bytes, tokens=before.tokens
                ),
                "surface_after": SurfaceRecord(
                    tools=after.tools, bytes=after.bytes, tokens=after.tokens
                ),
                "size_basis": before.basis,
                "unknown_schemas": before.unknown_schemas,
                "tokens_saved": saved,
                "tokens_saved_unit": unit,
                "dropped_events": dropped_events,
                "reasoning": redact(self.reasoning, self.secrets)[:REASONING_LIMIT]
                if capture
                else None,
                "prompt_excerpt": redacted[: self.excerpt_length]
                if capture and self.excerpt_length > 0
                else None,
                "prompt_hash": prompt_hash(redacted),
                "prompt_length": len(self.prompt),
            }
        )


def snapshot(
    request: TurnRequest,
    resolution: Resolution,
    config: ResolverConfig,
    *,
    turn: int,
    now: float,
    used_tools: list[str] | None = None,
    index_cold: bool | None = None,
    surface: tuple[tuple[str, str], ...] | None = None,
) -> TurnSnapshot:
    """Take what the line needs from one turn (caller side: copies references, no parsing).
    `surface` is `surface_key(request.tools)` when the caller has it already."""
    classifier = resolution.classifier
    usage = resolution.usage
    candidates = (surface if surface is not None else surface_key(request.tools)) or ()
    fields: dict[str, object] = {
        "ts": iso_utc(now),
        "turn": turn,
        "pid": os.getpid(),
        "session_id": request.session_id,
        "agent_id": request.agent_id,
        "source": resolution.source,
        "reason_codes": tuple(resolution.reason_codes),
        "tools_allow": tuple(resolution.tools_allow)
        if resolution.tools_allow is not None
        else None,
        "available_tools": len(candidates) if request.tools is not None else 0,
        "shadow_tools_allow": tuple(resolution.shadow_tools_allow)
        if resolution.shadow_tools_allow is not None
        else None,
        "used_tools": tuple(used_tools) if used_tools is not None else None,
        "run_id": request.run_id,
        "llm_tools": tuple(resolution.llm_tools) if resolution.llm_tools is not None else None,
        "dropped_tools": tuple(resolution.dropped_tools),
        "validation": resolution.validation,
        "confidence": resolution.confidence,
        "conversation": resolution.conversation,
        "classifier": classifier,
        "classifier_model": classifier.split(":", 1)[1] if classifier.startswith("llm:") else None,
        "tags": tuple(config.all_tags()),
        "usage": UsageRecord(
            prompt_tokens=usage.prompt_tokens,
            cached_tokens=usage.cached_tokens,
            completion_tokens=usage.completion_tokens,
        )
        if usage is not None
        else None,
        "latency_ms": max(0.0, resolution.timings.total_ms),
        "index_cold": index_cold,
        "classifier_ms": max(0.0, resolution.timings.classifier_ms),
        "llm_latency_ms": resolution.timings.llm_ms,
        "top_scores": tuple(
            ScoredTool(name=c.name, score=c.score)
            for c in sorted(resolution.candidates, key=lambda c: -c.score)[:TOP_SCORES]
        ),
    }
    key = config.api_key()
    return TurnSnapshot(
        fields=tuple(fields.items()),
        candidates=candidates,
        allowed=tuple(resolution.tools_allow) if resolution.tools_allow is not None else None,
        prompt=request.prompt,
        reasoning=resolution.reasoning,
        secrets=(key,) if key else (),
        capture_prompts=config.capture_prompts,
        excerpt_length=config.prompt_excerpt_length,
        surface_known=request.tools is not None,
    )


def surface_key(tools: Sequence[ToolInfo] | None) -> tuple[tuple[str, str], ...] | None:
    """A surface as a line sees it: distinct names with their first host description, in the
    host's order (None when unknown). The observer keys cold and warm turns on it."""
    if tools is None:
        return None
    seen: dict[str, str] = {}
    for tool in tools:
        if tool.name and tool.name not in seen:
            seen[tool.name] = tool.description
    return tuple(seen.items())
