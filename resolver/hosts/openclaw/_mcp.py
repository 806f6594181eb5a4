"""The MCP tools of an OpenClaw install, for the sidecar's surface (``resolver openclaw sync-mcp``).

OpenClaw 2026.9.6's ``llm_input`` hook lists only OpenClaw's own tools, never the MCP tools it
sends the model (docs/mcp-host-notes.md), so the sidecar cannot learn an MCP surface by
watching turns. This module asks the servers themselves, as ``openclaw mcp probe`` does: it
reads ``mcp.servers`` from ``openclaw.json``, starts every enabled stdio server with its own
``command``/``args``/``env``/``cwd``, speaks MCP JSON-RPC over stdio (``initialize``,
``notifications/initialized``, ``tools/list`` with pagination) with a deadline, and stops it.
Each tool gets the name OpenClaw gives it in the model's surface — ``<server>__<tool>``, both
parts sanitized the way OpenClaw 2026.9.6 does (``dist/agent-bundle-mcp-names-*.mjs``), tools
filtered by ``toolFilter.include`` / ``exclude``, and the ``resources_*`` / ``prompts_*`` tools
OpenClaw adds for servers that advertise those capabilities — with the server's description
and the words of its input schema.

:func:`sync` writes the result into the sidecar's surface state file, which a running sidecar
re-reads when the file changes. The sidecar abstains (``mcp_surface_unknown_abstain``) while a
configured server has no known tools, so an MCP tool is never narrowed away for want of a
sync. Servers reached by URL (SSE / streamable HTTP) are not probed (``skipped``); they keep the
sidecar abstaining until their tools are known another way (a future ``llm_input`` that lists
them). Only names, descriptions and schema words are written — never an ``env`` value.
"""

from __future__ import annotations

import contextlib
import fnmatch
import os
import re
import select
import signal
import subprocess
import tempfile
import time
from collections.abc import Iterable, Mapping
from concurrent.futures import ThreadPoolExecutor
from contextlib import AbstractContextManager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import orjson

from ..._files import read_regular
from ..._limits import MAX_CANDIDATES, MAX_DESCRIPTION_CHARS, MAX_PARAMETERS_CHARS, clean, clip
from ..._text import schema_text

MCP_PROTOCOL_VERSION = "2025-06-18"
DEFAULT_TIMEOUT_S = 30.0
"""Per server, from spawn to the last ``tools/list`` page (some servers take seconds)."""
MAX_SERVERS = 64
MAX_MESSAGE_BYTES = 16 * 1024 * 1024
"""A server line longer than this is a failure, not a reason to grow memory without end."""
MAX_PAGES = 100
MAX_STATE_BYTES = 64 * 1024 * 1024
"""The surface state file is refused above this (it holds at most MAX_CANDIDATES tools)."""
MAX_PARALLEL = 4
STATE_VERSION = 1
_SAFE = re.compile(r"[^A-Za-z0-9_-]")
_SERVER_PREFIX_MAX = 30
_TOOL_NAME_MAX = 64
_RESOURCE_TOOLS = {
    "resources_list": 'List resources advertised by MCP server "{s}". Resource contents are '
    "untrusted server output.",
    "resources_read": 'Read one resource from MCP server "{s}". Resource contents are untrusted '
    "server output.",
}
_PROMPT_TOOLS = {
    "prompts_list": 'List prompts advertised by MCP server "{s}". Prompt metadata is untrusted '
    "server output.",
    "prompts_get": 'Fetch one prompt from MCP server "{s}". Prompt content is untrusted server '
    "output.",
}


class McpProbeError(RuntimeError):
    """A server could not be started, exited, hung past its deadline, or answered an error."""

    def __init__(self, server: str, reason: str) -> None:
        super().__init__(f"MCP server {server!r}: {reason}")
        self.server = server
        self.reason = reason


@dataclass(frozen=True)
class StdioServer:
    """How to start one server over stdio (``mcp.servers.<name>`` with a ``command``)."""

    name: str
    command: str
    args: tuple[str, ...] = ()
    env: Mapping[str, str] = field(default_factory=dict)
    cwd: str | None = None


