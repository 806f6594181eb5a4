"""Configuration: defaults, invalid values, the key fallback."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from resolver import ConfigError, ResolverConfig, load_config, load_config_file


def test_defaults_match_the_readme(_isolated_home: Path) -> None:
    """The documented defaults."""
    config = ResolverConfig()
    assert config.enabled and config.log_decisions
    assert config.keyword_cache_file == str(
        _isolated_home / ".local" / "state" / "openclaw-tool-resolver" / "keyword-cache.json"
    )
    assert config.llm_model == "gpt-5.4-mini"
    assert config.llm_timeout_ms == 4000
    assert config.confidence_threshold == 0.5
    assert config.capture_prompts and config.prompt_excerpt_length == 1500
    assert config.catalog_overrides_file == "~/.openclaw/resolver-catalog.json"
    assert config.core_tools == (
        "read",
        "write",
        "edit",
        "exec",
        "process",
        "memory_search",
        "memory_get",
        "session_status",
    )
    assert config.reuse.ttl_seconds == 90


@pytest.mark.parametrize(
    ("data", "key", "hint"),
    [
        pytest.param(
            {"confidenceThreshold": 1.5},
            "confidenceThreshold",
            "less than or equal to 1",
            id="threshold",
        ),
        pytest.param({"llmTimeoutMs": "fast"}, "llmTimeoutMs", "valid integer", id="timeout-type"),
        pytest.param(
            {"llmTimeoutMs": 20000},
            "llmTimeoutMs",
            "less than or equal to 14000",
            id="timeout-above-hook",
        ),
        pytest.param({"coreTools": "read"}, "coreTools", "valid tuple", id="core-tools-type"),
        pytest.param({"telemetry": {"tags": [""]}}, "telemetry.tags", "non-empty", id="empty-tag"),
        pytest.param({"llmModle": "x"}, "llmModle", "unknown key", id="typo-key"),
    ],
)
def test_invalid_value_names_key_and_allowed(data: dict[str, object], key: str, hint: str) -> None:
    """An invalid value is an error naming the key and what is allowed."""
    with pytest.raises(ConfigError) as info:
        load_config(data, source="openclaw.json")
    message = str(info.value)
    assert key in message and hint in message and "openclaw.json" in message


def test_api_key_falls_back_to_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    """llmApiKey wins; without it OPENAI_API_KEY is used."""
    assert ResolverConfig().api_key() is None
    monkeypatch.setenv("OPENAI_API_KEY", "env-key-123")
    assert ResolverConfig().api_key() == "env-key-123"
    assert ResolverConfig(llmApiKey="cfg-key").api_key() == "cfg-key"


def test_api_key_never_appears_in_repr() -> None:
    """The key is a secret: repr and dumps do not show it."""
    config = ResolverConfig(llmApiKey="sk-verysecretvalue")
    assert "sk-verysecretvalue" not in repr(config)
    assert "sk-verysecretvalue" not in config.model_dump_json()


def test_tags_keep_defaults_first_without_duplicates() -> None:
    """Configured tags follow the two defaults; duplicates collapse."""
    config = ResolverConfig(telemetry={"tags": ["team:a", "openclaw-resolver", "team:a"]})
    assert config.all_tags() == ["openclaw-resolver", "resolver:classify", "team:a"]


def test_config_file_reads_plugin_entry_of_openclaw_json(tmp_path: Path) -> None:
    """A whole openclaw.json is accepted: the plugin entry's config is used."""
    path = tmp_path / "openclaw.json"
    path.write_text(
        json.dumps(
            {"plugins": {"entries": {"openclaw-tool-resolver": {"config": {"llmModel": "m"}}}}}
        )
    )
    assert load_config_file(path).llm_model == "m"


def test_config_file_with_bad_json_is_a_clear_error(tmp_path: Path) -> None:
    """Invalid JSON names the file."""
    path = tmp_path / "c.json"
    path.write_text("{")
    with pytest.raises(ConfigError, match="not valid JSON"):
        load_config_file(path)


LEGACY_OPENCLAW_JSON = {
    "plugins": {
        "openclaw-tool-resolver": {
            "llmModel": "gpt-5.4-mini",
            "llmApiBase": "http://127.0.0.1:9/v1",
            "telemetryFile": "~/t.jsonl",
        }
    }
}


def test_legacy_plugin_settings_are_read_with_a_deprecation_line(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    """The original shape, settings directly under plugins.openclaw-tool-resolver, is used and
    one warning names the new place."""
    path = tmp_path / "openclaw.json"
    path.write_text(json.dumps(LEGACY_OPENCLAW_JSON))
    with caplog.at_level("WARNING", logger="resolver"):
        config = load_config_file(path)
    assert config.llm_api_base == "http://127.0.0.1:9/v1" and config.llm_configured()
    assert config.telemetry_file == "~/t.jsonl"
    (line,) = [r.getMessage() for r in caplog.records]
    assert "plugins.openclaw-tool-resolver is deprecated" in line
    assert "plugins.entries.openclaw-tool-resolver.config" in line and str(path) in line


def test_legacy_and_current_places_merge_with_the_current_one_winning(tmp_path: Path) -> None:
    """Both places set: every key is used, plugins.entries wins where both set one."""
    data = json.loads(json.dumps(LEGACY_OPENCLAW_JSON))
    data["plugins"]["entries"] = {"openclaw-tool-resolver": {"config": {"llmModel": "new"}}}
    path = tmp_path / "openclaw.json"
    path.write_text(json.dumps(data))
    config = load_config_file(path)
    assert config.llm_model == "new" and config.telemetry_file == "~/t.jsonl"


def test_legacy_place_that_is_not_an_object_is_a_clear_error(tmp_path: Path) -> None:
    """plugins.openclaw-tool-resolver must be an object: the error names the key and the fix."""
    path = tmp_path / "openclaw.json"
    path.write_text(json.dumps({"plugins": {"openclaw-tool-resolver": "on"}}))
    with pytest.raises(ConfigError, match=r"plugins\.openclaw-tool-resolver must be a JSON object"):
        load_config_file(path)


def test_config_file_may_be_json5_as_openclaw_reads_it(tmp_path: Path) -> None:
    """A whole openclaw.json with comments and trailing commas is read (OpenClaw accepts it)."""
    path = tmp_path / "openclaw.json"
    path.write_text(
        "{\n  // my gateway\n  plugins: {\n    entries: {\n      'openclaw-tool-resolver': "
        '{config: {llmModel: "m5", },},\n    },\n  },\n}\n'
    )
    assert load_config_file(path).llm_model == "m5"


def test_keyword_cache_defaults_to_the_xdg_state_directory(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """$XDG_STATE_HOME (absolute) holds the cache; a relative value is ignored, as XDG says."""
    monkeypatch.setenv("XDG_STATE_HOME", str(tmp_path / "state"))
    expected = tmp_path / "state" / "openclaw-tool-resolver" / "keyword-cache.json"
    assert ResolverConfig().keyword_cache_file == str(expected)
    monkeypatch.setenv("XDG_STATE_HOME", "relative/state")
    assert ResolverConfig().keyword_cache_file == str(
        Path.home() / ".local" / "state" / "openclaw-tool-resolver" / "keyword-cache.json"
    )


@pytest.mark.parametrize("value", ["", None], ids=["empty-string", "null"])
def test_empty_keyword_cache_file_keeps_the_cache_in_memory(value: str | None) -> None:
    """keywordCacheFile "" or null: no file (the cache lives in memory only)."""
    from resolver import Resolver

    config = load_config({"keywordCacheFile": value})
    assert config.keyword_cache_file is None
    assert Resolver(config).cache.path is None
