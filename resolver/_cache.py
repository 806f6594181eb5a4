"""The learned keyword cache (DESIGN §4.3): prompt-term -> tool associations.

What it learns
    Each learn event is (prompt terms, tools). Terms are the prompt's index terms
    (`_text.tokens`: stemmed words, CJK bigrams; stop-words, single letters, bare numbers and
    redaction markers dropped) plus adjacent-term bigrams ("call mom"), at most
    `MAX_TERMS_PER_PROMPT` per prompt. For every term the cache counts how many learned prompts
    contained it (``seen``) and, per tool, how many of those prompts chose the tool. Online it
    learns only from the LLM's own selection on confident answers (source ``llm``, confidence >=
    the learn threshold) — never from fallbacks, offline answers, low-confidence answers, reused
    turns, or tools the cache itself added (no self-reinforcement). Offline it learns from
    telemetry (`learn_telemetry`).

When an association is used (pollution guards)
    term -> tool is used only when the tool was chosen in at least ``min_support`` learned
    prompts containing the term, in at least ``min_precision`` of them, and the term has not
    been seen with more than ``max_distinct_tools`` different tools (a term that goes with
    everything says nothing). A turn gets at most ``max_suggestions`` tools from the cache.

Bounds and eviction
    At most ``max_tools_per_term`` tools per term: a new tool replaces the term's tool with the
    lowest count (ties: the name sorted last). At most ``max_terms`` terms: when a learn event
    goes over, the terms reinforced least recently (lowest ``last`` learn tick; ties: lowest
    ``seen``, then name) are evicted down to 90% of ``max_terms`` (so eviction is rare and
    cheap). Prompts whose learn event carries no tool only update terms already known.

File
    ``{"version": 1, "tick": N, "learned": N, "terms": {term: {"seen", "last", "distinct",
    "tools": {tool: count}}}}``, written atomically (temp file in the same folder, fsync,
    ``os.replace``, fsync of the folder). A file that cannot be read or validated is reported
    once (a warning naming the file) and ignored; it is left untouched until a valid learn is
    saved, and then moved aside to ``<file>.corrupt`` first. Saving re-reads the file when
    another process changed it since this one read it, and replays only this process's learn
    events since its last save on top (so `resolver cache learn` and a running agent merge).
"""

from __future__ import annotations

import asyncio
import atexit
import contextlib
import fcntl
import itertools
import logging
import os
import re
import tempfile
import threading
import weakref
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

import orjson
from pydantic import BaseModel, ConfigDict, Field, PositiveInt, ValidationError

from ._files import read_regular
from ._redact import without_secret_like
from ._text import tokens

if TYPE_CHECKING:
    from ._pipeline import TurnState

logger = logging.getLogger("resolver")

CACHE_VERSION = 1
MAX_TERMS_PER_PROMPT = 64
MAX_PROMPT_CHARS = 4000
"""Only the start of a very long prompt (a pasted document) is used for terms."""
MAX_PENDING = 10_000
"""Unsaved learn events kept for the next save (older ones are dropped if saving keeps failing)."""
_REDACTION = re.compile(r"\[REDACTED(?::[A-Za-z0-9_\-]+)?\]")
"""Telemetry's redaction markers (``[REDACTED:bearer]``): their words are not prompt terms."""
CACHE_STOPWORDS = frozenset({"redact", "redacted", "http", "https", "www", "com"})
"""Extra terms never learned: redaction markers in telemetry excerpts and URL noise."""


class CacheTerm(BaseModel):
    """One learned term."""

    model_config = ConfigDict(extra="ignore")

    seen: int = Field(ge=0)
    """How many learned prompts contained the term."""
    last: int = Field(default=0, ge=0)
    """The learn tick that last reinforced it (recency, for eviction)."""
    distinct: int = Field(default=0, ge=0)
    """How many different tools it was ever learned with (evicted ones included)."""
    tools: dict[str, PositiveInt] = Field(default_factory=dict)
    """Tool -> in how many of those prompts the tool was chosen."""


