"""`resolver install openclaw` / `resolver uninstall openclaw` (resolver/hosts/openclaw/_install.py)
with the config shapes and files users arrive with."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from resolver.cli import main
from resolver.hosts.openclaw._install import PLUGIN_ID

ENTRY = f"plugins.entries.{PLUGIN_ID}"


def _install(home: Path, *extra: str) -> int:
    return main(["install", "openclaw", "--openclaw-home", str(home), *extra])


def _uninstall(home: Path) -> int:
    return main(["uninstall", "openclaw", "--openclaw-home", str(home)])


def test_install_moves_legacy_settings_into_the_plugin_entry(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Settings under plugins.openclaw-tool-resolver (the original shape) move into the entry's
    config, the old key goes (OpenClaw refuses it) and the command says so."""
    home = tmp_path / ".openclaw"
    home.mkdir()
    cfg = home / "openclaw.json"
    legacy = {"llmModel": "gpt-5.4-mini", "telemetryFile": "~/t.jsonl", "logDecisions": False}
    cfg.write_text(json.dumps({"plugins": {PLUGIN_ID: legacy, "entries": {"other": {}}}}))
    assert _install(home) == 0
    out, err = capsys.readouterr()
    data = json.loads(cfg.read_text())
    assert PLUGIN_ID not in data["plugins"]
    config = data["plugins"]["entries"][PLUGIN_ID]["config"]
    assert {k: config[k] for k in legacy} == legacy and config["pythonPath"]
    assert data["plugins"]["entries"]["other"] == {}
    assert "moved:" in out and "llmModel, logDecisions, telemetryFile" in out
    assert f"{ENTRY}.config" in err and "deprecated" in err


def test_install_reads_json5_and_says_which_comments_were_lost(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A JSON5 openclaw.json (comments, trailing commas) is installed into; the result is plain
    JSON, the comments lost are counted and the original is in the backup."""
    home = tmp_path / ".openclaw"
    home.mkdir()
    cfg = home / "openclaw.json"
    original = (
        "// my OpenClaw\n{\n  agents: {defaults: {model: {primary: 'p/m'}}}, /* keep */\n"
        '  "url": "http://x//y",\n}\n'
    )
    cfg.write_text(original)
    assert _install(home) == 0
    out = capsys.readouterr().out
    data = json.loads(cfg.read_text())  # plain JSON now
    assert data["agents"] == {"defaults": {"model": {"primary": "p/m"}}}
    assert data["url"] == "http://x//y"
    assert data["plugins"]["entries"][PLUGIN_ID]["enabled"] is True
    assert "was JSON5" in out and "2 comment(s) could not be kept" in out
    backup = home / "openclaw.json.bak-resolver"
    assert backup.read_text() == original and str(backup) in out


def test_reinstall_with_nothing_to_change_leaves_the_file_alone(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A second install rewrites nothing and writes no backup (runs do not pile up files)."""
    home = tmp_path / "oc"
    assert _install(home) == 0
    cfg = home / "openclaw.json"
    before = cfg.read_text()
    capsys.readouterr()
    assert _install(home) == 0
    assert "already up to date" in capsys.readouterr().out
    assert cfg.read_text() == before
    assert sorted(p.name for p in home.iterdir()) == ["extensions", "openclaw.json"]


def test_uninstall_restores_what_install_changed_and_is_idempotent(
    tmp_path: Path, _isolated_home: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Uninstall removes the extension, the entry (and the empty plugins/extensions it left),
    the sidecar's state and lock files; it names the user data it leaves; a second run changes
    nothing and says so."""
    home = tmp_path / ".openclaw"
    home.mkdir()
    cfg = home / "openclaw.json"
    original = {"agents": {"defaults": {"model": {"primary": "p/m"}}}}
    cfg.write_text(json.dumps(original))
    telemetry = tmp_path / "resolver-telemetry.jsonl"
    settings = tmp_path / "settings.json"
    settings.write_text(json.dumps({"telemetryFile": str(telemetry)}))
    assert _install(home, "--config", str(settings)) == 0
    # What a running sidecar leaves behind.
    surface = home / "resolver-surface.json"
    surface.write_text("{}")
    telemetry.write_text("{}\n")
    (tmp_path / "resolver-telemetry.jsonl.lock").write_text("")
    (tmp_path / "resolver-telemetry.jsonl.surfaces").mkdir()
    state = _isolated_home / ".local" / "state" / "openclaw-tool-resolver"
    state.mkdir(parents=True)
    (state / "keyword-cache.json").write_text("{}")
    (state / "keyword-cache.json.lock").write_text("")
    capsys.readouterr()

    assert _uninstall(home) == 0
    out = capsys.readouterr().out
    assert json.loads(cfg.read_text()) == original  # no "plugins": {"entries": {}} left
    assert not (home / "extensions").exists()
    assert not surface.exists()
    assert not (tmp_path / "resolver-telemetry.jsonl.lock").exists()
    assert not (state / "keyword-cache.json.lock").exists()
    assert telemetry.exists() and (state / "keyword-cache.json").exists()
    assert f"left:      {telemetry} (telemetry" in out
    assert f"left:      {tmp_path / 'resolver-telemetry.jsonl.surfaces'} (telemetry" in out
    assert f"left:      {state / 'keyword-cache.json'} (the learned keyword cache" in out
    assert f"removed:   {home / 'extensions' / PLUGIN_ID}" in out
    backup = home / "openclaw.json.bak-resolver"
    assert f"left:      {backup}" in out

    stamp = backup.stat().st_mtime_ns
    config_text = cfg.read_text()
    assert _uninstall(home) == 0
    again = capsys.readouterr().out
    assert "nothing to remove" in again and "removed:" not in again
    assert cfg.read_text() == config_text and backup.stat().st_mtime_ns == stamp


def test_uninstall_keeps_other_plugins(tmp_path: Path) -> None:
    """Only the resolver's entry goes: other entries, and the plugins section they need, stay."""
    home = tmp_path / ".openclaw"
    home.mkdir()
    cfg = home / "openclaw.json"
    cfg.write_text(json.dumps({"plugins": {"load": {"paths": ["/x"]}, "entries": {"b": {}}}}))
    assert _install(home) == 0
    assert _uninstall(home) == 0
    assert json.loads(cfg.read_text()) == {
        "plugins": {"load": {"paths": ["/x"]}, "entries": {"b": {}}}
    }
