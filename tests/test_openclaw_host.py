"""The OpenClaw sidecar (a real child process over stdio) and the installer."""

from __future__ import annotations

import json
import os
import re
import sys
import time
from pathlib import Path

import pytest
from sidecar_support import Sidecar, run_sidecar

from resolver.cli import main
from resolver.hosts.openclaw._install import EXTENSION_DIR, PLUGIN_ID
from resolver.testing import LLMServer, completion


def frames(*items: dict[str, object]) -> str:
    return "".join(json.dumps(i) + "\n" for i in items)


def test_sidecar_abstains_until_surface_seen_then_narrows() -> None:
    """Unknown surface -> abstain; after observe_surface -> a narrowed list incl. host tools."""
    ctx = {"sessionId": "s1", "agentId": "main"}
    out = run_sidecar(
        frames(
            {"id": "c", "method": "configure", "params": {"config": {"capturePrompts": False}}},
            {
                "id": "r1",
                "method": "resolve",
                "params": {"event": {"prompt": "remind me at 9"}, "ctx": {**ctx, "runId": "a"}},
            },
            {
                "id": "o",
                "method": "observe_surface",
                "params": {
                    "tools": [{"name": "jira_search", "description": "Search Jira tickets"}],
                    "ctx": {"runId": "a"},
                },
            },
            {
                "id": "r2",
                "method": "resolve",
                "params": {
                    "event": {"prompt": "find the jira tickets about login"},
                    "ctx": {**ctx, "runId": "b"},
                },
            },
        )
    )
    assert out["c"]["result"] == {"ok": True}
    first = out["r1"]["result"]
    assert first["toolsAllow"] is None and first["reasonCodes"] == ["surface_unknown_abstain"]
    second = out["r2"]["result"]
    assert isinstance(second["toolsAllow"], list) and "jira_search" in second["toolsAllow"]
    assert len(second["toolsAllow"]) < 55


def test_surface_is_kept_between_sidecar_runs(_isolated_home: Path) -> None:
    """A one-shot host starts a new sidecar per turn: the seen surface survives it."""
    ctx = {"sessionId": "s1", "runId": "a"}
    run_sidecar(
        frames(
            {"id": "c", "method": "configure", "params": {"config": {}}},
            {
                "id": "o",
                "method": "observe_surface",
                "params": {
                    "tools": [{"name": "jira_search", "description": "Search Jira tickets"}],
                    "ctx": ctx,
                },
            },
        )
    )
    assert (_isolated_home / ".openclaw" / "resolver-surface.json").exists()
    out = run_sidecar(
        frames(
            {"id": "c", "method": "configure", "params": {"config": {}}},
            {
                "id": "r",
                "method": "resolve",
                "params": {
                    "event": {"prompt": "find jira tickets about login"},
                    "ctx": {**ctx, "runId": "b"},
                },
            },
        )
    )
    allow = out["r"]["result"]["toolsAllow"]
    assert isinstance(allow, list) and "jira_search" in allow


def test_stale_surface_is_refreshed(_isolated_home: Path) -> None:
    """Past ten minutes since the last full view, one turn abstains to see the whole surface."""
    state = _isolated_home / ".openclaw" / "resolver-surface.json"
    state.parent.mkdir(parents=True, exist_ok=True)
    state.write_text(json.dumps({"version": 1, "tools": {"read": ""}, "lastFullView": 1.0}))
    out = run_sidecar(
        frames(
            {"id": "c", "method": "configure", "params": {"config": {}}},
            {
                "id": "r",
                "method": "resolve",
                "params": {"event": {"prompt": "hi"}, "ctx": {"sessionId": "s", "runId": "x"}},
            },
            {
                "id": "o",
                "method": "observe_surface",
                "params": {"tools": [{"name": "read"}], "ctx": {"runId": "x"}},
            },
            {
                "id": "r2",
                "method": "resolve",
                "params": {"event": {"prompt": "hi"}, "ctx": {"sessionId": "s", "runId": "y"}},
            },
        )
    )
    assert out["r"]["result"]["reasonCodes"] == ["surface_refresh_abstain"]
    assert out["r2"]["result"]["toolsAllow"] is not None


