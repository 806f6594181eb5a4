"""Configuration: defaults, invalid values, the key fallback."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from resolver import ConfigError, ResolverConfig, load_config, load_config_file


def test_defaults_match_the_readme() -> None:
    """The documented defaults."""
    config = ResolverConfig()
    assert config.enabled and not config.log_decisions
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
