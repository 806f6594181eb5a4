"""The CLI: resolve, catalog validate/show/diff, schemas."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from resolver.cli import main
from resolver.testing import LLMServer, completion


def test_resolve_json_prints_tools_allow(capsys: pytest.CaptureFixture[str]) -> None:
    """`resolver resolve --json` prints toolsAllow, source, confidence, reasonCodes, candidates."""
    assert main(["resolve", "remind me tomorrow at 9 to call mom", "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert "automations" in out["toolsAllow"]
    assert out["source"] == "offline"
    assert out["candidates"][0]["name"] in out["toolsAllow"]
    scores = [c["score"] for c in out["candidates"] if c["selected"]]
    assert {"confidence", "reasonCodes"} <= set(out)
    assert all(isinstance(s, float) for s in scores)


def test_resolve_with_tools_file(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """--tools-file replaces the default surface; host descriptions are used."""
    tools = tmp_path / "tools.json"
    tools.write_text(
        json.dumps(
            [
                {"name": "get_weather", "description": "Current weather forecast for a city"},
                {"name": "send_email", "description": "Send an email message to a recipient"},
            ]
        )
    )
    assert (
        main(["resolve", "what's the weather in Paris", "--tools-file", str(tools), "--json"]) == 0
    )
    out = json.loads(capsys.readouterr().out)
    assert out["toolsAllow"] == ["get_weather"]


def test_resolve_human_output(capsys: pytest.CaptureFixture[str]) -> None:
    """Without --json a short readable answer, naming the classifier."""
    assert main(["resolve", "search the web for llama recipes"]) == 0
    out = capsys.readouterr().out
    assert "classifier: offline" in out and "web_search" in out


def test_catalog_validate_bad_file_exits_2(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """An invalid catalog: exit 2 and a message naming the file and problem."""
    bad = tmp_path / "bad.json"
    bad.write_text('{"schemaVersion": 3}')
    assert main(["catalog", "validate", str(bad)]) == 2
    err = capsys.readouterr().err
    assert str(bad) in err and "schemaVersion 3" in err


def test_catalog_show_effective_reports_origins(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """`catalog show --effective` merges the override file named in the config."""
    override = tmp_path / "o.json"
    override.write_text(json.dumps({"schemaVersion": 1, "tools": {"tts": "Speak it"}}))
    config = tmp_path / "c.json"
    config.write_text(json.dumps({"catalogOverridesFile": str(override)}))
    assert main(["catalog", "show", "--effective", "--config", str(config)]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["tools"]["tts"] == {"description": "Speak it", "from": "file"}


def test_catalog_diff(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """`catalog diff` lists changed, added and removed descriptions."""
    a, b = tmp_path / "a.json", tmp_path / "b.json"
    a.write_text(json.dumps({"schemaVersion": 1, "tools": {"x": "one", "y": "gone"}}))
    b.write_text(json.dumps({"schemaVersion": 1, "tools": {"x": "two", "z": "new"}}))
    assert main(["catalog", "diff", str(a), str(b)]) == 0
    out = capsys.readouterr().out
    assert "~ tools.x" in out and "- tools.y" in out and "+ tools.z" in out and "3 change(s)" in out


def test_bad_config_exits_2(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """An invalid config value: exit 2 naming the key."""
    config = tmp_path / "c.json"
    config.write_text(json.dumps({"confidenceThreshold": 7}))
    assert main(["resolve", "x", "--config", str(config)]) == 2
    assert "confidenceThreshold" in capsys.readouterr().err


def test_schemas_have_not_drifted() -> None:
    """The committed schemas/*.json equal what the models generate."""
    assert main(["schemas", "--check"]) == 0


def test_console_script_runs() -> None:
    """`python -m resolver` works as an entry point."""
    proc = subprocess.run(
        [sys.executable, "-m", "resolver", "resolve", "thanks", "--json"],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert proc.returncode == 0, proc.stderr
    assert json.loads(proc.stdout)["source"] == "offline"


@pytest.mark.parametrize(
    ("argv", "usage"),
    [
        (["resolve", "x", "--jsn"], "usage: resolver resolve"),
        (["cache", "show", "--bogus"], "usage: resolver cache show"),
        (
            ["bench", "generate", "t.jsonl", "--out", "o.json", "--nme", "x"],
            "usage: resolver bench generate",
        ),
    ],
    ids=["resolve", "nested", "deeper"],
)
def test_a_wrong_flag_prints_the_subcommands_usage(
    argv: list[str], usage: str, capsys: pytest.CaptureFixture[str]
) -> None:
    """`resolver resolve --jsn` names the flag under the subcommand's own usage (exit 2)."""
    with pytest.raises(SystemExit) as exit_info:
        main(argv)
    assert exit_info.value.code == 2
    err = capsys.readouterr().err
    assert err.startswith(usage) and "unrecognized arguments: --" in err


def test_legacy_openclaw_json_configures_the_llm_and_telemetry(
    tmp_path: Path, llm_server: LLMServer
) -> None:
    """`resolver resolve --config openclaw.json` with the settings directly under
    plugins.openclaw-tool-resolver uses them (LLM classifier, telemetry written) and says once
    where they belong now."""
    llm_server.default = completion({"tools": ["automations"], "confidence": 0.9, "reasoning": ""})
    telemetry = tmp_path / "t.jsonl"
    openclaw = tmp_path / "openclaw.json"
    # the longest LLM timeout: a cold CLI process on a loaded 2-core machine (CI beside the
    # benchmark queue) took longer than the default 4 s and abstained at the turn's deadline
    legacy = {
        "llmApiBase": llm_server.base_url,
        "telemetryFile": str(telemetry),
        "llmTimeoutMs": 14000,
    }
    openclaw.write_text(json.dumps({"plugins": {"openclaw-tool-resolver": legacy}}))
    command = ["resolve", "remind me at 9", "--config", str(openclaw), "--json"]
    proc = subprocess.run(
        [sys.executable, "-m", "resolver", *command],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert proc.returncode == 0, proc.stderr
    assert json.loads(proc.stdout)["classifier"].startswith("llm:")
    assert llm_server.requests
    notices = [line for line in proc.stderr.splitlines() if "deprecated" in line]
    assert len(notices) == 1 and "plugins.entries.openclaw-tool-resolver.config" in notices[0]
    (line,) = telemetry.read_text().splitlines()
    assert json.loads(line)["source"] == "llm"
