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
- it stays current: each ``resolve`` may carry ``host.surfaceKey``, a fingerprint of the
  host's live config; a turn whose key differs from the one the view was taken under abstains
  (``surface_refresh_abstain``) so the host sends — and shows — its whole surface. Otherwise
  the view is re-taken once it is older than ``SURFACE_REFRESH_KEYED_S`` (an hour), or
  ``SURFACE_REFRESH_S`` (ten minutes) for a host that sends no key. A tool that appears later
  (another plugin) is therefore offered from the turn after the config changed;
  `resolver install openclaw` or deleting the state file makes the next turn refresh at once.

Controls (docs/openclaw-protocol.md, "Controls"): ``refresh`` makes a session's next turn
keep the full surface (re-taking the whole view) and the turn after it be classified afresh
(no decision reuse); ``clear_reuse`` drops one session's reusable decisions, or all. The
extension's ``/resolver refresh|clear`` chat command sends them; a turn whose user message is
exactly ``/resolver refresh`` or ``/resolver clear [all]`` (a host that does not dispatch
plugin commands, such as ``openclaw agent --message``) is handled here the same way, and that
turn keeps the full surface.
"""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import json
import logging
import os
import re
import signal
import sys
import tempfile
import threading
import time
from collections.abc import AsyncIterator, Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

import orjson
from pydantic import ValidationError

from ..._config import ResolverConfig, load_config
from ..._errors import ConfigError
from ..._files import read_regular
from ..._limits import (
    MAX_CANDIDATES,
    MAX_DESCRIPTION_CHARS,
    MAX_MESSAGES,
    MAX_PARAMETERS_CHARS,
    clean,
    clip,
)
from ..._pipeline import Resolver, abstain, as_dict, settle_heap
from ..._state import state_from_openclaw_ctx
from ..._surface import default_surface
from ..._types import Message, ReasonCode, Resolution, Timings, ToolInfo, TurnRequest
from ._mcp import MAX_SERVERS, MAX_STATE_BYTES, known_servers, safe_server_names

if TYPE_CHECKING:
    from ...telemetry import TelemetryObserver

logger = logging.getLogger("resolver")

SURFACE_REFRESH_S = 600.0
"""Age of the last full view after which a turn re-takes it, when the host sends no surface key."""
SURFACE_REFRESH_KEYED_S = 3600.0
"""The same when the host sends a surface key (a fingerprint of its config): a config change
refreshes at once, so the age rule only catches what the config does not show."""
MAX_SURFACE_KEY_CHARS = 128
MCP_SYNC_RETRY_S = 600.0
"""``mcpAutoSync``: the same set of unknown MCP servers is listed again at most this often
(a server that fails to start, or one reached by URL, which is never probed)."""
MAX_SESSIONS_TRACKED = 10_000
MAX_SESSIONS_SAVED = 2_000
NULL_MEANS_OFF = frozenset({"keywordCacheFile", "catalogOverridesFile", "surfaceStateFile"})
"""Config keys whose null is kept (it turns the file off); other nulls mean "unset"."""
CONTROL_PROMPT = re.compile(r"/resolver\s+(refresh|clear)(?:\s+(all))?", re.IGNORECASE)
"""A user message that is only this is a control, not a request (see the module docstring)."""
_ENVELOPE = re.compile(r"^\[[^\]\n]{0,200}\]\s*")
"""A host's bracketed prefix on the user's text (a timestamp, a channel tag)."""


@dataclass
class PendingRefresh:
    """What a session's next turns still owe to a `refresh` request."""

    surface: bool
    """The next turn keeps the full surface, so the host shows (and we see) all of it."""
    reuse: bool = True
    """The next classified turn skips decision reuse."""


