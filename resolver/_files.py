"""Reading files the user names (configs, case files, margins, proposals, tool lists)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import orjson

from ._errors import ConfigError


def read_user_file(path: str | Path, what: str) -> tuple[Path, bytes]:
    """The expanded path and the file's bytes; an unreadable file is a `ConfigError` naming it."""
    resolved = Path(path).expanduser()
    try:
        return resolved, resolved.read_bytes()
    except OSError as exc:
        raise ConfigError(
            f"{resolved}: cannot read {what} ({exc.strerror})", source=str(resolved)
        ) from None


def read_user_json(path: str | Path, what: str, *, hint: str = "") -> tuple[Path, Any]:
    """`read_user_file`, parsed as JSON; invalid JSON is a `ConfigError` naming the file, the
    parser's position and (`hint`) how to fix it."""
    resolved, raw = read_user_file(path, what)
    try:
        return resolved, orjson.loads(raw)
    except orjson.JSONDecodeError as exc:
        message = f"{resolved}: not valid JSON ({exc})" + (f"; {hint}" if hint else "")
        raise ConfigError(message, source=str(resolved)) from None
