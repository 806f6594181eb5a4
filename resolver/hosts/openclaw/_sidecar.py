"""The Python side of the OpenClaw extension: newline-delimited JSON over stdio.

Protocol: ``docs/openclaw-protocol.md``. Frames only on stdout, logs on stderr. Several
``resolve`` requests are in flight at once (one per session), answered by id; ``configure`` is
applied before any later frame. Every fault answers ``toolsAllow: null`` (abstain) or an error
frame, which the extension also turns into abstain.

The candidate surface (OpenClaw sends no tool list with the hook):

- the resolver abstains (``surface_unknown_abstain``) until the host has shown its surface
  through ``llm_input`` (``observe_surface``);
- the candidates are then the shipped catalog's OpenClaw tools plus every tool the host has
  shown (a union per process: after a narrowed turn ``llm_input`` shows only the narrowed set);
- it stays current: the first turn of every new session abstains (``surface_refresh_abstain``)
  so the host sends — and shows — its full surface, and so does any turn once the last full
  view is older than ``SURFACE_REFRESH_S``. A tool that appears later (a new MCP server,
  another plugin) is therefore seen within one new session or ten minutes.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import signal
import sys
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import orjson

from ..._config import ResolverConfig, load_config
from ..._errors import ConfigError
from ..._pipeline import Resolver, as_dict
from ..._state import state_from_openclaw_ctx
from ..._surface import default_surface
from ..._types import Message, Resolution, ToolInfo, TurnRequest

if TYPE_CHECKING:
    from ...telemetry import TelemetryObserver

logger = logging.getLogger("resolver")

SURFACE_REFRESH_S = 600.0
MAX_SESSIONS_TRACKED = 10_000


@dataclass
class SurfaceView:
    """What this process knows of the host's tool surface."""

    tools: dict[str, str] = field(default_factory=dict)
    """name -> description, the union of every surface the host showed."""
    last_full_view: float | None = None
    """When the host last showed an un-narrowed surface (a turn the resolver abstained on)."""
    sessions: dict[str, None] = field(default_factory=dict)
    abstained_runs: dict[str, None] = field(default_factory=dict)

    def observe(self, tools: list[dict[str, Any]], run_id: str | None, now: float) -> int:
        for tool in tools:
            name = tool.get("name") if isinstance(tool, dict) else None
            if isinstance(name, str) and name:
                desc = tool.get("description")
                self.tools[name] = desc if isinstance(desc, str) else self.tools.get(name, "")
        if run_id is None or run_id in self.abstained_runs or self.last_full_view is None:
            self.last_full_view = now
        return len(self.tools)


