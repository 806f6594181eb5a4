"""Install pinned stdio MCP servers from npm and start them the way OpenClaw does.

The pins live in ``benchmark/mcp/servers.json`` (package, exact version, bin entry, args, env).
:func:`ensure_mcp_servers` installs every pinned package with the machine's ``npm`` into
``<cache>/mcp-<hash of the pins>/<server>/`` (the cache root of ``openclaw_env.py``; one npm
prefix per server so each resolves its own dependencies) and returns one :class:`McpServer`
per server: ``node`` from the Node 24 install, the package's bin script, args and env, ready for
``mcp.servers.<name>`` in ``openclaw.json`` (:meth:`McpServer.openclaw_entry`). Work already
done is skipped, under the same file lock as the OpenClaw install.

Installs run with ``--ignore-scripts`` (and ``PUPPETEER_SKIP_DOWNLOAD=1``): no package may
download a browser or a binary of its own; the servers pinned here list their tools without one.

:func:`list_tools` speaks MCP JSON-RPC over stdio (``initialize``,
``notifications/initialized``, ``tools/list`` with pagination) with a deadline, then kills the
server. No network is needed: tokens are dummies, URLs point at a closed loopback port.

    python -m tests.e2e.mcp_env            # install, probe every server, print counts
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import re
import select
import signal
import subprocess
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from .openclaw_env import (
    REPO_ROOT,
    OpenClawInstall,
    _installed_version,
    _locked,
    _npm,
    cache_dir,
    ensure_openclaw,
)

SERVERS_FILE = REPO_ROOT / "benchmark" / "mcp" / "servers.json"
MCP_PROTOCOL_VERSION = "2025-06-18"
_INSTALL_ENV = {"PUPPETEER_SKIP_DOWNLOAD": "1", "PLAYWRIGHT_SKIP_BROWSER_DOWNLOAD": "1"}


@dataclass(frozen=True)
class McpPin:
    """One pinned server from ``servers.json`` (args and env still hold ``{data}``)."""

    name: str
    package: str
    version: str
    bin: str
    args: tuple[str, ...] = ()
    env: tuple[tuple[str, str], ...] = ()
    with_packages: tuple[str, ...] = ()
    """Extra exact ``name@version`` specs installed in the same prefix (``"with"`` in the JSON)."""

    def specs(self) -> list[str]:
        return [f"{self.package}@{self.version}", *self.with_packages]


@dataclass(frozen=True)
class McpServer:
    """An installed server and how to start it over stdio."""

    name: str
    """Key under ``mcp.servers`` (OpenClaw prefixes its tools with it: ``<name>__<tool>``)."""
    package: str
    version: str
    command: str
    """Absolute path of Node 24."""
    args: tuple[str, ...]
    """The bin script's absolute path, then the server's own arguments."""
    env: dict[str, str] = field(default_factory=dict)
    """The server's own variables (dummy tokens, loopback URLs), without PATH or HOME."""
    cwd: str | None = None

    def openclaw_entry(self, **extra: Any) -> dict[str, Any]:
        """The ``mcp.servers.<name>`` value for ``openclaw.json`` (stdio transport)."""
        entry: dict[str, Any] = {"command": self.command, "args": list(self.args)}
        if self.env:
            entry["env"] = dict(self.env)
        if self.cwd:
            entry["cwd"] = self.cwd
        entry.update(extra)
        return entry


@dataclass(frozen=True)
class McpProbe:
    """What one server answered over stdio."""

    server: str
    tools: list[dict[str, Any]]
    capabilities: dict[str, Any]
    """``result.capabilities`` of ``initialize`` (OpenClaw adds resource/prompt tools for them)."""
    server_info: dict[str, Any]
    initialize_seconds: float
    """From spawn until the ``initialize`` answer."""
    total_seconds: float
    """From spawn until the last ``tools/list`` page."""


class McpProbeError(RuntimeError):
    """A server exited, hung past its deadline, or answered with an error."""

    def __init__(self, server: str, reason: str, stderr_tail: str = "") -> None:
        super().__init__(f"MCP server {server!r}: {reason}\n{stderr_tail}".rstrip())
        self.server = server
        self.reason = reason
        self.stderr_tail = stderr_tail