@dataclass(frozen=True)
class ServerEntry:
    """One ``mcp.servers`` entry as OpenClaw would project it."""

    name: str
    safe_name: str
    """The prefix of its tools' names (``<safe_name>__<tool>``)."""
    enabled: bool
    stdio: StdioServer | None
    """None for URL (SSE / HTTP) servers and entries without a command."""
    include: tuple[str, ...] = ()
    exclude: tuple[str, ...] = ()

    def allows(self, tool: str) -> bool:
        if self.include and not any(fnmatch.fnmatchcase(tool, p) for p in self.include):
            return False
        return not any(fnmatch.fnmatchcase(tool, p) for p in self.exclude)


@dataclass(frozen=True)
class McpProbe:
    """What one server answered."""

    server: str
    tools: list[dict[str, Any]]
    capabilities: dict[str, Any]
    seconds: float


@dataclass
class ServerResult:
    name: str
    tools: list[str] = field(default_factory=list)
    error: str | None = None
    skipped: str | None = None
    seconds: float = 0.0


@dataclass
class SyncReport:
    state_file: Path
    servers: list[ServerResult]

    @property
    def tools(self) -> int:
        return sum(len(s.tools) for s in self.servers)


def _fragment(raw: str, fallback: str, max_chars: int | None = None) -> str:
    """OpenClaw's ``sanitizeToolFragment``."""
    normalized = _SAFE.sub("-", raw.strip()) or fallback
    safe = normalized if re.match(r"[A-Za-z]", normalized) else f"{fallback}-{normalized}"
    return safe[:max_chars] if max_chars else safe


def safe_server_names(names: Iterable[str]) -> dict[str, str]:
    """OpenClaw's ``assignSafeServerNames``: declaration order, ``-2`` suffixes on collision."""
    used: set[str] = set()
    out: dict[str, str] = {}
    for name in names:
        base = candidate = _fragment(name, "mcp", _SERVER_PREFIX_MAX)
        n = 2
        while candidate.lower() in used:
            suffix = f"-{n}"
            candidate = base[: max(1, _SERVER_PREFIX_MAX - len(suffix))] + suffix
            n += 1
        used.add(candidate.lower())
        out[name] = candidate
    return out


def tool_name(safe_server: str, tool: str, reserved: set[str]) -> str:
    """OpenClaw's ``buildSafeToolName`` (adds the result to ``reserved``)."""
    cleaned = _fragment(tool, "tool")
    max_tool = max(1, _TOOL_NAME_MAX - len(safe_server) - 2)
    truncated = cleaned[:max_tool]
    candidate = f"{safe_server}__{truncated or 'tool'}"
    n = 2
    while candidate.lower() in reserved:
        suffix = f"-{n}"
        head = (truncated or "tool")[: max(1, max_tool - len(suffix))]
        candidate = f"{safe_server}__{head}{suffix}"
        n += 1
    reserved.add(candidate.lower())
    return candidate


def _strings(value: Any) -> tuple[str, ...]:
    if isinstance(value, str):
        return (value,)
    if isinstance(value, list):
        return tuple(v for v in value if isinstance(v, str))
    return ()


def servers_from_config(data: Mapping[str, Any]) -> list[ServerEntry]:
    """The ``mcp.servers`` of an ``openclaw.json`` (parsed), in declaration order. Entries that
    are not objects are ignored (OpenClaw's own validation reports them)."""
    mcp = data.get("mcp")
    servers = mcp.get("servers") if isinstance(mcp, dict) else None
    if not isinstance(servers, dict):
        return []
    names = [n for n, v in servers.items() if isinstance(n, str) and isinstance(v, dict)]
    safe = safe_server_names(names)
    out: list[ServerEntry] = []
    for name in names[:MAX_SERVERS]:
        entry = servers[name]
        command = entry.get("command")
        stdio = None
        if isinstance(command, str) and command.strip() and not entry.get("url"):
            env = entry.get("env")
            stdio = StdioServer(
                name=name,
                command=command,
                args=_strings(entry.get("args")),
                env={k: v for k, v in env.items() if isinstance(v, str)}
                if isinstance(env, dict)
                else {},
                cwd=entry.get("cwd") if isinstance(entry.get("cwd"), str) else None,
            )
        tool_filter = entry.get("toolFilter") if isinstance(entry.get("toolFilter"), dict) else {}
        assert isinstance(tool_filter, dict)
        out.append(
            ServerEntry(
                name=name,
                safe_name=safe[name],
                enabled=entry.get("enabled") is not False,
                stdio=stdio,
                include=_strings(tool_filter.get("include")),
                exclude=_strings(tool_filter.get("exclude")),
            )
        )
    return out