@dataclass
class SurfaceView:
    """What this process knows of the host's tool surface (persisted between runs).

    One-shot hosts (``openclaw agent --local``) start a new sidecar for every turn; without
    the state file each of them would abstain for want of a surface.
    """

    tools: dict[str, str] = field(default_factory=dict)
    """name -> description, the union of every surface the host showed."""
    params: dict[str, str] = field(default_factory=dict)
    """name -> the words of its parameter schema (`ToolInfo.parameters`), when shown."""
    last_full_view: float | None = None
    """Wall time the host last showed an un-narrowed surface (a turn the resolver abstained on)."""
    sessions: dict[str, None] = field(default_factory=dict)
    abstained_runs: dict[str, str | None] = field(default_factory=dict)
    """Runs the resolver abstained on (their `llm_input` shows the whole surface) -> the
    host's surface key when they were resolved."""
    surface_key: str | None = None
    """The host's surface key (``host.surfaceKey`` of a `resolve`) when the last full view
    was taken; a turn carrying another key re-takes the view."""
    agents: dict[str, None] = field(default_factory=dict)
    """Agents (``ctx.agentId``) whose whole surface was seen under ``surface_key``: agents
    may have their own tool policies, so each one's first turn under a key re-takes the view."""
    mcp_servers: dict[str, Any] = field(default_factory=dict)
    """What ``resolver openclaw sync-mcp`` found per MCP server (``mcpServers`` in the file)."""
    path: Path | None = None
    lock: threading.Lock = field(default_factory=threading.Lock, repr=False, compare=False)
    """Held while the file is merged and written (`save`, the background MCP sync)."""
    stamp: tuple[int, int] | None = None
    """(mtime_ns, size) of the file when last read or written: another writer changed it if
    the file's differs (`reload_if_changed`)."""

    def observe(
        self,
        tools: list[dict[str, Any]],
        run_id: str | None,
        now: float,
        key: str | None = None,
        agent: str | None = None,
    ) -> int:
        """Add what the host showed; a whole surface (a run we abstained on, or one we cannot
        place) also stamps the view's time, surface key (``key``: the latest one seen, used
        when the run's own is not recorded) and the agent it was shown to."""
        for tool in tools[:MAX_CANDIDATES]:
            name = tool.get("name") if isinstance(tool, dict) else None
            if (
                isinstance(name, str)
                and name
                and (name in self.tools or len(self.tools) < MAX_CANDIDATES)
            ):
                desc = tool.get("description")
                self.tools[clean(name)] = (
                    clip(desc, MAX_DESCRIPTION_CHARS)
                    if isinstance(desc, str)
                    else self.tools.get(name, "")
                )
                words = tool.get("parameters")
                if isinstance(words, str) and words:
                    self.params[clean(name)] = clip(words, MAX_PARAMETERS_CHARS)
        if run_id is None or run_id in self.abstained_runs or self.last_full_view is None:
            self.last_full_view = now
            stamped = (self.abstained_runs.get(run_id) if run_id else None) or key
            if stamped != self.surface_key:
                self.agents.clear()  # seen under another config
            self.surface_key = stamped
            if agent is not None:
                self.agents[agent] = None
                while len(self.agents) > MAX_SESSIONS_SAVED:
                    self.agents.pop(next(iter(self.agents)))
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
            raw, st = read_regular(path, MAX_STATE_BYTES)
            view.stamp = (st.st_mtime_ns, st.st_size)
            data = orjson.loads(raw)
        except FileNotFoundError:
            return view
        except (OSError, ValueError) as exc:
            logger.warning("resolver sidecar: ignoring surface state %s (%s)", path, exc)
            return view
        if not isinstance(data, dict) or data.get("version") != 1:
            return view
        servers = data.get("mcpServers")
        if isinstance(servers, dict):
            view.mcp_servers = {k: v for k, v in servers.items() if isinstance(v, dict)}
        tools = data.get("tools")
        if isinstance(tools, dict):  # bounded like a surface the host shows (`observe`)
            kept = ((k, v) for k, v in tools.items() if isinstance(k, str) and isinstance(v, str))
            view.tools = {
                clean(k): clip(v, MAX_DESCRIPTION_CHARS)
                for k, v in itertools.islice(kept, MAX_CANDIDATES)
            }
        params = data.get("params")
        if isinstance(params, dict):
            view.params = {k: v for k, v in params.items() if isinstance(v, str)}
        seen = data.get("lastFullView")
        view.last_full_view = float(seen) if isinstance(seen, int | float) else None
        key = data.get("surfaceKey")
        view.surface_key = (
            key if isinstance(key, str) and len(key) <= MAX_SURFACE_KEY_CHARS else None
        )
        sessions = data.get("sessions")
        if isinstance(sessions, list):
            view.sessions = dict.fromkeys(s for s in sessions if isinstance(s, str))
        agents = data.get("agents")
        if isinstance(agents, list):
            named = (a for a in agents if isinstance(a, str) and len(a) <= 256)
            view.agents = dict.fromkeys(itertools.islice(named, MAX_SESSIONS_SAVED))
        return view

    def reload_if_changed(self) -> bool:
        """Merge in what another writer (``resolver openclaw sync-mcp``) put in the file since
        this process last read or wrote it: its tools are added (a server it re-synced loses
        the tools it no longer lists), its ``mcpServers`` replace ours. One ``stat`` when
        nothing changed. True when something was merged."""
        if self.path is None:
            return False
        try:
            if _stamp(self.path) == self.stamp:
                return False
        except OSError:
            return False
        other = SurfaceView.load(self.path)
        self.stamp = other.stamp
        for server, info in other.mcp_servers.items():
            old = self.mcp_servers.get(server)
            if isinstance(old, dict) and old != info:
                gone = set(old.get("tools") or []) - set(info.get("tools") or [])
                for name in gone:
                    self.tools.pop(name, None)
                    self.params.pop(name, None)
        self.mcp_servers = other.mcp_servers
        before = (len(self.tools), len(self.params))
        for name, description in other.tools.items():
            if name in self.tools or len(self.tools) < MAX_CANDIDATES:
                self.tools[name] = description
        self.params.update({k: v for k, v in other.params.items() if k in self.tools})
        if self.last_full_view is None:
            self.last_full_view = other.last_full_view
        return (len(self.tools), len(self.params)) != before or bool(other.mcp_servers)

    def save(self) -> None:
        """Write the view atomically (best effort: a failure is logged, never raised). What
        another writer changed since our last read is merged first (`reload_if_changed`)."""
        path = self.path
        if path is None:
            return
        with self.lock:
            self.reload_if_changed()
            payload = {
                "version": 1,
                "tools": self.tools,
                "params": self.params,
                "lastFullView": self.last_full_view,
                "surfaceKey": self.surface_key,
                "agents": list(self.agents),
                "sessions": list(self.sessions)[-MAX_SESSIONS_SAVED:],
                "mcpServers": self.mcp_servers,
            }
            try:
                path.parent.mkdir(parents=True, exist_ok=True)
                fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", dir=path.parent)
                with os.fdopen(fd, "wb") as handle:
                    handle.write(orjson.dumps(payload))
                os.replace(tmp, path)
                self.stamp = _stamp(path)
            except OSError as exc:
                logger.warning("resolver sidecar: cannot save surface state %s (%s)", path, exc)

    def unknown_mcp_servers(self, configured: list[tuple[str, bool]]) -> list[str]:
        """The enabled servers of ``configured`` (name, enabled; declaration order) none of
        whose tools this view knows."""
        if not configured:
            return []
        safe = safe_server_names(name for name, _ in configured)
        known = known_servers(self.tools, self.mcp_servers)
        return [name for name, on in configured if on and safe[name] not in known]