def load_pins(path: Path = SERVERS_FILE) -> dict[str, McpPin]:
    """The pinned servers of ``servers.json``, in file order."""
    raw = json.loads(path.read_text())
    pins: dict[str, McpPin] = {}
    for name, spec in raw["servers"].items():
        pins[name] = McpPin(
            name=name,
            package=str(spec["package"]),
            version=str(spec["version"]),
            bin=str(spec["bin"]),
            args=tuple(str(a) for a in spec.get("args", [])),
            env=tuple((str(k), str(v)) for k, v in spec.get("env", {}).items()),
            with_packages=tuple(str(w) for w in spec.get("with", [])),
        )
    return pins


def pins_hash(pins: dict[str, McpPin]) -> str:
    """12 hex digits over the exact ``package@version`` set (names the install folder)."""
    specs = sorted(f"{p.name}={','.join(p.specs())}" for p in pins.values())
    return hashlib.sha256("\n".join(specs).encode()).hexdigest()[:12]


def _npm_install_exact(prefix: Path, specs: list[str], path_env: str) -> None:
    prefix.mkdir(parents=True, exist_ok=True)
    env = dict(os.environ)
    env.update(_INSTALL_ENV)
    # The download cache openclaw_env.py uses: a changed pin set reinstalls from it quickly.
    env["npm_config_cache"] = str(cache_dir() / ".npm-cache")
    env["PATH"] = path_env
    cmd = [_npm(), "install", "--prefix", str(prefix), "--no-audit", "--no-fund"]
    cmd += ["--ignore-scripts", "--save-exact", "--loglevel=error", *specs]
    proc = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=900)
    if proc.returncode != 0:
        raise RuntimeError(
            f"`{' '.join(cmd)}` failed ({proc.returncode}):\n{proc.stdout[-4000:]}\n"
            f"{proc.stderr[-4000:]}"
        )


def _installed(prefix: Path, pin: McpPin) -> bool:
    for spec in pin.specs():
        name, _, version = spec.rpartition("@")
        if _installed_version(prefix / "node_modules" / name) != version:
            return False
    return True


def _bin_script(package_dir: Path, bin_name: str) -> Path:
    meta = json.loads((package_dir / "package.json").read_text())
    bins = meta.get("bin")
    if isinstance(bins, str):
        rel = bins
    elif isinstance(bins, dict) and bin_name in bins:
        rel = bins[bin_name]
    else:
        raise RuntimeError(f"{package_dir}: no bin {bin_name!r} in package.json (has {bins!r})")
    script = (package_dir / rel).resolve()
    if not script.is_file():
        raise RuntimeError(f"{package_dir}: bin {bin_name!r} points at missing {script}")
    return script


def _expand(value: str, data_dir: Path) -> str:
    return value.replace("{data}", str(data_dir))


def ensure_mcp_servers(
    data_dir: Path,
    install: OpenClawInstall | None = None,
    *,
    only: list[str] | None = None,
    pins_file: Path = SERVERS_FILE,
) -> dict[str, McpServer]:
    """Install the pinned servers unless present; return how to start each one.

    ``data_dir`` is the caller's scratch folder: ``{data}`` in the pins' args and env becomes
    it, and the folders the servers need (``files/``, ``playwright/``) are created there.
    ``only`` limits the result (and the installs) to those server names.
    """
    install = install or ensure_openclaw()  # before the lock below: the same lock file
    all_pins = load_pins(pins_file)
    pins = all_pins
    if only is not None:
        unknown = sorted(set(only) - set(pins))
        if unknown:
            raise KeyError(f"no pinned MCP server {unknown} in {pins_file}")
        pins = {k: v for k, v in pins.items() if k in only}
    root = cache_dir() / f"mcp-{pins_hash(all_pins)}"
    path_env = install.env_path()
    scripts: dict[str, Path] = {}
    with _locked(cache_dir() / ".install.lock"):
        for pin in pins.values():
            prefix = root / pin.name
            package_dir = prefix / "node_modules" / pin.package
            if not _installed(prefix, pin):
                _npm_install_exact(prefix, pin.specs(), path_env)
            if not _installed(prefix, pin):
                raise RuntimeError(f"{pin.package}@{pin.version} install incomplete in {prefix}")
            scripts[pin.name] = _bin_script(package_dir, pin.bin)
    data_dir = data_dir.resolve()
    for sub in ("files", "playwright"):
        (data_dir / sub).mkdir(parents=True, exist_ok=True)
    return {
        pin.name: McpServer(
            name=pin.name,
            package=pin.package,
            version=pin.version,
            command=str(install.node),
            args=(str(scripts[pin.name]), *(_expand(a, data_dir) for a in pin.args)),
            env={k: _expand(v, data_dir) for k, v in pin.env},
            cwd=str(data_dir),
        )
        for pin in pins.values()
    }


