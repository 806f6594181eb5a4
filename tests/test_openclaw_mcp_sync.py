"""`resolver openclaw sync-mcp` (resolver/hosts/openclaw/_mcp.py) and the sidecar's MCP guard.

The servers are real processes: ``tests/fixtures/mini_mcp_server.py`` speaks MCP JSON-RPC over
stdio. OpenClaw 2026.9.6's ``llm_input`` never lists MCP tools, so without a sync the sidecar
must keep the full surface for a configured MCP server rather than narrow its tools away.
"""

from __future__ import annotations

import asyncio
import json
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from resolver.cli import main
from resolver.hosts.openclaw._mcp import safe_server_names, servers_from_config, sync, tool_name
from resolver.hosts.openclaw._sidecar import Sidecar

SERVER = str(Path(__file__).parent / "fixtures" / "mini_mcp_server.py")
OPENCLAW_TOOLS = [
    {"name": "read", "description": "Read a file"},
    {"name": "exec", "description": "Run a shell command"},
    {"name": "web_search", "description": "Search the web"},
]


def stdio(**env: str) -> dict[str, Any]:
    entry: dict[str, Any] = {"command": sys.executable, "args": [SERVER]}
    if env:
        entry["env"] = env
    return entry


def write_home(tmp_path: Path, servers: dict[str, Any], state: Path | None = None) -> Path:
    home = tmp_path / ".openclaw"
    home.mkdir(exist_ok=True)
    data: dict[str, Any] = {"mcp": {"servers": servers}}
    state = state or tmp_path / "surface.json"
    data["plugins"] = {
        "entries": {"openclaw-tool-resolver": {"config": {"surfaceStateFile": str(state)}}}
    }
    (home / "openclaw.json").write_text(json.dumps(data))
    return home


def read_state(path: Path) -> dict[str, Any]:
    return dict(json.loads(path.read_text()))


def test_sync_names_tools_as_openclaw_does(tmp_path: Path) -> None:
    """Sanitized names, toolFilter, task-only tools left out, paging, resources tools, and a
    server-to-client request along the way."""
    servers = {
        "github": {
            **stdio(MINI_MCP_RESOURCES="1", MINI_MCP_MODE="sampling"),
            "toolFilter": {"exclude": ["admin_*"]},
        }
    }
    state = tmp_path / "surface.json"
    report = sync({"mcp": {"servers": servers}}, state, timeout=20)
    (result,) = report.servers
    assert result.error is None, result.error
    expected = {
        "github__create_issue",
        "github__list-pull-requests",
        "github__tool-9lives",
        "github__resources_list",
        "github__resources_read",
    }
    assert set(result.tools) == expected
    saved = read_state(state)
    assert set(saved["tools"]) == expected
    assert saved["tools"]["github__create_issue"] == "Create a new issue in a repository"
    assert saved["tools"]["github__tool-9lives"] == "Nine lives"  # the title stands in
    assert "repo" in saved["params"]["github__create_issue"].split()
    assert "closed" in saved["params"]["github__list-pull-requests"].split()
    assert saved["mcpServers"]["github"]["prefix"] == "github"
    assert saved["lastFullView"] is None  # OpenClaw's own tools are still to be seen


def test_openclaw_name_rules() -> None:
    assert safe_server_names(["my server", "my-server", "9x"]) == {
        "my server": "my-server",
        "my-server": "my-server-2",
        "9x": "mcp-9x",
    }
    reserved: set[str] = set()
    long = tool_name("srv", "x" * 100, reserved)
    assert len(long) == 64 and long.startswith("srv__x")
    assert tool_name("srv", "x" * 100, reserved).endswith("-2")
    entries = servers_from_config(
        {"mcp": {"servers": {"a": {"url": "https://x"}, "b": {"command": "c", "enabled": False}}}}
    )
    assert [(e.name, e.stdio is None, e.enabled) for e in entries] == [
        ("a", True, True),
        ("b", False, False),
    ]


