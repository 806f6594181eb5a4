"""Locate the shipped data folders (`catalogs/`, `schemas/`, the curated benchmark files).

In a wheel they live at ``resolver/_data/<kind>/``; in a source checkout (editable install or
tests run from the tree) at ``<repo>/<kind>/``.
"""

from __future__ import annotations

from pathlib import Path

_PACKAGE_DIR = Path(__file__).resolve().parent


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
