"""The resolver's configuration: the camelCase keys an OpenClaw user writes in openclaw.json.

Every key, its default and its meaning is listed in the README ("Configuration"). Unknown keys
and invalid values are errors that name the key and what is allowed.
"""

from __future__ import annotations

import logging
import os
import re
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, SecretStr, ValidationError, field_validator
from pydantic.alias_generators import to_camel

from ._errors import ConfigError
from ._files import read_user_json5

logger = logging.getLogger("resolver")

DEFAULT_CORE_TOOLS: tuple[str, ...] = (
    "read",
    "write",
    "edit",
    "exec",
    "process",
    "memory_search",
    "memory_get",
    "session_status",
)
DEFAULT_TELEMETRY_TAGS: tuple[str, ...] = ("openclaw-resolver", "resolver:classify")
PLUGIN_ID = "openclaw-tool-resolver"
PLUGIN_CONFIG_PATH = f"plugins.entries.{PLUGIN_ID}.config"
"""Where an OpenClaw user writes the resolver's settings in openclaw.json."""
LEGACY_CONFIG_PATH = f"plugins.{PLUGIN_ID}"
"""The original design's place for the settings (read with a deprecation notice; OpenClaw
2026.9.6 itself refuses a config that has it: "plugins: Unrecognized key")."""
STATE_DIR_NAME = "openclaw-tool-resolver"
KEYWORD_CACHE_NAME = "keyword-cache.json"


def state_dir() -> Path:
    """The resolver's folder in the user's state directory: ``$XDG_STATE_HOME`` (an absolute
    path; a relative one is ignored, as the XDG spec says), else ``~/.local/state``, plus
    ``openclaw-tool-resolver``. Read when called, never at import."""
    base = os.environ.get("XDG_STATE_HOME", "")
    root = Path(base) if base and Path(base).is_absolute() else Path.home() / ".local" / "state"
    return root / STATE_DIR_NAME


def default_keyword_cache_file() -> str:
    """`keywordCacheFile`'s default: ``<state dir>/keyword-cache.json``."""
    return str(state_dir() / KEYWORD_CACHE_NAME)


class _Strict(BaseModel):
    model_config = ConfigDict(
        alias_generator=to_camel, populate_by_name=True, extra="forbid", frozen=True
    )


class TelemetryOptions(_Strict):
    """`telemetry.*` keys."""

    tags: tuple[str, ...] = ()
    """Extra tags appended after the two defaults on classifier requests and telemetry lines."""
    max_bytes: int = Field(default=10_000_000, ge=0)
    """Rotate the telemetry file when it grows past this many bytes (0 = never)."""
    backups: int = Field(default=3, ge=0)
    """How many rotated files to keep."""

    @field_validator("tags")
    @classmethod
    def _tags_non_empty(cls, tags: tuple[str, ...]) -> tuple[str, ...]:
        for tag in tags:
            if not tag.strip():
                raise ValueError("tags must be non-empty strings")
        return tags


class ReuseOptions(_Strict):
    """`reuse.*` keys: session-scoped exact decision reuse."""

    enabled: bool = True
    ttl_seconds: float = Field(default=90.0, ge=0)
    max_entries: int = Field(default=1024, ge=1)


