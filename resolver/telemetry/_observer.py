"""The `Resolver` observer that writes one telemetry line per turn.

``Resolver(config, observers=observers_for(config))``: the pipeline calls the observer
synchronously after each resolution; the observer takes an immutable snapshot of the turn (a
few microseconds, whatever the prompt's size), hands it to the writer's bounded queue and
returns. Redaction, hashing, sizing the surfaces, building the event and writing it happen on
the writer's thread.

Held shadow lines (docs/tuning.md, "Used tools"): a host that reports the tool calls of each
run (the OpenClaw sidecar) sets `hold_runs`. A shadow turn that carries a ``runId`` is then not
written at once: its snapshot is held until the run is over, the tool calls reported for that
run (`record_tool_calls`) are added as ``usedTools``, and the one line is written on
`release` — at the session's next turn, after `HOLD_TIMEOUT_S`, or at `close()` (exit). Lines
of other turns are written at once, as before.

Cold and warm turns (``indexCold``): the observer remembers the last `WARM_SURFACES` surfaces
this process resolved on (as many as the pipeline keeps indexes for) or that a host warmed
(`note_warm`, after ``Resolver.warm``); a turn on any other surface built the offline index
first, and its latency says so. Each line's surface is written once beside the telemetry file
(`_surfaces`).
"""

from __future__ import annotations

import atexit
import threading
import time
from collections import OrderedDict
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field

import orjson

from .._config import ResolverConfig
from .._types import Resolution, ToolInfo, TurnRequest
from ._event import TelemetryEvent, TurnSnapshot, snapshot, surface_key
from ._surfaces import SurfaceFiles
from ._tokens import SurfaceMeter
from ._writer import JsonlWriter

HOLD_TIMEOUT_S = 300.0
"""A held shadow line is written at the latest this long after its turn was resolved."""
MAX_HELD = 1000
"""At most this many lines are held; beyond it the oldest is written without waiting."""
WARM_SURFACES = 8
"""Surfaces remembered as warm: the pipeline keeps as many offline indexes (LRU)."""


@dataclass
class _Held:
    snap: TurnSnapshot
    session: str
    since: float
    used: list[str] = field(default_factory=list)


