"""Locate the shipped data folders (`catalogs/`, `schemas/`, the curated benchmark files).

In a wheel they live at ``resolver/_data/<kind>/``; in a source checkout (editable install or
tests run from the tree) at ``<repo>/<kind>/``.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from functools import update_wrapper
from pathlib import Path
from typing import Any, Generic, TypeVar

import orjson

_PACKAGE_DIR = Path(__file__).resolve().parent
_T = TypeVar("_T")


def data_dir(kind: str) -> Path:
    """The folder holding shipped `kind` files ("catalogs" or "schemas")."""
    installed = _PACKAGE_DIR / "_data" / kind
    if installed.is_dir():
        return installed
    return _PACKAGE_DIR.parent / kind


def default_catalog_path() -> Path:
    """The shipped default catalog."""
    return data_dir("catalogs") / "default-catalog.json"


def shipped_benchmark(name: str) -> Path:
    """A benchmark file shipped for the tuning loop (curated cases, default margins)."""
    return data_dir("benchmark") / name


def schema_path(name: str) -> Path:
    """A shipped JSON Schema, e.g. ``schema_path("catalog.v1.json")``."""
    return data_dir("schemas") / name


def shipped_table(name: str) -> dict[str, Any] | None:
    """A shipped catalog file's JSON object (``catalogs/<name>``), or None when it is missing,
    unreadable or not an object (the optional word tables: the classifier works without them).
    Read by a `built_once` table, so a file is read once per process."""
    try:
        raw = orjson.loads((data_dir("catalogs") / name).read_bytes())
    except (OSError, orjson.JSONDecodeError):
        return None
    return raw if isinstance(raw, dict) else None


class built_once(Generic[_T]):
    """`build` run at most once per process, its result kept: a caller that arrives while
    another thread builds it waits for that build instead of running a second one beside it
    (a sidecar's first turn during its warm-up would otherwise double the CPU both wait for).
    A build that raises is not kept; the next caller tries again."""

    def __init__(self, build: Callable[[], _T]) -> None:
        self._build = build
        self._lock = threading.Lock()
        self._done: list[_T] = []
        update_wrapper(self, build)

    def __call__(self) -> _T:
        done = self._done
        if done:
            return done[0]
        with self._lock:
            if not done:
                done.append(self._build())
            return done[0]

    def built(self) -> bool:
        """Whether the value is built (a warm-up's check)."""
        return bool(self._done)

    def cache_clear(self) -> None:
        """Forget the value (tests that swap the shipped table)."""
        with self._lock:
            self._done.clear()