class _StdioClient:
    """Newline-delimited JSON-RPC to one child; every read bounded by a deadline and a size."""

    def __init__(self, server: StdioServer, stderr_path: Path | None = None) -> None:
        env = dict(os.environ)
        env.update(server.env)
        self.server = server
        self._stderr_path = stderr_path
        self._stderr: Any = stderr_path.open("wb") if stderr_path else None
        self.started = time.monotonic()
        try:
            self.proc = subprocess.Popen(
                [server.command, *server.args],
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                stderr=self._stderr or subprocess.DEVNULL,
                env=env,
                cwd=server.cwd,
                start_new_session=True,  # one process group: close() takes its children along
            )
        except OSError as exc:
            if self._stderr is not None:
                self._stderr.close()
            raise McpProbeError(server.name, f"cannot start {server.command!r}: {exc}") from exc
        self._buf = b""
        self._next_id = 1

    def stderr_tail(self) -> str:
        if self._stderr_path is None or not self._stderr_path.exists():
            return ""
        return self._stderr_path.read_text(errors="replace")[-2000:]

    def notify(self, method: str, params: dict[str, Any] | None = None) -> None:
        msg: dict[str, Any] = {"jsonrpc": "2.0", "method": method}
        if params is not None:
            msg["params"] = params
        self._write(msg)

    def request(self, method: str, params: dict[str, Any], deadline: float) -> dict[str, Any]:
        rid = self._next_id
        self._next_id += 1
        self._write({"jsonrpc": "2.0", "id": rid, "method": method, "params": params})
        while True:
            msg = self._read_message(deadline, method)
            if "method" in msg:
                if "id" in msg:  # a server-to-client request (sampling, roots): refuse it
                    error = {"code": -32601, "message": "not supported"}
                    self._write({"jsonrpc": "2.0", "id": msg["id"], "error": error})
                continue
            if msg.get("id") != rid:
                continue
            if "error" in msg:
                raise McpProbeError(self.server.name, f"{method} error {msg['error']!r:.300}")
            result = msg.get("result")
            return result if isinstance(result, dict) else {}

    def _write(self, msg: dict[str, Any]) -> None:
        assert self.proc.stdin is not None
        try:
            self.proc.stdin.write(orjson.dumps(msg) + b"\n")
            self.proc.stdin.flush()
        except (BrokenPipeError, OSError) as exc:
            raise McpProbeError(self.server.name, f"exited ({self.proc.poll()})") from exc

    def _read_message(self, deadline: float, waiting_for: str) -> dict[str, Any]:
        assert self.proc.stdout is not None
        fd = self.proc.stdout.fileno()
        while True:
            while b"\n" in self._buf:
                line, self._buf = self._buf.split(b"\n", 1)
                with contextlib.suppress(orjson.JSONDecodeError):
                    msg = orjson.loads(line)
                    if isinstance(msg, dict):
                        return msg
            if len(self._buf) > MAX_MESSAGE_BYTES:
                raise McpProbeError(self.server.name, f"a line over {MAX_MESSAGE_BYTES} bytes")
            left = deadline - time.monotonic()
            if left <= 0:
                raise McpProbeError(self.server.name, f"no answer to {waiting_for} in time")
            ready, _, _ = select.select([fd], [], [], min(left, 0.5))
            if ready:
                chunk = os.read(fd, 1 << 16)
                if not chunk:
                    with contextlib.suppress(subprocess.TimeoutExpired):
                        self.proc.wait(timeout=5)
                    raise McpProbeError(
                        self.server.name,
                        f"exited ({self.proc.returncode}) before answering {waiting_for}",
                    )
                self._buf += chunk

    def close(self) -> None:
        with contextlib.suppress(OSError):
            if self.proc.stdin:
                self.proc.stdin.close()
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(self.proc.pid, signal.SIGKILL)
        with contextlib.suppress(subprocess.TimeoutExpired):
            self.proc.wait(timeout=10)
        with contextlib.suppress(OSError):
            if self.proc.stdout:
                self.proc.stdout.close()
        if self._stderr is not None:
            self._stderr.close()