def test_memory_only_surface_when_state_file_is_off() -> None:
    """surfaceStateFile "" keeps the view in memory only."""
    out = run_sidecar(
        frames(
            {"id": "c", "method": "configure", "params": {"config": {"surfaceStateFile": ""}}},
            {
                "id": "o",
                "method": "observe_surface",
                "params": {"tools": [{"name": "read"}], "ctx": {}},
            },
        )
    )
    assert out["o"]["result"] == {"known": 1}
    assert not (Path.home() / ".openclaw" / "resolver-surface.json").exists()


def test_sidecar_survives_garbage_and_bad_config() -> None:
    """Garbage lines are skipped; an invalid config is an error frame; unknown methods too."""
    out = run_sidecar(
        "not json\n"
        + frames(
            {"id": "c", "method": "configure", "params": {"config": {"confidenceThreshold": 9}}},
            {"id": "x", "method": "bogus"},
            {"id": "p", "method": "ping"},
        )
    )
    assert out["c"]["error"]["code"] == "invalid_config"
    assert "confidenceThreshold" in out["c"]["error"]["message"]
    assert out["x"]["error"]["code"] == "unknown_method"
    assert out["p"]["result"] == {"pong": True}


def test_install_adds_entry_and_keeps_everything_else(tmp_path: Path) -> None:
    """install copies the extension, sets the entry, keeps other keys, backs up the file."""
    home = tmp_path / ".openclaw"
    home.mkdir()
    cfg = home / "openclaw.json"
    cfg.write_text(
        json.dumps(
            {
                "agents": {"defaults": {"model": {"primary": "p/m"}}},
                "plugins": {
                    "entries": {
                        "other": {"enabled": True},
                        PLUGIN_ID: {"config": {"llmModel": "mine"}},
                    }
                },
            }
        )
    )
    assert main(["install", "openclaw", "--openclaw-home", str(home)]) == 0
    data = json.loads(cfg.read_text())
    entry = data["plugins"]["entries"][PLUGIN_ID]
    assert entry["enabled"] is True and entry["hooks"]["allowConversationAccess"] is True
    assert entry["config"]["llmModel"] == "mine" and entry["config"]["pythonPath"] == sys.executable
    assert data["agents"] == {"defaults": {"model": {"primary": "p/m"}}}
    assert data["plugins"]["entries"]["other"] == {"enabled": True}
    assert (home / "extensions" / PLUGIN_ID / "index.js").exists()
    assert list(home.glob("openclaw.json.bak-*"))
    assert main(["uninstall", "openclaw", "--openclaw-home", str(home)]) == 0
    data = json.loads(cfg.read_text())
    assert PLUGIN_ID not in data["plugins"]["entries"] and "other" in data["plugins"]["entries"]
    assert not (home / "extensions" / PLUGIN_ID).exists()


def test_install_link_mode_symlinks(tmp_path: Path) -> None:
    """--link symlinks the shipped extension folder."""
    home = tmp_path / "oc"
    assert main(["install", "openclaw", "--openclaw-home", str(home), "--link"]) == 0
    target = home / "extensions" / PLUGIN_ID
    assert target.is_symlink() and target.resolve() == EXTENSION_DIR