class Sidecar:
    """Serves frames; `handle` maps one request frame to one response frame."""

    def __init__(self, *, clock: Callable[[], float] = time.monotonic) -> None:
        self.clock = clock
        self.config: ResolverConfig | None = None
        self.resolver: Resolver | None = None
        self.surface = SurfaceView()
        self._defaults = [t.name for t in default_surface()]
        self._background: set[asyncio.Future[None]] = set()

    async def handle(self, frame: Mapping[str, Any]) -> dict[str, Any]:
        request_id = frame.get("id")
        method = frame.get("method")
        params = frame.get("params") if isinstance(frame.get("params"), dict) else {}
        assert isinstance(params, dict)
        try:
            if method == "configure":
                result = await self.configure(params.get("config") or {})
            elif method == "resolve":
                result = await self.resolve(params.get("event") or {}, params.get("ctx") or {})
            elif method == "observe_surface":
                raw_tools = params.get("tools")
                tools: list[dict[str, Any]] = raw_tools if isinstance(raw_tools, list) else []
                ctx = params.get("ctx") or {}
                run_id = ctx.get("runId") if isinstance(ctx, dict) else None
                before = len(self.surface.tools)
                known = self.surface.observe(
                    tools, run_id if isinstance(run_id, str) else None, self.clock()
                )
                if known != before:
                    self._warm_soon()
                result = {"known": known}
            elif method == "observe_tool_calls":
                result = {"ok": True, "recorded": self.observe_tool_calls(params)}
            elif method == "ping":
                result = {"pong": True}
            else:
                return _error(request_id, "unknown_method", f"unknown method {method!r}")
        except ConfigError as exc:
            return _error(request_id, "invalid_config", str(exc))
        except Exception as exc:
            logger.exception("resolver sidecar: %s failed", method)
            return _error(request_id, "internal_error", type(exc).__name__)
        return {"id": request_id, "result": result}

    def _telemetry(self) -> list[TelemetryObserver]:
        if self.resolver is None:
            return []
        from ...telemetry import TelemetryObserver

        found = [o for o in self.resolver.observers if isinstance(o, TelemetryObserver)]
        for observer in found:
            observer.hold_runs = True  # this host reports each run's tool calls
        return found

    def observe_tool_calls(self, params: Mapping[str, Any]) -> int:
        """Attach reported tool calls to their run's held shadow line (docs/tuning.md)."""
        ctx = params.get("ctx")
        run_id = _str(ctx.get("runId")) if isinstance(ctx, dict) else None
        calls = params.get("calls")
        if run_id is None or not isinstance(calls, list):
            return 0
        names = [c.get("name") for c in calls if isinstance(c, dict)]
        valid = [n for n in names if isinstance(n, str) and n]
        recorded = 0
        for observer in self._telemetry():
            recorded += observer.record_tool_calls(run_id, valid)
        return len(valid) if recorded else 0

    def shutdown(self) -> None:
        """Write every held shadow line and what is queued (at exit)."""
        for observer in self._telemetry():
            observer.close(timeout=5)

    async def configure(self, raw: Mapping[str, Any]) -> dict[str, Any]:
        data = {k: v for k, v in raw.items() if v is not None}
        config = load_config(data, source="plugins.entries.openclaw-tool-resolver.config")
        from ...cli._common import build_resolver  # one factory for CLI and hosts

        self.config = config
        if self.resolver is not None:
            for observer in self._telemetry():
                observer.release()  # the old resolver's held lines are written now
        self.resolver = build_resolver(config)
        self._telemetry()
        warm = getattr(self.resolver.llm, "warm_up", None)
        if warm is not None:
            with contextlib.suppress(Exception):
                await warm()
        self._warm_soon()
        return {"ok": True}

    def _warm_soon(self) -> None:
        """Build the offline index for the current candidates in a worker thread (off-turn)."""
        resolver, tools = self.resolver, self._candidates()
        if resolver is None:
            return

        def work() -> None:
            try:
                resolver.warm(tools)
            except Exception:  # warming is an optimisation; the turn builds the index itself
                logger.debug("resolver sidecar: warm-up failed", exc_info=True)

        task = asyncio.ensure_future(asyncio.to_thread(work))
        self._background.add(task)
        task.add_done_callback(self._background.discard)

    def _candidates(self) -> list[ToolInfo]:
        names = dict.fromkeys(self._defaults)
        names.update(dict.fromkeys(self.surface.tools))
        return [ToolInfo(name=n, description=self.surface.tools.get(n, "")) for n in names]

    async def resolve(self, event: Mapping[str, Any], ctx: Mapping[str, Any]) -> dict[str, Any]:
        if self.resolver is None:
            self.resolver = Resolver(ResolverConfig())
        session = _str(ctx.get("sessionId")) or _str(ctx.get("sessionKey"))
        run_id = _str(ctx.get("runId"))
        for observer in self._telemetry():
            # A new turn of this session: its earlier runs are over (their lines are written).
            if session is not None:
                observer.release(session_id=session, keep_run=run_id)
            observer.release(stale_only=True)
        now = self.clock()
        surface_known = self.surface.last_full_view is not None
        new_session = session is not None and session not in self.surface.sessions
        stale = surface_known and now - (self.surface.last_full_view or now) > SURFACE_REFRESH_S
        if session is not None:
            self.surface.sessions[session] = None
            if len(self.surface.sessions) > MAX_SESSIONS_TRACKED:
                self.surface.sessions.pop(next(iter(self.surface.sessions)))
        messages = [
            Message.model_validate(m) for m in event.get("messages") or [] if isinstance(m, dict)
        ]
        request = TurnRequest(
            prompt=str(event.get("prompt") or ""),
            messages=messages,
            tools=self._candidates() if surface_known else None,
            sessionId=session,
            agentId=_str(ctx.get("agentId")),
            runId=run_id,
            state=state_from_openclaw_ctx(ctx),
        )
        if surface_known and (new_session or stale):
            # Let the host send its whole surface this turn, so llm_input shows every tool.
            request = request.model_copy(update={"tools": None})
            resolution = await self.resolver.resolve(request)
            resolution = resolution.model_copy(
                update={"reason_codes": ("surface_refresh_abstain",), "summary": "refresh"}
            )
        else:
            resolution = await self.resolver.resolve(request)
        if resolution.tools_allow is None and run_id is not None:
            self.surface.abstained_runs[run_id] = None
            if len(self.surface.abstained_runs) > MAX_SESSIONS_TRACKED:
                self.surface.abstained_runs.pop(next(iter(self.surface.abstained_runs)))
        return _answer(resolution)


