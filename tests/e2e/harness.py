"""Run real OpenClaw turns in a scratch HOME against the loopback mock model.

* :class:`SidecarSpec` says which Python process the extension starts: the plugin config key
  ``pythonPath`` plus extra environment. :func:`fake_sidecar` builds one for
  ``tests/e2e/fake_sidecar.py``; :func:`module_sidecar` builds one for the real
  ``python -m resolver.hosts.openclaw`` (the core package, importable from this checkout).
* :class:`OpenClawHome` writes ``~/.openclaw/openclaw.json`` (custom ``openai-completions``
  provider at the mock's base URL, one model, ``tools.toolSearch=false``, the plugin loaded from
  ``plugins.load.paths`` with ``hooks.allowConversationAccess: true``) and runs
  ``openclaw agent --local --agent main --message ... --json`` with Node 24 first on ``PATH``.
"""

from __future__ import annotations

import contextlib
import json
import os
import secrets
import shlex
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from .openclaw_env import REPO_ROOT, OpenClawInstall

PLUGIN_ID = "openclaw-tool-resolver"
EXTENSION_DIR = REPO_ROOT / "resolver" / "hosts" / "openclaw" / "extension"
FAKE_SIDECAR = Path(__file__).resolve().parent / "fake_sidecar.py"
PROVIDER_ID = "mock"
MODEL_ID = "mock-model"

# Variables passed through from the test process; everything else is dropped so a developer's
# own keys and OpenClaw settings never reach the run.
_PASSTHROUGH_ENV = ("LANG", "LC_ALL", "TZ", "TMPDIR", "SYSTEMROOT")


@dataclass(frozen=True)
class SidecarSpec:
    """How the extension starts its Python child: ``pythonPath`` and extra environment."""

    python_path: str
    env: dict[str, str] = field(default_factory=dict)
    log_file: Path | None = None
    """Where the sidecar logs the frames it receives (fake sidecar only)."""

    def frames(self) -> list[dict[str, Any]]:
        """Records the fake sidecar logged (start lines and request frames), in order."""
        if self.log_file is None or not self.log_file.exists():
            return []
        return [json.loads(line) for line in self.log_file.read_text().splitlines() if line]

    def requests(self, method: str | None = None) -> list[dict[str, Any]]:
        """Request frames the fake sidecar received, optionally of one method."""
        return [
            f
            for f in self.frames()
            if f.get("event") == "request" and (method is None or f.get("method") == method)
        ]


def fake_sidecar(
    workdir: Path, mode: str = "fixed", tools: Any = ("read", "web_search"), delay_ms: int = 0
) -> SidecarSpec:
    """A :class:`SidecarSpec` for the fake sidecar in ``mode`` (see ``fake_sidecar.py``).

    ``pythonPath`` is a small shell wrapper, since the extension always appends
    ``-m resolver.hosts.openclaw``; the wrapper runs the fake script instead.
    """
    workdir.mkdir(parents=True, exist_ok=True)
    wrapper = workdir / f"fake-python-{mode}"
    wrapper.write_text(
        f'#!/bin/sh\nexec {shlex.quote(sys.executable)} {shlex.quote(str(FAKE_SIDECAR))} "$@"\n'
    )
    wrapper.chmod(0o755)
    log_file = workdir / f"fake-sidecar-{mode}.jsonl"
    env = {
        "FAKE_SIDECAR_MODE": mode,
        "FAKE_SIDECAR_TOOLS": json.dumps(list(tools) if isinstance(tools, tuple) else tools),
        "FAKE_SIDECAR_LOG": str(log_file),
        "FAKE_SIDECAR_DELAY_MS": str(delay_ms),
    }
    return SidecarSpec(python_path=str(wrapper), env=env, log_file=log_file)


