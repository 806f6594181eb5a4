"""One turn, step by step (DESIGN §3).

Each stage is a plain function over an immutable `TurnState`; only the classifier stage
decides what is left out, every later stage can only add (`TurnState.add`). The one exception
is declared state eligibility (`apply_state`, run first): it excludes fail-closed, and
`TurnState.add` never adds an excluded tool. The invariants (subset of the candidates,
eligible candidate core tools present) are checked once, in `finalize`.
`Resolver.resolve` holds the one broad ``except``: any fault becomes a defined answer.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import gc
import hashlib
import heapq
import itertools
import logging
import random
import threading
import time
from collections import deque
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

import orjson

from ._cache import CacheHint, KeywordCache, apply_cache, learn_from_turn, persist_soon
from ._catalog import CatalogStore, EffectiveCatalog
from ._classify import Classification, Classifier, ClassifyInput
from ._config import ResolverConfig
from ._errors import ClassifierError, ClassifierTimeout, InvariantError
from ._limits import (
    MAX_CANDIDATES,
    TOOL_DESCRIPTION,
    TOOL_NAME,
    TOOL_PARAMETERS,
    Bounded,
    SameTools,
    bound_request,
    bound_tools,
)
from ._ngram_head import NgramConversation
from ._offline import OfflineClassifier
from ._reuse import ReuseStore, apply_reused, isolation_parts
from ._semantic import SemanticScorer, default_cache_dir
from ._state import evaluate as evaluate_state
from ._types import (
    LLM_FALLBACK_CODES,
    Candidate,
    Exclusion,
    Message,
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

_DECIDING_SIGNALS = frozenset({"classifier", "floor", "reuse", "cache", "continuity", "companion"})

MAX_OTHER_CARDS = 50
"""How many not-selected candidates the ranked card lists (the rest are counted)."""
_UNSCORED_CARDS: dict[str, Candidate] = {}
"""name -> its card when nothing scored or wanted it (score 0, not selected, no signals): the
same frozen object every turn instead of a new one (on a small surface most cards are these)."""
MAX_UNSCORED_CARDS = 20_000

OFFLINE_RESERVE_S = 0.05
"""Part of the deadline kept back for the offline fallback after an LLM fault."""
INLINE_MAX_TOOLS = 128
INLINE_MAX_CHARS = 1_000
"""A turn this small (at most `INLINE_MAX_TOOLS` candidates, at most `INLINE_MAX_CHARS` of
prompt and recent messages together, its surface's index already built, no semantic extra)
runs the offline pass on the event loop: its worst case is tens of milliseconds (a 1,000-char
CJK prompt on 128 tools: ~19 ms on a slow 2-core machine), far inside any deadline, and the
hop to a worker thread cost more than the pass itself at p99 on the default surface. Every
other turn runs it in a worker thread, where the deadline cuts it off."""
INDEX_BUILDERS = 2
"""Threads (per process) that build the offline index of a surface not seen before, of more than
`INLINE_MAX_TOOLS` tools (a smaller one takes milliseconds and is built in the turn's own
worker). A turn on such a new surface waits for its build there, within its deadline, so the
worker threads turns are classified in are never all held by builds: eight sessions bringing
new 10,000-tool surfaces at once kept all six of asyncio's default workers building for
seconds, and a warm session's turns queued behind them past their deadline. A build whose turn
has given up still finishes (the surface's next turn finds it); one whose turn gave up before
it started is dropped."""
_index_builders: concurrent.futures.ThreadPoolExecutor | None = None
_index_builders_lock = threading.Lock()


def _builders() -> concurrent.futures.ThreadPoolExecutor:
    """The process's index builders (`INDEX_BUILDERS`), started on first use (one pool even
    when event loops in several threads ask at once)."""
    global _index_builders
    with _index_builders_lock:
        if _index_builders is None:
            _index_builders = concurrent.futures.ThreadPoolExecutor(
                INDEX_BUILDERS, thread_name_prefix="resolver-index"
            )
        return _index_builders


BACKSTOP_GRACE_S = 1.0
"""The whole-turn backstop fires this long after the deadline (only a hung stage, or an event
loop starved for CPU, reaches it: the classifier's own budget ends OFFLINE_RESERVE_S before the
deadline). It stays inside the OpenClaw extension's deadline (llmTimeoutMs + 1500 ms)."""


@dataclass(frozen=True)
class PreparedSurface:
    """A candidate surface resolved against the catalog (cached per catalog + surface)."""

    catalog: EffectiveCatalog
    names: tuple[str, ...]
    described: tuple[tuple[str, str], ...]
    """(name, effective description) of every candidate, in host order."""
    fingerprint: str
    """Hash of the host's names + descriptions and the effective descriptions."""
    params: tuple[str, ...] = ()
    """The host's parameter words of each candidate, aligned with `names`."""


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
    fallback: str | None = None
    """Why the LLM's answer was not used (`Resolution.fallback`)."""
    candidate_set: frozenset[str] = frozenset()
    """`candidates` as a set: made once per turn (`replace` carries it to the next state)."""

    def __post_init__(self) -> None:
        if self.candidates and not self.candidate_set:
            object.__setattr__(self, "candidate_set", frozenset(self.candidates))

    def reason(self, *codes: ReasonCode) -> TurnState:
        """Record reason codes (each once, in order)."""
        merged = self.reasons + tuple(c for c in codes if c not in self.reasons)
        return replace(self, reasons=merged)

    def add(
        self, names: Iterable[str], signal: Signal, code: ReasonCode | None = None
    ) -> TurnState:
        """Add candidate tools under `signal` (recording `code` when any matched).

        Names that are not candidates, or were excluded by a fail-closed rule, are not added;
        for an excluded candidate the signal is still recorded (the card shows what wanted it).
        """
        names = list(names)
        candidates = self.candidate_set
        new_signals = dict(self.signals)
        wanted = [n for n in names if n in candidates]
        matched = [n for n in wanted if n not in self.excluded]
        for name in wanted:
            if signal not in new_signals.get(name, ()):
                new_signals[name] = (*new_signals.get(name, ()), signal)
        state = replace(self, surface=self.surface | frozenset(matched), signals=new_signals)
        return state.reason(code) if (code and matched) else state


# ---------------------------------------------------------------- stages (plain functions)


def apply_state(state: TurnState) -> TurnState:
    """Exclude, fail-closed, candidates whose declared state requirements are unmet (§4.7).

    Runs before any stage adds tools, so no later layer can re-add an excluded tool.
    """
    found = evaluate_state(state.catalog.state_requirements, state.candidates, state.request.state)
    if not found:
        return state
    excluded = frozenset(e.tool for e in found)
    state = replace(state, exclusions=found, excluded=excluded, surface=state.surface - excluded)
    return state.reason("state_ineligible_excluded")


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


def apply_floor(state: TurnState, offline: Classification) -> TurnState:
    """The recall floor: the offline classifier's picks join the LLM's selection (signal
    ``floor``, ``llm_floor_added`` when it added any), so an LLM turn keeps every tool an
    offline turn would have kept. The stored decision (for reuse) holds the merged selection;
    ``llm_tools`` stays the LLM's own (the keyword cache learns from that alone)."""
    llm = state.classification
    if not offline.has_signal or llm is None:
        return state
    added = [t for t in offline.selected if t not in state.surface]
    state = state.add(added, "floor", "llm_floor_added")
    merged = tuple(dict.fromkeys((*llm.selected, *added)))
    return replace(state, classification=replace(llm, selected=merged))


DEGENERATE_SHARE = 0.8
"""An LLM answer naming at least this share of the (non-core) candidates says nothing..."""
DEGENERATE_MIN = 8
"""...once it names at least this many (on a 5-tool surface, all 5 can be right)."""


def degenerate(selected: Sequence[str], candidates: Sequence[str], core: Iterable[str]) -> bool:
    """An answer that does not select: (nearly) every candidate, or the candidates listed in
    their sorted order (a model enumerating the schema's enum)."""
    core_set = set(core)
    pool = [c for c in candidates if c not in core_set]
    picked = [t for t in selected if t not in core_set]
    if len(picked) < DEGENERATE_MIN:
        return False
    if len(picked) >= DEGENERATE_SHARE * len(pool):
        return True
    ordered = sorted(pool)
    start = ordered.index(picked[0]) if picked[0] in ordered else -1
    return start >= 0 and ordered[start : start + len(picked)] == picked


CONSTANT_CONFIDENCE_TURNS = 20
"""After this many LLM answers with one and the same confidence, the confidence is flagged as
uninformative (``llm_constant_confidence``): the low-confidence guard cannot fire."""


TOOL_RESULT_ROLES = frozenset({"tool", "toolResult", "tool_result", "function"})
"""Roles of messages that carry a tool's result (OpenAI, OpenClaw/pi, older shapes)."""


def _result_ids(message: Message) -> list[str]:
    """Call ids this message answers (a tool message, or Anthropic `tool_result` parts)."""
    ids: list[str] = []
    if message.role in TOOL_RESULT_ROLES and message.tool_call_id:
        ids.append(message.tool_call_id)
    if isinstance(message.content, list):
        for part in message.content:
            if isinstance(part, dict) and part.get("type") in ("tool_result", "toolResult"):
                ref = part.get("tool_use_id") or part.get("toolCallId") or part.get("id")
                if isinstance(ref, str):
                    ids.append(ref)
    return ids


def _starts_turn(message: Message) -> bool:
    """A user message that is not only a carrier of tool results starts a turn."""
    if message.role != "user":
        return False
    if isinstance(message.content, list) and message.content:
        return not all(
            isinstance(p, dict) and p.get("type") in ("tool_result", "toolResult")
            for p in message.content
        )
    return True


def apply_continuity(state: TurnState, turns: int) -> TurnState:
    """Keep tools the primary model called recently, and any call without a result yet.

    A turn starts at a user message (tool-result carriers do not count) and holds every
    assistant message after it, so a turn with several tool rounds counts once. Tools called
    in the last `turns` turns of the history, and the names the host reports in
    `recent_tool_calls`, are kept (``continuity_kept``; off when `turns` is 0). A call whose id
    has no result in the history stays callable whatever `turns` is (``pending_call_kept``).
    Recall-only: this stage never removes a tool.
    """
    messages = state.request.messages
    if turns > 0:
        recent: list[str] = list(state.request.recent_tool_calls)
        turns_seen = 0
        for message in reversed(messages):
            if _starts_turn(message):
                turns_seen += 1
                if turns_seen >= turns:
                    break
            elif message.role == "assistant":
                recent.extend(call.name for call in message.calls())
        state = state.add(recent, "continuity", "continuity_kept")
    answered = {ref for message in messages for ref in _result_ids(message)}
    pending = [
        call.name
        for message in messages
        if message.role == "assistant"
        for call in message.calls()
        if call.id and call.id not in answered
    ]
    return state.add(pending, "continuity", "pending_call_kept")


def apply_companions(state: TurnState) -> TurnState:
    """The catalog's companions of every tool kept so far join it (``companion_added``): host
    tools that overlap for one act, where the classifier may keep the narrow one. Runs before
    the core tools (a tool kept only because it is a core tool brings none) and only adds
    candidates; one hop (a companion's own companions are not followed)."""
    companions = state.catalog.companions
    if not companions or not state.surface:
        return state
    wanted = [
        other
        for name in state.surface
        for other in companions.get(name, ())
        if other not in state.surface
    ]
    return state.add(wanted, "companion", "companion_added") if wanted else state


def apply_core(state: TurnState, core_tools: Iterable[str]) -> TurnState:
    """Always-on tools, kept only when they are candidates."""
    return state.add(core_tools, "core", "core_always")


def apply_search_catalog(state: TurnState, search_tools: Iterable[str], size: int) -> TurnState:
    """When the host has its own tool search among the candidates (OpenClaw's Tool Search:
    `tool_search`), `toolsAllow` bounds what that search can find, not what the model is sent:
    the model's request carries the search controls and the host's direct tools, and a tool
    left out of the catalog can never be found (the task fails) while one more catalog entry
    costs nothing until it is searched for. So the surface is widened, best score first, with
    the candidates the classifier scored but did not pick, up to `size` tools (signal
    ``search``, ``search_catalog_widened``). Recall-only: nothing is removed, nothing excluded
    by state is added, and a tool without a score stays out."""
    if size <= 0 or len(state.surface) >= size:
        return state
    candidates = state.candidate_set
    if not any(name in candidates for name in search_tools):
        return state
    scores = state.scores
    pool = [
        name
        for name in scores.keys() & candidates
        if scores[name] > 0 and name not in state.surface and name not in state.excluded
    ]
    room = size - len(state.surface)
    best = heapq.nsmallest(room, pool, key=lambda name: (-scores[name], name))
    return state.add(best, "search", "search_catalog_widened")


def finalize(
    state: TurnState,
    *,
    core_tools: Iterable[str],
    timings: Timings,
    classifier: str,
) -> Resolution:
    """Check the invariants once and build the `Resolution` with its ranked candidates."""
    candidates = state.candidate_set
    if not state.surface <= candidates:
        raise InvariantError(f"surface has non-candidates: {sorted(state.surface - candidates)}")
    missing_core = {t for t in core_tools if t in candidates and t not in state.excluded}
    missing_core -= state.surface
    if missing_core:
        raise InvariantError(f"core tools missing from the surface: {sorted(missing_core)}")

    def wanted(name: str) -> bool:
        # An excluded tool keeps the rank it would have had without state (global rank).
        return name in state.surface or (name in state.excluded and bool(state.signals.get(name)))

    def rank_key(name: str) -> tuple[int, int, float, str]:
        # Kept tools first; among them, tools a turn-specific signal chose before core/full ones.
        chosen = not _DECIDING_SIGNALS.isdisjoint(state.signals.get(name, ()))
        return (0 if wanted(name) else 1, 0 if chosen else 1, -state.scores.get(name, 0.0), name)

    def card_signals(name: str) -> tuple[Signal, ...]:
        if name in state.excluded:
            return (*state.signals.get(name, ()), "state")
        return state.signals.get(name, ()) if name in state.surface else ()

    head = sorted((n for n in state.surface | state.excluded if wanted(n)), key=rank_key)
    in_head = set(head)
    # The card lists every kept or excluded tool and the best MAX_OTHER_CARDS others; the rest
    # are only counted (a 4,000-tool catalog would otherwise cost tens of ms per turn here).
    scores = state.scores
    # (set operations: the order does not matter, both paths below sort by a total order)
    scored = (scores.keys() & candidates) - in_head
    if min(scores.values(), default=1.0) <= 0:
        scored = {n for n in scored if scores[n] > 0}
    if len(scored) > MAX_OTHER_CARDS and all(n in in_head for n in state.signals):
        # No signal wants any of them (only kept or excluded tools have signals): their
        # `rank_key` is best score, then name. The best few by score, without a key per tool.
        least = sorted(map(scores.__getitem__, scored), reverse=True)[MAX_OTHER_CARDS - 1]
        best = [n for n in scored if scores[n] >= least]
        others = sorted(best, key=lambda n: (-scores[n], n))[:MAX_OTHER_CARDS]
    else:
        others = heapq.nsmallest(MAX_OTHER_CARDS, scored, key=rank_key)
    if len(others) < MAX_OTHER_CARDS:
        taken = in_head | set(others)
        zero = (n for n in state.candidates if n not in taken)
        others += list(itertools.islice(zero, MAX_OTHER_CARDS - len(others)))
    ranked = head + others
    not_shown = len(state.candidates) - len(ranked)
    excluded_why: dict[str, str] = {}
    for e in state.exclusions:
        why = f"{e.field}: {e.why}"
        excluded_why[e.tool] = f"{excluded_why[e.tool]}; {why}" if e.tool in excluded_why else why

    def card(name: str) -> Candidate:
        score = round(float(scores.get(name, 0.0)), 4)
        selected = name in state.surface
        if score == 0.0 and not selected and name not in state.excluded:
            unscored = _UNSCORED_CARDS.get(name)
            if unscored is None:
                if len(_UNSCORED_CARDS) >= MAX_UNSCORED_CARDS:
                    _UNSCORED_CARDS.clear()
                unscored = _UNSCORED_CARDS[name] = Candidate.model_construct(
                    name=name, score=0.0, selected=False, signals=(), excluded=None
                )
            return unscored
        # built as typed (names, rounded floats, bools, signal tuples): no validation per card
        return Candidate.model_construct(
            name=name,
            score=score,
            selected=selected,
            signals=card_signals(name),
            excluded=excluded_why.get(name),
        )

    cards = tuple(map(card, ranked))
    result = state.classification
    tools_allow = [c.name for c in cards if c.selected]
    summary = _summary(state, len(tools_allow))
    return Resolution(
        tools_allow=tools_allow,
        source=state.source,
        confidence=round(state.confidence, 4),
        reason_codes=state.reasons,
        candidates=cards,
        cutoff=result.cutoff if result else None,
        below_cutoff=not_shown + sum(1 for c in cards if not c.selected and c.excluded is None),
        timings=timings,
        classifier=classifier,
        reasoning=result.reasoning if result else "",
        conversation=result.conversation if result else None,
        llm_tools=state.llm_tools,
        validation=state.validation,
        dropped_tools=result.dropped if result else (),
        exclusions=state.exclusions,
        usage=result.usage if result else None,
        available_tools=len(state.candidates),
        summary=summary,
        fallback=state.fallback,
    )


def _summary(state: TurnState, kept: int) -> str:
    by_signal: dict[str, int] = {}
    for name in state.surface:
        for signal in state.signals.get(name, ()):
            by_signal[signal] = by_signal.get(signal, 0) + 1
    parts = ", ".join(f"{k} {v}" for k, v in sorted(by_signal.items()))
    line = f"{kept} of {len(state.candidates)} tools via {state.source} ({parts})"
    if state.excluded:
        names = ", ".join(t for t in state.candidates if t in state.excluded)
        line += f"; {len(state.excluded)} excluded by state ({names})"
    return line


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


def settle_heap() -> int:
    """Collect once, then move every object alive into the garbage collector's permanent
    generation (`gc.freeze`): the modules, the catalog, the offline indexes a warm-up has just
    built. A later full collection walks only what turns created since.

    For a process that is the resolver, after a warm-up (the OpenClaw sidecar calls it): on a
    4,076-tool surface a full collection walked ~60,000 live objects, 40-60 ms on a slow
    2-core machine, and the collector ran one every ~50 turns, which set the p99. Frozen
    objects are still freed when their last reference goes (an evicted index); a garbage
    *cycle* among them waits for the next call, which unfreezes everything first, so its
    collection reclaims it (a sidecar that settles after every warm-up does not leak them).
    A library embedded in a host's process should leave this to the host (it freezes the
    host's heap). Returns how many objects are frozen."""
    gc.unfreeze()
    gc.collect()
    gc.freeze()
    return gc.get_freeze_count()


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
        cache: KeywordCache | None = None,
        reuse: ReuseStore | None = None,
        rng: random.Random | None = None,
    ) -> None:
        self.config = config or ResolverConfig()
        self.catalogs = catalog_store or CatalogStore(self.config)
        self.offline = offline or OfflineClassifier(
            semantic=(
                SemanticScorer(
                    cache_dir=default_cache_dir(),
                    conversation_threshold=self.config.conversation_threshold,
                )
                if self.config.offline_semantic
                else None
            ),
            conversation=NgramConversation() if self.config.offline_conversation_head else None,
            tool_head=self.config.offline_tool_head,
        )
        self.llm = llm if llm is not None else _default_llm(self.config)
        self.observers = list(observers)
        self.clock = clock
        self._prepared: dict[tuple[object, ...], PreparedSurface] = {}
        self._last_prepared: SameTools[PreparedSurface] = SameTools()
        key = self.config.api_key()
        self.cache = (
            cache
            if cache is not None
            else KeywordCache(self.config.keyword_cache_file, secrets=(key,) if key else ())
        )
        self.reuse = reuse if reuse is not None else ReuseStore.from_config(self.config, clock)
        self.rng = rng or random.Random()
        """Draws the shadow-mode sample (inject a seeded one for reproducible tests)."""
        self._confidences: deque[float] = deque(maxlen=CONSTANT_CONFIDENCE_TURNS)
        """The last LLM answers' confidences (`llm_constant_confidence`)."""

    def clear_reuse(self, session_id: str | None = None) -> int:
        """Forget reusable decisions (all, or one session's); returns how many were dropped."""
        return self.reuse.clear(session_id)

    @property
    def deadline_s(self) -> float:
        return self.config.llm_timeout_ms / 1000.0

    async def resolve(self, request: TurnRequest) -> Resolution:
        """Resolve one turn. Never raises: every fault ends in a defined answer in time."""
        start = self.clock()
        available = len(request.tools) if request.tools is not None else 0
        seen = request  # what observers get: the bounded request once it exists
        try:
            async with asyncio.timeout(self.deadline_s + BACKSTOP_GRACE_S):
                bounded = bound_request(request)  # before any work (`_limits`)
                seen = bounded.request
                resolution = await self._resolve(bounded, start)
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
        resolution = self._maybe_shadow(resolution)
        self._notify(seen, resolution)
        return resolution

    def _maybe_shadow(self, resolution: Resolution) -> Resolution:
        """Shadow mode: on a sampled turn that had an answer, abstain but keep the answer.

        The host keeps its whole surface, so the tools the primary model calls on this turn
        are an unbiased sample of what it needs (docs/tuning.md, "Shadow mode").
        """
        rate = self.config.shadow_sample_rate
        if rate <= 0.0 or resolution.tools_allow is None:
            return resolution
        if rate < 1.0 and self.rng.random() >= rate:
            return resolution
        codes = (*resolution.reason_codes, "shadow_mode")
        return resolution.model_copy(
            update={
                "tools_allow": None,
                "shadow_tools_allow": list(resolution.tools_allow),
                "source": "shadow",
                "reason_codes": tuple(dict.fromkeys(codes)),
                "summary": f"shadow ({resolution.source}): {resolution.summary}",
            }
        )

    def resolve_sync(self, request: TurnRequest) -> Resolution:
        """Blocking wrapper for scripts (not for use inside a running event loop).

        Returns at the turn's deadline like `resolve`: unlike ``asyncio.run`` it does not wait
        for a worker thread that a cut-short turn left running."""
        loop = asyncio.new_event_loop()
        try:
            return loop.run_until_complete(self.resolve(request))
        finally:
            try:
                close = getattr(self.llm, "aclose", None)
                if close is not None:  # the loop's HTTP clients close while it still runs
                    loop.run_until_complete(close())
                loop.run_until_complete(loop.shutdown_asyncgens())
            finally:
                loop.close()  # shuts the default executor down without waiting

    def _ms(self, start: float) -> float:
        return round((self.clock() - start) * 1000.0, 3)

    def _notify(self, request: TurnRequest, resolution: Resolution) -> None:
        for observer in self.observers:
            try:
                observer(request, resolution)
            except Exception:
                logger.warning("resolver: observer %r failed", observer, exc_info=True)

    async def _resolve(self, bounded: Bounded, start: float) -> Resolution:
        config = self.config
        request = bounded.request
        if not config.enabled:
            return abstain("disabled", "disabled", available=0, timings=Timings())
        if request.tools is None:
            return abstain("abstain", "surface_unknown_abstain", available=0, timings=Timings())
        if not request.tools:
            return abstain("abstain", "empty_surface_abstain", available=0, timings=Timings())
        if bounded.too_many_tools:
            return abstain(
                "abstain",
                "surface_too_large_abstain",
                available=len(request.tools),
                timings=Timings(),
                detail=f"more than {MAX_CANDIDATES:,} candidate tools",
            )

        prepared = self._prepare(request.tools)
        catalog, names, described = prepared.catalog, prepared.names, prepared.described
        state = TurnState(request=request, catalog=catalog, candidates=names)
        state = state.reason(*bounded.codes)
        if self.catalogs.error:
            state = state.reason("catalog_layer_invalid")
        state = apply_state(state)  # before any selection: excluded tools are never added

        classify_input = ClassifyInput(
            prompt=request.prompt,
            messages=tuple(request.messages),
            tools=described,
            skills=catalog.skills,
            catalog=catalog,
            timeout_s=max(0.0, self.deadline_s - (self.clock() - start) - OFFLINE_RESERVE_S),
            core_tools=frozenset(config.core_tools),
            params=prepared.params,
        )
        self.cache.maybe_reload(self.clock())
        hint = self.cache.suggest(request.prompt, names)
        lookup = self.reuse.lookup(
            enabled=config.reuse.enabled,
            session_id=request.session_id,
            prompt=request.prompt,
            parts=isolation_parts(
                config,
                classifier=self.llm.name if self.llm is not None else "offline",
                catalog_fingerprint=catalog.fingerprint,
                candidates_fingerprint=prepared.fingerprint,
                skills=classify_input.skills,
            ),
            refresh=request.refresh,
        )
        t_classify = self.clock()
        llm_ms: float | None = None
        if lookup.entry is not None:
            state, classifier_label = apply_reused(state, lookup.entry), "reuse"
        else:
            state = state.reason(lookup.code) if lookup.code else state
            state, classifier_label, llm_ms = await self._classify(state, classify_input, hint)
            self.reuse.store(
                lookup,
                classification=state.classification,
                source=state.source,
                classifier=classifier_label,
                llm_tools=state.llm_tools,
            )
        classifier_ms = self._ms(t_classify)

        state = apply_cache(state, hint)
        learn_min = max(config.confidence_threshold, self.cache.limits.min_confidence)
        if learn_from_turn(
            self.cache, state, min_confidence=learn_min, core_tools=config.core_tools
        ):
            persist_soon(self.cache, self.clock())
        state = apply_continuity(state, config.continuity_turns)
        state = apply_companions(state)
        state = apply_core(state, config.core_tools)
        state = apply_search_catalog(state, config.host_search_tools, config.search_catalog_size)
        timings = Timings(total_ms=self._ms(start), classifier_ms=classifier_ms, llm_ms=llm_ms)
        return finalize(
            state, core_tools=config.core_tools, timings=timings, classifier=classifier_label
        )

    def stop_background(self) -> None:
        """End the background work this resolver started for later turns: the semantic
        extra's matrix builds stop at their next chunk (a host shutting down, or replacing
        this resolver, does not wait for a surface's embedding). Turns still resolve."""
        if self.offline.semantic is not None:
            self.offline.semantic.stop()

    def warm(self, tools: Sequence[ToolInfo]) -> None:
        """Build the catalog view and the offline index for a surface ahead of its first turn
        (of the surface as a turn sees it: descriptions cut to the surface's budget, as
        `bound_request` cuts them, or the turn would find no index for it and build its own)."""
        bounded, _ = bound_tools(list(tools))
        prepared = self._prepare(bounded)
        self.offline.warm(prepared.described, prepared.catalog, prepared.params)

    async def prime(self, tools: Sequence[ToolInfo], *, timeout_s: float = 180.0) -> float | None:
        """Send the LLM classifier's stable prompt prefix for this surface once, off any turn
        (``llmWarmUp``), so a local server caches it; seconds taken, None without an LLM or
        for a surface above ``LLM_SHORTLIST_ABOVE`` tools (shortlisted per turn).
        Raises `ClassifierError` when the endpoint fails."""
        prime = getattr(self.llm, "prime", None)
        if prime is None:
            return None
        prepared = self._prepare(tools)
        if len(prepared.described) > LLM_SHORTLIST_ABOVE:
            # Each turn sends its own shortlist: there is no stable tool list to cache, and the
            # whole surface may not fit the server's context (a 268-tool MCP host: 8,196 tokens).
            return None
        request = ClassifyInput(
            prompt="",
            messages=(),
            tools=prepared.described,
            skills=prepared.catalog.skills,
            catalog=prepared.catalog,
            timeout_s=timeout_s,
            core_tools=frozenset(self.config.core_tools),
        )
        seconds: float = await prime(request, timeout_s=timeout_s)
        return seconds

    def _prepare(self, tools: Sequence[ToolInfo]) -> PreparedSurface:
        """The effective catalog and described candidates, cached per catalog + surface."""
        base = self.catalogs.current()
        last = self._last_prepared.get(tools, base.fingerprint)  # the same tools as last turn
        if last is not None:
            return last
        return self._last_prepared.put(tools, self._prepare_now(base, tools), base.fingerprint)

    def _prepare_now(self, base: EffectiveCatalog, tools: Sequence[ToolInfo]) -> PreparedSurface:
        # one C-level pass per field (no tuple per tool: a 4,000-tool surface every turn)
        columns = tuple(
            tuple(map(get, tools)) for get in (TOOL_NAME, TOOL_DESCRIPTION, TOOL_PARAMETERS)
        )
        key = (base.fingerprint, *columns)
        cached = self._prepared.get(key)
        if cached is not None:
            return cached
        rows: list[tuple[str, str, str]] = [r for r in zip(*columns, strict=True) if r[0]]
        surface = tuple((n, d) for n, d, _ in rows)
        host = dict(surface)
        host_params = {n: p for n, _, p in rows}
        names = tuple(dict.fromkeys(name for name, _ in surface))
        catalog = base.with_host_descriptions(list(host.items()))
        described = tuple((n, catalog.describe(n, host.get(n, ""))) for n in names)
        params = tuple(host_params.get(n, "") for n in names)
        prepared = PreparedSurface(
            catalog=catalog,
            names=names,
            described=described,
            fingerprint=hashlib.sha256(orjson.dumps([described, surface, params])).hexdigest()[:16],
            params=params if any(params) else (),
        )
        if len(self._prepared) >= 8:
            self._prepared.pop(next(iter(self._prepared)))
        self._prepared[key] = prepared
        return prepared

    async def _classify(
        self, state: TurnState, request: ClassifyInput, hint: CacheHint
    ) -> tuple[TurnState, str, float | None]:
        """The classifier stage: LLM when configured, offline otherwise or as the fallback."""
        if self.llm is not None:
            return await self._classify_llm(self.llm, state, request, hint)
        if self._inline(request):
            offline = self.offline.classify_sync(request)  # small and bounded: no thread hop
        else:
            # In a worker thread, within the deadline: a CPU-bound pass never holds the event
            # loop (other sessions' turns in a sidecar) and a turn that cannot finish answers
            # in time.
            async with asyncio.timeout(max(0.001, request.timeout_s + OFFLINE_RESERVE_S)):
                offline = await self._offline_pass(request)
        if not offline.has_signal:
            # Nothing in the prompt points at any tool, or the semantic extra's conversation
            # head took the turn for conversation: core tools only (chit-chat).
            quiet = replace(state, scores=offline.scores, confidence=0.0, classification=offline)
            quiet = quiet.reason("offline_selected")
            if offline.chat:
                quiet = quiet.reason("conversation_core_only")
            return quiet, offline.classifier, None
        applied = apply_classification(state, offline, "offline", "offline_selected")
        return applied, offline.classifier, None

    def _inline(self, request: ClassifyInput) -> bool:
        """Whether the offline pass is small and bounded enough for the event loop
        (`INLINE_MAX_TOOLS`)."""
        if self.offline.semantic is not None or len(request.tools) > INLINE_MAX_TOOLS:
            return False
        chars = len(request.prompt)
        for message in request.messages[-4:]:
            chars += len(message.text())
        return chars <= INLINE_MAX_CHARS and self.offline.has_index(request)

    async def _offline_pass(self, request: ClassifyInput) -> Classification:
        """The offline pass in a worker thread; a new surface's index is built first by the
        index builders (`INDEX_BUILDERS`), so a warm surface's turn never queues behind the
        builds of others. The caller bounds the wait."""
        if len(request.tools) > INLINE_MAX_TOOLS and not self.offline.has_index(request):
            # (a surface as small as an inline turn's is built in a few milliseconds, in the
            # turn's own worker: it never waits behind other surfaces' builds)
            build = _builders().submit(self.offline.build_index, request)
            await asyncio.wrap_future(build)  # cancelled with the turn: dropped if not started
        return await asyncio.to_thread(self.offline.classify_sync, request)

    async def _classify_llm(
        self, llm: Classifier, state: TurnState, request: ClassifyInput, hint: CacheHint
    ) -> tuple[TurnState, str, float | None]:
        """The LLM request goes out first; the offline answer (the fallback, and the scores for
        the ranked card) is computed in a worker thread while the request is in flight, so a
        cold offline index never eats the LLM's budget."""
        t0 = self.clock()
        first: Classification | None = None
        asked = request
        if len(request.tools) > LLM_SHORTLIST_ABOVE:
            # A large surface: the LLM reads the offline classifier's shortlist, not every tool
            # (a 268-tool MCP catalog is ~40k prompt tokens; the floor keeps the offline picks).
            async with asyncio.timeout(max(0.001, request.timeout_s)):
                first = await self._offline_pass(request)
            asked = shortlist(request, first, LLM_SHORTLIST)
        budget = max(0.001, request.timeout_s - (self.clock() - t0))

        async def ask() -> Classification:
            async with asyncio.timeout(budget):
                return await llm.classify(replace(asked, timeout_s=budget))

        llm_task = asyncio.ensure_future(ask())
        try:
            await asyncio.sleep(0)  # let the request start before the CPU-bound offline pass
            if first is None:
                first = await self._offline_pass(request)
            offline: Classification = first
            result = await llm_task
        except TimeoutError:
            return (
                self._fallback(
                    state,
                    offline,
                    "llm_timeout_fallback",
                    hint,
                    f"no answer within {request.timeout_s:.2f}s (llmTimeoutMs)",
                ),
                offline.classifier,
                self._ms(t0),
            )
        except ClassifierTimeout as exc:
            return (
                self._fallback(state, offline, exc.reason, hint, str(exc)),
                offline.classifier,
                self._ms(t0),
            )
        except ClassifierError as exc:
            logger.warning("resolver: classifier failed (%s): %s", exc.reason, exc)
            return (
                self._fallback(state, offline, exc.reason, hint, str(exc)),
                offline.classifier,
                self._ms(t0),
            )
        finally:
            if not llm_task.done():
                llm_task.cancel()
            elif not llm_task.cancelled():
                llm_task.exception()  # retrieved: a cut-short turn leaves no unretrieved error
        llm_ms = result.latency_ms if result.latency_ms is not None else self._ms(t0)
        if degenerate(result.selected, state.candidates, request.core_tools):
            logger.info("resolver: degenerate LLM answer (%d tools)", len(result.selected))
            detail = f"the answer named {len(result.selected)} of {len(state.candidates)} tools"
            fallback = self._fallback(state, offline, "llm_degenerate_fallback", hint, detail)
            return fallback, offline.classifier, llm_ms
        self._confidences.append(result.confidence)
        state = replace(state, llm_tools=result.selected, scores=dict(offline.scores))
        if not result.selected:
            state = state.reason("llm_empty_selection")
        if len(self._confidences) == CONSTANT_CONFIDENCE_TURNS and len(set(self._confidences)) == 1:
            state = state.reason("llm_constant_confidence")
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
        state = apply_classification(state, result, "llm", "llm_selected")
        if self.config.llm_recall_floor:
            state = apply_floor(state, offline)
        return state, result.classifier, llm_ms

    def _fallback(
        self,
        state: TurnState,
        offline: Classification,
        code: str,
        hint: CacheHint,
        detail: str = "",
    ) -> TurnState:
        """After an LLM fault: keyword cache + offline classifier, else the full surface."""
        reason: ReasonCode = code if code in LLM_FALLBACK_CODES else "llm_error_fallback"  # type: ignore[assignment]
        state = replace(state, fallback=f"{reason}: {detail}" if detail else reason)
        if not offline.has_signal:
            state = replace(state, scores=offline.scores).reason(reason)
            if hint.has_signal:  # the cache stage adds its tools (`apply_cache`)
                return replace(state, source="keyword")
            return apply_full_surface(state, "full", "no_signal_full_surface")
        return apply_classification(state, offline, "keyword", reason)