class CacheFile(BaseModel):
    """The keyword cache file (version 1)."""

    model_config = ConfigDict(extra="ignore")

    version: Literal[1]
    tick: int = Field(default=0, ge=0)
    """The learn-event counter (recency for eviction)."""
    learned: int = Field(default=0, ge=0)
    """How many learn events the cache has taken."""
    terms: dict[str, CacheTerm] = Field(default_factory=dict)


@dataclass
class _Term:
    seen: int = 0
    last: int = 0
    distinct: int = 0
    tools: dict[str, int] = field(default_factory=dict)


@dataclass(frozen=True)
class CacheLimits:
    """Bounds and pollution guards (module docstring: "When an association is used")."""

    max_terms: int = 20_000
    max_tools_per_term: int = 6
    min_support: int = 3
    min_precision: float = 0.5
    max_distinct_tools: int = 8
    max_suggestions: int = 4
    min_confidence: float = 0.7
    """Online and telemetry learning need at least this confidence (or the config's threshold,
    whichever is higher)."""


@dataclass(frozen=True)
class CacheHint:
    """What the cache associates with one prompt, restricted to the turn's candidates."""

    tools: tuple[str, ...] = ()
    """Suggested tools, strongest first."""
    terms: Mapping[str, tuple[str, ...]] = field(default_factory=dict)
    """tool -> the prompt terms that point at it."""

    @property
    def has_signal(self) -> bool:
        return bool(self.tools)


def prompt_terms(prompt: str, secrets: Iterable[str] = ()) -> tuple[str, ...]:
    """The cache terms of a prompt: unigrams, then adjacent bigrams (deduplicated, capped).

    Nothing secret becomes a term: the prompt is redacted as telemetry would redact it (with
    the configured key, `secrets`), and every word that looks like a credential of unknown
    shape (`_redact.secret_like`: hashes, base64 blobs, tokens) is dropped whole, before the
    text is split into words (a token's fragments would otherwise look like plain words)."""
    text = _REDACTION.sub(" ", without_secret_like(prompt[:MAX_PROMPT_CHARS], secrets))
    words = [t for t in tokens(text) if not t.isdigit() and t not in CACHE_STOPWORDS]
    unigrams = list(dict.fromkeys(words))
    bigrams = [f"{a} {b}" for a, b in itertools.pairwise(words) if a != b]
    return tuple(dict.fromkeys(unigrams + bigrams))[:MAX_TERMS_PER_PROMPT]