def module_sidecar(
    python: str = sys.executable, extra_env: dict[str, str] | None = None
) -> SidecarSpec:
    """A :class:`SidecarSpec` for the real sidecar, ``<python> -m resolver.hosts.openclaw``.

    ``PYTHONPATH`` points at this checkout so an uninstalled tree works; once
    ``resolver install openclaw`` exists, pass the interpreter it wrote instead.
    """
    env = {"PYTHONPATH": str(REPO_ROOT)}
    env.update(extra_env or {})
    return SidecarSpec(python_path=python, env=env)


@dataclass(frozen=True)
class AgentRun:
    """Outcome of one ``openclaw agent --local`` run."""

    returncode: int
    stdout: str
    stderr: str
    seconds: float

    def json(self) -> Any:
        """The ``--json`` output (the last JSON document on stdout)."""
        text = self.stdout.strip()
        start = text.find("{")
        return json.loads(text[start:]) if start >= 0 else None

    def receipt(self) -> dict[str, Any] | None:
        """The first ``terminalReceipt`` of the ``--json`` output (the turn's runId and
        sessionId), or None when there is none or the output is not JSON."""
        found: list[dict[str, Any]] = []

        def walk(node: Any) -> None:
            if isinstance(node, dict):
                if isinstance(node.get("terminalReceipt"), dict):
                    found.append(node["terminalReceipt"])
                for value in node.values():
                    walk(value)
            elif isinstance(node, list):
                for value in node:
                    walk(value)

        try:
            walk(self.json())
        except ValueError:
            return None
        return found[0] if found else None


