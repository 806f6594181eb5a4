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

import hashlib
import json
import os
import subprocess
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from resolver.hosts.openclaw import _mcp
from resolver.hosts.openclaw._mcp import McpProbe, McpProbeError, StdioServer

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


def probe(server: McpServer, *, timeout: float = 30.0, stderr_path: Path | None = None) -> McpProbe:
    """Start ``server``, initialize, list every tool page, stop it: the product's own client
    (``resolver.hosts.openclaw._mcp``, what ``resolver openclaw sync-mcp`` runs), given the
    minimal environment OpenClaw's child would see here (PATH to Node 24, HOME)."""
    env = {k: os.environ[k] for k in ("LANG", "LC_ALL", "TZ", "TMPDIR") if k in os.environ}
    env["PATH"] = f"{Path(server.command).parent}{os.pathsep}/usr/bin:/bin"
    env["HOME"] = server.cwd or str(Path.cwd())
    env.update(server.env)
    spec = StdioServer(server.name, server.command, server.args, env, server.cwd)
    return _mcp.probe(spec, timeout=timeout, stderr_path=stderr_path)


def list_tools(server: McpServer, *, timeout: float = 30.0) -> list[dict[str, Any]]:
    """The tools ``server`` lists over stdio (``name``, ``description``, ``inputSchema``...)."""
    return probe(server, timeout=timeout).tools


def mcp_server_pids(root_pid: int, marker: str) -> set[int]:
    """PIDs of the descendants of ``root_pid`` whose command line runs a script below ``marker``."""
    children: dict[int, list[int]] = {}
    cmdlines: dict[int, str] = {}
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            stat = (entry / "stat").read_text()
            cmd = (entry / "cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
        except OSError:
            continue
        ppid = int(stat.rsplit(")", 1)[1].split()[1])
        children.setdefault(ppid, []).append(int(entry.name))
        cmdlines[int(entry.name)] = cmd
    found: set[int] = set()
    todo = [root_pid]
    while todo:
        for child in children.get(todo.pop(), []):
            todo.append(child)
            if marker in cmdlines.get(child, ""):
                found.add(child)
    return found


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
                f"{srv.name:22} {len(p.tools):3} tools  {p.seconds:5.2f}s  "
                f"{srv.package}@{srv.version}  caps={caps}"
            )
        print(f"total {total} MCP tools")
