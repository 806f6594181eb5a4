"""The Python side of the OpenClaw extension: newline-delimited JSON over stdio.

Protocol: ``docs/openclaw-protocol.md``. Frames only on stdout, logs on stderr. Several
``resolve`` requests are in flight at once (one per session), answered by id; ``configure`` is
applied before any later frame. Every fault answers ``toolsAllow: null`` (abstain) or an error
frame, which the extension also turns into abstain.

The candidate surface (OpenClaw sends no tool list with the hook):

- the resolver abstains (``surface_unknown_abstain``) until the host has shown its surface
  through ``llm_input`` (``observe_surface``); what it has seen is kept in
  ``surfaceStateFile`` so a one-shot host process (``openclaw agent --local``) starts with it;
- the candidates are then the shipped catalog's OpenClaw tools plus every tool the host has
  shown (a union per process: after a narrowed turn ``llm_input`` shows only the narrowed set);
- it stays current: once the last full view is older than ``SURFACE_REFRESH_S`` (ten
  minutes), the next turn abstains (``surface_refresh_abstain``) so the host sends — and
  shows — its whole surface. A tool that appears later (a new MCP server, another plugin) is
  therefore offered within ten minutes; `resolver install openclaw` or deleting the state file
  makes the next turn refresh at once.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import signal
import sys
import tempfile
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
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
MAX_SESSIONS_SAVED = 2_000


@dataclass
class SurfaceView:
    """What this process knows of the host's tool surface (persisted between runs).

    One-shot hosts (``openclaw agent --local``) start a new sidecar for every turn; without
    the state file each of them would abstain for want of a surface.
    """

    tools: dict[str, str] = field(default_factory=dict)
    """name -> description, the union of every surface the host showed."""
    last_full_view: float | None = None
    """Wall time the host last showed an un-narrowed surface (a turn the resolver abstained on)."""
    sessions: dict[str, None] = field(default_factory=dict)
    abstained_runs: dict[str, None] = field(default_factory=dict)
    path: Path | None = None

    def observe(self, tools: list[dict[str, Any]], run_id: str | None, now: float) -> int:
        for tool in tools:
            name = tool.get("name") if isinstance(tool, dict) else None
            if isinstance(name, str) and name:
                desc = tool.get("description")
                self.tools[name] = desc if isinstance(desc, str) else self.tools.get(name, "")
        if run_id is None or run_id in self.abstained_runs or self.last_full_view is None:
            self.last_full_view = now
        return len(self.tools)

    def remember_session(self, session: str) -> bool:
        """Record a session; True when it was not known before."""
        if session in self.sessions:
            return False
        self.sessions[session] = None
        while len(self.sessions) > MAX_SESSIONS_TRACKED:
            self.sessions.pop(next(iter(self.sessions)))
        return True

    @classmethod
    def load(cls, path: Path | None) -> SurfaceView:
        """The saved view, or an empty one (a missing or unreadable file is not an error)."""
        view = cls(path=path)
        if path is None:
            return view
        try:
            data = orjson.loads(path.read_bytes())
        except FileNotFoundError:
            return view
        except (OSError, orjson.JSONDecodeError) as exc:
            logger.warning("resolver sidecar: ignoring surface state %s (%s)", path, exc)
            return view
        if not isinstance(data, dict) or data.get("version") != 1:
            return view
        tools = data.get("tools")
        if isinstance(tools, dict):
            view.tools = {k: v for k, v in tools.items() if isinstance(v, str)}
        seen = data.get("lastFullView")
        view.last_full_view = float(seen) if isinstance(seen, int | float) else None
        sessions = data.get("sessions")
        if isinstance(sessions, list):
            view.sessions = dict.fromkeys(s for s in sessions if isinstance(s, str))
        return view

    def save(self) -> None:
        """Write the view atomically (best effort: a failure is logged, never raised)."""
        if self.path is None:
            return
        payload = {
            "version": 1,
            "tools": self.tools,
            "lastFullView": self.last_full_view,
            "sessions": list(self.sessions)[-MAX_SESSIONS_SAVED:],
        }
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            fd, tmp = tempfile.mkstemp(prefix=f".{self.path.name}.", dir=self.path.parent)
            with os.fdopen(fd, "wb") as handle:
                handle.write(orjson.dumps(payload))
            os.replace(tmp, self.path)
        except OSError as exc:
            logger.warning("resolver sidecar: cannot save surface state %s (%s)", self.path, exc)


class Sidecar:
    """Serves frames; `handle` maps one request frame to one response frame."""

    def __init__(self, *, clock: Callable[[], float] = time.time) -> None:
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
                self.surface.save()
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
        state_file = config.surface_state_file
        self.surface = SurfaceView.load(Path(state_file).expanduser() if state_file else None)
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
        if session is not None:
            self.surface.remember_session(session)
        stale = surface_known and now - (self.surface.last_full_view or now) > SURFACE_REFRESH_S
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
        if stale:
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
    """Read frames until EOF; answer each. Resolves run concurrently; every other frame
    (configure, observe_surface, observe_tool_calls) is applied in order before the next."""
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
        if frame.get("method") != "resolve":
            await answer(frame)  # configure/observe_*: cheap, applied before any later frame
            continue
        task = asyncio.create_task(answer(frame))
        pending.add(task)
        task.add_done_callback(pending.discard)
        await asyncio.sleep(0)  # the resolve takes its view of the surface before the next frame
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
