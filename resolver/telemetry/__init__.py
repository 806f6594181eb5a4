"""Local JSONL telemetry: one line per turn, written off the hot path (docs/telemetry.md).

This subpackage holds all the importable telemetry code; the top-level ``telemetry/`` folder
only points at the CLI (``resolver telemetry summary|report``).

    event model      `TelemetryEvent` (schemas/telemetry-event.v1.json), `snapshot`
    writer           `JsonlWriter`: bounded queue, background thread, flock, rotation
    observer         `TelemetryObserver`, `observers_for(config)` for `Resolver(observers=...)`
    surfaces         `_surfaces`: each line's candidate surface, written once beside the file
    redaction        `redact`
    token accounting `SurfaceMeter` (exact o200k_base with the `tokens` extra, else bytes)
    summary/report   `read_events`, `summarize`, `render_html`

Importing this package does no I/O; the schemas and the tokenizer load on first use.
"""

from .._redact import redact
from ._event import SurfaceRecord, TelemetryEvent, TurnSnapshot, UsageRecord, snapshot
from ._observer import TelemetryObserver, observers_for
from ._report import render_html
from ._summary import PRICES_PER_MTOK, Summary, read_events, summarize, with_rotated
from ._tokens import SurfaceMeter, SurfaceSize
from ._writer import JsonlWriter

__all__ = [
    "PRICES_PER_MTOK",
    "JsonlWriter",
    "Summary",
    "SurfaceMeter",
    "SurfaceRecord",
    "SurfaceSize",
    "TelemetryEvent",
    "TelemetryObserver",
    "TurnSnapshot",
    "UsageRecord",
    "observers_for",
    "read_events",
    "redact",
    "render_html",
    "snapshot",
    "summarize",
    "with_rotated",
]