@dataclass
class OpenClawHome:
    """A scratch HOME owning ``~/.openclaw``, for one test."""

    install: OpenClawInstall
    home: Path
    base_url: str
    sidecar_env: dict[str, str] = field(default_factory=dict)
    """Extra environment for OpenClaw (inherited by the sidecar it starts)."""

    @property
    def config_path(self) -> Path:
        return self.home / ".openclaw" / "openclaw.json"

    def write_config(
        self,
        sidecar: SidecarSpec | None,
        plugin_config: dict[str, Any] | None = None,
        *,
        plugin_dir: Path = EXTENSION_DIR,
        tool_search: bool | None = False,
        hook_timeouts: dict[str, int] | None = None,
        extra: dict[str, Any] | None = None,
    ) -> dict[str, Any]:
        """Write ``openclaw.json``. ``sidecar=None`` leaves the plugin out entirely."""
        config: dict[str, Any] = {
            "models": {
                "mode": "merge",
                "providers": {
                    PROVIDER_ID: {
                        "baseUrl": self.base_url,
                        "apiKey": "mock-key-not-secret",
                        "api": "openai-completions",
                        "models": [
                            {
                                "id": MODEL_ID,
                                "name": "Mock Model",
                                "reasoning": False,
                                "input": ["text"],
                                "cost": {"input": 0, "output": 0, "cacheRead": 0, "cacheWrite": 0},
                                "contextWindow": 128000,
                                "maxTokens": 4096,
                            }
                        ],
                    },
                },
            },
            "agents": {"defaults": {"model": {"primary": f"{PROVIDER_ID}/{MODEL_ID}"}}},
        }
        if tool_search is not None:  # None: leave OpenClaw's default (Tool Search on)
            config["tools"] = {"toolSearch": tool_search}
        if sidecar is not None:
            entry: dict[str, Any] = {
                "enabled": True,
                "hooks": {"allowConversationAccess": True},
                "config": {"pythonPath": sidecar.python_path, **(plugin_config or {})},
            }
            if hook_timeouts:
                entry["hooks"]["timeouts"] = hook_timeouts
            config["plugins"] = {
                "load": {"paths": [str(plugin_dir)]},
                "entries": {PLUGIN_ID: entry},
            }
        for key, value in (extra or {}).items():
            config[key] = value
        self.config_path.parent.mkdir(parents=True, exist_ok=True)
        self.config_path.write_text(json.dumps(config, indent=2))
        self.sidecar_env = dict(sidecar.env) if sidecar else {}
        return config

    def read_config(self) -> dict[str, Any]:
        return dict(json.loads(self.config_path.read_text()))

    def update_config(self, **sections: Any) -> dict[str, Any]:
        """Set top-level sections of ``openclaw.json`` (other keys untouched)."""
        config = self.read_config()
        config.update(sections)
        self.config_path.write_text(json.dumps(config, indent=2))
        return config

    def install_with_resolver_cli(
        self,
        sidecar: SidecarSpec,
        plugin_config: dict[str, Any] | None = None,
        *,
        link: bool = False,
        args: Sequence[str] = (),
    ) -> subprocess.CompletedProcess[str]:
        """Put the plugin in place the way users do: ``resolver install openclaw``.

        Runs ``<sidecar.python_path> -m resolver install openclaw --openclaw-home ~/.openclaw``
        (after ``write_config(None)`` wrote the provider and model), so the extension is
        copied to ``~/.openclaw/extensions/`` and ``pythonPath`` is that interpreter.
        """
        cmd = [sidecar.python_path, "-m", "resolver", "install", "openclaw"]
        cmd += ["--openclaw-home", str(self.config_path.parent)]
        if link:
            cmd.append("--link")
        cmd += list(args)
        if plugin_config:
            cfg = self.home / "resolver-config.json"
            cfg.write_text(json.dumps(plugin_config))
            cmd += ["--config", str(cfg)]
        env = {**os.environ, **sidecar.env, "HOME": str(self.home)}
        proc = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=180)
        if proc.returncode != 0:
            raise RuntimeError(f"{cmd} failed:\n{proc.stdout}\n{proc.stderr}")
        self.sidecar_env = dict(sidecar.env)
        return proc

    def resolver_cli(
        self, sidecar: SidecarSpec, *args: str, timeout: float = 180
    ) -> subprocess.CompletedProcess[str]:
        """``<sidecar.python_path> -m resolver <args>`` as the user of this home (``HOME``)."""
        cmd = [sidecar.python_path, "-m", "resolver", *args]
        env = {**os.environ, **sidecar.env, "HOME": str(self.home)}
        return subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=timeout)

    def env(self) -> dict[str, str]:
        env = {k: os.environ[k] for k in _PASSTHROUGH_ENV if k in os.environ}
        env.update(
            {
                "HOME": str(self.home),
                "PATH": self.install.env_path(),
                "NO_COLOR": "1",
                "OPENCLAW_DISABLE_BONJOUR": "1",
                "OPENCLAW_SKIP_CHANNELS": "1",
                "OPENCLAW_SKIP_CANVAS_HOST": "1",
                "OPENCLAW_NO_RESPAWN": "1",
            }
        )
        env.update(self.sidecar_env)
        return env

    def openclaw(self, *args: str, timeout: float = 180) -> AgentRun:
        """Run ``openclaw <args>`` with Node 24 and this HOME."""
        cmd = [str(self.install.node), str(self.install.openclaw_entry), *args]
        t0 = time.monotonic()
        proc = subprocess.run(
            cmd,
            env=self.env(),
            cwd=self.home,
            capture_output=True,
            text=True,
            timeout=timeout,
            stdin=subprocess.DEVNULL,
        )
        return AgentRun(proc.returncode, proc.stdout, proc.stderr, time.monotonic() - t0)

    def run_agent(
        self,
        message: str,
        *,
        timeout: float = 180,
        local: bool = True,
        session_key: str | None = None,
    ) -> AgentRun:
        """One turn: ``openclaw agent --local --agent main --message <message> --json``.

        ``local=False`` drops ``--local``: the turn goes through a running Gateway
        (:meth:`start_gateway`), whose plugin and sidecar outlive the turn. ``session_key``
        (``--session-key``) puts the turn in its own session (no earlier history).
        """
        args = ["agent", "--agent", "main", "--message", message, "--json"]
        if local:
            args.insert(1, "--local")
        if session_key is not None:
            args += ["--session-key", session_key]
        return self.openclaw(*args, timeout=timeout)

    def gateway_turns(self, *prompts: str, timeout: float = 240) -> tuple[list[AgentRun], str]:
        """One Gateway, one turn per prompt in order (one session), then its log; every turn
        must exit 0 (the assertion shows its stderr and the log's tail)."""
        with self.start_gateway() as gateway:
            runs = [gateway.turn(prompt, timeout=timeout) for prompt in prompts]
            log = gateway.log()
        for run in runs:
            assert run.returncode == 0, run.stderr[-3000:] + log[-3000:]
        return runs, log

    def start_gateway(self, *, timeout: float = 240) -> Gateway:
        """Start ``openclaw gateway run`` on a free loopback port; wait until it accepts turns.

        Adds ``gateway`` (mode local, loopback, token auth) and ``discovery.mdns.mode=off`` to
        ``openclaw.json``. Stop it with :meth:`Gateway.stop` (or use it as a context manager).
        """
        port = _free_port()
        token = secrets.token_hex(16)
        self.update_config(
            gateway={
                "mode": "local",
                "port": port,
                "bind": "loopback",
                "auth": {"mode": "token", "token": token},
            },
            discovery={"mdns": {"mode": "off"}},
        )
        log_path = self.home / "gateway.log"
        log = log_path.open("w")
        cmd = [str(self.install.node), str(self.install.openclaw_entry), "gateway", "run"]
        cmd += ["--bind", "loopback", "--port", str(port)]
        proc = subprocess.Popen(
            cmd,
            env=self.env(),
            cwd=self.home,
            stdin=subprocess.DEVNULL,
            stdout=log,
            stderr=subprocess.STDOUT,
            start_new_session=True,  # one process group: stop() takes the sidecar along
        )
        log.close()
        gw = Gateway(home=self, port=port, proc=proc, log_path=log_path)
        t0 = time.monotonic()
        while time.monotonic() - t0 < timeout:
            if proc.poll() is not None:
                raise RuntimeError(f"gateway exited {proc.returncode}:\n{gw.log()[-4000:]}")
            if _accepts(port) and _READY_MARK in gw.log():
                gw.started_in = time.monotonic() - t0
                return gw
            time.sleep(0.2)
        gw.stop()
        raise RuntimeError(f"gateway not ready after {timeout}s:\n{gw.log()[-4000:]}")


