"""What the primary model receives from a real OpenClaw: no plugin, Tool Search, the resolver.

For a deterministic spread of prompts from ``benchmark-v1-curated.json`` (round robin over the
categories in file order: the first case of every category, then the second, ... until
``--prompts`` cases), one real OpenClaw turn per prompt and configuration, each turn in its
own session (``--session-key``), through one local Gateway per configuration:

* ``none``: no plugin, ``tools.toolSearch=false`` (the plain surface);
* ``toolsearch``: no plugin, ``tools.toolSearch`` left at OpenClaw's default (Tool Search on);
* ``resolver``: the plugin installed with ``resolver install openclaw``, the offline classifier
  (no classifier endpoint, no key), ``tools.toolSearch=false``.

Every configuration first runs one warm-up turn (not measured): it starts the Gateway's agent
and, for the resolver, shows the sidecar the surface (that turn abstains). The primary model is
the loopback mock from ``tests/e2e/mock_llm.py`` (127.0.0.1, started and stopped here); for
each measured turn the script records, from the mock's log, the tools OpenClaw sent (count and
bytes of compact JSON) and the size of the whole request body. Follow-up cases are sent as
their last user message only (no earlier history).

    python benchmark/openclaw-e2e.py --prompts 24 --out benchmark/results/openclaw-e2e.md

``--mcp`` measures what a whole task costs on an MCP-heavy host instead (see
:func:`run_mcp_config`): the 15 pinned stdio MCP servers of ``benchmark/mcp/servers.json``
under ``mcp.servers``, cases from ``benchmark-v1-mcp.json`` (``--cases N``, stratified by
category like above), four configurations (the three above plus ``resolver+toolsearch``: the
plugin with Tool Search left on), and a scripted primary model (:class:`TaskScript`) that
calls every needed tool — directly when it is in the request, through ``tool_search`` +
``tool_call`` when only Tool Search can reach it — and then answers. Every model request of
the task is counted.

    python benchmark/openclaw-e2e.py --mcp --cases 48 --out benchmark/results/openclaw-mcp-e2e.md \
        --json benchmark/results/openclaw-mcp-e2e.json

Needs the e2e cache (``python tests/e2e/openclaw_env.py`` installs Node 24 + OpenClaw;
``python -m tests.e2e.mcp_env`` the MCP servers, which ``--mcp`` also installs when missing).
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import os
import platform
import re
import signal
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

REPO_ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO_ROOT))

from tests.e2e.harness import AgentRun, OpenClawHome, module_sidecar
from tests.e2e.mcp_env import (
    ensure_mcp_servers,
    load_pins,
    mcp_server_pids,
    openclaw_mcp_config,
    pins_hash,
)
from tests.e2e.mock_llm import LoggedRequest, MockLLM, PrimaryReply, ToolCall
from tests.e2e.openclaw_env import (
    OPENCLAW_VERSION,
    OpenClawInstall,
    cache_dir,
    ensure_openclaw,
)

CASES = REPO_ROOT / "benchmark" / "benchmark-v1-curated.json"
CONFIGS = ("none", "toolsearch", "resolver")
LABELS = {
    "none": "no plugin (toolSearch=false)",
    "toolsearch": "Tool Search (default)",
    "resolver": "resolver (offline, toolSearch=false)",
}
WARM_PROMPT = "Hello! What can you help me with today?"


def pick_cases(n: int, path: Path = CASES) -> list[dict[str, Any]]:
    """Round robin over categories (in order of first appearance): deterministic, spread."""
    cases = json.loads(path.read_text())["cases"]
    by_cat: dict[str, list[dict[str, Any]]] = {}
    for case in cases:
        by_cat.setdefault(case["category"], []).append(case)
    picked: list[dict[str, Any]] = []
    depth = 0
    while len(picked) < n and any(len(v) > depth for v in by_cat.values()):
        for group in by_cat.values():
            if len(group) > depth and len(picked) < n:
                picked.append(group[depth])
        depth += 1
    return picked


def configure(name: str, home: OpenClawHome, extra: dict[str, Any] | None = None) -> Path | None:
    """Write openclaw.json for one configuration; the resolver's telemetry file, if any.

    ``extra``: more top-level sections (``mcp``). ``*toolsearch`` leaves ``tools.toolSearch``
    unset (OpenClaw's default: Tool Search on); the others set it to false."""
    tool_search = None if name.endswith("toolsearch") else False
    if name in ("none", "toolsearch"):
        home.write_config(None, tool_search=tool_search, extra=extra)
        return None
    telemetry = home.home / "resolver-telemetry.jsonl"
    home.write_config(None, tool_search=tool_search, extra=extra)
    home.install_with_resolver_cli(
        module_sidecar(), {"logDecisions": True, "telemetryFile": str(telemetry)}
    )
    return telemetry


def measure(req: LoggedRequest) -> dict[str, Any]:
    return {
        "tools": len(req.tool_names),
        "toolsBytes": req.tools_bytes,
        "bodyBytes": req.body_bytes,
        "toolNames": req.tool_names,
    }


def run_config(
    name: str, install: OpenClawInstall, workdir: Path, cases: list[dict[str, Any]], log: Callable
) -> dict[str, Any]:
    with MockLLM() as mock:
        home_dir = workdir / name
        home_dir.mkdir(parents=True)
        home = OpenClawHome(install=install, home=home_dir, base_url=mock.base_url)
        telemetry = configure(name, home)
        t0 = time.monotonic()
        with home.start_gateway() as gateway:
            log(f"[{name}] gateway ready in {gateway.started_in:.1f}s")
            warm = gateway.turn(WARM_PROMPT, session_key="bench-warmup")
            if warm.returncode != 0:
                raise RuntimeError(
                    f"warm-up failed:\n{warm.stderr[-3000:]}\n{gateway.log()[-3000:]}"
                )
            log(f"[{name}] warm-up turn {warm.seconds:.1f}s")
            rows: list[dict[str, Any]] = []
            for case in cases:
                mark = len(mock.primary_requests)
                run = gateway.turn(case["prompt"], session_key=f"bench-{case['id']}")
                if run.returncode != 0:
                    raise RuntimeError(f"{case['id']} failed:\n{run.stderr[-3000:]}")
                turn_reqs = mock.primary_requests[mark:]
                if not turn_reqs:
                    raise RuntimeError(f"{case['id']}: no primary request logged")
                row = {"id": case["id"], "seconds": round(run.seconds, 2), **measure(turn_reqs[0])}
                rows.append(row)
                log(
                    f"[{name}] {case['id']}: {row['tools']} tools, {row['toolsBytes']} B tools, "
                    f"{row['bodyBytes']} B body ({run.seconds:.1f}s)"
                )
            gw_log = gateway.log()
        lines: list[dict[str, Any]] = []
        if telemetry is not None and telemetry.exists():
            lines = [json.loads(x) for x in telemetry.read_text().splitlines() if x.strip()]
        if telemetry is not None:
            # line 0 is the warm-up turn; then one line per measured turn, in order
            if len(lines) != len(cases) + 1:
                raise RuntimeError(f"expected {len(cases) + 1} telemetry lines, got {len(lines)}")
            for row, line in zip(rows, lines[1:], strict=True):
                row["source"] = line["source"]
                row["reasonCodes"] = line["reasonCodes"]
                row["toolsAllow"] = line["toolsAllow"]
                row["latencyMs"] = line["latencyMs"]
        return {
            "config": name,
            "rows": rows,
            "gatewayStartS": round(gateway.started_in, 1),
            "wallS": round(time.monotonic() - t0, 1),
            "warmup": lines[0] if lines else None,
            "gatewayLogTail": gw_log[-2000:] if telemetry is not None and not lines else "",
        }


def _pct(new: float, base: float) -> str:
    return f"{(1 - new / base) * 100:.1f}%" if base else "-"


def run_header(meta: dict[str, Any]) -> str:
    """The lines every report starts with: when, the command, the machine, the commit."""
    return (
        f"Measured {meta['date']} with `{meta['command']}`.\n\n"
        f"- OpenClaw {meta['openclaw']}, Node {meta['node']}, Python {meta['python']}, "
        f"{meta['platform']}, {meta['cpus']} CPUs (load average at start {meta['load']})\n"
        f"- resolver commit `{meta['commit']}`"
    )


def render(
    results: dict[str, dict[str, Any]], cases: list[dict[str, Any]], meta: dict[str, Any]
) -> str:
    out: list[str] = []
    add = out.append
    add("# OpenClaw end to end: what the primary model receives\n")
    add(run_header(meta))
    add("- one local Gateway per configuration (127.0.0.1), one warm-up turn each (not measured),")
    add("  then one turn per prompt, each in its own session (`--session-key bench-<id>`);")
    add("  the primary model is the loopback mock (`tests/e2e/mock_llm.py`), which logs each")
    add("  request: tools = compact JSON of the request's `tools` (UTF-8), body = the whole")
    add("  request body as received. Only the turn's first model request is counted (the mock")
    add("  answers with text, so there is one per turn).")
    add("- configurations: " + "; ".join(f"`{c}` = {LABELS[c]}" for c in CONFIGS))
    add(f"- prompts: {len(cases)} cases of `benchmark/benchmark-v1-curated.json`, round robin over")
    add("  its categories in file order (first case of every category, then the second, ...);")
    add("  follow-up cases are sent as their last user message alone.")
    add("- the mock never calls a tool, so this counts one request per turn; with Tool Search a")
    add("  real model needs extra `tool_search`/`tool_describe` requests before it can use a tool")
    add("  it has not loaded, which these figures do not include.\n")

    add("## Totals and means\n")
    base = results["none"]["rows"]
    base_tb = sum(r["toolsBytes"] for r in base)
    base_bb = sum(r["bodyBytes"] for r in base)
    add(
        "| configuration | mean tools | total tools bytes | mean tools bytes | tools bytes vs none "
        "| total request bytes | mean request bytes | request bytes vs none |"
    )
    add("| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: |")
    n = len(cases)
    for c in CONFIGS:
        rows = results[c]["rows"]
        tb = sum(r["toolsBytes"] for r in rows)
        bb = sum(r["bodyBytes"] for r in rows)
        nt = sum(r["tools"] for r in rows)
        add(
            f"| {LABELS[c]} | {nt / n:.1f} | {tb:,} | {tb / n:,.0f} | {_pct(tb, base_tb)} "
            f"| {bb:,} | {bb / n:,.0f} | {_pct(bb, base_bb)} |"
        )
    add("")
    res_rows = results["resolver"]["rows"]
    narrowed = sum(1 for r in res_rows if r.get("toolsAllow") is not None)
    add(
        f"Resolver: narrowed {narrowed} of {n} turns; sources: "
        + ", ".join(
            f"{s} {sum(1 for r in res_rows if r.get('source') == s)}"
            for s in sorted({str(r.get("source")) for r in res_rows})
        )
        + f". Mean resolution latency {sum(r.get('latencyMs') or 0 for r in res_rows) / n:.1f} ms "
        "(telemetry `latencyMs`).\n"
    )
    add(
        "Gateway start / wall time per configuration: "
        + "; ".join(
            f"{c} {results[c]['gatewayStartS']} s / {results[c]['wallS']} s" for c in CONFIGS
        )
        + ".\n"
    )

    add("## Per prompt\n")
    add("tools = tools sent / tools JSON bytes; body = request body bytes.\n")
    add(
        "| case | category | none tools | none body | Tool Search tools | Tool Search body "
        "| resolver tools | resolver body | resolver source | resolver tools sent |"
    )
    add("| --- | --- | ---: | ---: | ---: | ---: | ---: | ---: | --- | --- |")
    for i, case in enumerate(cases):
        a, b, r = (results[c]["rows"][i] for c in CONFIGS)
        sent = ", ".join(sorted(r["toolNames"])) if r["tools"] < a["tools"] else "(all)"
        add(
            f"| {case['id']} | {case['category']} | {a['tools']} / {a['toolsBytes']:,} "
            f"| {a['bodyBytes']:,} | {b['tools']} / {b['toolsBytes']:,} | {b['bodyBytes']:,} "
            f"| {r['tools']} / {r['toolsBytes']:,} | {r['bodyBytes']:,} | {r.get('source')} "
            f"| {sent} |"
        )
    add("")
    return "\n".join(out)


def head_commit() -> str:
    """The checkout's HEAD commit (short), read from ``.git`` without running git."""
    git = REPO_ROOT / ".git"
    try:
        if git.is_file():  # a worktree: "gitdir: <path>"
            git = Path(git.read_text().split(":", 1)[1].strip())
        head = (git / "HEAD").read_text().strip()
        if not head.startswith("ref:"):
            return head[:7]
        ref = head.split(":", 1)[1].strip()
        for base in (git, Path(str(git).split("/worktrees/")[0])):
            if (base / ref).is_file():
                return (base / ref).read_text().strip()[:7]
            packed = base / "packed-refs"
            if packed.is_file():
                for line in packed.read_text().splitlines():
                    if line.endswith(f" {ref}"):
                        return line[:7]
    except (OSError, IndexError):
        pass
    return "unknown"


# ---- MCP-heavy host: what a whole task costs (--mcp) ---------------------------------------

MCP_CASES = REPO_ROOT / "benchmark" / "benchmark-v1-mcp.json"
MCP_SURFACE = REPO_ROOT / "benchmark" / "mcp" / "surface-openclaw-2026.9.6.json"
MCP_CONFIGS = ("none", "toolsearch", "resolver", "resolver+toolsearch")
"""``resolver*``: installed with ``resolver install openclaw``, which lists the MCP servers'
tools for the sidecar (``resolver openclaw sync-mcp``): OpenClaw 2026.9.6's ``llm_input``
reports only OpenClaw's own tools, never MCP tools."""
LABELS["resolver+toolsearch"] = "resolver + Tool Search (offline, toolSearch unset)"
MCP_REQUEST_TIMEOUT_MS = 20_000
"""``requestTimeoutMs`` on every server: bounds a real tool call that hangs (a server waiting
on a network that is not there) and lifts the 1.5 s ``tools/list`` deadline at catalog time,
which 15 servers starting at once on two busy cores could miss (a server would silently lose
its tools)."""
MCP_SESSION_IDLE_TTL_MS = 1_000
"""``mcp.sessionIdleTtlMs``: OpenClaw keeps one MCP runtime (all 15 server processes) per
session, forever by default; every task runs in its own session, so without eviction the
processes of every finished task would pile up. The sweep runs once a minute."""
MAX_LIVE_SESSIONS = 12
"""Before a task starts, wait until at most this many sessions' MCP servers are alive. The
Gateway spawns children through one broker that admits at most 256 at a time
(``MAX_REQUESTS`` in dist/host-*.mjs); past it every server of a new session fails with
``ERR_SPAWN_BROKER_UNAVAILABLE`` and its tools silently vanish from the turn (seen at ~17
live sessions of 15 servers)."""
FAILED_MARK = "failed to start server"
MAX_SEARCHES = 3
"""``tool_search`` calls the scripted model makes for one needed tool before it gives up."""
WIDE_LIMIT = 20
"""The last search asks for OpenClaw's maximum number of results (the default is 8)."""
TURN_TIMEOUT_S = 300.0
FINAL_TEXT = "Done: every step is finished."


def name_words(tool: str) -> str:
    """``github__create_issue`` -> ``github create issue`` (what a model would search for)."""
    return " ".join(w for w in re.split(r"[_\-\s]+", tool) if w)


def _dummy(schema: Any, depth: int = 0) -> Any:
    """A small value of the schema's type (first enum/const value, minimum for numbers)."""
    if not isinstance(schema, dict) or depth > 4:
        return "x"
    if "const" in schema:
        return schema["const"]
    if isinstance(schema.get("enum"), list) and schema["enum"]:
        return schema["enum"][0]
    for key in ("anyOf", "oneOf", "allOf"):
        options = schema.get(key)
        if isinstance(options, list) and options:
            usable = [o for o in options if isinstance(o, dict) and o.get("type") != "null"]
            return _dummy((usable or options)[0], depth + 1)
    kind = schema.get("type")
    if isinstance(kind, list):
        kind = next((k for k in kind if k != "null"), "string")
    if kind in ("integer", "number"):
        low = schema.get("minimum", schema.get("exclusiveMinimum", 1))
        return max(1, int(low)) if isinstance(low, int | float) else 1
    if kind == "boolean":
        return False
    if kind == "array":
        return []
    if kind == "object" or "properties" in schema:
        return minimal_args(schema, depth + 1)
    if kind == "null":
        return None
    return "x"


def minimal_args(schema: Any, depth: int = 0) -> dict[str, Any]:
    """Only the required properties, each with a small dummy value (``{}`` when none)."""
    if not isinstance(schema, dict):
        return {}
    props = schema.get("properties")
    props = props if isinstance(props, dict) else {}
    required = schema.get("required")
    required = required if isinstance(required, list) else []
    return {name: _dummy(props.get(name), depth) for name in required if isinstance(name, str)}


def message_text(content: Any) -> str:
    """The text of an OpenAI message ``content`` (a string or a list of parts)."""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "\n".join(str(p.get("text", "")) if isinstance(p, dict) else str(p) for p in content)
    return "" if content is None else json.dumps(content)


_ID_FIELD = re.compile(r'"id"\s*:\s*"([^"\\]+)"')
_CALLED_TOOL = re.compile(
    r'"tool"\s*:\s*\{\s*"id"\s*:\s*"([^"\\]+)"\s*,\s*"name"\s*:\s*"([^"\\]+)"'
)


NOT_DISPATCHED = (
    "Use tool_search to find a tool",
    "Ambiguous tool name",
    "names a skill, not a callable tool",
)
"""Texts of ``tool_call`` results whose id matched no catalog entry (OpenClaw's
``formatUnknownToolIdError`` and ambiguity error in dist/local-model-lean-*.mjs)."""


def last_tool_result(messages: list[dict[str, Any]]) -> dict[str, Any] | None:
    """The tool message answering the last assistant tool call (OpenClaw renumbers call ids,
    ``call_3_1`` comes back as ``call01``, so the answer is found by position)."""
    for i in range(len(messages) - 1, -1, -1):
        message = messages[i]
        if message.get("role") == "assistant" and message.get("tool_calls"):
            ids = {c.get("id") for c in message["tool_calls"] if isinstance(c, dict)}
            return next(
                (
                    m
                    for m in messages[i + 1 :]
                    if m.get("role") == "tool" and m.get("tool_call_id") in ids
                ),
                None,
            )
    return None


def found_id(search_text: str, tool: str) -> str | None:
    """The catalog id of ``tool`` in a ``tool_search`` result (``mcp:github:github__x``)."""
    for match in _ID_FIELD.finditer(search_text):
        value = match.group(1)
        if value == tool or value.endswith(f":{tool}"):
            return value
    return None


def called(call_text: str) -> str | None:
    """The name of the tool a ``tool_call`` result says it ran (``{"tool": {"id", "name"}}``)."""
    match = _CALLED_TOOL.search(call_text)
    return match.group(2) if match else None


@dataclass
class TaskScript:
    """The scripted primary model for one task (one MCP case, one turn, its own session).

    For each needed tool in order (``must_include``): call it with minimal arguments as soon as
    it is in the request's ``tools``; when it is not but ``tool_search`` is, search (first the
    user's prompt, then the tool's name words, then those words with ``limit`` 20), and call the
    tool found through ``tool_call`` (``tool_describe`` first with ``describe``); when neither
    works, the tool cannot be reached and the script goes on with the next one. After the last
    needed tool it answers with text. A tool counts as reached once OpenClaw has run the call
    (its result, often an error from a server with a dummy token, is in the next request)."""

    index: int
    case: dict[str, Any]
    schemas: dict[str, Any]
    describe: bool = False
    step: int = 0
    searches: int = 0
    found: str | None = None
    described: bool = False
    pending: tuple[str, str, str] | None = None
    """(kind, needed tool, call id) of the call the model made last."""
    calls: int = 0
    reached: dict[str, str] = field(default_factory=dict)
    """needed tool -> how: ``direct`` or ``tool_call``."""
    unreached: dict[str, str] = field(default_factory=dict)
    """needed tool -> why it could not be reached."""
    actions: list[str] = field(default_factory=list)
    requests: list[LoggedRequest] = field(default_factory=list)
    stray: int = 0
    done: bool = False

    @property
    def need(self) -> list[str]:
        return list(self.case["must_include"])

    def mine(self, req: LoggedRequest) -> bool:
        key = self.case["prompt"].strip()[:40]
        return any(
            m.get("role") == "user" and key in message_text(m.get("content"))
            for m in req.body.get("messages") or []
        )

    def respond(self, req: LoggedRequest) -> PrimaryReply:
        if not self.mine(req) or self.done:
            self.stray += 1
            return PrimaryReply(text="OK.")
        self.requests.append(req)
        if self.pending is not None:
            self._take_result(req)
        return self._next(req)

    def _take_result(self, req: LoggedRequest) -> None:
        assert self.pending is not None
        kind, tool, _ = self.pending
        self.pending = None
        result = last_tool_result(req.body.get("messages") or [])
        if result is None:
            self._give_up(tool, f"no result for the {kind} call")
            return
        text = message_text(result.get("content"))
        self.actions.append(f"-> {' '.join(text.split())[:160]}")
        if kind == "direct":
            self._reach(tool, "direct")
        elif kind == "call":
            # The result names the tool it ran ({"tool": {"id", "name"}, "result"}); a call
            # that failed inside the tool may come back as a bare error, which still ran it.
            # Only a lookup failure (unknown or ambiguous id) did not.
            if called(text) == tool or not any(m in text for m in NOT_DISPATCHED):
                self._reach(tool, "tool_call")
            else:
                self._give_up(tool, f"tool_call did not run it: {text[:160]!r}")
        elif kind == "search":
            self.found = found_id(text, tool)
            self.actions.append(f"search {self.searches}: {'found' if self.found else 'miss'}")
        elif kind == "describe":
            self.described = True

    def _call(self, kind: str, tool: str, name: str, args: dict[str, Any]) -> PrimaryReply:
        self.calls += 1
        call_id = f"call_{self.index}_{self.calls}"
        self.pending = (kind, tool, call_id)
        self.actions.append(f"{name}({json.dumps(args, ensure_ascii=False)[:120]})")
        return PrimaryReply(tool_calls=(ToolCall(name, args, id=call_id),))

    def _reach(self, tool: str, how: str) -> None:
        self.reached[tool] = how
        self._advance()

    def _give_up(self, tool: str, why: str) -> None:
        self.unreached[tool] = why
        self.actions.append(f"unreachable {tool}: {why}")
        self._advance()

    def _advance(self) -> None:
        self.step += 1
        self.searches = 0
        self.found = None
        self.described = False

    def _next(self, req: LoggedRequest) -> PrimaryReply:
        names = set(req.tool_names)
        while self.step < len(self.need):
            tool = self.need[self.step]
            args = minimal_args(self.schemas.get(tool))
            if tool in names:
                return self._call("direct", tool, tool, args)
            if self.found is not None:
                if self.describe and not self.described and "tool_describe" in names:
                    return self._call("describe", tool, "tool_describe", {"id": self.found})
                if "tool_call" in names:
                    return self._call("call", tool, "tool_call", {"id": self.found, "args": args})
            if "tool_search" in names and self.searches < MAX_SEARCHES:
                self.searches += 1
                query = (
                    self.case["prompt"].strip()[:500] if self.searches == 1 else name_words(tool)
                )
                search: dict[str, Any] = {"query": query}
                if self.searches == MAX_SEARCHES:
                    search["limit"] = WIDE_LIMIT
                return self._call("search", tool, "tool_search", search)
            why = "not in the request, no tool_search"
            if "tool_search" in names:
                why = f"tool_search did not find it in {MAX_SEARCHES} searches"
            self._give_up(tool, why)
        self.done = True
        return PrimaryReply(text=FINAL_TEXT)

    def row(self) -> dict[str, Any]:
        reqs = self.requests
        return {
            "id": self.case["id"],
            "category": self.case["category"],
            "need": self.need,
            "completed": len(self.reached) == len(self.need),
            "reached": self.reached,
            "unreached": self.unreached,
            "answered": self.done,
            "requests": len(reqs),
            "toolsPerRequest": [len(r.tool_names) for r in reqs],
            "toolsBytesPerRequest": [r.tools_bytes for r in reqs],
            "bodyBytesPerRequest": [r.body_bytes for r in reqs],
            "toolsBytes": sum(r.tools_bytes for r in reqs),
            "bodyBytes": sum(r.body_bytes for r in reqs),
            "firstToolNames": reqs[0].tool_names if reqs else [],
            "actions": self.actions,
            "stray": self.stray,
        }


def session_id_of(run: AgentRun) -> str | None:
    """``terminalReceipt.sessionId`` of an ``openclaw agent --json`` run."""
    receipt = run.receipt()
    session = receipt.get("sessionId") if receipt else None
    return session if isinstance(session, str) else None


def mcp_processes(root_pid: int, marker: str) -> int:
    """How many descendants of ``root_pid`` run a script from the MCP install folder."""
    return len(mcp_server_pids(root_pid, marker))


def wait_for_room(root_pid: int, marker: str, limit: int, timeout: float = 150.0) -> float:
    """Wait until at most ``limit`` MCP server processes run under the Gateway (idle session
    runtimes are evicted by OpenClaw's once-a-minute sweep); the seconds waited."""
    t0 = time.monotonic()
    while mcp_processes(root_pid, marker) > limit and time.monotonic() - t0 < timeout:
        time.sleep(1.0)
    return time.monotonic() - t0


def _servers_in(names: list[str], servers: list[str]) -> dict[str, int]:
    return {s: sum(1 for n in names if n.startswith(f"{s}__")) for s in servers}


def run_mcp_config(
    name: str,
    install: OpenClawInstall,
    workdir: Path,
    cases: list[dict[str, Any]],
    log: Callable[[str], None],
    *,
    servers_only: list[str] | None,
    describe: bool,
) -> dict[str, Any]:
    """One configuration on the MCP host: one Gateway, a warm-up turn, then one task per case.

    Each task is one turn in its own session (``--session-key bench-<id>``) answered by a
    :class:`TaskScript`; every model request of the turn is counted. OpenClaw gives each
    session its own MCP runtime, so every task starts the servers anew (they are not shared
    between sessions); idle runtimes are evicted after ``MCP_SESSION_IDLE_TTL_MS``."""
    schemas = {t["name"]: t["parameters"] for t in json.loads(MCP_SURFACE.read_text())["tools"]}
    home_dir = workdir / name
    home_dir.mkdir(parents=True)
    servers = ensure_mcp_servers(home_dir / "mcp-data", install, only=servers_only)
    mcp = openclaw_mcp_config(servers, requestTimeoutMs=MCP_REQUEST_TIMEOUT_MS)
    mcp["sessionIdleTtlMs"] = MCP_SESSION_IDLE_TTL_MS
    marker = str(cache_dir() / f"mcp-{pins_hash(load_pins())}")
    current: list[TaskScript] = []

    def primary(req: LoggedRequest) -> PrimaryReply:
        if not current:
            return PrimaryReply(text="Hello! I can help with that.")
        return current[0].respond(req)

    with MockLLM(primary_responder=primary) as mock:
        home = OpenClawHome(install=install, home=home_dir, base_url=mock.base_url)
        telemetry = configure(name, home, {"mcp": mcp})
        t0 = time.monotonic()
        with home.start_gateway(timeout=300) as gateway:
            log(f"[{name}] gateway ready in {gateway.started_in:.1f}s")
            warm = gateway.turn(WARM_PROMPT, session_key="bench-warmup", timeout=TURN_TIMEOUT_S)
            if warm.returncode != 0:
                raise RuntimeError(
                    f"warm-up failed:\n{warm.stderr[-3000:]}\n{gateway.log()[-3000:]}"
                )
            if not mock.primary_requests:
                raise RuntimeError("warm-up: no primary request logged")
            first = mock.primary_requests[0]
            warm_info = {
                "seconds": round(warm.seconds, 1),
                "sessionId": session_id_of(warm),
                "tools": len(first.tool_names),
                "toolsBytes": first.tools_bytes,
                "bodyBytes": first.body_bytes,
                "toolNames": first.tool_names,
                "servers": _servers_in(first.tool_names, list(servers)),
                "mcpProcesses": mcp_processes(gateway.proc.pid, marker),
            }
            log(
                f"[{name}] warm-up {warm.seconds:.1f}s: {warm_info['tools']} tools, "
                f"{warm_info['toolsBytes']:,} B; MCP processes {warm_info['mcpProcesses']}"
            )
            rows: list[dict[str, Any]] = []
            per_session = max(1, warm_info["mcpProcesses"])
            retries = 0
            waited_total = 0.0
            for i, case in enumerate(cases):
                waited = wait_for_room(gateway.proc.pid, marker, MAX_LIVE_SESSIONS * per_session)
                for attempt in range(2):  # once more if servers failed to start (spawn limit)
                    failed_before = gateway.log().count(FAILED_MARK)
                    script = TaskScript(index=i, case=case, schemas=schemas, describe=describe)
                    current[:] = [script]
                    key = f"bench-{case['id']}" + ("-retry" if attempt else "")
                    run = gateway.turn(case["prompt"], session_key=key, timeout=TURN_TIMEOUT_S)
                    current.clear()
                    if run.returncode != 0:
                        raise RuntimeError(
                            f"{case['id']} failed:\n{run.stderr[-3000:]}\n{gateway.log()[-2000:]}"
                        )
                    failed = gateway.log().count(FAILED_MARK) - failed_before
                    if not failed or attempt:
                        break
                    retries += 1
                    log(f"[{name}] {case['id']}: {failed} MCP servers failed to start; retrying")
                    waited += wait_for_room(gateway.proc.pid, marker, per_session)
                waited_total += waited
                row = script.row()
                row["seconds"] = round(run.seconds, 2)
                row["sessionId"] = session_id_of(run)
                row["mcpProcesses"] = mcp_processes(gateway.proc.pid, marker)
                row["serversFailedToStart"] = failed
                row["waitedS"] = round(waited, 1)
                rows.append(row)
                status = "ok" if row["completed"] else f"UNREACHED {sorted(row['unreached'])}"
                log(
                    f"[{name}] {case['id']}: {row['requests']} requests, "
                    f"{row['toolsBytes']:,} B tools, {row['bodyBytes']:,} B body, {status} "
                    f"({run.seconds:.1f}s, {row['mcpProcesses']} MCP processes)"
                )
            gw_log = gateway.log()
        wall = time.monotonic() - t0
        other = len(mock.other_requests)
        classifier = len(mock.classifier_requests)
    lines: list[dict[str, Any]] = []
    if telemetry is not None and telemetry.exists():
        lines = [json.loads(x) for x in telemetry.read_text().splitlines() if x.strip()]
    warm_line = None
    extra_lines = 0
    if telemetry is not None:
        by_session = {line.get("sessionId"): line for line in lines}
        expected = len(cases) + 1 + retries
        if len(lines) < expected:
            raise RuntimeError(f"expected {expected} telemetry lines, got {len(lines)}")
        # More lines than turns: a hook that fired twice in one session (the host retried a
        # model call). Each task's row then takes its session's last line, never a line by
        # position.
        extra_lines = len(lines) - expected
        if extra_lines:
            log(f"[{name}] {extra_lines} telemetry line(s) more than turns; matched by session")
        warm_line = by_session.get(warm_info["sessionId"], lines[0])
        for i, row in enumerate(rows):
            line = by_session.get(row["sessionId"]) or (None if extra_lines else lines[i + 1])
            if line is None:
                raise RuntimeError(f"no telemetry line for session {row['sessionId']}")
            row["source"] = line.get("source")
            row["reasonCodes"] = line.get("reasonCodes")
            row["toolsAllow"] = line.get("toolsAllow")
            row["latencyMs"] = line.get("latencyMs")
    state: dict[str, Any] | None = None
    state_file = home_dir / ".openclaw" / "resolver-surface.json"
    if state_file.exists():
        saved = json.loads(state_file.read_text())
        names = sorted(saved.get("tools") or {})
        state = {
            "tools": len(names),
            "mcpTools": sum(1 for n in names if "__" in n),
            "servers": _servers_in(names, list(servers)),
        }
    failed = sorted(set(re.findall(r'failed to start server "([^"]+)"', gw_log)))
    return {
        "config": name,
        "rows": rows,
        "warmup": warm_info,
        "warmupTelemetry": warm_line,
        "surfaceState": state,
        "serversFailed": failed,
        "gatewayStartS": round(gateway.started_in, 1),
        "wallS": round(wall, 1),
        "retries": retries,
        "extraTelemetryLines": extra_lines,
        "waitedS": round(waited_total, 1),
        "otherRequests": other,
        "classifierRequests": classifier,
        "gatewayLogTail": gw_log[-3000:],
    }


def _mean(values: Sequence[float]) -> float | None:
    return statistics.fmean(values) if values else None


def _fmt(value: float | None, digits: int = 0) -> str:
    return "—" if value is None else f"{value:,.{digits}f}"


def mcp_summary(result: dict[str, Any]) -> dict[str, Any]:
    rows = result["rows"]
    done = [r for r in rows if r["completed"]]
    per_request = [n for r in rows for n in r["toolsPerRequest"]]
    allow = [len(r["toolsAllow"]) for r in rows if r.get("toolsAllow") is not None]
    return {
        "tasks": len(rows),
        "completed": len(done),
        "unreached": sum(1 for r in rows if r["unreached"]),
        "requestsPerTask": _mean([r["requests"] for r in rows]),
        "toolsPerRequest": _mean(per_request),
        "toolsBytesCompleted": _mean([r["toolsBytes"] for r in done]),
        "toolsBytesAll": _mean([r["toolsBytes"] for r in rows]),
        "bodyBytesCompleted": _mean([r["bodyBytes"] for r in done]),
        "bodyBytesAll": _mean([r["bodyBytes"] for r in rows]),
        "toolsAllowMean": _mean(allow),
        "narrowed": len(allow),
        "viaToolCall": sum(1 for r in rows for how in r["reached"].values() if how == "tool_call"),
    }


def _reduction(new: float | None, base: float | None) -> float | None:
    return None if new is None or not base else (1 - new / base) * 100


def render_mcp(
    results: dict[str, dict[str, Any]], cases: list[dict[str, Any]], meta: dict[str, Any]
) -> str:
    configs = [c for c in MCP_CONFIGS if c in results]
    sums = {c: mcp_summary(results[c]) for c in configs}
    out: list[str] = []
    add = out.append
    add("# OpenClaw with 15 MCP servers: what a task costs\n")
    add(run_header(meta))
    servers = meta["servers"]
    add(
        f"- MCP host: {len(servers)} stdio servers of `benchmark/mcp/servers.json` under "
        "`mcp.servers`, started by OpenClaw ("
        + ", ".join(f"{s['name']} {s['package']}@{s['version']}" for s in servers)
        + f"); every server with `requestTimeoutMs: {meta['requestTimeoutMs']}`, "
        f"`mcp.sessionIdleTtlMs: {meta['sessionIdleTtlMs']}`. OpenClaw gives every session "
        "its own MCP runtime (all servers spawned anew, kept until evicted by a once-a-minute "
        "sweep) and its Gateway spawns at most 256 children at a time, so before each task the "
        f"script waits until at most {meta.get('maxLiveSessions', MAX_LIVE_SESSIONS)} sessions' "
        "servers are alive; a task whose servers still failed to start is run once more in a "
        "new session"
    )
    if "none" in results:
        w = results["none"]["warmup"]
        mcp_tools = sum(w["servers"].values())
        add(
            f"- full surface of this host (no plugin, `toolSearch=false`, Gateway): "
            f"**{w['tools']} tools ({w['tools'] - mcp_tools} OpenClaw + {mcp_tools} MCP), "
            f"{w['toolsBytes']:,} B** of tools JSON; whole first request {w['bodyBytes']:,} B "
            "(`agent --local` sends 268 tools / 256,560 B: "
            "`benchmark/mcp/surface-openclaw-2026.9.6.json`; the Gateway adds "
            "`github_identity_status`)"
        )
    add(
        "- one local Gateway per configuration (127.0.0.1), one warm-up turn (not measured: "
        "for the resolver it abstains and shows the sidecar the surface), then one task per "
        "case, each one turn in its own session (`--session-key bench-<id>`)"
    )
    add(
        f"- cases: {len(cases)} of the 250 in `benchmark/benchmark-v1-mcp.json`, round robin "
        "over its 18 categories in file order (the first case of every category, then the "
        "second, ...), not chosen by outcome; `must_include` = the tools the task needs"
    )
    add(
        "- the primary model is the loopback mock (`tests/e2e/mock_llm.py`) driven by a "
        "scripted task (`TaskScript`): for each needed tool in order it calls the tool with "
        "its required arguments only (dummy values) as soon as it is in the request's `tools`; "
        "when it is not but `tool_search` is, it searches (1: the user's prompt; 2: the "
        f"tool's name words, e.g. `github create issue`; 3: the same with `limit: {WIDE_LIMIT}`) "
        "and calls the tool it found with `tool_call {id, args}`"
        + (", after `tool_describe {id}`" if meta.get("describe") else "")
        + "; otherwise the tool cannot be reached. After the last needed tool it answers "
        "with text. OpenClaw runs every call on the real server (most fail: dummy tokens, no "
        "network, no browser; the call still counts). Every model request of the task is "
        "counted: tools = compact JSON of the request's `tools` (UTF-8), request = the whole "
        "body as received (system prompt, history, tool results included)"
    )
    if not meta.get("describe"):
        add(
            "- Tool Search marks MCP tools' input as `unknown` and tells the model to "
            "`tool_describe` them before calling; the script skips that (it knows the "
            "arguments), so a real model would make one more request per tool it finds "
            "(`--describe` counts it)"
        )
    add("")

    add("## Per configuration\n")
    add(
        "Means per task unless said; *completed* = every needed tool reached; bytes over "
        "completed tasks and over all tasks.\n"
    )
    add(
        "| configuration | tasks | completed | could not reach a tool | model requests / task "
        "| tools / request | tools bytes / task (completed) | tools bytes / task (all) "
        "| request bytes / task (completed) | request bytes / task (all) | toolsAllow size |"
    )
    add("| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |")
    for c in configs:
        s = sums[c]
        allow = "—"
        if c.startswith("resolver"):
            allow = f"{_fmt(s['toolsAllowMean'], 1)} ({s['narrowed']}/{s['tasks']} narrowed)"
        add(
            f"| {LABELS[c]} | {s['tasks']} | {s['completed']} | {s['unreached']} "
            f"| {_fmt(s['requestsPerTask'], 2)} | {_fmt(s['toolsPerRequest'], 1)} "
            f"| {_fmt(s['toolsBytesCompleted'])} | {_fmt(s['toolsBytesAll'])} "
            f"| {_fmt(s['bodyBytesCompleted'])} | {_fmt(s['bodyBytesAll'])} | {allow} |"
        )
    add("")

    if "none" in sums:
        base = sums["none"]
        add("Against no plugin (mean per task, all tasks / completed tasks):\n")
        add("| configuration | tools bytes | request bytes |")
        add("| --- | ---: | ---: |")
        for c in configs:
            if c == "none":
                continue
            s = sums[c]
            add(
                f"| {LABELS[c]} "
                f"| {_fmt(_reduction(s['toolsBytesAll'], base['toolsBytesAll']), 1)}% fewer / "
                f"{_fmt(_reduction(s['toolsBytesCompleted'], base['toolsBytesCompleted']), 1)}% "
                f"| {_fmt(_reduction(s['bodyBytesAll'], base['bodyBytesAll']), 1)}% fewer / "
                f"{_fmt(_reduction(s['bodyBytesCompleted'], base['bodyBytesCompleted']), 1)}% |"
            )
        add("")

    if {"none", "toolsearch"} <= set(sums):
        add("## Targets\n")
        add(
            "Targets set by the project (not tuned for): ≥ 90% fewer tool bytes per task than "
            "no plugin, and fewer request bytes per completed task than Tool Search.\n"
        )
        ts, base = sums["toolsearch"], sums["none"]
        for c in ("resolver", "resolver+toolsearch"):
            if c not in sums:
                continue
            res = sums[c]
            cut_all = _reduction(res["toolsBytesAll"], base["toolsBytesAll"])
            cut_done = _reduction(res["toolsBytesCompleted"], base["toolsBytesCompleted"])
            met = cut_all is not None and cut_all >= 90 and cut_done is not None and cut_done >= 90
            rb, tb = res["bodyBytesCompleted"], ts["bodyBytesCompleted"]
            met2 = rb is not None and tb is not None and rb < tb
            add(f"**{LABELS[c]}** ({res['completed']}/{res['tasks']} tasks completed):\n")
            add(
                f"- tool bytes per task vs no plugin: {_fmt(cut_all, 1)}% fewer (all tasks), "
                f"{_fmt(cut_done, 1)}% fewer (completed tasks): "
                f"**{'met' if met else 'not met'}**"
            )
            add(
                f"- request bytes per completed task: {_fmt(rb)} B vs Tool Search {_fmt(tb)} B "
                f"({ts['completed']}/{ts['tasks']} completed): **{'met' if met2 else 'not met'}**"
                + (" (no task completed)" if rb is None else "")
            )
            both = [
                (r, t)
                for r, t in zip(results[c]["rows"], results["toolsearch"]["rows"], strict=True)
                if r["completed"] and t["completed"]
            ]
            if both:
                add(
                    f"  - on the {len(both)} tasks both completed: "
                    f"{_fmt(_mean([r['bodyBytes'] for r, _ in both]))} B vs Tool Search "
                    f"{_fmt(_mean([t['bodyBytes'] for _, t in both]))} B per task; "
                    f"{_fmt(_mean([r['requests'] for r, _ in both]), 2)} vs "
                    f"{_fmt(_mean([t['requests'] for _, t in both]), 2)} model requests"
                )
            add("")

    add("## Surfaces\n")
    for c in configs:
        r = results[c]
        w = r["warmup"]
        line = (
            f"- {LABELS[c]}: warm-up request {w['tools']} tools / {w['toolsBytes']:,} B "
            f"(MCP tools in it: {sum(w['servers'].values())})"
        )
        if r.get("surfaceState"):
            st = r["surfaceState"]
            line += (
                f"; the sidecar's surface state after the run: {st['tools']} tools, "
                f"{st['mcpTools']} of them MCP"
            )
        if r.get("serversFailed"):
            line += f"; servers that failed to start: {', '.join(r['serversFailed'])}"
        add(line)
        first = sorted({n for row in r["rows"] for n in row["firstToolNames"]})
        if c.endswith("toolsearch"):
            add(f"  - tools seen in the tasks' requests (union): {', '.join(first)}")
        if c.startswith("resolver"):
            reasons: dict[str, int] = {}
            for row in r["rows"]:
                for code in row.get("reasonCodes") or []:
                    reasons[code] = reasons.get(code, 0) + 1
            mcp_allowed = sum(
                1 for row in r["rows"] if any("__" in t for t in row.get("toolsAllow") or [])
            )
            add(
                f"  - toolsAllow held an MCP tool in {mcp_allowed} of {len(r['rows'])} tasks; "
                "reason codes: " + ", ".join(f"{k} {v}" for k, v in sorted(reasons.items()))
            )
        procs = [row["mcpProcesses"] for row in r["rows"]]
        if procs:
            add(
                "  - MCP server processes under the Gateway after each task (chrome-devtools-mcp "
                "renames its process and is not counted): "
                f"{min(procs)}–{max(procs)} (warm-up: {w['mcpProcesses']}); Gateway start "
                f"{r['gatewayStartS']} s, wall {r['wallS']} s (of which waiting for idle MCP "
                f"runtimes to be evicted {r.get('waitedS', 0)} s), task turns "
                f"{_fmt(_mean([row['seconds'] for row in r['rows']]), 1)} s mean"
            )
        bad = [row["id"] for row in r["rows"] if row.get("serversFailedToStart")]
        add(
            f"  - tasks retried because MCP servers failed to start: {r.get('retries', 0)}; "
            f"tasks whose servers still failed: {', '.join(bad) if bad else 'none'}"
        )
    add("")

    add("## Tools not reached\n")
    any_missing = False
    for c in configs:
        missing = [
            (row["id"], t, why) for row in results[c]["rows"] for t, why in row["unreached"].items()
        ]
        if not missing:
            continue
        any_missing = True
        add(f"- {LABELS[c]} ({len(missing)}):")
        for cid, tool, why in missing:
            add(f"  - {cid} `{tool}`: {why}")
    if not any_missing:
        add("None.")
    add("")

    add("## Per task\n")
    add(
        "Each cell: model requests / tools KB / request KB, then ✓ (every needed tool reached) "
        "or ✗; resolver cells add the toolsAllow size.\n"
    )
    add("| case | category | needed | " + " | ".join(LABELS[c] for c in configs) + " |")
    add("| --- | --- | --- | " + " | ".join("---" for _ in configs) + " |")
    for i, case in enumerate(cases):
        cells = []
        for c in configs:
            row = results[c]["rows"][i]
            cell = (
                f"{row['requests']} / {row['toolsBytes'] / 1000:,.1f} / "
                f"{row['bodyBytes'] / 1000:,.1f} {'✓' if row['completed'] else '✗'}"
            )
            if c.startswith("resolver"):
                allow = row.get("toolsAllow")
                cell += f" ({len(allow)})" if allow is not None else " (abstain)"
            cells.append(cell)
        need = ", ".join(f"`{t}`" for t in case["must_include"])
        add(f"| {case['id']} | {case['category']} | {need} | " + " | ".join(cells) + " |")
    add("")
    return "\n".join(out)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument(
        "--prompts",
        "--cases",
        dest="cases",
        type=int,
        help="how many cases (default 24; 48 with --mcp)",
    )
    parser.add_argument(
        "--mcp",
        action="store_true",
        help="the MCP host (15 servers, benchmark-v1-mcp.json, 4 configurations, whole tasks)",
    )
    parser.add_argument(
        "--describe",
        action="store_true",
        help="--mcp: the scripted model calls tool_describe before each tool_call",
    )
    parser.add_argument("--out", type=Path, help="write the markdown report here")
    parser.add_argument("--json", type=Path, help="write the raw measurements here")
    parser.add_argument("--configs", help=argparse.SUPPRESS)
    parser.add_argument("--servers", help=argparse.SUPPRESS)  # --mcp: a subset, for trials
    parser.add_argument(
        "--render", type=Path, metavar="JSON", help="only re-render a --json file's report"
    )
    args = parser.parse_args()
    # a SIGTERM (a stopped run) unwinds like an exception, so every Gateway, its MCP servers
    # and the mock model are stopped by their context managers instead of being orphaned
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(128 + signal.SIGTERM))
    if args.render:
        saved = json.loads(args.render.read_text())
        if saved["meta"].get("mode") == "mcp":
            cases = pick_cases(len(saved["results"]["none"]["rows"]), MCP_CASES)
            report = render_mcp(saved["results"], cases, saved["meta"])
        else:
            cases = pick_cases(len(saved["results"]["none"]["rows"]))
            report = render(saved["results"], cases, saved["meta"])
        print(report)
        if args.out:
            args.out.write_text(report)
        return 0

    def log(msg: str) -> None:
        print(msg, file=sys.stderr, flush=True)

    install = ensure_openclaw()
    n = args.cases or (48 if args.mcp else 24)
    cases = pick_cases(n, MCP_CASES if args.mcp else CASES)
    configs = (
        args.configs.split(",") if args.configs else list(MCP_CONFIGS if args.mcp else CONFIGS)
    )
    node_version = subprocess.run(
        [str(install.node), "--version"], capture_output=True, text=True, check=True
    ).stdout.strip()
    commit = head_commit()
    argv = " ".join(a if " " not in a else repr(a) for a in sys.argv[1:])
    meta: dict[str, Any] = {
        "date": dt.datetime.now(dt.UTC).strftime("%Y-%m-%d %H:%M UTC"),
        "command": f"python benchmark/openclaw-e2e.py {argv}".strip(),
        "openclaw": OPENCLAW_VERSION,
        "node": node_version,
        "python": platform.python_version(),
        "platform": f"{platform.system()} {platform.machine()}",
        "cpus": os.cpu_count(),
        "load": ", ".join(f"{x:.1f}" for x in os.getloadavg()),
        "commit": commit,
    }
    servers_only = args.servers.split(",") if args.servers else None
    if args.mcp:
        pins = load_pins()
        meta.update(
            mode="mcp",
            describe=args.describe,
            requestTimeoutMs=MCP_REQUEST_TIMEOUT_MS,
            sessionIdleTtlMs=MCP_SESSION_IDLE_TTL_MS,
            maxLiveSessions=MAX_LIVE_SESSIONS,
            servers=[
                {"name": p.name, "package": p.package, "version": p.version}
                for p in pins.values()
                if servers_only is None or p.name in servers_only
            ],
        )
    results: dict[str, dict[str, Any]] = {}
    with tempfile.TemporaryDirectory(prefix="openclaw-bench-") as tmp:
        for name in configs:
            if args.mcp:
                results[name] = run_mcp_config(
                    name,
                    install,
                    Path(tmp),
                    cases,
                    log,
                    servers_only=servers_only,
                    describe=args.describe,
                )
            else:
                results[name] = run_config(name, install, Path(tmp), cases, log)
            if args.json:  # after every configuration: a crash later keeps what was measured
                args.json.write_text(
                    json.dumps({"meta": meta, "results": results}, indent=1) + "\n"
                )
    report = render_mcp(results, cases, meta) if args.mcp else render(results, cases, meta)
    print(report)
    if args.out:
        args.out.write_text(report)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