LLM_SHORTLIST_ABOVE = 80
"""A surface of more candidates than this is shortlisted for the LLM classifier..."""
LLM_SHORTLIST = 40
"""...to the offline classifier's this-many best (plus its picks and the core tools)."""


def shortlist(request: ClassifyInput, offline: Classification, size: int) -> ClassifyInput:
    """`request` with only the offline classifier's `size` best-scoring candidates, its own
    picks and the core tools (in the host's order; their parameter words kept aligned)."""
    best = sorted((n for n, v in offline.scores.items() if v > 0), key=lambda n: -offline.scores[n])
    keep = set(best[:size]) | set(offline.selected) | set(request.core_tools)
    rows = [
        (tool, request.params[i] if i < len(request.params) else "")
        for i, tool in enumerate(request.tools)
        if tool[0] in keep
    ]
    if not rows:  # nothing scored: the first `size` candidates, so the LLM still sees a list
        rows = [(tool, "") for tool in request.tools[:size]]
    return replace(
        request,
        tools=tuple(t for t, _ in rows),
        params=tuple(p for _, p in rows) if request.params else (),
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
        "conversation": resolution.conversation,
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
        "exclusions": [e.model_dump() for e in resolution.exclusions],
        "timings": resolution.timings.model_dump(),
        "usage": resolution.usage.model_dump() if resolution.usage else None,
        "summary": resolution.summary,
        "shadowToolsAllow": resolution.shadow_tools_allow,
        "fallback": resolution.fallback,
    }
