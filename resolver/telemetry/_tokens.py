"""Surface size accounting: how many bytes and tokens a set of tools costs per request.

The size of a tool is its entry in the ``tools`` array exactly as the host sends it:
``{"type":"function","function":{"name","description","parameters"}}``, compact JSON, UTF-8,
no ASCII escaping (what OpenClaw's ``JSON.stringify`` produces). A surface is the whole array,
``[`` + entries joined by ``,`` + ``]``; an empty surface is 0 (the request then has no
``tools`` key). On OpenClaw 2026.9.6's 54 default tools this gives 104,829 bytes, the figure
measured on the wire.

- Tools whose schema we ship (``catalogs/openclaw-2026.9.6-tools.json``) are sized from that
  schema. A tool we have no schema for is sized from its name and the host's description only
  (``{"type":"function","function":{"name","description"}}``) and the event says so
  (``sizeBasis``, ``unknownSchemas``): that undercounts, it never guesses a fixed size.
- Tokens are exact ``o200k_base`` counts of the surface JSON when the ``bpe-openai`` package is
  importable (the ``tokens`` extra; it ships the vocabulary and works offline). Without it the
  unit is bytes, and ``tokensSavedUnit`` says ``"bytes"``.

Counting tokens of a full surface takes tens of milliseconds, so it runs on the telemetry
writer's background thread, never on the hook path; results are cached per distinct surface.
"""

from __future__ import annotations

import concurrent.futures.thread  # noqa: F401 - see below
import logging
import threading
from collections import OrderedDict
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

import orjson

from .._data import data_dir

logger = logging.getLogger("resolver")

# bpe_openai imports concurrent.futures.thread, which refuses to load once the interpreter is
# shutting down (it registers a threading atexit hook). The tokenizer may load late, on the
# telemetry thread while a short-lived process exits, so that module is imported here, early.

TOOLS_FILE = "openclaw-2026.9.6-tools.json"
"""The shipped tool schemas (the 54 OpenClaw 2026.9.6 default tools, as sent on the wire)."""

ByteOrTokenUnit = Literal["tokens:o200k_base", "bytes"]
TOKEN_UNIT: ByteOrTokenUnit = "tokens:o200k_base"
SizeBasis = Literal["schemas", "mixed", "nameDescription", "empty"]


@dataclass(frozen=True)
class SurfaceSize:
    """What one tools array costs."""

    tools: int
    """How many tools it holds."""
    bytes: int
    """UTF-8 bytes of the compact JSON array (0 for an empty surface)."""
    tokens: int | None
    """Exact o200k_base tokens of that JSON, or None without a tokenizer."""
    unknown_schemas: int
    """How many of the tools were sized by name + description only (no shipped schema)."""

    @property
    def basis(self) -> SizeBasis:
        if self.tools == 0:
            return "empty"
        if self.unknown_schemas == 0:
            return "schemas"
        if self.unknown_schemas == self.tools:
            return "nameDescription"
        return "mixed"


Counter = Callable[[str], int]

TOKEN_PIECE_CHARS = 48_000
"""The tokenizer is given at most this many characters at a time: ``bpe-openai`` refuses a
text of 1,000,000 characters or one call of more than 200,000 tokens (a 1,200-tool MCP surface
is 2.3 MB), and a character is at most 4 UTF-8 bytes, so at most 4 tokens."""


def pieces(text: str, size: int = TOKEN_PIECE_CHARS) -> list[str]:
    """`text` cut into pieces of at most `size` characters whose token counts add up to the
    whole text's: each cut is just before a single space between two non-space characters,
    where o200k_base's pre-tokenizer always starts a new piece (" word", " {", " 1"), so no
    token spans a cut. A stretch of `size` characters without such a space (no real tool
    array has one) is cut at `size`; that count may then differ by a token at the cut."""
    out: list[str] = []
    start = 0
    while len(text) - start > size:
        end = start + size
        cut = end
        pos = text.rfind(" ", start + 1, end)
        while pos > start:
            if not text[pos - 1].isspace() and not text[pos + 1].isspace():
                cut = pos
                break
            pos = text.rfind(" ", start + 1, pos)
        out.append(text[start:cut])
        start = cut
    out.append(text[start:])
    return out