class KeywordCache:
    """Learned prompt-term -> tool associations; thread-safe; persisted when `path` is set."""

    def __init__(
        self,
        path: str | Path | None = None,
        *,
        limits: CacheLimits | None = None,
        secrets: Iterable[str] = (),
    ):
        self.path = Path(path).expanduser() if path is not None else None
        self.limits = limits or CacheLimits()
        self.secrets = tuple(s for s in secrets if s)
        """Literal secrets never learned as terms (the configured classifier key)."""
        self._terms: dict[str, _Term] = {}
        self._tick = 0
        self._learned = 0
        self._lock = threading.RLock()
        self._write_lock = threading.Lock()
        self._pending: list[tuple[tuple[str, ...], tuple[str, ...]]] = []
        self._signature: tuple[int, int, int] | None = None
        self._cleared = False
        self._checked_at: float | None = None
        self.corrupt: str | None = None
        """Why the file on disk was ignored (None when it was read, or absent)."""
        self.last_save_at: float | None = None
        if self.path is not None:
            self._load_from_disk()
            _LIVE.add(self)  # saved at interpreter exit if it has unsaved learn events

    # ------------------------------------------------------------------ reading

    def __len__(self) -> int:
        return len(self._terms)

    @property
    def learned(self) -> int:
        return self._learned

    @property
    def dirty(self) -> bool:
        """True when learn events have not been saved yet."""
        return bool(self._pending)

    def suggest(self, prompt: str, candidates: Iterable[str]) -> CacheHint:
        """Tools the cache associates with `prompt`, among `candidates` (never more)."""
        allowed = set(candidates)
        lim = self.limits
        best: dict[str, float] = {}
        why: dict[str, list[str]] = {}
        with self._lock:
            for term in prompt_terms(prompt, self.secrets):
                entry = self._terms.get(term)
                if entry is None or entry.distinct > lim.max_distinct_tools or not entry.seen:
                    continue
                for tool, count in entry.tools.items():
                    precision = count / entry.seen
                    if tool not in allowed or count < lim.min_support:
                        continue
                    if precision < lim.min_precision:
                        continue
                    best[tool] = max(best.get(tool, 0.0), precision + 0.01 * min(count, 50))
                    why.setdefault(tool, []).append(term)
        ranked = sorted(best, key=lambda t: (-best[t], t))[: lim.max_suggestions]
        return CacheHint(tuple(ranked), {t: tuple(why[t]) for t in ranked})

    def associations(self) -> dict[str, list[tuple[str, int, int]]]:
        """Usable associations: tool -> [(term, count, seen)], strongest first (for `show`)."""
        lim = self.limits
        out: dict[str, list[tuple[str, int, int]]] = {}
        with self._lock:
            for term, entry in self._terms.items():
                if entry.distinct > lim.max_distinct_tools or not entry.seen:
                    continue
                for tool, count in entry.tools.items():
                    if count >= lim.min_support and count / entry.seen >= lim.min_precision:
                        out.setdefault(tool, []).append((term, count, entry.seen))
        for rows in out.values():
            rows.sort(key=lambda r: (-r[1] / r[2], -r[1], r[0]))
        return dict(sorted(out.items()))

    # ------------------------------------------------------------------ learning

    def learn(self, prompt: str, tools: Iterable[str]) -> bool:
        """Take one learn event (the caller has checked it is trustworthy). True if it counted."""
        terms = prompt_terms(prompt, self.secrets)
        chosen = tuple(dict.fromkeys(t for t in tools if isinstance(t, str) and t))
        if not terms:
            return False
        with self._lock:
            self._apply(terms, chosen)
            if self.path is not None:  # kept for the next save (replayed on a merge), bounded
                self._pending.append((terms, chosen))
                if len(self._pending) > MAX_PENDING:
                    del self._pending[0]
        return True

    def _apply(self, terms: Sequence[str], tools: Sequence[str]) -> None:
        lim = self.limits
        self._tick += 1
        self._learned += 1
        for term in terms:
            entry = self._terms.get(term)
            if entry is None:
                if not tools:
                    continue  # a tool-less prompt only updates what is already known
                entry = self._terms[term] = _Term()
            entry.seen += 1
            entry.last = self._tick
            for tool in tools:
                if tool in entry.tools:
                    entry.tools[tool] += 1
                    continue
                if len(entry.tools) >= lim.max_tools_per_term:
                    weakest = max(entry.tools, key=lambda t: (-entry.tools[t], t))
                    del entry.tools[weakest]
                entry.tools[tool] = 1
                entry.distinct += 1
        self._evict()

    def _evict(self) -> None:
        limit = self.limits.max_terms
        if len(self._terms) <= limit:
            return
        over = len(self._terms) - (limit - limit // 10)
        victims = sorted(self._terms.items(), key=lambda kv: (kv[1].last, kv[1].seen, kv[0]))
        for term, _ in victims[:over]:
            del self._terms[term]

    def clear(self) -> None:
        """Forget everything (in memory; `save` writes the empty cache)."""
        with self._lock:
            self._terms.clear()
            self._tick = self._learned = 0
            self._pending.clear()
            self._pending.append(((), ()))  # mark dirty: the empty state must be written
            self._cleared = True  # the next save replaces the file, whatever is on disk

    # ------------------------------------------------------------------ persistence

    def to_file(self) -> CacheFile:
        with self._lock:
            return CacheFile(
                version=CACHE_VERSION,
                tick=self._tick,
                learned=self._learned,
                terms={
                    term: CacheTerm(
                        seen=e.seen, last=e.last, distinct=e.distinct, tools=dict(e.tools)
                    )
                    for term, e in sorted(self._terms.items())
                },
            )

    def _replace_state(self, data: CacheFile) -> None:
        self._terms = {
            term: _Term(t.seen, t.last, max(t.distinct, len(t.tools)), dict(t.tools))
            for term, t in data.terms.items()
        }
        self._tick, self._learned = max(data.tick, self._max_last()), data.learned
        self._evict()

    def _max_last(self) -> int:
        return max((t.last for t in self._terms.values()), default=0)

    def _read(self) -> tuple[CacheFile | None, str | None, tuple[int, int, int] | None]:
        """(valid file, problem, signature); (None, None, None) when there is no file."""
        assert self.path is not None
        try:
            raw, st = read_regular(self.path, MAX_CACHE_FILE_BYTES)
        except FileNotFoundError:
            return None, None, None
        except OSError as exc:
            return None, f"cannot read ({exc.strerror})", None
        except ValueError as exc:
            return None, str(exc), None
        signature = (st.st_mtime_ns, st.st_size, st.st_ino)
        try:
            data = orjson.loads(raw)
        except orjson.JSONDecodeError as exc:
            return None, f"not valid JSON ({exc})", signature
        if isinstance(data, dict) and data.get("version") not in (None, CACHE_VERSION):
            return None, f"unsupported version {data.get('version')!r} (this reads 1)", signature
        try:
            return CacheFile.model_validate(data), None, signature
        except ValidationError as exc:
            first = exc.errors()[0]
            where = ".".join(str(p) for p in first["loc"]) or "(root)"
            return None, f"invalid cache file at {where}: {first['msg']}", signature

    def _load_from_disk(self) -> None:
        data, problem, signature = self._read()
        with self._lock:
            self._signature = signature
            if data is not None:
                self._replace_state(data)
                self.corrupt = None
            elif problem is not None:
                self.corrupt = problem
                logger.warning(
                    "resolver: keyword cache %s ignored: %s; it is kept as is until the cache "
                    "learns again (then it is moved to %s.corrupt); `resolver cache clear` resets",
                    self.path,
                    problem,
                    self.path,
                )

    def reload_if_changed(self) -> bool:
        """Re-read the file if another process replaced it (unsaved events are replayed).

        Callers hold `_write_lock` (`save`, `maybe_reload`), so a reload never sees this
        process's own write before its signature is recorded (which would count events twice).
        """
        if self.path is None or self._cleared:
            return False
        try:
            st = self.path.stat()
            signature: tuple[int, int, int] | None = (st.st_mtime_ns, st.st_size, st.st_ino)
        except OSError:
            signature = None
        if signature == self._signature or signature is None:
            return False
        data, problem, signature = self._read()
        if data is None:
            if problem is not None and self.corrupt is None:
                self.corrupt = problem  # moved aside (kept) when this process next saves
                logger.warning("resolver: keyword cache %s ignored: %s", self.path, problem)
            return False
        with self._lock:
            self._signature = signature
            self._replace_state(data)
            for terms, tools in self._pending:
                if terms:
                    self._apply(terms, tools)
        return True

    def maybe_reload(self, now: float) -> None:
        """`reload_if_changed`, at most every `RELOAD_INTERVAL_S` (one stat per check)."""
        if self.path is None:
            return
        if self._checked_at is not None and now - self._checked_at < RELOAD_INTERVAL_S:
            return
        self._checked_at = now
        if not self._write_lock.acquire(blocking=False):
            return  # a save is running; it re-reads the file itself
        try:
            self.reload_if_changed()
        except OSError as exc:
            logger.warning("resolver: cannot re-read keyword cache %s: %s", self.path, exc)
        finally:
            self._write_lock.release()

    def save(self, *, now: float | None = None) -> bool:
        """Write the cache atomically if it has unsaved learn events. True when written.

        Several processes may share the file: under an exclusive ``flock`` on
        ``<file>.lock`` the file is re-read, this process's unsaved learn events are replayed
        on top of it, and the result replaces the file. No process's events are lost to
        another's save."""
        if self.path is None or not self._pending:
            return False
        with self._write_lock, _file_lock(self.path.with_name(self.path.name + ".lock")):
            self._signature = None  # re-read whatever is on disk now
            self.reload_if_changed()
            with self._lock:
                payload = orjson.dumps(self.to_file().model_dump(mode="json"))
                pending = len(self._pending)
            if self.corrupt is not None and self.path.is_file():
                backup = self.path.with_name(self.path.name + ".corrupt")
                os.replace(self.path, backup)
                logger.warning("resolver: corrupt keyword cache moved to %s", backup)
            atomic_write(self.path, payload)
            with self._lock:
                del self._pending[:pending]
                self.corrupt = None
                self._cleared = False
                st = self.path.stat()
                self._signature = (st.st_mtime_ns, st.st_size, st.st_ino)
                self.last_save_at = now
        return True

    def save_quietly(self, now: float | None = None) -> None:
        """`save`, logging instead of raising (for background saves off the hot path)."""
        try:
            self.save(now=now)
        except OSError as exc:
            logger.warning("resolver: could not save keyword cache %s: %s", self.path, exc)


MAX_CACHE_FILE_BYTES = 64 * 1024 * 1024
"""A cache file bigger than this is not read (20,000 terms take about 3 MB)."""

_LIVE: weakref.WeakSet[KeywordCache] = weakref.WeakSet()


@atexit.register
def _save_live_caches() -> None:
    """Interpreter exit: every cache with unsaved learn events writes them (best effort)."""
    for cache in list(_LIVE):
        cache.save_quietly()


@contextlib.contextmanager
def _file_lock(path: Path) -> Iterator[None]:
    """An exclusive ``flock`` on `path` (created 0600, never followed as a symlink)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    fd = os.open(path, os.O_RDWR | os.O_CREAT | os.O_CLOEXEC | os.O_NOFOLLOW, 0o600)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        yield
    finally:
        os.close(fd)  # closing releases the lock


def atomic_write(path: Path, payload: bytes) -> None:
    """Write `payload` to `path` atomically: temp file in the same folder, fsync, replace."""
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        with os.fdopen(fd, "wb") as handle:
            handle.write(payload)
            handle.flush()
            os.fsync(handle.fileno())
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise
    with contextlib.suppress(OSError):  # make the rename durable (not on every platform)
        dir_fd = os.open(path.parent, os.O_RDONLY)
        try:
            os.fsync(dir_fd)
        finally:
            os.close(dir_fd)


# ---------------------------------------------------------------- telemetry (offline learning)


@dataclass
class LearnReport:
    """What `learn_telemetry` did with a telemetry file."""

    lines: int = 0
    learned: int = 0
    from_llm: int = 0
    from_used_tools: int = 0
    skipped: dict[str, int] = field(default_factory=dict)

    def skip(self, why: str) -> None:
        self.skipped[why] = self.skipped.get(why, 0) + 1


def _first(event: Mapping[str, Any], *keys: str) -> Any:
    for key in keys:
        if key in event and event[key] is not None:
            return event[key]
    return None


def _names(value: Any) -> list[str] | None:
    if not isinstance(value, list):
        return None
    return [v for v in value if isinstance(v, str) and v]


def telemetry_learn_event(
    event: Mapping[str, Any], *, min_confidence: float, core_tools: Iterable[str] = ()
) -> tuple[str, list[str], bool, bool] | str:
    """(prompt, tools, from_llm, from_used) for one telemetry line, or why it was skipped.

    Fields read (camelCase or snake_case): ``promptExcerpt``/``prompt``, ``source``,
    ``confidence``, ``llmTools`` (else ``toolsAllow`` minus core tools), ``usedTools``.
    """
    prompt = _first(event, "promptExcerpt", "prompt_excerpt", "prompt")
    if not isinstance(prompt, str) or not prompt.strip():
        return "no prompt excerpt (capturePrompts off?)"
    tools: list[str] = []
    from_llm = False
    confidence = _first(event, "confidence")
    confident = isinstance(confidence, int | float) and confidence >= min_confidence
    if _first(event, "source") == "llm" and confident:
        picked = _names(_first(event, "llmTools", "llm_tools"))
        if picked is None:
            core = set(core_tools)
            allow = _names(_first(event, "toolsAllow", "tools_allow")) or []
            picked = [t for t in allow if t not in core]
        tools.extend(picked)
        from_llm = True
    used = _names(_first(event, "usedTools", "used_tools"))
    from_used = bool(used)
    if used:
        tools.extend(used)
    if not from_llm and not from_used:
        return "not a confident llm decision and no usedTools"
    return prompt, list(dict.fromkeys(tools)), from_llm, from_used


def learn_telemetry(
    cache: KeywordCache,
    lines: Iterator[bytes] | Iterable[bytes],
    *,
    min_confidence: float,
    core_tools: Iterable[str] = (),
) -> LearnReport:
    """Learn from telemetry JSONL lines (read leniently: bad lines are counted and skipped)."""
    report = LearnReport()
    core = frozenset(core_tools)
    for raw in lines:
        if not raw.strip():
            continue
        report.lines += 1
        try:
            event = orjson.loads(raw)
        except orjson.JSONDecodeError:
            report.skip("not JSON")
            continue
        if not isinstance(event, dict):
            report.skip("not a JSON object")
            continue
        got = telemetry_learn_event(event, min_confidence=min_confidence, core_tools=core)
        if isinstance(got, str):
            report.skip(got)
            continue
        prompt, tools, from_llm, from_used = got
        if not cache.learn(prompt, [t for t in tools if t not in core]):
            report.skip("no usable terms in the prompt")
            continue
        report.learned += 1
        report.from_llm += from_llm
        report.from_used_tools += from_used
    return report


# ---------------------------------------------------------------- pipeline stages

SAVE_INTERVAL_S = 30.0
"""Online learning writes the file at most this often (off the hot path, in a thread)."""
RELOAD_INTERVAL_S = 5.0
"""How often a running resolver checks whether another process rewrote the file (one stat)."""


def apply_cache(state: TurnState, hint: CacheHint) -> TurnState:
    """Add the tools the cache associates with the prompt; never removes (DESIGN §4.3).

    After an LLM decision (fresh or reused) it also judges the selection: ``validation`` is
    ``cache_added`` when it added tools, ``agree`` when every tool it suggests was already
    selected, ``no_signal`` when it suggests nothing. After the offline classifier or a fallback
    its suggestions are one more added signal. A full surface needs nothing.
    """
    if state.source == "full":
        return state
    before = state.surface
    added = [t for t in hint.tools if t not in before]
    state = state.add(added, "cache", "cache_added")
    if state.llm_tools is None:
        return state
    if state.surface != before:
        validation = "cache_added"
    elif hint.tools:
        validation = "agree"
    else:
        validation = "no_signal"
    return replace(state, validation=validation)


def learn_from_turn(
    cache: KeywordCache, state: TurnState, *, min_confidence: float, core_tools: Iterable[str]
) -> bool:
    """Learn online from a fresh, confident LLM decision only (the LLM's own selection)."""
    if state.source != "llm" or state.llm_tools is None or state.confidence < min_confidence:
        return False
    core = set(core_tools)
    return cache.learn(state.request.prompt, [t for t in state.llm_tools if t not in core])


def persist_soon(cache: KeywordCache, now: float) -> None:
    """Save unsaved learn events in a worker thread, at most every `SAVE_INTERVAL_S`."""
    if cache.path is None or not cache.dirty:
        return
    if cache.last_save_at is not None and now - cache.last_save_at < SAVE_INTERVAL_S:
        return
    cache.last_save_at = now
    try:
        loop = asyncio.get_running_loop()
    except RuntimeError:  # pragma: no cover - the pipeline always runs in a loop
        cache.save_quietly(now)
        return
    future = loop.run_in_executor(None, cache.save_quietly, now)
    future.add_done_callback(_report_save_failure)


def _report_save_failure(future: asyncio.Future[None]) -> None:
    if not future.cancelled() and future.exception() is not None:
        logger.warning("resolver: keyword cache save failed: %r", future.exception())