def test_a_failing_server_is_reported_and_keeps_what_it_had(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    servers = {
        "good": stdio(),
        "broken": stdio(MINI_MCP_MODE="exit"),
        "slow": stdio(MINI_MCP_MODE="hang"),
        "remote": {"url": "https://mcp.example.com/mcp"},
        "off": {**stdio(), "enabled": False},
    }
    state = tmp_path / "surface.json"
    earlier = {"broken__old_tool": "found by an earlier sync"}
    state.write_text(
        json.dumps(
            {
                "version": 1,
                "tools": {"read": "Read a file", **earlier},
                "mcpServers": {"broken": {"prefix": "broken", "tools": ["broken__old_tool"]}},
                "lastFullView": 5.0,
            }
        )
    )
    home = write_home(tmp_path, servers, state)
    started = time.monotonic()
    code = main(["openclaw", "sync-mcp", "--openclaw-home", str(home), "--timeout", "3"])
    took = time.monotonic() - started
    out, err = capsys.readouterr()
    assert code == 1
    assert "good: 4 tools" in out
    assert "broken: FAILED (exited (3) before answering initialize)" in out
    assert "slow: FAILED (no answer to initialize in time)" in out
    assert "remote: skipped (not a stdio server" in out
    assert "off: skipped (enabled: false)" in out
    assert "could not be listed" in err
    assert took < 60  # bounded by the per-server timeout, not by the hung server
    saved = read_state(state)
    assert saved["tools"]["broken__old_tool"] == "found by an earlier sync"
    assert saved["tools"]["read"] == "Read a file" and saved["lastFullView"] == 5.0
    assert {"good__create_issue", "good__list-pull-requests"} <= set(saved["tools"])
    assert not any(n.startswith(("slow__", "remote__", "off__")) for n in saved["tools"])


def test_a_resync_drops_the_tools_a_server_no_longer_lists(tmp_path: Path) -> None:
    state = tmp_path / "surface.json"
    sync({"mcp": {"servers": {"gh": stdio()}}}, state, timeout=20)
    assert "gh__create_issue" in read_state(state)["tools"]
    fewer = json.dumps([{"name": "search", "inputSchema": {"type": "object"}}])
    sync({"mcp": {"servers": {"gh": stdio(MINI_MCP_TOOLS=fewer)}}}, state, timeout=20)
    tools = read_state(state)["tools"]
    assert [n for n in tools if n.startswith("gh__")] == ["gh__search"]


def test_cli_says_what_it_did_and_names_bad_input(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    home = tmp_path / "empty"
    home.mkdir()
    (home / "openclaw.json").write_text("{}")
    assert main(["openclaw", "sync-mcp", "--openclaw-home", str(home)]) == 0
    assert "nothing to sync" in capsys.readouterr().out
    home = write_home(tmp_path, {"gh": stdio()})
    assert main(["openclaw", "sync-mcp", "--openclaw-home", str(home), "--server", "nope"]) == 2
    err = capsys.readouterr().err
    assert "mcp.servers has no server named nope" in err and "Traceback" not in err


def test_install_lists_mcp_tools_unless_told_not_to(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    state = tmp_path / "surface.json"
    home = write_home(tmp_path, {"gh": stdio()}, state)
    assert main(["install", "openclaw", "--openclaw-home", str(home), "--no-mcp-sync"]) == 0
    assert "mcp:" not in capsys.readouterr().out and not state.exists()
    assert main(["install", "openclaw", "--openclaw-home", str(home)]) == 0
    assert "gh: 4 tools" in capsys.readouterr().out
    assert "gh__create_issue" in read_state(state)["tools"]


class Host:
    def __init__(self, state: Path, servers: list[dict[str, Any]]) -> None:
        self.sidecar = Sidecar()
        self.state = state
        self.servers = servers
        self.runs = 0

    async def call(self, method: str, **params: Any) -> dict[str, Any]:
        answer = await self.sidecar.handle({"id": "x", "method": method, "params": params})
        assert "result" in answer, answer
        return dict(answer["result"])

    async def start(self) -> None:
        config = {"surfaceStateFile": str(self.state)}
        assert (await self.call("configure", config=config, host={"mcpServers": self.servers}))[
            "ok"
        ]
        await self.call("observe_surface", tools=OPENCLAW_TOOLS, ctx={})

    async def turn(self, prompt: str) -> dict[str, Any]:
        self.runs += 1
        ctx = {"sessionId": f"s{self.runs}", "runId": f"r{self.runs}"}
        answer = await self.call("resolve", event={"prompt": prompt}, ctx=ctx)
        await self.call("observe_surface", tools=OPENCLAW_TOOLS, ctx={"runId": ctx["runId"]})
        return answer


async def test_the_sidecar_keeps_the_full_surface_until_the_mcp_tools_are_known(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    """A configured server with unknown tools: abstain (never narrow its tools away). After a
    sync (another process writing the state file) the running sidecar narrows, MCP tools
    included; its own saves keep what the sync wrote."""
    state = tmp_path / "surface.json"
    host = Host(state, [{"name": "github", "enabled": True}, {"name": "off", "enabled": False}])
    await host.start()
    prompt = "create an issue in acme/webapp titled 'login broken'"
    first = await host.turn(prompt)
    assert first["toolsAllow"] is None
    assert first["reasonCodes"] == ["mcp_surface_unknown_abstain"]
    assert "resolver openclaw sync-mcp" in caplog.text and "github" in caplog.text
    assert (await host.turn(prompt))["toolsAllow"] is None  # still unknown

    sync({"mcp": {"servers": {"github": stdio()}}}, state, timeout=20)
    narrowed = await host.turn(prompt)
    allowed = narrowed["toolsAllow"]
    assert allowed is not None, narrowed
    assert "github__create_issue" in allowed
    assert len(allowed) < len(OPENCLAW_TOOLS) + 5 + 20
    saved = read_state(state)  # the sidecar saved after the turn's observe_surface
    assert "github" in saved["mcpServers"] and "github__create_issue" in saved["tools"]
    assert {"read", "exec"} <= set(saved["tools"])


async def test_no_mcp_servers_or_a_malformed_host_field_changes_nothing(tmp_path: Path) -> None:
    for servers in ([], "github", [{"name": 5}, None]):
        host = Host(tmp_path / "surface.json", servers)  # type: ignore[arg-type]
        await host.start()
        answer = await host.turn("search the web for flights to Lisbon")
        assert answer["toolsAllow"] and "web_search" in answer["toolsAllow"]


def test_a_huge_state_file_loads_bounded(tmp_path: Path) -> None:
    """However many tools a state file holds (hand-edited, or many big servers), the sidecar
    keeps at most MAX_CANDIDATES, each description clipped (a file over MAX_STATE_BYTES is
    ignored with a warning: the sidecar then abstains until the host shows its surface)."""
    from resolver._limits import MAX_CANDIDATES, MAX_DESCRIPTION_CHARS
    from resolver.hosts.openclaw._sidecar import SurfaceView

    state = tmp_path / "surface.json"
    tools = {
        f"srv__t{i}": "x" * (MAX_DESCRIPTION_CHARS + 50 if i < 3 else 100)
        for i in range(MAX_CANDIDATES + 5)
    }
    state.write_text(json.dumps({"version": 1, "tools": tools, "lastFullView": 1.0}))
    view = SurfaceView.load(state)
    assert len(view.tools) == MAX_CANDIDATES
    assert max(len(d) for d in view.tools.values()) <= MAX_DESCRIPTION_CHARS


def test_an_override_catalog_describes_an_mcp_tool_by_its_openclaw_name(tmp_path: Path) -> None:
    """MCP tools need no catalog entry (their own descriptions are used), and an operator can
    still describe one by the name OpenClaw gives it: the override wins and routes the prompt."""
    import asyncio

    from resolver import Resolver, ResolverConfig, ToolInfo, TurnRequest

    tools = [
        ToolInfo(name="read", description="Read a file"),
        ToolInfo(name="tracker__create_issue", description="Create a new issue"),
        ToolInfo(name="tracker__list_issues", description="List issues"),
    ]
    prompt = "the login page is broken again, put it on the board for the team"
    override = tmp_path / "catalog.json"
    override.write_text(
        json.dumps(
            {
                "schemaVersion": 1,
                "tools": {
                    "tracker__create_issue": "File a bug on the team board: something broken, "
                    "a crash, put it on the board"
                },
            }
        )
    )

    def pick(catalog: Path | None) -> set[str]:
        path = str(catalog) if catalog else None
        config = ResolverConfig(coreTools=[], catalogOverridesFile=path, keywordCacheFile=None)
        res = asyncio.run(Resolver(config).resolve(TurnRequest(prompt=prompt, tools=tools)))
        return set(res.tools_allow or [])

    assert "tracker__create_issue" not in pick(None)
    assert "tracker__create_issue" in pick(override)


class _SidecarHost:
    """An in-process sidecar whose surface state is a real file, driven like the extension."""

    def __init__(self, state: Path, clock: Any = None, **config: Any) -> None:
        self.sidecar = Sidecar(clock=clock) if clock else Sidecar()
        # a deadline well above building the index on a loaded host
        self.config = {"surfaceStateFile": str(state), "llmTimeoutMs": 14000, **config}
        self.runs = 0

    async def call(self, method: str, **params: Any) -> dict[str, Any]:
        return await self.sidecar.handle({"id": "x", "method": method, "params": params})

    async def start(self) -> None:
        assert (await self.call("configure", config=self.config))["result"]["ok"]
        await self.call("observe_surface", tools=OPENCLAW_TOOLS, ctx={})

    async def turn(self, prompt: str, servers: list[dict[str, Any]]) -> dict[str, Any]:
        self.runs += 1
        ctx = {"sessionId": "s1", "runId": f"r{self.runs}"}
        host = {"mcpServers": servers}
        answer = await self.call("resolve", event={"prompt": prompt}, ctx=ctx, host=host)
        return dict(answer["result"])

    async def synced(self, timeout: float = 60) -> None:
        """Wait for the background listing (bounded)."""
        deadline = time.monotonic() + timeout
        while (task := self.sidecar._mcp_sync) is not None and not task.done():
            assert time.monotonic() < deadline, "the background MCP listing did not finish"
            await asyncio.sleep(0.05)


PROMPT = "create an issue in the octo/app repository titled crash on start"
GITHUB = [{"name": "github", "enabled": True}]


async def test_a_server_added_while_running_is_listed_in_the_background(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """`openclaw mcp add` on a running Gateway: the turn that first names the server keeps the
    full surface and starts the listing; once it is done the turns are narrowed with the
    server's tools among the candidates — no command run by hand."""
    state = tmp_path / "surface.json"
    home = write_home(tmp_path, {"github": stdio()}, state)
    monkeypatch.setenv("OPENCLAW_HOME", str(home))
    host = _SidecarHost(state)
    await host.start()
    first = await host.turn(PROMPT, GITHUB)
    assert first["toolsAllow"] is None
    assert first["reasonCodes"] == ["mcp_surface_unknown_abstain"]
    await host.synced()
    assert "github__create_issue" in read_state(state)["tools"]
    after = await host.turn(PROMPT, GITHUB)
    assert after["toolsAllow"] and "github__create_issue" in after["toolsAllow"]


async def test_auto_sync_off_and_a_failing_server_retried_at_most_every_ten_minutes(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, clock: Any
) -> None:
    """`mcpAutoSync: false` lists nothing (the command is the way); a server that fails to
    start keeps every turn on the full surface and is tried again only after ten minutes."""
    state = tmp_path / "surface.json"
    home = write_home(tmp_path, {"github": stdio(MINI_MCP_MODE="exit")}, state)
    monkeypatch.setenv("OPENCLAW_HOME", str(home))
    off = _SidecarHost(state, mcpAutoSync=False)
    await off.start()
    assert (await off.turn(PROMPT, GITHUB))["reasonCodes"] == ["mcp_surface_unknown_abstain"]
    assert off.sidecar._mcp_sync is None
    on = _SidecarHost(state, clock=clock)
    await on.start()
    await on.turn(PROMPT, GITHUB)
    first = on.sidecar._mcp_sync
    assert first is not None
    await on.synced()
    clock.advance(60)
    assert (await on.turn(PROMPT, GITHUB))["reasonCodes"] == ["mcp_surface_unknown_abstain"]
    assert on.sidecar._mcp_sync is first  # not retried yet
    clock.advance(600)
    await on.turn(PROMPT, GITHUB)
    assert on.sidecar._mcp_sync is not first  # tried again
    await on.synced()
    assert not any(name.startswith("github__") for name in read_state(state)["tools"])
