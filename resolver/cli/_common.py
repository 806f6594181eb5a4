"""Helpers shared by CLI commands: config loading and building a resolver."""

from __future__ import annotations

import argparse
import sys
from typing import Any

import orjson
from pydantic import ValidationError

from .._config import ResolverConfig, load_config, load_config_file
from .._files import read_user_json
from .._pipeline import Resolver
from .._surface import default_surface, load_tools_file
from .._types import Message, Resolution, ToolInfo, TurnRequest


def add_config_arg(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--config",
        metavar="FILE",
        help="resolver config JSON (the plugin's config object, or a whole openclaw.json)",
    )


def config_from_args(args: argparse.Namespace, **overrides: Any) -> ResolverConfig:
    """The config file named by --config (or defaults), with `overrides` applied."""
    config = load_config_file(args.config) if getattr(args, "config", None) else ResolverConfig()
    if overrides:
        data = config.model_dump(by_alias=True, exclude_unset=True)
        if config.llm_api_key is not None:
            data["llmApiKey"] = config.llm_api_key.get_secret_value()
        data.update(overrides)
        config = load_config(data, source=getattr(args, "config", None) or "command line")
    return config


def tools_from_args(args: argparse.Namespace) -> list[ToolInfo]:
    if getattr(args, "tools_file", None):
        return load_tools_file(args.tools_file)
    return default_surface()


def messages_from_file(path: str | None) -> list[Message]:
    if not path:
        return []
    from .._errors import ConfigError

    resolved, data = read_user_json(path, "messages file")
    items = data.get("messages") if isinstance(data, dict) else data
    if not isinstance(items, list):
        raise ConfigError(
            f"{resolved}: expected a JSON list of chat messages", source=str(resolved)
        )
    messages: list[Message] = []
    for i, item in enumerate(items):
        if not isinstance(item, dict):
            raise ConfigError(
                f"{resolved}: messages[{i}] must be an object like "
                '{"role": "user", "content": "..."}',
                source=str(resolved),
            )
        try:
            messages.append(Message.model_validate(item))
        except ValidationError as exc:
            first = exc.errors()[0]
            where = ".".join(str(p) for p in first["loc"])
            raise ConfigError(
                f"{resolved}: messages[{i}].{where}: {first['msg']} "
                "(role is a string, content a string or a list of parts, tool_calls a list)",
                source=str(resolved),
            ) from None
    return messages


def build_resolver(config: ResolverConfig) -> Resolver:
    from ..telemetry import observers_for  # late: only when a command builds a resolver

    return Resolver(config, observers=observers_for(config))


def resolve_once(resolver: Resolver, request: TurnRequest) -> Resolution:
    """One CLI turn. With the semantic extra on, the surface is embedded first (a host does this
    in the background; a one-shot command would otherwise answer lexically)."""
    if resolver.offline.semantic is not None and request.tools:
        resolver.warm(request.tools)
        for observer in resolver.observers:
            note = getattr(observer, "note_warm", None)
            if note is not None:
                note(request.tools)  # telemetry: this turn did not build the index
    return resolver.resolve_sync(request)


def print_json(data: Any) -> None:
    sys.stdout.write(orjson.dumps(data, option=orjson.OPT_INDENT_2).decode() + "\n")


def add_turn_args(parser: argparse.ArgumentParser) -> None:
    """--tools-file, --messages-file, --state-file, --session (shared by resolve and explain)."""
    parser.add_argument(
        "--tools-file",
        metavar="FILE",
        help="candidate tools (JSON list of {name, description}); default: OpenClaw 2026.9.6",
    )
    parser.add_argument("--messages-file", metavar="FILE", help="conversation before the prompt")
    parser.add_argument(
        "--state-file",
        metavar="FILE",
        help="host execution state: a JSON object {semantic id: value} (default: no state)",
    )
    parser.add_argument("--session", metavar="ID", help="session id (for reuse and telemetry)")


def request_from_args(args: argparse.Namespace, **extra: Any) -> TurnRequest:
    """The turn described by `add_turn_args`' options (and the positional prompt)."""
    return TurnRequest(
        prompt=args.prompt,
        messages=messages_from_file(args.messages_file),
        tools=tools_from_args(args),
        sessionId=args.session,
        state=state_from_file(args.state_file),
        **extra,
    )


def state_from_file(path: str | None) -> dict[str, Any] | None:
    """The execution state in `path` (a JSON object), or None when no file is given."""
    if not path:
        return None
    from .._errors import ConfigError

    resolved, data = read_user_json(path, "state file")
    if not isinstance(data, dict):
        raise ConfigError(
            f"{resolved}: state must be a JSON object of semantic ids, "
            'e.g. {"channel": "discord"}',
            source=str(resolved),
        )
    return data