def _stamp(path: Path) -> tuple[int, int]:
    st = path.stat()
    return (st.st_mtime_ns, st.st_size)


class Sidecar:
    """Serves frames; `handle` maps one request frame to one response frame."""

    def __init__(self, *, clock: Callable[[], float] = time.time) -> None:
        self.clock = clock
        self.config: ResolverConfig | None = None
        self.resolver: Resolver | None = None
        self.surface = SurfaceView()
        self._defaults = [t.name for t in default_surface()]
        self._last_candidates: tuple[object, tuple[ToolInfo, ...]] = (None, ())
        self._background: set[asyncio.Future[None]] = set()
        self._primed: int | None = None
        """The surface the LLM prompt prefix was last primed for (``llmWarmUp``)."""
        self._pending: dict[str, PendingRefresh] = {}
        """Session ids/keys -> what a `refresh` still owes to their next turns."""
        self.mcp_servers: list[tuple[str, bool]] = []
        """OpenClaw's ``mcp.servers`` (name, enabled), as the extension read them."""
        self._mcp_warned = False
        self._mcp_sync: asyncio.Future[None] | None = None
        """The background listing of unknown MCP servers' tools (``mcpAutoSync``), if one runs."""
        self._mcp_sync_tried: dict[tuple[str, ...], float] = {}
        self._surface_key: str | None = None
        """The host's surface key of the latest `resolve` that carried one."""
        self._search_setting: bool | None = None
        """OpenClaw's ``tools.toolSearch`` as the extension read it (None: unset, on by
        default in 2026.9.x; False: off)."""
        self._search_shown: bool | None = None
        """Whether the last *whole* surface the host showed (``llm_input`` of a turn the
        resolver did not narrow) carried its tool-search control; None before one was seen. A
        narrowed turn's ``llm_input`` lists what ``toolsAllow`` kept and may leave the control
        out (it did on the 15-server Gateway of the MCP e2e run)."""

    # ---- controls (refresh, clear_reuse) ------------------------------------------------

    def refresh(self, params: Mapping[str, Any]) -> dict[str, Any]:
        """The next turn of one session (or, with ``all``, of every session) keeps the full
        surface and the turn after it is classified afresh; ``surface: false`` only skips
        decision reuse on the next turn."""
        surface = params.get("surface") is not False
        if params.get("all") is True:
            if surface and self.surface.last_full_view is not None:
                # stale now: the next turn re-takes the view (by age, and by key)
                self.surface.last_full_view = 0.0
                self.surface.surface_key = None
                self.surface.save()
            cleared = self.clear_reuse({"all": True})["cleared"]
            return {"ok": True, "sessions": "all", "surface": surface, "cleared": cleared}
        keys = _session_keys(params)
        pending = PendingRefresh(surface=surface)
        for key in keys:
            self._pending.pop(key, None)
            self._pending[key] = pending  # one object: the first id that comes consumes it
        while len(self._pending) > MAX_SESSIONS_TRACKED:
            self._pending.pop(next(iter(self._pending)))
        return {"ok": True, "sessions": keys, "surface": surface}

    def clear_reuse(self, params: Mapping[str, Any]) -> dict[str, Any]:
        """Drop the reusable decisions of one session (its id and key) or, with ``all``, of
        every session; ``cleared`` counts them."""
        everyone = params.get("all") is True
        keys = [] if everyone else _session_keys(params)
        if self.resolver is None:
            return {"ok": True, "cleared": 0}
        if everyone:
            return {"ok": True, "cleared": self.resolver.clear_reuse(None)}
        return {"ok": True, "cleared": sum(self.resolver.clear_reuse(k) for k in keys)}

    def _take_pending(self, ctx: Mapping[str, Any]) -> PendingRefresh | None:
        for key in (_str(ctx.get("sessionId")), _str(ctx.get("sessionKey"))):
            if key is not None and key in self._pending:
                return self._pending[key]
        return None

    def _drop_pending(self, pending: PendingRefresh) -> None:
        for key in [k for k, v in self._pending.items() if v is pending]:
            del self._pending[key]

    async def handle(self, frame: Mapping[str, Any]) -> dict[str, Any]:
        request_id = frame.get("id")
        method = frame.get("method")
        params = frame.get("params") if isinstance(frame.get("params"), dict) else {}
        assert isinstance(params, dict)
        try:
            if method == "configure":
                result = await self.configure(params.get("config") or {}, params.get("host"))
            elif method == "resolve":
                result = await self.resolve(
                    params.get("event") or {}, params.get("ctx") or {}, params.get("host")
                )
            elif method == "observe_surface":
                raw_tools = params.get("tools")
                tools: list[dict[str, Any]] = raw_tools if isinstance(raw_tools, list) else []
                ctx = params.get("ctx") or {}
                raw_run = ctx.get("runId") if isinstance(ctx, dict) else None
                run_id = raw_run if isinstance(raw_run, str) else None
                before = len(self.surface.tools)
                if run_id is None or run_id in self.surface.abstained_runs:
                    self._search_shown = self._shows_search(tools)  # a whole surface
                known = self.surface.observe(
                    tools, run_id, self.clock(), self._surface_key, _agent(ctx)
                )
                if known != before:
                    self._warm_soon()
                self.surface.save()
                result = {"known": known}
            elif method == "observe_tool_calls":
                result = {"ok": True, "recorded": self.observe_tool_calls(params)}
            elif method == "refresh":
                result = self.refresh(params)
            elif method == "clear_reuse":
                result = self.clear_reuse(params)
            elif method == "ping":
                result = {"pong": True}
            else:
                return _error(request_id, "unknown_method", f"unknown method {method!r}")
        except ConfigError as exc:
            return _error(request_id, "invalid_config", str(exc))
        except InvalidParams as exc:
            return _error(request_id, "invalid_params", str(exc))
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
        """At exit (EOF, SIGTERM): save what the keyword cache learned, write every held
        shadow line and what is queued; stop the semantic extra's builds (the warm-up thread
        ends at its next chunk rather than holding the exit until a surface is embedded)."""
        if self.resolver is not None:
            self.resolver.stop_background()
            self.resolver.cache.save_quietly()
        for observer in self._telemetry():
            observer.close(timeout=5)

    async def configure(self, raw: Mapping[str, Any], host: Any = None) -> dict[str, Any]:
        """Apply the plugin config. ``host`` is what the extension read from OpenClaw's own
        config: ``mcpServers``, a list of ``{name, enabled}`` in declaration order."""
        self.mcp_servers, self._search_setting, self._mcp_warned = [], None, False
        self._adopt_host(host)
        data = {k: v for k, v in raw.items() if v is not None or k in NULL_MEANS_OFF}
        config = load_config(data, source="plugins.entries.openclaw-tool-resolver.config")
        from ...cli._common import build_resolver  # one factory for CLI and hosts

        self.config = config
        if self.resolver is not None:
            self.resolver.stop_background()  # its builds are for surfaces it will not score
            self.resolver.cache.save_quietly()  # what the old resolver learned is kept
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
                # the index and this process's modules: out of every later full collection
                frozen = settle_heap()
                logger.debug(
                    "resolver sidecar: warmed %d tools, %d objects frozen", len(tools), frozen
                )
            except Exception:  # warming is an optimisation; the turn builds the index itself
                logger.debug("resolver sidecar: warm-up failed", exc_info=True)
                return
            for observer in self._telemetry():
                observer.note_warm(tools)  # the next turn on this surface is a warm one

        task = asyncio.ensure_future(asyncio.to_thread(work))
        self._background.add(task)
        task.add_done_callback(self._background.discard)
        if self.config is not None and self.config.llm_warm_up and self.surface.tools:
            self._prime_soon(resolver, tools)

    def _prime_soon(self, resolver: Resolver, tools: list[ToolInfo]) -> None:
        """``llmWarmUp``: send the classifier prompt's prefix for this surface once, in the
        background (a turn meanwhile goes to the endpoint as usual)."""
        key = hash(tuple((t.name, t.description) for t in tools))
        if key == self._primed:
            return
        self._primed = key

        async def work() -> None:
            try:
                seconds = await resolver.prime(tools)
            except Exception as exc:  # an optimisation: the turns still work without it
                logger.warning("resolver sidecar: LLM warm-up failed: %s", exc)
                return
            if seconds is not None:
                logger.info("resolver sidecar: LLM prompt prefix primed in %.1f s", seconds)

        task = asyncio.ensure_future(work())
        self._background.add(task)
        task.add_done_callback(self._background.discard)

    def _search_names(self) -> tuple[str, ...]:
        config = self.resolver.config if self.resolver is not None else self.config
        return config.host_search_tools if config is not None else ()

    def _search_live(self) -> bool:
        """The host's own tool search is on: not turned off in its config, and its control
        is in the last whole surface it showed (or, before one, anywhere in the view: a host
        without Tool Search never shows one)."""
        if self._search_setting is False:
            return False
        if self._search_shown is not None:
            return self._search_shown
        return any(name in self.surface.tools for name in self._search_names())

    def _shows_search(self, tools: list[Any]) -> bool:
        search = self._search_names()
        return any(isinstance(t, dict) and t.get("name") in search for t in tools[:MAX_CANDIDATES])

    def _candidates(self) -> list[ToolInfo]:
        view = self.surface
        # The same surface as last turn: the same `ToolInfo` objects (frozen), so the resolver
        # sees the very tools it bounded and prepared then (`SameTools`), and no model is
        # built per tool per turn. The key is three C-level copies of what the view holds.
        stale = () if self._search_live() else self._search_names()
        key = (
            tuple(self._defaults),
            tuple(view.tools.items()),
            tuple(view.params.items()),
            stale,
        )
        last_key, last = self._last_candidates
        if key == last_key:
            return list(last)
        names = dict.fromkeys(self._defaults)
        names.update(dict.fromkeys(view.tools))
        for name in stale:  # a search control the host no longer shows
            names.pop(name, None)
        tools = [
            ToolInfo(name=n, description=view.tools.get(n, ""), parameters=view.params.get(n, ""))
            for n in names
        ]
        self._last_candidates = (key, tuple(tools))
        return tools

    def _adopt_host(self, host: Any) -> str | None:
        """What the extension read from OpenClaw's live config for this turn (``host`` of a
        `resolve`; the config can change without a new `configure`): the MCP servers and the
        Tool Search setting replace the configure-time ones when present. Returns the surface
        key (a fingerprint of the config, never its values), or None."""
        if not isinstance(host, dict):
            return None
        if "mcpServers" in host:
            servers = host_mcp_servers(host)
            if servers != self.mcp_servers:
                self.mcp_servers = servers
                self._mcp_warned = False
        if "toolSearch" in host:
            setting = host.get("toolSearch")
            self._search_setting = setting if isinstance(setting, bool) else None
        key = host.get("surfaceKey")
        if isinstance(key, str) and 0 < len(key) <= MAX_SURFACE_KEY_CHARS:
            self._surface_key = key
            return key
        return None

    def _view_is_stale(self, key: str | None, now: float, agent: str | None = None) -> bool:
        """The view must be re-taken this turn: the host's surface key differs from the one
        the view was taken under, this agent's surface was not seen under it, or the view is
        older than the age rule."""
        if self.surface.last_full_view is None:
            return False
        if key is not None and key != self.surface.surface_key:
            return True
        if key is not None and agent is not None and agent not in self.surface.agents:
            return True
        limit = SURFACE_REFRESH_KEYED_S if key is not None else SURFACE_REFRESH_S
        return now - self.surface.last_full_view > limit

    async def resolve(
        self, event: Mapping[str, Any], ctx: Mapping[str, Any], host: Any = None
    ) -> dict[str, Any]:
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
        if self.surface.reload_if_changed():  # `resolver openclaw sync-mcp` wrote the file
            self._warm_soon()
        surface_known = self.surface.last_full_view is not None
        if session is not None:
            self.surface.remember_session(session)
        key = self._adopt_host(host)
        stale = self._view_is_stale(key, now, _agent(ctx))
        control = control_prompt(event)
        if control is not None:
            verb, everyone = control
            keys = _session_keys({"ctx": dict(ctx)}, required=False)
            target: dict[str, Any] = {"all": True} if everyone else {"sessionIds": keys}
            if everyone or keys:
                if verb == "refresh":
                    self.refresh({**target, "surface": False})
                else:
                    self.clear_reuse(target)
                stale = surface_known  # this turn keeps the full surface (the view is re-taken)
        pending = self._take_pending(ctx)
        refresh = False
        if pending is not None:
            if pending.surface or stale or not surface_known:
                stale = surface_known  # this turn shows the host's whole surface
                pending.surface = False
            else:
                refresh = pending.reuse  # the turn after: classified afresh
                self._drop_pending(pending)
        messages = host_messages(event.get("messages"))
        request = TurnRequest(
            prompt=str(event.get("prompt") or ""),
            messages=messages,
            tools=self._candidates() if surface_known else None,
            sessionId=session,
            agentId=_str(ctx.get("agentId")),
            runId=run_id,
            state=state_from_openclaw_ctx(ctx),
            refresh=refresh,
        )
        unknown_mcp = self.surface.unknown_mcp_servers(self.mcp_servers) if surface_known else []
        if self.resolver.config.enabled and (stale or unknown_mcp):
            # stale: let the host send its whole surface this turn, so llm_input shows every
            # tool. unknown_mcp: a configured MCP server's tools are not known (llm_input does
            # not list MCP tools), and a narrowed answer would remove them all. The observers
            # (telemetry) record the turn with the reason it abstained.
            code: ReasonCode = "surface_refresh_abstain" if stale else "mcp_surface_unknown_abstain"
            syncing = bool(unknown_mcp) and self._sync_mcp_soon(unknown_mcp, now)
            if not stale and not self._mcp_warned:
                self._mcp_warned = True
                logger.warning(
                    "resolver sidecar: the tools of MCP server(s) %s are not known, so every "
                    "turn keeps the full surface; %s",
                    ", ".join(unknown_mcp[:10]),
                    "listing them in the background (as `resolver openclaw sync-mcp` does)"
                    if syncing
                    else "run `resolver openclaw sync-mcp` to list them",
                )
            request = request.model_copy(update={"tools": None})
            resolution = abstain("abstain", code, available=0, timings=Timings())
            for notify in self.resolver.observers:
                notify(request, resolution)
        else:
            resolution = await self.resolver.resolve(request)
        if resolution.tools_allow is None and run_id is not None:
            self.surface.abstained_runs[run_id] = key
            if len(self.surface.abstained_runs) > MAX_SESSIONS_TRACKED:
                self.surface.abstained_runs.pop(next(iter(self.surface.abstained_runs)))
        return _answer(resolution)

    def _sync_mcp_soon(self, servers: list[str], now: float) -> bool:
        """``mcpAutoSync``: list the tools of configured MCP servers the view does not know in
        a worker thread, as `resolver openclaw sync-mcp --server ...` does (OpenClaw's
        ``openclaw.json``, each server started and stopped); the view takes the file in when it
        is done. True while such a listing runs or was just started."""
        config = self.resolver.config if self.resolver is not None else None
        path = self.surface.path
        if config is None or not config.mcp_auto_sync or path is None:
            return False
        if self._mcp_sync is not None and not self._mcp_sync.done():
            return True
        key = tuple(sorted(servers))
        last = self._mcp_sync_tried.get(key)
        if last is not None and now - last < MCP_SYNC_RETRY_S:
            return False
        self._mcp_sync_tried[key] = now
        while len(self._mcp_sync_tried) > MAX_SERVERS:
            self._mcp_sync_tried.pop(next(iter(self._mcp_sync_tried)))
        lock = self.surface.lock

        def work() -> None:
            from ._install import sync_mcp

            try:
                report = sync_mcp(only=list(key), state_file=path, lock=lock)
            except Exception as exc:  # a bad openclaw.json, a server it does not name
                logger.warning("resolver sidecar: listing MCP tools failed: %s", exc)
                return
            for result in report.servers if report is not None else ():
                if result.error or result.skipped:
                    why = result.error or result.skipped
                    logger.warning("resolver sidecar: MCP server %s: %s", result.name, why)
                else:
                    logger.info(
                        "resolver sidecar: MCP server %s: %d tools listed",
                        result.name,
                        len(result.tools),
                    )

        def taken_in(_: asyncio.Future[None]) -> None:
            if self.surface.reload_if_changed():
                self._mcp_warned = False
                self._warm_soon()

        task = asyncio.ensure_future(asyncio.to_thread(work))
        self._mcp_sync = task
        self._background.add(task)
        task.add_done_callback(self._background.discard)
        task.add_done_callback(taken_in)
        return True


