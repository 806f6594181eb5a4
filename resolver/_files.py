"""Reading files the user names (configs, case files, margins, proposals, tool lists).

Every read goes through `read_regular`: only a regular file is read (a FIFO, a device such as
``/dev/zero`` or a directory is refused at once, without blocking) and never more than a
stated number of bytes.
"""

from __future__ import annotations

import os
import stat
from pathlib import Path
from typing import Any

import orjson

from ._errors import ConfigError

MAX_USER_FILE_BYTES = 64 * 1024 * 1024
"""The most a user-named JSON file may hold (configs, case files, tool lists, messages)."""


def read_regular(path: Path, limit: int) -> tuple[bytes, os.stat_result]:
    """The bytes of the regular file at `path` (symlinks followed) and its stat.

    Raises `FileNotFoundError`/`OSError` as ``open`` does, and `ValueError` (with a message
    that says what to do) when `path` is not a regular file or holds more than `limit` bytes.
    The file is opened non-blocking, so a FIFO with no writer cannot hang the caller.
    """
    fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | os.O_CLOEXEC)
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode):
            raise ValueError("not a regular file (a FIFO, device or folder); name a JSON file")
        if st.st_size > limit:
            raise ValueError(f"{st.st_size:,} bytes, over the {limit:,}-byte limit")
        chunks: list[bytes] = []
        size = 0
        while size <= limit:
            chunk = os.read(fd, min(1 << 20, limit + 1 - size))
            if not chunk:
                break
            chunks.append(chunk)
            size += len(chunk)
        if size > limit:
            raise ValueError(f"more than {limit:,} bytes (the file grew while being read)")
        return b"".join(chunks), st
    finally:
        os.close(fd)


def read_user_file(
    path: str | Path, what: str, *, limit: int = MAX_USER_FILE_BYTES
) -> tuple[Path, bytes]:
    """The expanded path and the file's bytes; an unreadable file is a `ConfigError` naming it."""
    resolved = Path(path).expanduser()
    try:
        return resolved, read_regular(resolved, limit)[0]
    except OSError as exc:
        raise ConfigError(
            f"{resolved}: cannot read {what} ({exc.strerror})", source=str(resolved)
        ) from None
    except ValueError as exc:
        raise ConfigError(f"{resolved}: cannot read {what}: {exc}", source=str(resolved)) from None


def read_user_json(path: str | Path, what: str, *, hint: str = "") -> tuple[Path, Any]:
    """`read_user_file`, parsed as JSON; invalid JSON is a `ConfigError` naming the file, the
    parser's position and (`hint`) how to fix it."""
    resolved, raw = read_user_file(path, what)
    try:
        return resolved, orjson.loads(raw)
    except orjson.JSONDecodeError as exc:
        message = f"{resolved}: not valid JSON ({exc})" + (f"; {hint}" if hint else "")
        raise ConfigError(message, source=str(resolved)) from None