class TelemetryObserver:
    """Writes one `TelemetryEvent` line per resolved turn to ``config.telemetry_file``."""

    def __init__(
        self,
        config: ResolverConfig,
        *,
        writer: JsonlWriter | None = None,
        meter: SurfaceMeter | None = None,
        wall_clock: Callable[[], float] = time.time,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        if writer is None:
            if not config.telemetry_file:
                raise ValueError("TelemetryObserver needs config.telemetryFile (or a writer)")
            writer = JsonlWriter(
                config.telemetry_file,
                max_bytes=config.telemetry.max_bytes,
                backups=config.telemetry.backups,
            )
        self.config = config
        self.writer = writer
        self.meter = meter or SurfaceMeter()
        if writer.warmup is None:
            # Load the schemas and the tokenizer on the writer thread now, while the turn runs,
            # so a short-lived process (one CLI call) still writes its line at exit.
            writer.warmup = self.meter.load
        writer.start()
        self.wall_clock = wall_clock
        self._turns: dict[str, int] = {}
        self._lock = threading.Lock()
        self.clock = clock
        self.hold_runs = False
        """Hold shadow lines until the run's tool calls are known (set by hosts that report
        them per run)."""
        self._held: dict[str, _Held] = {}
        atexit.register(self.release)  # before the writer's own atexit close (LIFO)
        key = config.api_key()
        self._guards: tuple[bytes, ...] = (key.encode(), orjson.dumps(key)[1:-1]) if key else ()
        self.surfaces = SurfaceFiles(writer.path, self._guards)
        self._warm: OrderedDict[int, None] = OrderedDict()

    def note_warm(self, tools: Sequence[ToolInfo]) -> None:
        """The host built the index for `tools` ahead of a turn (``Resolver.warm``): the next
        turn on this surface is a warm one."""
        key = surface_key(tools)
        if key:
            with self._lock:
                self._remember_warm(hash(key))

    def _remember_warm(self, key: int) -> bool:
        """Mark `key` warm (lock held); True when it already was."""
        known = key in self._warm
        self._warm[key] = None
        self._warm.move_to_end(key)
        while len(self._warm) > WARM_SURFACES:
            self._warm.popitem(last=False)
        return known

    def __call__(self, request: TurnRequest, resolution: Resolution) -> None:
        """Queue this turn's line (fast; never blocks; the writer counts what it drops)."""
        surface = surface_key(request.tools)
        with self._lock:
            session = request.session_id or ""
            turn = self._turns.get(session, 0) + 1
            self._turns[session] = turn
            cold = None
            if surface and resolution.source != "disabled":
                cold = not self._remember_warm(hash(surface))
        snap = snapshot(
            request,
            resolution,
            self.config,
            turn=turn,
            now=self.wall_clock(),
            index_cold=cold,
            surface=surface,
        )
        run_id = request.run_id
        if self.hold_runs and run_id and resolution.source == "shadow":
            with self._lock:
                earlier = self._held.pop(run_id, None)  # the run resolved twice: keep both
                self._held[run_id] = _Held(snap, session, self.clock())
                overflow = len(self._held) - MAX_HELD
                evicted = [self._held.pop(k) for k in list(self._held)[: max(0, overflow)]]
                if earlier is not None:
                    evicted.insert(0, earlier)
            self._submit(evicted)
            return
        self._submit_one(snap)

    def _submit_one(self, snap: TurnSnapshot) -> None:
        self.writer.submit(lambda: self.render(snap))

    def _submit(self, held: Iterable[_Held]) -> int:
        count = 0
        for item in held:
            self._submit_one(item.snap.with_used_tools(list(dict.fromkeys(item.used))))
            count += 1
        return count

    def record_tool_calls(self, run_id: str, names: Iterable[str]) -> bool:
        """Add tool calls the host reported for `run_id`; False when no line is held for it."""
        with self._lock:
            held = self._held.get(run_id)
            if held is None:
                return False
            held.used.extend(n for n in names if isinstance(n, str) and n)
            return True

    def release(
        self,
        *,
        session_id: str | None = None,
        run_id: str | None = None,
        keep_run: str | None = None,
        stale_only: bool = False,
    ) -> int:
        """Write held lines: all, one run's, one session's except `keep_run`, or stale ones."""
        now = self.clock()
        with self._lock:
            chosen = [
                run
                for run, held in self._held.items()
                if run != keep_run
                and (run_id is None or run == run_id)
                and (session_id is None or held.session == session_id)
                and (not stale_only or now - held.since >= HOLD_TIMEOUT_S)
            ]
            items = [self._held.pop(run) for run in chosen]
        return self._submit(items)

    @property
    def held(self) -> int:
        """How many shadow lines wait for their run's tool calls."""
        return len(self._held)

    def render(self, snap: TurnSnapshot) -> bytes:
        """The JSON line for a snapshot (writer thread): sized, validated, key-free."""
        event = snap.event(self.meter, dropped_events=self.writer.lost)
        if event.surface_id is not None:
            self.surfaces.ensure(event.surface_id, snap.candidates)
        return self.dumps(event)

    def dumps(self, event: TelemetryEvent) -> bytes:
        """Serialize one event; the configured key is removed from the line whatever field
        carried it (prompt and reasoning are already redacted; this covers ids and names)."""
        line = orjson.dumps(event.model_dump(mode="json", by_alias=True))
        for guard in self._guards:
            if guard and guard in line:
                line = line.replace(guard, b"[REDACTED:configured_key]")
        return line + b"\n"

    def flush(self, timeout: float = 10.0) -> bool:
        """Wait until every queued line is written."""
        return self.writer.flush(timeout)

    def close(self, timeout: float | None = None) -> None:
        """Write held and queued lines, then stop the writer thread."""
        self.release()
        self.writer.close(timeout)


def observers_for(config: ResolverConfig) -> list[TelemetryObserver]:
    """The telemetry observers `config` asks for: one when ``telemetryFile`` is set, else none."""
    if not config.telemetry_file:
        return []
    return [TelemetryObserver(config)]