def host_mcp_servers(host: Any) -> list[tuple[str, bool]]:
    """``host.mcpServers`` of a configure frame -> (name, enabled) pairs (bounded; anything
    malformed is skipped: the guard then knows fewer servers, as before this field)."""
    raw = host.get("mcpServers") if isinstance(host, dict) else None
    out: list[tuple[str, bool]] = []
    for item in raw[:MAX_SERVERS] if isinstance(raw, list) else []:
        name = item.get("name") if isinstance(item, dict) else None
        if isinstance(name, str) and name and len(name) <= 200:
            out.append((name, item.get("enabled") is not False))
    return out


class InvalidParams(ValueError):
    """A control frame that does not say which session it is for."""


def _session_keys(params: Mapping[str, Any], *, required: bool = True) -> list[str]:
    """The session ids and keys a control names: ``sessionId``/``sessionKey`` in the params or
    in their ``ctx`` (a session is matched by either, as `resolve` reads it)."""
    ctx = params.get("ctx")
    sources = [params, ctx if isinstance(ctx, Mapping) else {}]
    keys = [
        key
        for source in sources
        for key in (_str(source.get("sessionId")), _str(source.get("sessionKey")))
        if key is not None
    ]
    listed = params.get("sessionIds")
    if isinstance(listed, list):
        keys += [k for k in map(_str, listed) if k is not None]
    if not keys and required:
        raise InvalidParams('name a session (sessionId, sessionKey or ctx) or pass "all": true')
    return list(dict.fromkeys(keys))


