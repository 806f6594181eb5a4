"""Reading files the user names (configs, case files, margins, proposals, tool lists)."""

from __future__ import annotations

from pathlib import Path

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
