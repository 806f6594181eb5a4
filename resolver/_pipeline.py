"""One turn, step by step (DESIGN §3).

Each stage is a plain function over an immutable `TurnState`; only the classifier stage
decides what is left out, every later stage can only add (`TurnState.add`). The invariants
(subset of the candidates, candidate core tools present) are checked once, in `finalize`.
`Resolver.resolve` holds the one broad ``except``: any fault becomes a defined answer.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections import OrderedDict
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field, replace
from operator import attrgetter
from typing import Any

from ._catalog import CatalogStore, EffectiveCatalog
from ._classify import Classification, Classifier, ClassifyInput
from ._config import ResolverConfig
from ._errors import ClassifierError, ClassifierTimeout, InvariantError
from ._offline import OfflineClassifier
from ._types import (
    Candidate,
    Exclusion,
    ReasonCode,
    Resolution,
    Signal,
    Source,
    Timings,
    ToolInfo,
    TurnRequest,
    Usage,
)

logger = logging.getLogger("resolver")

Clock = Callable[[], float]
Observer = Callable[[TurnRequest, Resolution], None]

OFFLINE_RESERVE_S = 0.05
"""Part of the deadline kept back for the offline fallback after an LLM fault."""
PREPARED_CACHE_SIZE = 8
"""Surfaces (catalog fingerprint x host tools) whose effective catalog is kept prepared."""

_NAME_AND_DESCRIPTION = attrgetter("name", "description")
_Prepared = tuple[
    EffectiveCatalog, tuple[str, ...], tuple[tuple[str, str], ...], Mapping[str, Candidate]
]


@dataclass(frozen=True)
class TurnState:
    """The state one turn's stages pass along (immutable; stages return a new one)."""

    request: TurnRequest
    catalog: EffectiveCatalog
    candidates: tuple[str, ...]
    surface: frozenset[str] = frozenset()
    signals: Mapping[str, tuple[Signal, ...]] = field(default_factory=dict)
    scores: Mapping[str, float] = field(default_factory=dict)
    source: Source = "offline"
    confidence: float = 0.0
    reasons: tuple[ReasonCode, ...] = ()
    classification: Classification | None = None
    validation: str | None = None
    exclusions: tuple[Exclusion, ...] = ()
    excluded: frozenset[str] = frozenset()
    llm_tools: tuple[str, ...] | None = None

    def reason(self, *codes: ReasonCode) -> TurnState:
        """Record reason codes (each once, in order)."""
        merged = self.reasons + tuple(c for c in codes if c not in self.reasons)
        return replace(self, reasons=merged)

    def add(
        self, names: Iterable[str], signal: Signal, code: ReasonCode | None = None
    ) -> TurnState:
        """Add candidate tools under `signal` (recording `code` when any matched).

        Names that are not candidates, or were excluded by a fail-closed rule, are ignored.
        """
        names = list(names)
        candidates = set(self.candidates)
        new_signals = dict(self.signals)
        matched = [n for n in names if n in candidates and n not in self.excluded]
        for name in matched:
            if signal not in new_signals.get(name, ()):
                new_signals[name] = (*new_signals.get(name, ()), signal)
        state = replace(self, surface=self.surface | frozenset(matched), signals=new_signals)
        return state.reason(code) if (code and matched) else state


# ---------------------------------------------------------------- stages (plain functions)


def apply_full_surface(state: TurnState, source: Source, code: ReasonCode) -> TurnState:
    """Widen to every candidate (recall first)."""
    return replace(state.add(state.candidates, "full"), source=source).reason(code)


def apply_classification(
    state: TurnState, result: Classification, source: Source, code: ReasonCode
) -> TurnState:
    """Take a classifier's selection as the base surface."""
    state = replace(
        state,
        classification=result,
        scores={**state.scores, **result.scores},
        source=source,
        confidence=result.confidence,
    )
    state = state.add(result.selected, "classifier").reason(code)
    if result.dropped:
        state = state.reason("unknown_tools_dropped")
    if result.duplicates:
        state = state.reason("duplicate_tools_dropped")
    return state


def apply_continuity(state: TurnState, turns: int) -> TurnState:
    """Keep tools called in the last `turns` assistant turns, and any call without a result."""
    if turns <= 0 and not state.request.messages:
        return state
    messages = state.request.messages
    recent: list[str] = list(state.request.recent_tool_calls)
    seen_assistant = 0
    for message in reversed(messages):
        if message.role == "assistant":
            seen_assistant += 1
            if seen_assistant > turns:
                break
            recent.extend(call.name for call in message.calls())
    state = state.add(recent, "continuity", "continuity_kept") if turns > 0 else state
    # A call whose result is not in the history yet must stay callable (whatever `turns` is).
    answered = {m.tool_call_id for m in messages if m.role == "tool" and m.tool_call_id}
    for message in messages:
        if isinstance(message.content, list):
            for part in message.content:
                if isinstance(part, dict) and part.get("type") == "tool_result":
                    ref = part.get("tool_use_id")
                    if isinstance(ref, str):
                        answered.add(ref)
    pending = [
        call.name
        for message in messages
        if message.role == "assistant"
        for call in message.calls()
        if call.id and call.id not in answered
    ]
    return state.add(pending, "continuity", "pending_call_kept")