def control_prompt(event: Mapping[str, Any]) -> tuple[str, bool] | None:
    """``("refresh"|"clear", all)`` when the turn's user message is only a control command
    (``/resolver refresh``, ``/resolver clear [all]``), else None."""
    current = event.get("currentUserMessage")
    text = current if isinstance(current, str) and current.strip() else event.get("prompt")
    if not isinstance(text, str) or "/resolver" not in text.lower():
        return None
    lines = text.strip().splitlines()
    last = _ENVELOPE.sub("", lines[-1].strip()) if lines else ""
    match = CONTROL_PROMPT.fullmatch(last.strip())
    if match is None:
        return None
    return match.group(1).lower(), match.group(2) is not None


def host_messages(raw: Any) -> list[Message]:
    """The host's messages that are chat messages; one that is not (``{"role": 5}``,
    ``"tool_calls": 1``) is left out with a warning, and the turn goes on without it."""
    if not isinstance(raw, list):
        return []
    messages: list[Message] = []
    bad: list[str] = []
    for i, item in enumerate(raw[-MAX_MESSAGES:]):
        if not isinstance(item, dict):
            bad.append(f"[{i}] not an object")
            continue
        try:
            messages.append(Message.model_validate(item))
        except ValidationError as exc:
            first = exc.errors()[0]
            bad.append(f"[{i}] {'.'.join(str(p) for p in first['loc'])}: {first['msg']}")
    if bad:
        logger.warning(
            "resolver sidecar: %d message(s) left out (not chat messages): %s",
            len(bad),
            "; ".join(bad[:3]),
        )
    return messages


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


