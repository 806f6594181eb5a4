"""Session-scoped, exact decision reuse (DESIGN §4.4).

A classifier decision is reused only when all of these hold:

- the turn has a session id (no session id: no reuse, and no reuse reason code);
- the store key matches: (session id, `_text.normalize_prompt(prompt)`) — exact, no fuzzy or
  embedding matching; one session never sees another session's entries;
- the stored entry is younger than ``reuse.ttlSeconds`` (by the resolver's injected clock);
- the isolation fingerprint matches: classifier API base, model, classifier kind, a sha256 of
  the API key (the key itself is never stored), catalog fingerprint, candidate-tool
  fingerprint (names, effective and host descriptions; skills) and the relevant options (core tools,
  confidence threshold, continuity turns, max classifier tokens).

The message history is deliberately *not* in the fingerprint: a repeat of the same prompt in
a session always has a longer history (the first ask is in it), so including it would make
reuse useless, and continuity, core tools and the keyword cache run again on every reused turn,
so tools the last turns used are still added. Only the classifier's decision is reused.

Only decisions of the LLM (source ``llm``, at or above the confidence threshold) and of the
offline classifier in offline mode (source ``offline``) are stored. Fallbacks (``keyword``),
low-confidence full surfaces and reused answers are never stored, so the next turn asks the
classifier again.

Reason codes: ``route_reused`` (hit), ``reuse_miss_new`` (nothing stored for this session and
prompt), ``reuse_miss_expired`` (older than the TTL; dropped), ``reuse_miss_isolation`` (a part
of the isolation key changed; replaced by the new decision), ``reuse_miss_refresh`` (the turn
asked to refresh; replaced), ``reuse_disabled`` (``reuse.enabled`` is false).

The store is per `Resolver` (per process), bounded by ``reuse.maxEntries`` (least recently
used evicted first; expired entries are dropped when met). Every method is synchronous and
holds a lock, so it is safe under asyncio (no await inside) and from threads.
"""

from __future__ import annotations

import hashlib
import threading
from collections import OrderedDict
from collections.abc import Callable, Mapping
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING

import orjson

from ._classify import Classification
from ._config import ResolverConfig
from ._text import normalize_prompt
from ._types import ReasonCode, Source

if TYPE_CHECKING:
    from ._pipeline import TurnState

Clock = Callable[[], float]


def _sha(payload: object) -> str:
    return hashlib.sha256(orjson.dumps(payload, option=orjson.OPT_SORT_KEYS)).hexdigest()


def key_fingerprint(api_key: str | None) -> str:
    """A one-way fingerprint of the account key ('' when there is none)."""
    if not api_key:
        return ""
    return hashlib.sha256(b"openclaw-resolver/reuse/v1\0" + api_key.encode()).hexdigest()[:32]


def isolation_parts(
    config: ResolverConfig,
    *,
    classifier: str,
    catalog_fingerprint: str,
    candidates_fingerprint: str,
    skills: Mapping[str, str],
) -> dict[str, str]:
    """Every part of the isolation key, each as a short hash (never a secret in clear).

    `candidates_fingerprint` hashes every candidate's name, effective description and the
    host's own description: a change in any is a miss.
    """
    return {
        "apiBase": _sha(config.llm_api_base or "")[:16],
        "model": _sha(config.llm_model)[:16],
        "classifier": _sha(classifier)[:16],
        "account": key_fingerprint(config.api_key()),
        "catalog": catalog_fingerprint,
        "candidates": candidates_fingerprint,
        "skills": _sha(dict(skills))[:16],
        "options": _sha(
            {
                "coreTools": sorted(config.core_tools),
                "confidenceThreshold": config.confidence_threshold,
                "continuityTurns": config.continuity_turns,
                "llmMaxTokens": config.llm_max_tokens,
            }
        )[:16],
    }


@dataclass(frozen=True)
class ReuseEntry:
    """A stored classifier decision."""

    classification: Classification
    source: Source
    classifier: str
    llm_tools: tuple[str, ...] | None
    fingerprint: str
    parts: Mapping[str, str]
    stored_at: float


