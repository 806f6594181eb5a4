"""Reading files the user names (configs, case files, margins, proposals, tool lists).

Every read goes through `read_regular`: only a regular file is read (a FIFO, a device such as
``/dev/zero`` or a directory is refused at once, without blocking) and never more than a
stated number of bytes. Files OpenClaw owns (``openclaw.json``) are JSON5, as OpenClaw reads
them: `parse_json5` / `read_user_json5` (the ``json5`` package, loaded only when a file is not
plain JSON).
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


def parse_json5(raw: bytes, source: str, *, hint: str = "") -> tuple[Any, bool]:
    """JSON or JSON5 text (comments, trailing commas, unquoted keys, single quotes), and
    whether it was plain JSON. Invalid input is a `ConfigError` naming `source`, the parser's
    position and (`hint`) how to fix it."""
    try:
        return orjson.loads(raw), True
    except orjson.JSONDecodeError as strict:
        import json5  # late: only for a file that is not plain JSON

        try:
            text = raw.decode("utf-8")
        except UnicodeDecodeError as exc:
            raise ConfigError(
                f"{source}: not UTF-8 text ({exc.reason} at byte {exc.start})", source=source
            ) from None
        try:
            return json5.loads(text), False
        except ValueError as exc:
            message = f"{source}: not valid JSON or JSON5 ({exc}; as JSON: {strict})"
            raise ConfigError(message + (f"; {hint}" if hint else ""), source=source) from None


def read_user_json5(path: str | Path, what: str, *, hint: str = "") -> tuple[Path, Any]:
    """`read_user_file`, parsed as JSON or JSON5 (`parse_json5`)."""
    resolved, raw = read_user_file(path, what)
    return resolved, parse_json5(raw, str(resolved), hint=hint)[0]


def count_comments(text: str) -> int:
    """How many ``//`` and ``/* */`` comments a JSON5 text holds (outside strings): what a
    rewrite as plain JSON cannot keep."""
    count, i, quote = 0, 0, ""
    while i < len(text):
        char = text[i]
        if quote:
            if char == "\\":
                i += 1
            elif char == quote:
                quote = ""
        elif char in "\"'":
            quote = char
        elif text.startswith("//", i):
            count += 1
            end = text.find("\n", i)
            i = len(text) if end < 0 else end
        elif text.startswith("/*", i):
            count += 1
            end = text.find("*/", i + 2)
            i = len(text) if end < 0 else end + 1
        i += 1
    return count
