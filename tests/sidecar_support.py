"""The OpenClaw sidecar as a real child process over stdio, for tests.

A plain module (not a conftest): tests import it by name.
"""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from resolver.hosts.openclaw._sidecar import Sidecar as InProcessSidecar

COMMAND = [sys.executable, "-m", "resolver.hosts.openclaw"]


def frame(frame_id: str, method: str, **params: Any) -> dict[str, Any]:
    return {"id": frame_id, "method": method, "params": params}


def run_sidecar(
    frames: str | Sequence[Mapping[str, Any]], *, timeout: float = 60
) -> dict[str, dict[str, Any]]:
    """Send every frame (or raw stdin text) at once, close stdin, and return the answers by
    frame id (the sidecar must exit 0; stdout carries frames only)."""
    text = frames if isinstance(frames, str) else "".join(json.dumps(f) + "\n" for f in frames)
    proc = subprocess.run(
        COMMAND,
        input=text,
        capture_output=True,
        text=True,
        timeout=timeout,
    )
    assert proc.returncode == 0, proc.stderr
    return {answer["id"]: answer for answer in map(json.loads, proc.stdout.splitlines())}


class Sidecar:
    """One frame answered before the next is sent, as a host drives it. Use as a context
    manager; `close` sends EOF and returns the exit code (killed if it does not exit)."""

    def __init__(self, env: Mapping[str, str] | None = None) -> None:
        self.proc = subprocess.Popen(
            COMMAND,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            env=dict(env) if env is not None else None,
        )

    def call(self, frame_id: str, method: str, **params: Any) -> dict[str, Any]:
        assert self.proc.stdin is not None and self.proc.stdout is not None
        self.proc.stdin.write(json.dumps(frame(frame_id, method, **params)) + "\n")
        self.proc.stdin.flush()
        answer: dict[str, Any] = json.loads(self.proc.stdout.readline())
        assert answer["id"] == frame_id
        return answer

    def close(self, timeout: float = 60) -> int:
        assert self.proc.stdin is not None
        self.proc.stdin.close()  # EOF: the sidecar writes what it holds and exits
        return self.proc.wait(timeout=timeout)

    def stderr(self) -> str:
        return self.proc.stderr.read() if self.proc.stderr else ""

    def __enter__(self) -> Sidecar:
        return self

    def __exit__(self, *exc: object) -> None:
        if self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait()


class InProcessHost:
    """Drives an in-process sidecar the way the extension does, one frame at a time: a turn is
    ``resolve``, then ``llm_input``'s ``observe_surface`` for the same run."""

    def __init__(
        self,
        tools: Sequence[Mapping[str, str]],
        prompt: str,
        clock: Callable[[], float] | None = None,
    ) -> None:
        self.sidecar = InProcessSidecar(clock=clock) if clock else InProcessSidecar()
        self.tools = list(tools)
        self.prompt = prompt
        self.runs = 0

    async def call(self, method: str, **params: Any) -> dict[str, Any]:
        """One frame; the whole answer (``result`` or ``error``)."""
        return await self.sidecar.handle({"id": "x", "method": method, "params": params})

    async def start(self, host: Mapping[str, Any] | None = None, **config: Any) -> None:
        """configure (surface state in memory, plus `config`; `host` as the extension reads
        OpenClaw's config), then the host's whole surface (`tools`)."""
        params: dict[str, Any] = {"config": {"surfaceStateFile": "", **config}}
        if host is not None:
            params["host"] = dict(host)
        assert (await self.call("configure", **params))["result"]["ok"]
        await self.call("observe_surface", tools=self.tools, ctx={})

    async def turn(
        self,
        prompt: str | None = None,
        session: str | None = "s1",
        shown: Sequence[Mapping[str, str]] | None = None,
        host: Mapping[str, Any] | None = None,
        agent: str | None = None,
    ) -> dict[str, Any]:
        """One turn of `session` (None: no session in the ctx); the host's request then shows
        `shown` (default: `tools`); `host` is what the extension read from the live config
        (``surfaceKey``, ``mcpServers``). Returns the resolve result."""
        self.runs += 1
        ctx: dict[str, Any] = {"runId": f"r{self.runs}"}
        if session is not None:
            ctx.update(sessionId=session, sessionKey=f"agent:{agent or 'main'}:{session}")
        if agent is not None:
            ctx["agentId"] = agent
        params: dict[str, Any] = {"event": {"prompt": prompt or self.prompt}, "ctx": ctx}
        if host is not None:
            params["host"] = dict(host)
        answer = await self.call("resolve", **params)
        tools = list(self.tools if shown is None else shown)
        seen = {k: v for k, v in ctx.items() if k in ("runId", "agentId")}
        await self.call("observe_surface", tools=tools, ctx=seen)
        return dict(answer["result"])