def _agent(ctx: Any) -> str | None:
    """``ctx.agentId`` when it is a plausible id (kept in the state file: bounded)."""
    agent = _str(ctx.get("agentId")) if isinstance(ctx, Mapping) else None
    return agent if agent is not None and len(agent) <= 256 else None


MAX_FRAME_BYTES = 8 * 1024 * 1024
"""A request line longer than this is answered with ``frame_too_large`` (and skipped whole);
the extension keeps its frames far below it (docs/openclaw-protocol.md, "Frame size")."""
MAX_ID_CHARS = 256
_HEAD_BYTES = 4096
_ID_IN_HEAD = re.compile(rb'^\s*\{\s*"id"\s*:\s*"([^"\\]{1,256})"')


@dataclass(frozen=True)
class Oversized:
    """A line over `MAX_FRAME_BYTES`: only its head is kept (to find the frame's id)."""

    head: bytes


async def read_lines(
    reader: asyncio.StreamReader, limit: int = MAX_FRAME_BYTES
) -> AsyncIterator[bytes | Oversized]:
    """The lines of `reader` (without the newline), whatever their length: a line over `limit`
    comes out as `Oversized` once its end is reached, and the reader goes on with the next."""
    buf = bytearray()
    head: bytes | None = None  # set while skipping the rest of an oversized line
    while True:
        chunk = await reader.read(1 << 16)
        if not chunk:
            if head is not None:
                yield Oversized(head)
            elif buf:
                yield bytes(buf)
            return
        start = 0
        while True:
            nl = chunk.find(b"\n", start)
            piece = chunk[start:] if nl < 0 else chunk[start:nl]
            if head is None:
                if len(buf) + len(piece) > limit:
                    head = bytes((buf + piece)[:_HEAD_BYTES])
                    buf.clear()
                else:
                    buf += piece
            if nl < 0:
                break
            if head is not None:
                yield Oversized(head)
                head = None
            else:
                yield bytes(buf)
                buf.clear()
            start = nl + 1


