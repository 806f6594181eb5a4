"""The OpenClaw plugin manifest's config schema matches the resolver's configuration."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import annotated_types
import pytest
from pydantic import BaseModel

from resolver._config import ResolverConfig, ReuseOptions, TelemetryOptions

EXTENSION = Path(__file__).resolve().parent.parent / "resolver" / "hosts" / "openclaw" / "extension"


def _manifest() -> dict[str, Any]:
    return dict(json.loads((EXTENSION / "openclaw.plugin.json").read_text()))


def _aliases(model: type[BaseModel]) -> set[str]:
    return {field.alias or name for name, field in model.model_fields.items()}


def test_manifest_and_package_identify_the_plugin() -> None:
    """id, name, activation and the package.json openclaw block are what OpenClaw needs."""
    manifest = _manifest()
    package = json.loads((EXTENSION / "package.json").read_text())
    assert manifest["id"] == package["name"] == "openclaw-tool-resolver"
    assert manifest["name"] and manifest["description"]
    assert manifest["activation"] == {"onStartup": True}
    assert package["type"] == "module"
    assert package["openclaw"]["extensions"] == ["./index.js"]
    assert package["openclaw"]["compat"]["pluginApi"] == ">=2026.8.1"
    assert not package.get("dependencies"), "the extension has no npm dependencies"


@pytest.mark.parametrize(
    ("path", "model"),
    [((), ResolverConfig), (("telemetry",), TelemetryOptions), (("reuse",), ReuseOptions)],
    ids=["root", "telemetry", "reuse"],
)
def test_config_schema_keys_are_exactly_the_resolver_config_keys(
    path: tuple[str, ...], model: type[BaseModel]
) -> None:
    """OpenClaw enforces additionalProperties: false, so a missing key could not be set."""
    schema = _manifest()["configSchema"]
    for key in path:
        schema = schema["properties"][key]
    assert schema["additionalProperties"] is False
    assert set(schema["properties"]) == _aliases(model)


def test_config_schema_sets_no_defaults() -> None:
    """OpenClaw fills schema defaults into the plugin config; the resolver's own must win."""

    def walk(node: Any) -> None:
        if isinstance(node, dict):
            assert "default" not in node, node
            for value in node.values():
                walk(value)

    walk(_manifest()["configSchema"])


def test_numeric_bounds_match_the_resolver_config() -> None:
    """A value OpenClaw accepts is one the sidecar's configure accepts too."""
    props = _manifest()["configSchema"]["properties"]
    for name, field in ResolverConfig.model_fields.items():
        prop = props[field.alias or name]
        for bound in field.metadata:
            if isinstance(bound, annotated_types.Ge):
                assert prop.get("minimum") == bound.ge, name
            if isinstance(bound, annotated_types.Le):
                assert prop.get("maximum") == bound.le, name


def test_documented_boolean_defaults_match_the_resolver_config() -> None:
    """A "(default true|false)" in a manifest description is the model's default (logDecisions
    true, as the original design has it), and index.js normalizeConfig reads it the same way."""
    props = _manifest()["configSchema"]["properties"]
    defaults = ResolverConfig()
    checked = 0
    for name, field in ResolverConfig.model_fields.items():
        prop = props[field.alias or name]
        if prop.get("type") != "boolean":
            continue
        for word in ("true", "false"):
            if f"default {word})" in prop.get("description", ""):
                assert getattr(defaults, name) is (word == "true"), name
                checked += 1
    assert checked >= 6 and defaults.log_decisions is True
    source = (EXTENSION / "index.js").read_text()
    assert "logDecisions: config.logDecisions !== false" in source


def test_manifest_declares_the_resolver_chat_command() -> None:
    """`/resolver` is declared as the plugin's runtime slash command (OpenClaw's diagnostics
    name the plugin if it fails to load) and index.js registers it."""
    aliases = _manifest()["commandAliases"]
    assert {"name": "resolver", "kind": "runtime-slash"} in aliases
    assert "api.registerCommand(makeCommand(manager))" in (EXTENSION / "index.js").read_text()