def load_token_counter() -> Counter | None:
    """An exact o200k_base token counter, or None when `bpe-openai` is not installed."""
    try:
        import bpe_openai
    except ImportError:
        return None
    try:
        encoding = bpe_openai.get_encoding("o200k_base")
    except Exception as exc:  # a broken install must not break telemetry; bytes instead
        logger.warning("resolver: o200k_base tokenizer unavailable (%s); counting bytes", exc)
        return None

    def count(text: str) -> int:
        return sum(len(encoding.encode(p, disallowed_special=())) for p in pieces(text))

    return count


def load_known_schemas(path: Path | None = None) -> dict[str, bytes]:
    """Tool name -> its compact wire JSON, from the shipped schema file ({} when unreadable)."""
    path = path or data_dir("catalogs") / TOOLS_FILE
    try:
        data = orjson.loads(path.read_bytes())
    except (OSError, orjson.JSONDecodeError) as exc:
        logger.warning("resolver: cannot read tool schemas %s (%s); sizing by name", path, exc)
        return {}
    tools = data.get("tools") if isinstance(data, dict) else data
    known: dict[str, bytes] = {}
    for tool in tools if isinstance(tools, list) else []:
        if isinstance(tool, dict) and isinstance(tool.get("name"), str):
            known[tool["name"]] = _wire({"type": "function", "function": tool})
    return known


def _wire(obj: object) -> bytes:
    # orjson writes compact, non-ASCII-escaped UTF-8 with keys in insertion order, which is
    # byte-for-byte what JSON.stringify sends for these objects.
    return orjson.dumps(obj)


class SurfaceMeter:
    """Sizes tool surfaces; thread-safe; loads its schemas and tokenizer on first use."""

    def __init__(
        self,
        *,
        known: dict[str, bytes] | None = None,
        counter: Counter | None = None,
        use_tokenizer: bool = True,
        cache_size: int = 256,
    ) -> None:
        self._known = known
        self._counter = counter
        self._use_tokenizer = use_tokenizer and counter is None
        self._loaded = counter is not None or not use_tokenizer
        self._cache: OrderedDict[tuple[bytes, ...], int | None] = OrderedDict()
        self._cache_size = cache_size
        self._lock = threading.Lock()

    @property
    def unit(self) -> ByteOrTokenUnit:
        """``"tokens:o200k_base"`` when an exact tokenizer is loaded, else ``"bytes"``."""
        self._load()
        return TOKEN_UNIT if self._counter is not None else "bytes"

    def load(self) -> None:
        """Read the shipped schemas and load the tokenizer now (idempotent)."""
        self._load()

    def _load(self) -> None:
        with self._lock:
            if self._known is None:
                self._known = load_known_schemas()
            if not self._loaded:
                self._counter = load_token_counter() if self._use_tokenizer else None
                self._loaded = True

    def entry(self, name: str, description: str) -> tuple[bytes, bool]:
        """The wire JSON of one tool and whether it came from a shipped schema."""
        self._load()
        assert self._known is not None
        known = self._known.get(name)
        if known is not None:
            return known, True
        return _wire(
            {"type": "function", "function": {"name": name, "description": description}}
        ), False

    def measure(self, tools: Sequence[tuple[str, str]]) -> SurfaceSize:
        """Size the tools array holding `tools` ((name, host description) pairs, in order)."""
        if not tools:
            return SurfaceSize(
                tools=0, bytes=0, tokens=0 if self.unit != "bytes" else None, unknown_schemas=0
            )
        entries: list[bytes] = []
        unknown = 0
        for name, description in tools:
            raw, known = self.entry(name, description)
            entries.append(raw)
            unknown += 0 if known else 1
        array = b"[" + b",".join(entries) + b"]"
        return SurfaceSize(
            tools=len(entries),
            bytes=len(array),
            tokens=self._tokens(tuple(entries), array),
            unknown_schemas=unknown,
        )

    def _tokens(self, key: tuple[bytes, ...], array: bytes) -> int | None:
        if self._counter is None:
            return None
        with self._lock:
            if key in self._cache:
                self._cache.move_to_end(key)
                return self._cache[key]
        count = self._counter(array.decode("utf-8"))
        with self._lock:
            self._cache[key] = count
            while len(self._cache) > self._cache_size:
                self._cache.popitem(last=False)
        return count