def _answer(resolution: Resolution) -> dict[str, Any]:
    data = as_dict(resolution)
    return {
        "toolsAllow": resolution.tools_allow,
        "source": resolution.source,
        "reasonCodes": list(resolution.reason_codes),
        "classifier": data["classifier"],
    }


def _error(request_id: Any, code: str, message: str) -> dict[str, Any]:
    return {"id": request_id, "error": {"code": code, "message": message}}


def _str(value: Any) -> str | None:
    return value if isinstance(value, str) and value else None


async def serve(
    reader: asyncio.StreamReader, write: Callable[[bytes], None], sidecar: Sidecar
) -> None:
    """Read frames until EOF; answer each (resolves concurrently, configure in order)."""
    pending: set[asyncio.Task[None]] = set()

    async def answer(frame: Mapping[str, Any]) -> None:
        response = await sidecar.handle(frame)
        write(orjson.dumps(response) + b"\n")

    while True:
        line = await reader.readline()
        if not line:
            break
        if not line.strip():
            continue
        try:
            frame = orjson.loads(line)
        except orjson.JSONDecodeError:
            logger.warning("resolver sidecar: ignoring a line that is not JSON")
            continue
        if not isinstance(frame, dict):
            continue
        if frame.get("method") == "configure":
            await answer(frame)  # applied before any later frame
            continue
        task = asyncio.create_task(answer(frame))
        pending.add(task)
        task.add_done_callback(pending.discard)
    if pending:
        await asyncio.wait(pending, timeout=5)


async def main_async() -> None:
    loop = asyncio.get_running_loop()
    reader = asyncio.StreamReader(limit=32 * 1024 * 1024)
    await loop.connect_read_pipe(lambda: asyncio.StreamReaderProtocol(reader), sys.stdin)
    with contextlib.suppress(NotImplementedError, RuntimeError):
        loop.add_signal_handler(signal.SIGTERM, reader.feed_eof)  # finish in-flight, then exit
    out = sys.stdout.buffer

    def write(data: bytes) -> None:
        out.write(data)
        out.flush()

    sidecar = Sidecar()
    try:
        await serve(reader, write, sidecar)
    finally:
        sidecar.shutdown()


def main() -> int:
    """Entry point: ``python -m resolver.hosts.openclaw``."""
    logging.basicConfig(
        level=os.environ.get("RESOLVER_LOG_LEVEL", "WARNING"),
        stream=sys.stderr,
        format="resolver: %(message)s",
    )
    with contextlib.suppress(KeyboardInterrupt):
        asyncio.run(main_async())
    return 0