class ResolverConfig(_Strict):
    """The resolver's configuration (README, "Configuration")."""

    enabled: bool = True
    log_decisions: bool = True
    """One short info line per turn in the host log (tool count, source, reason codes,
    latency), as the original design has it: the line is what tells a user the plugin works."""
    telemetry_file: str | None = None
    telemetry: TelemetryOptions = Field(default_factory=TelemetryOptions)
    llm_model: str = "gpt-5.4-mini"
    llm_api_base: str | None = None
    llm_api_key: SecretStr | None = None
    llm_timeout_ms: int = Field(default=4000, ge=50, le=14000)
    llm_max_tokens: int = Field(default=400, ge=16, le=4096)
    confidence_threshold: float = Field(default=0.5, ge=0.0, le=1.0)
    llm_warm_up: bool = False
    """OpenClaw sidecar: once the surface is known, send the classifier prompt's stable
    prefix once in the background, so a local model server's prompt cache holds it before the
    first turn (docs/local-llm.md)."""
    llm_recall_floor: bool = True
    """Merge the offline classifier's picks into every LLM answer (recall first: an LLM turn
    never has fewer of the tools the offline classifier would have kept)."""
    offline_semantic: bool = False
    """Fuse the packaged multilingual embedding model into the offline classifier (needs the
    `semantic` extra; without it the classifier stays lexical and a warning is logged)."""
    offline_conversation_head: bool = True
    """The offline classifier's lexical conversation head (character n-grams, shipped in
    ``catalogs/conversation-ngrams.json``): a turn it takes for conversation (thanks, small
    talk, explain/translate/write-a-poem) gets the core tools only, unless it says a tool's
    name, holds a value a tool acts on, names a server, or a clause of it is a task alone.
    With ``offlineSemantic`` on, the embedding model's head and this one read the turn together
    (the mean of their log-odds); off, the embedding model's head reads alone."""
    offline_tool_head: bool = True
    """The offline classifier's tool head (character n-grams, shipped in
    ``catalogs/tool-ngrams.json``, trained on requests labelled with the default OpenClaw tools
    they need): in a turn the classifier gives tools beyond the core ones, it adds up to two
    tools the head reads in the prompt or one of its clauses (speech for "up on a ladder, what's
    the wind doing?"). It only adds, and reads a surface only when at most a quarter of it is
    tools it was not trained on (not an MCP-heavy host)."""
    conversation_threshold: float | None = Field(default=None, ge=0.0, le=1.0)
    """Semantic extra: the conversation heads' probability (both read together; the embedding
    model's head alone when the lexical one is off or does not judge the prompt) at or above
    which a turn is taken for conversation (core tools only, unless the prompt says a tool's
    whole name). Null: the heads' own threshold, chosen on their training data (at most 1% of
    tasks taken for conversation). Lower answers more chit-chat with the core tools only and
    strips more tasks (benchmark/results/conversation-frontier.md measures both)."""
    capture_prompts: bool = True
    prompt_excerpt_length: int = Field(default=1500, ge=0, le=100_000)
    catalog_overrides_file: str | None = "~/.openclaw/resolver-catalog.json"
    tool_description_overrides: dict[str, str] = Field(default_factory=dict)
    skill_description_overrides: dict[str, str] = Field(default_factory=dict)
    core_tools: tuple[str, ...] = DEFAULT_CORE_TOOLS
    keyword_cache_file: str | None = Field(default_factory=default_keyword_cache_file)
    """The learned keyword cache (JSON); default in the user's state directory (`state_dir`),
    shared by the CLI and the OpenClaw sidecar; ``""`` or null = in memory only."""
    reuse: ReuseOptions = Field(default_factory=ReuseOptions)
    continuity_turns: int = Field(default=3, ge=0, le=50)
    search_catalog_size: int = Field(default=64, ge=0, le=1024)
    """When the surface holds the host's own tool search (`hostSearchTools`), `toolsAllow`
    bounds what that search can find, not what the model is sent: the resolver's picks are
    widened with the next best-scored candidates up to this many tools (0 = off)."""
    host_search_tools: tuple[str, ...] = ("tool_search", "tool_search_code")
    """Names of a host's tool-search control (OpenClaw 2026.9's Tool Search: `tool_search` at
    its default, `tool_search_code` with ``tools.toolSearch: true``)."""
    shadow_sample_rate: float = Field(default=0.0, ge=0.0, le=1.0)
    surface_state_file: str | None = "~/.openclaw/resolver-surface.json"
    """OpenClaw sidecar: the host's tool surface kept between runs (None/"" = memory only)."""
    mcp_auto_sync: bool = True
    """OpenClaw sidecar: when a configured MCP server's tools are unknown, list them in the
    background as `resolver openclaw sync-mcp --server NAME` does (false: only the command)."""
    python_path: str | None = None
    """OpenClaw extension only: the Python interpreter that runs the sidecar."""
    sidecar_timeout_ms: int | None = Field(default=None, ge=100, le=14500)
    """OpenClaw extension only: per-call deadline of the JS shim (default llmTimeoutMs+1500)."""

    @field_validator("keyword_cache_file")
    @classmethod
    def _empty_is_memory_only(cls, value: str | None) -> str | None:
        return value or None

    def api_key(self) -> str | None:
        """The classifier key: `llmApiKey`, else the environment's OPENAI_API_KEY."""
        if self.llm_api_key is not None and self.llm_api_key.get_secret_value():
            return self.llm_api_key.get_secret_value()
        return os.environ.get("OPENAI_API_KEY") or None

    def llm_configured(self) -> bool:
        """True when an LLM endpoint or key is configured (otherwise the offline classifier)."""
        return bool(self.llm_api_base) or self.api_key() is not None

    def all_tags(self) -> list[str]:
        """The two default tags followed by the configured ones, without duplicates."""
        tags: list[str] = []
        for tag in (*DEFAULT_TELEMETRY_TAGS, *self.telemetry.tags):
            if tag not in tags:
                tags.append(tag)
        return tags

    def overrides_path(self) -> Path | None:
        """The override catalog file, with `~` expanded; None when disabled."""
        if not self.catalog_overrides_file:
            return None
        return Path(self.catalog_overrides_file).expanduser()