_READY_MARK = "[gateway] ready"


def _free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def _accepts(port: int) -> bool:
    try:
        with socket.create_connection(("127.0.0.1", port), timeout=0.5):
            return True
    except OSError:
        return False


@dataclass
class Gateway:
    """A running ``openclaw gateway run`` on 127.0.0.1, owned by one test."""

    home: OpenClawHome
    port: int
    proc: subprocess.Popen[bytes]
    log_path: Path
    started_in: float = 0.0
    """Seconds from spawn until the Gateway was ready."""

    def log(self) -> str:
        return self.log_path.read_text(errors="replace") if self.log_path.exists() else ""

    def turn(
        self, message: str, *, timeout: float = 180, session_key: str | None = None
    ) -> AgentRun:
        """One turn through this Gateway (``openclaw agent`` without ``--local``)."""
        return self.home.run_agent(message, timeout=timeout, local=False, session_key=session_key)

    def stop(self) -> None:
        """SIGTERM the Gateway (it stops its plugins); then SIGKILL whatever is left of its
        process group (a sidecar that did not exit, a hung Gateway after 30 s)."""
        if self.proc.poll() is None:
            with contextlib.suppress(ProcessLookupError):
                self.proc.send_signal(signal.SIGTERM)
            with contextlib.suppress(subprocess.TimeoutExpired):
                self.proc.wait(timeout=30)
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(self.proc.pid, signal.SIGKILL)
        with contextlib.suppress(subprocess.TimeoutExpired):
            self.proc.wait(timeout=10)

    def __enter__(self) -> Gateway:
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()