def openclaw_mcp_config(servers: dict[str, McpServer], **extra: Any) -> dict[str, Any]:
    """The ``mcp`` section of ``openclaw.json`` for these servers (``extra`` goes in each)."""
    return {"servers": {name: s.openclaw_entry(**extra) for name, s in servers.items()}}


class _StdioClient:
    """Newline-delimited JSON-RPC to one child, every read bounded by a deadline."""

    def __init__(self, server: McpServer, stderr_path: Path | None) -> None:
        env = {k: os.environ[k] for k in ("LANG", "LC_ALL", "TZ", "TMPDIR") if k in os.environ}
        env["PATH"] = f"{Path(server.command).parent}{os.pathsep}/usr/bin:/bin"
        env["HOME"] = server.cwd or str(Path.cwd())
        env.update(server.env)
        self.server = server
        self._stderr_path = stderr_path
        self._stderr = stderr_path.open("wb") if stderr_path else subprocess.DEVNULL
        self.started = time.monotonic()
        self.proc = subprocess.Popen(
            [server.command, *server.args],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=self._stderr,
            env=env,
            cwd=server.cwd,
            start_new_session=True,  # one process group: close() takes a browser child along
        )
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
            if msg.get("id") != rid or "method" in msg:
                if "method" in msg and "id" in msg:  # a server-to-client request: refuse it
                    self._write(
                        {
                            "jsonrpc": "2.0",
                            "id": msg["id"],
                            "error": {"code": -32601, "message": "not supported"},
                        }
                    )
                continue
            if "error" in msg:
                raise McpProbeError(self.server.name, f"{method} error {msg['error']}")
            result = msg.get("result")
            return result if isinstance(result, dict) else {}

    def _write(self, msg: dict[str, Any]) -> None:
        assert self.proc.stdin is not None
        try:
            self.proc.stdin.write((json.dumps(msg) + "\n").encode())
            self.proc.stdin.flush()
        except BrokenPipeError as exc:
            raise McpProbeError(
                self.server.name, f"exited ({self.proc.poll()})", self.stderr_tail()
            ) from exc

    def _read_message(self, deadline: float, waiting_for: str) -> dict[str, Any]:
        assert self.proc.stdout is not None
        fd = self.proc.stdout.fileno()
        while True:
            while b"\n" in self._buf:
                line, self._buf = self._buf.split(b"\n", 1)
                with contextlib.suppress(ValueError):
                    msg = json.loads(line)
                    if isinstance(msg, dict):
                        return msg
            left = deadline - time.monotonic()
            if left <= 0:
                raise McpProbeError(
                    self.server.name, f"no answer to {waiting_for} in time", self.stderr_tail()
                )
            ready, _, _ = select.select([fd], [], [], min(left, 0.5))
            if ready:
                chunk = os.read(fd, 1 << 16)
                if not chunk:
                    self.proc.wait(timeout=5)
                    raise McpProbeError(
                        self.server.name,
                        f"exited ({self.proc.returncode}) before answering {waiting_for}",
                        self.stderr_tail(),
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
        for stream in (self.proc.stdout,):
            with contextlib.suppress(OSError):
                if stream:
                    stream.close()
        if self._stderr is not subprocess.DEVNULL:
            self._stderr.close()  # type: ignore[union-attr]


def _check_tools(server: str, tools: list[Any]) -> None:
    """Reject what the MCP SDK client rejects (OpenClaw then drops the whole server): a tool
    without a string ``name`` or whose ``inputSchema`` is not ``{"type": "object", ...}``."""
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


def openclaw_tool_names(server: str, result: McpProbe) -> list[str]:
    """The names OpenClaw 2026.9.6 gives this server's tools in the model's surface, sorted.

    ``<server>__<tool>`` (server and tool sanitized to ``[A-Za-z0-9_-]``); tools with
    ``execution.taskSupport == "required"`` and names listed twice are left out; a server
    advertising ``resources`` adds ``<server>__resources_list`` / ``__resources_read``, one
    advertising ``prompts`` adds ``__prompts_list`` / ``__prompts_get``. Truncation to 64
    characters and collision suffixes (``-2``) are not modelled: check the names are short.
    """
    counts: dict[str, int] = {}
    for tool in result.tools:
        counts[tool["name"].strip()] = counts.get(tool["name"].strip(), 0) + 1
    prefix = _safe_fragment(server, "mcp")[:30]
    names = [
        f"{prefix}__{_safe_fragment(t['name'].strip(), 'tool')}"
        for t in result.tools
        if counts[t["name"].strip()] == 1
        and (t.get("execution") or {}).get("taskSupport") != "required"
    ]
    if "resources" in result.capabilities:
        names += [f"{prefix}__resources_list", f"{prefix}__resources_read"]
    if "prompts" in result.capabilities:
        names += [f"{prefix}__prompts_list", f"{prefix}__prompts_get"]
    return sorted(names)


def _safe_fragment(raw: str, fallback: str) -> str:
    cleaned = re.sub(r"[^A-Za-z0-9_-]", "-", raw.strip()) or fallback
    return cleaned if re.match(r"[A-Za-z]", cleaned) else f"{fallback}-{cleaned}"


def probe(server: McpServer, *, timeout: float = 30.0, stderr_path: Path | None = None) -> McpProbe:
    """Start ``server``, initialize, list every tool page, kill it. Raises :class:`McpProbeError`
    when it exits, errs or has not finished within ``timeout`` seconds of the spawn."""
    client = _StdioClient(server, stderr_path)
    deadline = client.started + timeout
    try:
        init = client.request(
            "initialize",
            {
                "protocolVersion": MCP_PROTOCOL_VERSION,
                "capabilities": {},
                "clientInfo": {"name": "resolver-e2e-probe", "version": "0"},
            },
            deadline,
        )
        init_s = time.monotonic() - client.started
        client.notify("notifications/initialized")
        tools: list[dict[str, Any]] = []
        cursor: str | None = None
        for _ in range(100):  # pages; a server that never stops paging is a failure
            result = client.request("tools/list", {"cursor": cursor} if cursor else {}, deadline)
            page = result.get("tools")
            if not isinstance(page, list):
                raise McpProbeError(server.name, f"tools/list result has no tools list: {result}")
            tools.extend(page)
            cursor = result.get("nextCursor") or None
            if cursor is None:
                break
        else:
            raise McpProbeError(server.name, "tools/list paged more than 100 times")
        _check_tools(server.name, tools)
        return McpProbe(
            server=server.name,
            tools=tools,
            capabilities=dict(init.get("capabilities") or {}),
            server_info=dict(init.get("serverInfo") or {}),
            initialize_seconds=init_s,
            total_seconds=time.monotonic() - client.started,
        )
    finally:
        client.close()


def list_tools(server: McpServer, *, timeout: float = 30.0) -> list[dict[str, Any]]:
    """The tools ``server`` lists over stdio (``name``, ``description``, ``inputSchema``...)."""
    return probe(server, timeout=timeout).tools


if __name__ == "__main__":  # pragma: no cover - manual helper
    import sys
    import tempfile

    with tempfile.TemporaryDirectory(prefix="mcp-probe-") as tmp:
        t0 = time.monotonic()
        servers = ensure_mcp_servers(Path(tmp), only=sys.argv[1:] or None)
        print(f"installed/checked {len(servers)} servers in {time.monotonic() - t0:.1f}s")
        total = 0
        for srv in servers.values():
            try:
                p = probe(srv, stderr_path=Path(tmp) / f"{srv.name}.stderr")
            except McpProbeError as err:
                print(f"{srv.name:22} FAILED {err.reason}")
                continue
            total += len(p.tools)
            caps = ",".join(sorted(k for k in p.capabilities if k != "experimental"))
            print(
                f"{srv.name:22} {len(p.tools):3} tools  init {p.initialize_seconds:5.2f}s  "
                f"list {p.total_seconds:5.2f}s  {srv.package}@{srv.version}  caps={caps}"
            )
        print(f"total {total} MCP tools")