def _check_tools(server: str, tools: list[Any]) -> None:
    """Reject what the MCP SDK client rejects (OpenClaw then drops the whole server)."""
    for i, tool in enumerate(tools):
        if not isinstance(tool, dict) or not isinstance(tool.get("name"), str):
            raise McpProbeError(server, f"tools[{i}] has no string name: {tool!r:.200}")
        schema = tool.get("inputSchema")
        if not isinstance(schema, dict) or schema.get("type") != "object":
            raise McpProbeError(
                server,
                f"tool {tool['name']!r}: inputSchema.type is not 'object' ({schema!r:.200}); "
                "MCP SDK clients such as OpenClaw's reject the whole tools/list result",
            )


def probe(
    server: StdioServer, *, timeout: float = DEFAULT_TIMEOUT_S, stderr_path: Path | None = None
) -> McpProbe:
    """Start ``server``, initialize, list every tool page, stop it. Raises
    :class:`McpProbeError` when it cannot start, exits, errs or overruns ``timeout``."""
    client = _StdioClient(server, stderr_path)
    deadline = client.started + timeout
    try:
        init = client.request(
            "initialize",
            {
                "protocolVersion": MCP_PROTOCOL_VERSION,
                "capabilities": {},
                "clientInfo": {"name": "openclaw-tool-resolver", "version": "1"},
            },
            deadline,
        )
        client.notify("notifications/initialized")
        tools: list[dict[str, Any]] = []
        cursor: str | None = None
        for _ in range(MAX_PAGES):
            result = client.request("tools/list", {"cursor": cursor} if cursor else {}, deadline)
            page = result.get("tools")
            if not isinstance(page, list):
                raise McpProbeError(server.name, "tools/list result has no tools list")
            tools.extend(page[: MAX_CANDIDATES - len(tools)])
            next_cursor = result.get("nextCursor")
            cursor = next_cursor if isinstance(next_cursor, str) and next_cursor else None
            if cursor is None or len(tools) >= MAX_CANDIDATES:
                break
        else:
            raise McpProbeError(server.name, f"tools/list paged more than {MAX_PAGES} times")
        _check_tools(server.name, tools)
        caps = init.get("capabilities")
        return McpProbe(
            server=server.name,
            tools=tools,
            capabilities=dict(caps) if isinstance(caps, dict) else {},
            seconds=time.monotonic() - client.started,
        )
    finally:
        client.close()


def openclaw_tools(entry: ServerEntry, result: McpProbe) -> dict[str, tuple[str, str]]:
    """name -> (description, parameter words), as OpenClaw 2026.9.6 projects this server.

    Tools with ``execution.taskSupport == "required"`` are left out, as OpenClaw does; a server
    advertising ``resources`` / ``prompts`` adds OpenClaw's ``resources_list``/``_read`` and
    ``prompts_list``/``_get`` tools."""
    reserved: set[str] = set()
    out: dict[str, tuple[str, str]] = {}
    seen: set[str] = set()
    tools = sorted(result.tools, key=lambda t: str(t["name"]).strip())
    for tool in tools:
        original = str(tool["name"]).strip()
        execution = tool.get("execution")
        if not original or original in seen or not entry.allows(original):
            continue
        if isinstance(execution, dict) and execution.get("taskSupport") == "required":
            continue
        seen.add(original)
        desc = tool.get("description")
        title = tool.get("title")
        text = desc if isinstance(desc, str) and desc.strip() else title
        description = clip(text, MAX_DESCRIPTION_CHARS) if isinstance(text, str) else ""
        words = clip(schema_text(tool.get("inputSchema")), MAX_PARAMETERS_CHARS)
        out[clean(tool_name(entry.safe_name, original, reserved))] = (description, words)
    extra = {}
    if "resources" in result.capabilities:
        extra.update(_RESOURCE_TOOLS)
    if "prompts" in result.capabilities:
        extra.update(_PROMPT_TOOLS)
    for suffix, text in extra.items():
        name = f"{entry.safe_name}__{suffix}"
        if name.lower() not in reserved:
            out[name] = (text.format(s=entry.name), "uri" if suffix == "resources_read" else "")
    return out