@dataclass(frozen=True)
class ReuseLookup:
    """The outcome of one lookup: a hit (`entry`) or a miss, with its reason code."""

    code: ReasonCode | None
    """None when reuse does not apply (no session id)."""
    key: tuple[str, str] | None = None
    fingerprint: str = ""
    parts: Mapping[str, str] | None = None
    entry: ReuseEntry | None = None
    changed: tuple[str, ...] = ()
    """On an isolation miss: which parts of the key changed (names only)."""

    @property
    def hit(self) -> bool:
        return self.entry is not None


STORABLE: frozenset[Source] = frozenset({"llm", "offline"})


class ReuseStore:
    """Per-process store of reusable decisions, keyed by (session id, normalized prompt)."""

    def __init__(self, *, ttl_seconds: float = 90.0, max_entries: int = 1024, clock: Clock) -> None:
        self.ttl_seconds = ttl_seconds
        self.max_entries = max_entries
        self.clock = clock
        self._entries: OrderedDict[tuple[str, str], ReuseEntry] = OrderedDict()
        self._lock = threading.Lock()

    @classmethod
    def from_config(cls, config: ResolverConfig, clock: Clock) -> ReuseStore:
        return cls(
            ttl_seconds=config.reuse.ttl_seconds, max_entries=config.reuse.max_entries, clock=clock
        )

    def __len__(self) -> int:
        return len(self._entries)

    def lookup(
        self,
        *,
        enabled: bool,
        session_id: str | None,
        prompt: str,
        parts: Mapping[str, str],
        refresh: bool = False,
    ) -> ReuseLookup:
        """Find a reusable decision for this turn, or say why there is none."""
        if not enabled:
            return ReuseLookup("reuse_disabled")
        if not session_id:
            return ReuseLookup(None)
        key = (session_id, normalize_prompt(prompt))
        fingerprint = _sha(dict(parts))
        miss = ReuseLookup("reuse_miss_new", key, fingerprint, parts)
        if refresh:
            return replace(miss, code="reuse_miss_refresh")
        with self._lock:
            entry = self._entries.get(key)
            if entry is None:
                return miss
            if self.clock() - entry.stored_at >= self.ttl_seconds:
                del self._entries[key]
                return replace(miss, code="reuse_miss_expired")
            if entry.fingerprint != fingerprint:
                changed = tuple(k for k in parts if entry.parts.get(k) != parts[k])
                return replace(miss, code="reuse_miss_isolation", changed=changed)
            self._entries.move_to_end(key)
        return replace(miss, code="route_reused", entry=entry)

    def store(
        self,
        lookup: ReuseLookup,
        *,
        classification: Classification | None,
        source: Source,
        classifier: str,
        llm_tools: tuple[str, ...] | None,
    ) -> bool:
        """Remember a fresh, storable decision after a miss. True when stored."""
        if lookup.key is None or lookup.hit or lookup.code in (None, "reuse_disabled"):
            return False
        if classification is None or source not in STORABLE:
            return False
        entry = ReuseEntry(
            classification=replace(classification, usage=None, latency_ms=None),
            source=source,
            classifier=classifier,
            llm_tools=llm_tools,
            fingerprint=lookup.fingerprint,
            parts=dict(lookup.parts or {}),
            stored_at=self.clock(),
        )
        with self._lock:
            self._entries[lookup.key] = entry
            self._entries.move_to_end(lookup.key)
            self._trim()
        return True

    def _trim(self) -> None:
        if len(self._entries) <= self.max_entries:
            return
        now = self.clock()
        for key in [k for k, e in self._entries.items() if now - e.stored_at >= self.ttl_seconds]:
            del self._entries[key]
        while len(self._entries) > self.max_entries:
            self._entries.popitem(last=False)

    def clear(self, session_id: str | None = None) -> int:
        """Drop every entry (or one session's). Returns how many were dropped."""
        with self._lock:
            if session_id is None:
                count = len(self._entries)
                self._entries.clear()
                return count
            keys = [k for k in self._entries if k[0] == session_id]
            for key in keys:
                del self._entries[key]
            return len(keys)


def apply_reused(state: TurnState, entry: ReuseEntry) -> TurnState:
    """Take a stored classifier decision as this turn's base surface (signal ``reuse``)."""
    result = entry.classification
    state = replace(
        state,
        classification=result,
        scores={**state.scores, **result.scores},
        source="reuse",
        confidence=result.confidence,
        llm_tools=entry.llm_tools,
    )
    return state.add(result.selected, "reuse").reason("route_reused")