def apply_core(state: TurnState, core_tools: Iterable[str]) -> TurnState:
    """Always-on tools, kept only when they are candidates."""
    return state.add(core_tools, "core", "core_always")


def finalize(
    state: TurnState,
    *,
    core_tools: Iterable[str],
    timings: Timings,
    classifier: str,
    blank: Mapping[str, Candidate] | None = None,
) -> Resolution:
    """Check the invariants once and build the `Resolution` with its ranked candidates.

    `blank` optionally maps candidate names to their prebuilt unselected zero-score card.
    """
    candidates = set(state.candidates)
    if not state.surface <= candidates:
        raise InvariantError(f"surface has non-candidates: {sorted(state.surface - candidates)}")
    missing_core = {t for t in core_tools if t in candidates and t not in state.excluded}
    missing_core -= state.surface
    if missing_core:
        raise InvariantError(f"core tools missing from the surface: {sorted(missing_core)}")
    # Rank: the surface first, then by score, then in host order. Unselected candidates with
    # a zero score keep host order at the tail, so only the scored ones are sorted (cheap on
    # surfaces of thousands of tools); their cards are shared from `blank` when given.
    surface, scores, signals = state.surface, state.scores, state.signals
    excluded_why = {e.tool: f"{e.field}: {e.why}" for e in state.exclusions}
    # (not selected, -score, host position, name) sorts exactly as the ranking says.
    ranked = sorted(
        (0 if n in surface else 1, -score, i, n)
        for i, n in enumerate(state.candidates)
        if (score := scores.get(n, 0.0)) != 0.0 or n in surface
    )
    scored_set = {row[3] for row in ranked}
    blank = blank or {}

    def card(name: str, score: float, selected: bool) -> Candidate:
        return Candidate(
            name,
            round(float(score), 4),
            selected,
            signals.get(name, ()) if selected else (),
            excluded_why.get(name),
        )

    head = [card(n, -neg, rank == 0) for rank, neg, _, n in ranked if rank == 0 or neg <= 0]
    negative = [card(n, -neg, False) for rank, neg, _, n in ranked if rank == 1 and neg > 0]
    zero_cards = [
        card(n, 0.0, False) if (n in excluded_why or n not in blank) else blank[n]
        for n in state.candidates
        if n not in scored_set
    ]
    cards = (*head, *zero_cards, *negative)
    result = state.classification
    tools_allow = [c.name for c in head if c.selected]
    summary = _summary(state, len(tools_allow))
    return Resolution(
        tools_allow=tools_allow,
        source=state.source,
        confidence=round(state.confidence, 4),
        reason_codes=state.reasons,
        candidates=cards,
        cutoff=result.cutoff if result else None,
        below_cutoff=len(cards) - len(tools_allow),
        timings=timings,
        classifier=classifier,
        reasoning=result.reasoning if result else "",
        llm_tools=state.llm_tools,
        validation=state.validation,
        dropped_tools=result.dropped if result else (),
        exclusions=state.exclusions,
        usage=result.usage if result else None,
        available_tools=len(state.candidates),
        summary=summary,
    )


def _summary(state: TurnState, kept: int) -> str:
    by_signal: dict[str, int] = {}
    for name in state.surface:
        for signal in state.signals.get(name, ()):
            by_signal[signal] = by_signal.get(signal, 0) + 1
    parts = ", ".join(f"{k} {v}" for k, v in sorted(by_signal.items()))
    return f"{kept} of {len(state.candidates)} tools via {state.source} ({parts})"


def abstain(
    source: Source, code: ReasonCode, *, available: int, timings: Timings, detail: str = ""
) -> Resolution:
    """The defined 'no answer': the host keeps its own surface."""
    return Resolution(
        tools_allow=None,
        source=source,
        confidence=0.0,
        reason_codes=(code,),
        candidates=(),
        timings=timings,
        classifier="none",
        reasoning=detail,
        available_tools=available,
        summary=f"abstain ({code})",
    )


# ---------------------------------------------------------------- the resolver