def _probe_entry(
    entry: ServerEntry, timeout: float
) -> tuple[ServerResult, dict[str, tuple[str, str]]]:
    if not entry.enabled:
        return ServerResult(entry.name, skipped="enabled: false"), {}
    if entry.stdio is None:
        why = "not a stdio server: not probed; while it is configured, turns keep every tool"
        return ServerResult(entry.name, skipped=why), {}
    started = time.monotonic()
    try:
        result = probe(entry.stdio, timeout=timeout)
    except McpProbeError as exc:
        return ServerResult(entry.name, error=exc.reason, seconds=time.monotonic() - started), {}
    tools = openclaw_tools(entry, result)
    return ServerResult(entry.name, tools=sorted(tools), seconds=result.seconds), tools


def sync(
    data: Mapping[str, Any],
    state_file: Path,
    *,
    only: Iterable[str] | None = None,
    timeout: float = DEFAULT_TIMEOUT_S,
    lock: AbstractContextManager[Any] | None = None,
) -> SyncReport:
    """Probe the enabled stdio servers of an ``openclaw.json`` (``data``, parsed) and merge
    their tools into the surface state ``state_file``: a probed server's tools replace the ones
    it had there; a server that failed keeps what an earlier sync found. ``only`` limits the
    servers probed (names under ``mcp.servers``). ``lock`` is held while the file is read,
    merged and written (not while servers are probed): the sidecar's own writes take it too."""
    entries = servers_from_config(data)
    wanted = set(only) if only is not None else None
    if wanted is not None:
        unknown = wanted - {e.name for e in entries}
        if unknown:
            raise KeyError(", ".join(sorted(unknown)))
        entries = [e for e in entries if e.name in wanted]
    with ThreadPoolExecutor(max_workers=MAX_PARALLEL) as pool:
        done = list(pool.map(lambda e: _probe_entry(e, timeout), entries))
    with lock if lock is not None else contextlib.nullcontext():
        _merge(state_file, entries, done)
    return SyncReport(state_file=state_file, servers=[r for r, _ in done])


def _merge(
    state_file: Path,
    entries: list[ServerEntry],
    done: list[tuple[ServerResult, dict[str, tuple[str, str]]]],
) -> None:
    state = _read_state(state_file)
    tools: dict[str, str] = state["tools"]
    params: dict[str, str] = state["params"]
    servers: dict[str, Any] = state["mcpServers"]
    for entry, (result, found) in zip(entries, done, strict=True):
        if result.error is not None or result.skipped is not None:
            continue
        for name in servers.get(entry.name, {}).get("tools", []):
            tools.pop(name, None)
            params.pop(name, None)
        for name, (description, words) in found.items():
            if name not in tools and len(tools) >= MAX_CANDIDATES:
                break  # the surface is bounded, whatever the servers list
            tools[name] = description
            if words:
                params[name] = words
        servers[entry.name] = {
            "prefix": entry.safe_name,
            "tools": sorted(found),
            "syncedAt": time.time(),
        }
    _write_state(state_file, state)


def _read_state(path: Path) -> dict[str, Any]:
    """The surface state (format 1) with its maps present; a missing file is an empty state."""
    try:
        data = orjson.loads(read_regular(path, MAX_STATE_BYTES)[0])
    except FileNotFoundError:
        data = {}
    except (OSError, ValueError) as exc:
        raise ValueError(f"{path}: not a readable surface state ({exc}); delete it") from exc
    if not isinstance(data, dict):
        data = {}
    if data and data.get("version") != STATE_VERSION:
        raise ValueError(f"{path}: surface state version {data.get('version')!r} is not 1")
    state: dict[str, Any] = {"version": STATE_VERSION, **data}
    for key in ("tools", "params", "mcpServers"):
        if not isinstance(state.get(key), dict):
            state[key] = {}
    state.setdefault("lastFullView", None)
    state.setdefault("sessions", [])
    return state


def _write_state(path: Path, state: Mapping[str, Any]) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", dir=path.parent)
    try:
        with os.fdopen(fd, "wb") as handle:
            handle.write(orjson.dumps(state))
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise


def known_servers(tools: Iterable[str], synced: Mapping[str, Any]) -> set[str]:
    """Safe prefixes whose tools are known: synced servers, and any prefix of a ``__`` name."""
    prefixes = {str(v.get("prefix")) for v in synced.values() if isinstance(v, dict)}
    prefixes.update(n.split("__", 1)[0] for n in tools if "__" in n)
    return prefixes
