"""The CLI: `resolver cache learn|show|clear` and `resolver resolve --no-reuse/--refresh`."""

from __future__ import annotations

import json
from pathlib import Path

import orjson
import pytest

from resolver.cli import main


def write_telemetry(path: Path) -> None:
    lines = [
        {"source": "llm", "confidence": 0.9, "promptExcerpt": f"zorblat {i}", "llmTools": ["nodes"]}
        for i in range(3)
    ]
    lines.append({"source": "keyword", "confidence": 0.9, "promptExcerpt": "zorblat"})
    path.write_bytes(b"\n".join(orjson.dumps(line) for line in lines) + b"\n{broken\n")


def test_learn_show_clear_round_trip(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """learn writes associations that show lists and resolve uses; clear empties the file."""
    cache, telemetry = tmp_path / "kc.json", tmp_path / "t.jsonl"
    write_telemetry(telemetry)
    assert main(["cache", "learn", str(telemetry), "--file", str(cache)]) == 0
    out = capsys.readouterr().out
    assert "learned from 3" in out and "skipped 1: not JSON" in out
    assert main(["cache", "show", "--file", str(cache), "--json"]) == 0
    shown = json.loads(capsys.readouterr().out)
    assert shown["learned"] == 3 and shown["associations"]["nodes"][0]["count"] == 3
    config = tmp_path / "config.json"
    config.write_text(json.dumps({"keywordCacheFile": str(cache)}))
    assert main(["resolve", "zorblat", "--config", str(config), "--json"]) == 0
    resolved = json.loads(capsys.readouterr().out)
    assert "nodes" in resolved["toolsAllow"] and "cache_added" in resolved["reasonCodes"]
    assert main(["cache", "clear", "--config", str(config)]) == 0
    assert json.loads(cache.read_text())["terms"] == {}


def test_show_reports_a_corrupt_file(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """show names a corrupt file as ignored, and leaves it alone."""
    cache = tmp_path / "kc.json"
    cache.write_text("{nope")
    assert main(["cache", "show", "--file", str(cache)]) == 0
    assert "ignored (not valid JSON" in capsys.readouterr().out
    assert cache.read_text() == "{nope"


def test_learn_with_nothing_to_learn_leaves_the_file(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A telemetry file with no usable line does not create or change the cache."""
    telemetry = tmp_path / "t.jsonl"
    telemetry.write_text('{"source": "full"}\n')
    assert main(["cache", "learn", str(telemetry), "--file", str(tmp_path / "kc.json")]) == 0
    assert "nothing learned" in capsys.readouterr().out
    assert not (tmp_path / "kc.json").exists()


def test_cache_commands_with_a_memory_only_cache_explain_the_fix(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """keywordCacheFile "" (memory only) and no --file: exit 2 and say how to fix it."""
    config = tmp_path / "config.json"
    config.write_text(json.dumps({"keywordCacheFile": ""}))
    assert main(["cache", "show", "--config", str(config)]) == 2
    assert "--file" in capsys.readouterr().err


def test_resolve_reuse_flags(capsys: pytest.CaptureFixture[str]) -> None:
    """--no-reuse records reuse_disabled; --refresh records reuse_miss_refresh."""
    assert main(["resolve", "search the web", "--session", "s", "--no-reuse", "--json"]) == 0
    assert "reuse_disabled" in json.loads(capsys.readouterr().out)["reasonCodes"]
    assert main(["resolve", "search the web", "--session", "s", "--refresh", "--json"]) == 0
    assert "reuse_miss_refresh" in json.loads(capsys.readouterr().out)["reasonCodes"]


def test_cache_show_without_options_uses_the_state_directory(
    _isolated_home: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """`resolver cache show` needs no --file: it shows the default cache in the state directory,
    the same file a resolver with the default config learns into."""
    from resolver import ResolverConfig

    default = _isolated_home / ".local" / "state" / "openclaw-tool-resolver" / "keyword-cache.json"
    assert ResolverConfig().keyword_cache_file == str(default)
    assert main(["cache", "show"]) == 0
    out = capsys.readouterr().out
    assert out.startswith(f"{default} (default location): missing")
    assert main(["cache", "learn", str(_telemetry(_isolated_home))]) == 0
    capsys.readouterr()
    assert default.exists() and main(["cache", "show", "--json"]) == 0
    shown = json.loads(capsys.readouterr().out)
    assert shown["file"] == str(default) and shown["learned"] == 3


def _telemetry(folder: Path) -> Path:
    path = folder / "t.jsonl"
    write_telemetry(path)
    return path