class Resolver:
    """Resolves turns: ``await resolver.resolve(TurnRequest(...)) -> Resolution``.

    One instance per process; it owns the catalog store, the classifiers and their indexes.
    """

    def __init__(
        self,
        config: ResolverConfig | None = None,
        *,
        catalog_store: CatalogStore | None = None,
        llm: Classifier | None = None,
        offline: OfflineClassifier | None = None,
        observers: Iterable[Observer] = (),
        clock: Clock = time.monotonic,
    ) -> None:
        self.config = config or ResolverConfig()
        self.catalogs = catalog_store or CatalogStore(self.config)
        self.offline = offline or OfflineClassifier()
        self.llm = llm if llm is not None else _default_llm(self.config)
        self.observers = list(observers)
        self.clock = clock
        self._prepared: OrderedDict[tuple[str, tuple[tuple[str, str], ...]], _Prepared] = (
            OrderedDict()
        )
        self._last_prepared: tuple[str, tuple[int, ...], tuple[ToolInfo, ...], _Prepared] | None = (
            None
        )

    @property
    def deadline_s(self) -> float:
        return self.config.llm_timeout_ms / 1000.0

    async def resolve(self, request: TurnRequest) -> Resolution:
        """Resolve one turn. Never raises: every fault ends in a defined answer in time."""
        start = self.clock()
        available = len(request.tools) if request.tools is not None else 0
        try:
            resolution = await asyncio.wait_for(
                self._resolve(request, start), timeout=self.deadline_s + OFFLINE_RESERVE_S
            )
        except TimeoutError:
            resolution = abstain(
                "abstain",
                "deadline_exceeded",
                available=available,
                timings=Timings(total_ms=self._ms(start)),
            )
        except Exception as exc:  # the one boundary: any fault -> abstain, never raise
            logger.exception("resolver: internal error, abstaining: %s", type(exc).__name__)
            resolution = abstain(
                "abstain",
                "internal_error_abstain",
                available=available,
                timings=Timings(total_ms=self._ms(start)),
                detail=type(exc).__name__,
            )
        self._notify(request, resolution)
        return resolution

    def resolve_sync(self, request: TurnRequest) -> Resolution:
        """Blocking wrapper for scripts (not for use inside a running event loop)."""
        return asyncio.run(self.resolve(request))

    def _ms(self, start: float) -> float:
        return round((self.clock() - start) * 1000.0, 3)

    def _notify(self, request: TurnRequest, resolution: Resolution) -> None:
        for observer in self.observers:
            try:
                observer(request, resolution)
            except Exception:
                logger.warning("resolver: observer %r failed", observer, exc_info=True)

    async def _resolve(self, request: TurnRequest, start: float) -> Resolution:
        config = self.config
        if not config.enabled:
            return abstain("disabled", "disabled", available=0, timings=Timings())
        if request.tools is None:
            return abstain("abstain", "surface_unknown_abstain", available=0, timings=Timings())
        if not request.tools:
            return abstain("abstain", "empty_surface_abstain", available=0, timings=Timings())

        catalog, names, described, blank = self._prepare(request.tools)
        state = TurnState(request=request, catalog=catalog, candidates=names)
        if self.catalogs.error:
            state = state.reason("catalog_layer_invalid")

        classify_input = ClassifyInput(
            prompt=request.prompt,
            messages=tuple(request.messages),
            tools=described,
            skills=catalog.skills,
            catalog=catalog,
            timeout_s=max(0.0, self.deadline_s - (self.clock() - start) - OFFLINE_RESERVE_S),
            core_tools=frozenset(config.core_tools),
        )
        t_classify = self.clock()
        state, classifier_label, llm_ms = await self._classify(state, classify_input)
        classifier_ms = self._ms(t_classify)

        state = apply_continuity(state, config.continuity_turns)
        state = apply_core(state, config.core_tools)
        timings = Timings(total_ms=self._ms(start), classifier_ms=classifier_ms, llm_ms=llm_ms)
        return finalize(
            state,
            core_tools=config.core_tools,
            timings=timings,
            classifier=classifier_label,
            blank=blank,
        )

    def _prepare(self, tools: list[ToolInfo]) -> _Prepared:
        """The effective catalog (host descriptions filled in), candidate names, (name,
        description) pairs and blank cards for this surface; memoized per catalog and surface.

        The same (frozen) tool objects as last turn hit without reading them: the last entry
        holds them, so their ids cannot be reused while it is kept.
        """
        base = self.catalogs.current()
        ids = tuple(map(id, tools))
        last = self._last_prepared
        if last is not None and last[0] == base.fingerprint and last[1] == ids:
            return last[3]
        host = tuple(map(_NAME_AND_DESCRIPTION, tools))
        key = (base.fingerprint, host)
        prepared = self._prepared.get(key)
        if prepared is not None:
            self._prepared.move_to_end(key)
        else:
            names = tuple(dict.fromkeys(name for name, _ in host if name))
            host_desc = dict(host)
            catalog = base.with_host_descriptions(list(host_desc.items()))
            described = tuple((n, catalog.describe(n, host_desc.get(n, ""))) for n in names)
            blank = {n: Candidate(name=n, score=0.0, selected=False) for n in names}
            prepared = (catalog, names, described, blank)
            self._prepared[key] = prepared
            while len(self._prepared) > PREPARED_CACHE_SIZE:
                self._prepared.popitem(last=False)
        self._last_prepared = (base.fingerprint, ids, tuple(tools), prepared)
        return prepared

    async def _classify(
        self, state: TurnState, request: ClassifyInput
    ) -> tuple[TurnState, str, float | None]:
        """The classifier stage: LLM when configured, offline otherwise or as the fallback."""
        offline = self.offline.classify_sync(request)
        if self.llm is None:
            if not offline.has_signal:
                # Nothing in the prompt points at any tool: core tools only (chit-chat).
                return (
                    replace(state, scores=offline.scores, confidence=0.0).reason(
                        "offline_selected"
                    ),
                    "offline",
                    None,
                )
            return (
                apply_classification(state, offline, "offline", "offline_selected"),
                ("offline"),
                None,
            )

        t0 = self.clock()
        try:
            result = await asyncio.wait_for(
                self.llm.classify(request), timeout=max(0.001, request.timeout_s)
            )
        except TimeoutError:
            return self._fallback(state, offline, "llm_timeout_fallback"), "offline", self._ms(t0)
        except ClassifierTimeout as exc:
            return self._fallback(state, offline, exc.reason), "offline", self._ms(t0)
        except ClassifierError as exc:
            logger.warning("resolver: classifier failed (%s): %s", exc.reason, exc)
            return self._fallback(state, offline, exc.reason), "offline", self._ms(t0)
        llm_ms = result.latency_ms if result.latency_ms is not None else self._ms(t0)
        state = replace(state, llm_tools=result.selected, scores=dict(offline.scores))
        if result.confidence < self.config.confidence_threshold:
            state = replace(
                state,
                classification=result,
                confidence=result.confidence,
                scores={**offline.scores, **result.scores},
            )
            return (
                apply_full_surface(state, "full", "low_confidence_full_surface"),
                result.classifier,
                llm_ms,
            )
        return apply_classification(state, result, "llm", "llm_selected"), result.classifier, llm_ms

    def _fallback(self, state: TurnState, offline: Classification, code: str) -> TurnState:
        """After an LLM fault: the offline classifier, or the full surface without signal."""
        reason: ReasonCode = code if code in _FALLBACK_CODES else "llm_error_fallback"  # type: ignore[assignment]
        if not offline.has_signal:
            state = replace(state, scores=offline.scores).reason(reason)
            return apply_full_surface(state, "full", "no_signal_full_surface")
        return apply_classification(state, offline, "keyword", reason)


