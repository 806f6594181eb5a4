"""The `Resolver` observer that writes one telemetry line per turn.

``Resolver(config, observers=observers_for(config))``: the pipeline calls the observer
synchronously after each resolution; the observer takes an immutable snapshot of the turn (a
few microseconds, whatever the prompt's size), hands it to the writer's bounded queue and
returns. Redaction, hashing, sizing the surfaces, building the event and writing it happen on
the writer's thread.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable

import orjson

from .._config import ResolverConfig
from .._types import Resolution, TurnRequest
from ._event import TelemetryEvent, TurnSnapshot, snapshot
from ._tokens import SurfaceMeter
from ._writer import JsonlWriter


class TelemetryObserver:
    """Writes one `TelemetryEvent` line per resolved turn to ``config.telemetry_file``."""

    def __init__(
        self,
        config: ResolverConfig,
        *,
        writer: JsonlWriter | None = None,
        meter: SurfaceMeter | None = None,
        wall_clock: Callable[[], float] = time.time,
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
        key = config.api_key()
        self._guards: tuple[bytes, ...] = (key.encode(), orjson.dumps(key)[1:-1]) if key else ()

    def __call__(self, request: TurnRequest, resolution: Resolution) -> None:
        """Queue this turn's line (fast; never blocks; the writer counts what it drops)."""
        with self._lock:
            session = request.session_id or ""
            turn = self._turns.get(session, 0) + 1
            self._turns[session] = turn
        snap = snapshot(request, resolution, self.config, turn=turn, now=self.wall_clock())
        self.writer.submit(lambda: self.render(snap))

    def render(self, snap: TurnSnapshot) -> bytes:
        """The JSON line for a snapshot (writer thread): sized, validated, key-free."""
        event = snap.event(self.meter, dropped_events=self.writer.lost)
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
        """Write what is queued, then stop the writer thread."""
        self.writer.close(timeout)


def observers_for(config: ResolverConfig) -> list[TelemetryObserver]:
    """The telemetry observers `config` asks for: one when ``telemetryFile`` is set, else none."""
    if not config.telemetry_file:
        return []
    return [TelemetryObserver(config)]