SECRET_KEYS = frozenset({"llmApiKey", "llm_api_key"})
"""Config keys whose values are never echoed in an error (whatever their type)."""
_SECRET_WORD = re.compile(r"(?i)(key|token|secret|passw|credential)")
ECHO_CHARS = 80
"""An invalid value is echoed in an error message cut to this many characters."""


def echo_value(key: str, value: Any) -> str:
    """How an error message shows a bad value: never for a secret-bearing key, and cut short
    (a 5 MB value must not make a 5 MB message)."""
    leaf = key.rsplit(".", 1)[-1]
    if leaf in SECRET_KEYS or _SECRET_WORD.search(leaf):
        return "value hidden: a secret-bearing key"
    text = repr(value)
    return f"got {text[:ECHO_CHARS]}…" if len(text) > ECHO_CHARS else f"got {text}"


def _describe(error: ValidationError, source: str) -> str:
    lines = [f"invalid resolver configuration in {source}:"]
    for item in error.errors()[:10]:
        key = ".".join(str(part) for part in item["loc"]) or "(root)"
        if item["type"] == "extra_forbidden":
            allowed = ", ".join(sorted(_known_keys()))
            lines.append(f"  - {key[:ECHO_CHARS]}: unknown key (known keys: {allowed})")
        else:
            lines.append(f"  - {key}: {item['msg']} ({echo_value(key, item.get('input'))})")
    return "\n".join(lines)


def _known_keys() -> list[str]:
    return [field.alias or name for name, field in ResolverConfig.model_fields.items()]


def load_config(data: dict[str, Any] | None = None, *, source: str = "config") -> ResolverConfig:
    """Validate a config mapping; raise `ConfigError` naming each bad key and what is allowed."""
    if data is None:
        return ResolverConfig()
    if not isinstance(data, dict):
        raise ConfigError(f"{source}: the configuration must be a JSON object", source=source)
    try:
        return ResolverConfig.model_validate(data)
    except ValidationError as exc:
        raise ConfigError(_describe(exc, source), source=source) from None


def load_config_file(path: str | Path) -> ResolverConfig:
    """Read a config file (the plugin's `config` object, or a whole openclaw.json). JSON5 is
    accepted (comments, trailing commas), as OpenClaw reads its own config."""
    path, data = read_user_json5(
        path, "config file", hint="fix the syntax (JSON or JSON5, as OpenClaw reads it)"
    )
    if isinstance(data, dict) and "plugins" in data:
        data = plugin_config(data, str(path))
    return load_config(data, source=str(path))


def _object_at(root: dict[str, Any], keys: tuple[str, ...], source: str) -> dict[str, Any] | None:
    """The object at `keys` below `root`, None when a level is absent (each level checked)."""
    node: dict[str, Any] = root
    for depth, key in enumerate(keys):
        child = node.get(key)
        if child is None:
            return None
        if not isinstance(child, dict):
            where = ".".join(keys[: depth + 1])
            raise ConfigError(
                f"{source}: {where} must be a JSON object (got {type(child).__name__}); "
                f'write "{key}": {{...}} there',
                source=source,
            )
        node = child
    return node


def legacy_plugin_config(openclaw: dict[str, Any], source: str) -> dict[str, Any] | None:
    """The settings written in the original design's place, ``plugins.openclaw-tool-resolver``
    (no ``entries.<id>.config``), or None when there are none."""
    return _object_at(openclaw, ("plugins", PLUGIN_ID), source)


def deprecation_notice(source: str) -> str:
    """The one line that names where legacy settings belong now."""
    return (
        f"{source}: {LEGACY_CONFIG_PATH} is deprecated: move its settings to "
        f"{PLUGIN_CONFIG_PATH} (`resolver install openclaw` moves them; OpenClaw 2026.9.6 "
        'refuses a config with the old key: "plugins: Unrecognized key")'
    )


def plugin_config(openclaw: dict[str, Any], source: str) -> dict[str, Any]:
    """The resolver's config object inside a whole openclaw.json (each level type-checked).

    Settings in the legacy place ``plugins.openclaw-tool-resolver`` are used too, with a
    one-line deprecation warning; where both places set a key, ``plugins.entries`` wins."""
    current = _object_at(openclaw, ("plugins", "entries", PLUGIN_ID, "config"), source)
    legacy = legacy_plugin_config(openclaw, source)
    if legacy is None:
        return current or {}
    logger.warning("%s", deprecation_notice(source))
    return {**legacy, **(current or {})}