_FALLBACK_CODES = frozenset(
    {
        "llm_timeout_fallback",
        "llm_error_fallback",
        "llm_auth_fallback",
        "llm_rate_limited_fallback",
        "llm_unknown_model_fallback",
        "llm_invalid_output_fallback",
        "llm_truncated_fallback",
        "llm_refusal_fallback",
    }
)


def _default_llm(config: ResolverConfig) -> Classifier | None:
    """The LLM classifier when an endpoint or key is configured, else None (offline)."""
    if not config.llm_configured():
        return None
    try:
        from ._llm import LLMClassifier  # type: ignore[import-untyped,unused-ignore]
    except ImportError:  # pragma: no cover - the LLM classifier ships with the package
        logger.warning("resolver: LLM classifier unavailable; using the offline classifier")
        return None
    llm: Classifier = LLMClassifier(config)  # late import: the SDK loads only when used
    return llm


def usage_total(usage: Usage | None) -> int:
    """prompt + completion tokens (0 when unknown)."""
    return 0 if usage is None else usage.prompt_tokens + usage.completion_tokens


def as_dict(resolution: Resolution) -> dict[str, Any]:
    """The JSON shape printed by `resolver resolve --json` and sent to hosts."""
    return {
        "toolsAllow": resolution.tools_allow,
        "source": resolution.source,
        "classifier": resolution.classifier,
        "confidence": resolution.confidence,
        "reasonCodes": list(resolution.reason_codes),
        "reasoning": resolution.reasoning,
        "candidates": [
            {
                "name": c.name,
                "score": c.score,
                "selected": c.selected,
                "signals": list(c.signals),
                **({"excluded": c.excluded} if c.excluded else {}),
            }
            for c in resolution.candidates
        ],
        "cutoff": resolution.cutoff,
        "belowCutoff": resolution.below_cutoff,
        "availableTools": resolution.available_tools,
        "llmTools": list(resolution.llm_tools) if resolution.llm_tools is not None else None,
        "validation": resolution.validation,
        "droppedTools": list(resolution.dropped_tools),
        "timings": resolution.timings.model_dump(),
        "usage": resolution.usage.model_dump() if resolution.usage else None,
        "summary": resolution.summary,
    }