def frame_id(value: Any) -> str | None:
    """The id rule: a request is answered only when its id is a string of 1-256 characters
    (the extension's ids are ``"<child>.<seq>"``); a reply with any other id could not be
    matched to a call, so such a frame is logged and left unanswered."""
    return value if isinstance(value, str) and 0 < len(value) <= MAX_ID_CHARS else None


def _id_from_head(head: bytes) -> str | None:
    """The id of a frame that could not be parsed, when it is the first key (as the extension
    writes it), so the call gets an error reply instead of waiting out its deadline."""
    match = _ID_IN_HEAD.match(head)
    if match is None:
        return None
    try:
        return frame_id(match.group(1).decode("utf-8"))
    except UnicodeDecodeError:
        return None


def parse_frame(line: bytes) -> dict[str, Any] | str:
    """The frame in `line`, or why it is not one (``invalid_json``, ``not_an_object``).

    orjson first; a line it refuses is tried with the standard library, which accepts lone
    surrogate escapes (``"\\ud83d"``, half an emoji as ``JSON.stringify`` writes it); their
    strings are then cleaned (each lone surrogate becomes U+FFFD). Nesting too deep for either
    parser is ``invalid_json``."""
    try:
        data = orjson.loads(line)
    except orjson.JSONDecodeError:
        try:
            data = _clean_tree(json.loads(line.decode("utf-8", "replace")))
        except (ValueError, RecursionError):
            return "invalid_json"
    return data if isinstance(data, dict) else "not_an_object"


