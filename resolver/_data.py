"""Locate the shipped data folders (`catalogs/`, `schemas/`, the curated benchmark files).

In a wheel they live at ``resolver/_data/<kind>/``; in a source checkout (editable install or
tests run from the tree) at ``<repo>/<kind>/``.
"""

from __future__ import annotations

import threading
from pathlib import Path
from typing import Any

import orjson

_PACKAGE_DIR = Path(__file__).resolve().parent
_READ_LOCK = threading.Lock()


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
    unreadable or not an object (the optional word tables: the classifier works without them)."""
    try:
        with _READ_LOCK:
            raw = orjson.loads((data_dir("catalogs") / name).read_bytes())
    except (OSError, orjson.JSONDecodeError):
        return None
    return raw if isinstance(raw, dict) else None
