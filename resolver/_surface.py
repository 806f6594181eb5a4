"""The default candidate surface: the tools the shipped catalog describes (OpenClaw 2026.9.6)."""

from __future__ import annotations

from pathlib import Path

from ._catalog import load_catalog_file
from ._data import default_catalog_path
from ._errors import ConfigError
from ._files import read_user_json
from ._types import ToolInfo


def default_surface() -> list[ToolInfo]:
    """The 54 default OpenClaw tools, as named in the shipped catalog."""
    catalog = load_catalog_file(default_catalog_path())
    return [ToolInfo(name=name) for name in sorted(catalog.tools)]


def load_tools_file(path: str | Path) -> list[ToolInfo]:
    """Read a tools file: a JSON list of tools, or an object with a ``tools`` list.

    Each tool is ``{"name", "description"?, "parameters"?}`` (a JSON Schema, reduced to its
    words for the offline classifier; other keys are ignored).
    """
    path, data = read_user_json(path, "tools file")
    items = data.get("tools") if isinstance(data, dict) else data
    if not isinstance(items, list):
        raise ConfigError(
            f'{path}: expected a JSON list of tools or an object with a "tools" list',
            source=str(path),
        )
    tools: list[ToolInfo] = []
    for i, item in enumerate(items):
        if isinstance(item, str):
            tools.append(ToolInfo(name=item))
        elif isinstance(item, dict) and isinstance(item.get("name"), str):
            desc = item.get("description")
            tools.append(
                ToolInfo(
                    name=item["name"],
                    description=desc if isinstance(desc, str) else "",
                    parameters=item.get("parameters"),
                )
            )
        else:
            raise ConfigError(
                f'{path}: tools[{i}] must be a name or an object with a string "name"',
                source=str(path),
            )
    return tools