def _clean_tree(value: Any) -> Any:
    if isinstance(value, str):
        return clean(value)
    if isinstance(value, list):
        return [_clean_tree(v) for v in value]
    if isinstance(value, dict):
        return {clean(k): _clean_tree(v) for k, v in value.items()}
    return value


async def serve(
    reader: asyncio.StreamReader, write: Callable[[bytes], None], sidecar: Sidecar
) -> None:
    """Read frames until EOF; answer each. Resolves run concurrently; every other frame
    (configure, observe_surface, observe_tool_calls) is applied in order before the next.

    Every line that carries a valid id gets exactly one reply: a result, or an error frame
    (``invalid_frame``, ``frame_too_large``, ``unknown_method``, ...). A line that cannot be
    parsed is answered by the id found at its start, if any; a frame without a valid id is
    logged and dropped (`frame_id`)."""
    pending: set[asyncio.Task[None]] = set()

    def send(response: Mapping[str, Any]) -> None:
        try:
            data = orjson.dumps(response)
        except TypeError:  # a value no JSON encoder takes: the call still gets its answer
            logger.exception("resolver sidecar: cannot encode a reply")
            data = orjson.dumps(_error(response.get("id"), "internal_error", "unencodable"))
        write(data + b"\n")

    async def answer(frame: Mapping[str, Any]) -> None:
        send(await sidecar.handle(frame))

    async for line in read_lines(reader):
        if isinstance(line, Oversized):
            request_id = _id_from_head(line.head)
            logger.warning(
                "resolver sidecar: a frame over %d bytes was skipped (id %s)",
                MAX_FRAME_BYTES,
                request_id or "unknown",
            )
            if request_id is not None:
                send(_error(request_id, "frame_too_large", f"over {MAX_FRAME_BYTES} bytes"))
            continue
        if not line.strip():
            continue
        frame = parse_frame(line)
        if isinstance(frame, str):
            request_id = _id_from_head(line[:_HEAD_BYTES])
            logger.warning("resolver sidecar: unparsable frame (%s, id %s)", frame, request_id)
            if request_id is not None:
                send(_error(request_id, "invalid_frame", frame))
            continue
        if frame_id(frame.get("id")) is None:
            logger.warning("resolver sidecar: frame without a valid id dropped (ids are strings)")
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
    reader = asyncio.StreamReader()
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