def test_install_refuses_malformed_config(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A malformed openclaw.json is a clear error and is left untouched."""
    home = tmp_path / "oc"
    home.mkdir()
    cfg = home / "openclaw.json"
    cfg.write_text("{ this is not json")
    assert main(["install", "openclaw", "--openclaw-home", str(home)]) == 2
    assert "not valid JSON" in capsys.readouterr().err
    assert cfg.read_text() == "{ this is not json"
    assert not (home / "extensions").exists()


def test_sidecar_with_the_semantic_extra_warms_then_uses_the_model() -> None:
    """offlineSemantic in the plugin config: after the surface is seen (the default OpenClaw
    tools plus the host's), the sidecar embeds it in its warm-up thread; turns answer lexically
    until then and with the model after."""
    tools = [
        {"name": "get_forecast", "description": "Weather forecast for a city: rain, temperature."},
        {"name": "send_email", "description": "Send an email message to a recipient address."},
        {"name": "play_track", "description": "Play a song or album on the speakers."},
        {"name": "book_table", "description": "Reserve a table at a restaurant."},
    ]
    config = {"offlineSemantic": True, "capturePrompts": False, "coreTools": []}
    with Sidecar() as sidecar:
        assert sidecar.call("c", "configure", config=config)["result"]
        sidecar.call("o", "observe_surface", tools=tools, ctx={})
        result: dict[str, object] = {}
        for attempt in range(600):  # the model loads and embeds the surface: seconds
            ctx = {"sessionId": f"s{attempt}", "agentId": "main", "runId": f"r{attempt}"}
            event = {"prompt": "明天北京会下雨吗？"}
            result = sidecar.call(f"r{attempt}", "resolve", event=event, ctx=ctx)["result"]
            if result.get("classifier") == "offline+semantic":
                break
            time.sleep(0.1)
        assert result.get("classifier") == "offline+semantic"
        allowed = result["toolsAllow"]
        assert isinstance(allowed, list) and allowed[0] in ("get_forecast", "web_search")
        sidecar.close(timeout=30)


def test_sidecar_keeps_the_learned_cache_in_the_state_directory(
    _isolated_home: Path, llm_server: LLMServer
) -> None:
    """With no keywordCacheFile the sidecar learns into the default file the CLI reads
    (`resolver cache show`), ~/.local/state/openclaw-tool-resolver/keyword-cache.json."""
    llm_server.default = completion({"tools": ["nodes"], "confidence": 0.95, "reasoning": ""})
    config = {"llmApiBase": llm_server.base_url, "surfaceStateFile": ""}
    with Sidecar() as sidecar:
        assert sidecar.call("c", "configure", config=config)["result"]["ok"]
        sidecar.call("o", "observe_surface", tools=[{"name": "nodes"}], ctx={})
        ctx = {"sessionId": "s1", "runId": "r1"}
        answer = sidecar.call("r", "resolve", event={"prompt": "zorblat the camera"}, ctx=ctx)
        assert answer["result"]["source"] == "llm"
        assert sidecar.close() == 0
    cache = _isolated_home / ".local" / "state" / "openclaw-tool-resolver" / "keyword-cache.json"
    assert json.loads(cache.read_text())["learned"] == 1


def test_sidecar_freezes_its_heap_after_the_warm_up() -> None:
    """After building a surface's index off-turn, the sidecar moves what is alive into the
    collector's permanent generation (`settle_heap`): a full collection on a large surface
    otherwise walks the index and every module on some turn."""
    tools = [{"name": f"tool_{k}", "description": f"Tool number {k} for tests"} for k in range(40)]
    env = {**os.environ, "RESOLVER_LOG_LEVEL": "DEBUG"}
    with Sidecar(env=env) as sidecar:
        assert sidecar.call("c", "configure", config={"capturePrompts": False})["result"]
        sidecar.call("o", "observe_surface", tools=tools, ctx={})
        assert sidecar.close() == 0
        log = sidecar.stderr()
    warmed = re.findall(r"warmed (\d+) tools, (\d+) objects frozen", log)
    assert warmed, log
    # the default OpenClaw surface plus the 40 observed tools; the interpreter alone holds
    # thousands of live objects, all frozen
    assert max(int(n) for n, _ in warmed) >= 40 + 54
    assert all(int(frozen) > 5_000 for _, frozen in warmed)
