"""`resolver install openclaw` / `resolver uninstall openclaw`.

Puts the extension folder at ``<openclaw home>/extensions/openclaw-tool-resolver`` (a copy, or
a symlink with ``link=True``) and adds or updates ``plugins.entries.openclaw-tool-resolver``
in ``openclaw.json`` — ``enabled``, ``hooks.allowConversationAccess: true`` (without it
OpenClaw silently skips the hook) and ``config`` (``pythonPath`` = this interpreter; other
keys the user set are kept). Nothing else in the file changes. The old file is backed up
beside it and the new one is written atomically. A malformed file is an error, never
overwritten.
"""

from __future__ import annotations

import os
import shutil
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import orjson

from ..._errors import ConfigError

PLUGIN_ID = "openclaw-tool-resolver"
EXTENSION_DIR = Path(__file__).resolve().parent / "extension"


def openclaw_home(explicit: str | None) -> Path:
    """`--openclaw-home`, else ``$OPENCLAW_HOME``, else ``~/.openclaw``."""
    if explicit:
        return Path(explicit).expanduser()
    env = os.environ.get("OPENCLAW_HOME")
    return Path(env).expanduser() if env else Path.home() / ".openclaw"


def config_path(home: Path, explicit_home: bool) -> Path:
    """``$OPENCLAW_CONFIG_PATH`` unless a home was given explicitly, else ``home/openclaw.json``."""
    env = os.environ.get("OPENCLAW_CONFIG_PATH")
    if env and not explicit_home:
        return Path(env).expanduser()
    return home / "openclaw.json"


def _read(path: Path) -> dict[str, Any]:
    if not path.exists():
        return {}
    try:
        data = orjson.loads(path.read_bytes())
    except orjson.JSONDecodeError as exc:
        raise ConfigError(
            f"{path}: not valid JSON ({exc}); fix it (or move it away) and run the command "
            "again — nothing was changed",
            source=str(path),
        ) from None
    if not isinstance(data, dict):
        raise ConfigError(f"{path}: expected a JSON object at the top level", source=str(path))
    return data


def _write_atomic(path: Path, data: dict[str, Any]) -> Path | None:
    path.parent.mkdir(parents=True, exist_ok=True)
    backup = None
    if path.exists():
        backup = path.with_name(f"{path.name}.bak-{time.strftime('%Y%m%d-%H%M%S')}")
        shutil.copy2(path, backup)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", dir=path.parent)
    try:
        with os.fdopen(fd, "wb") as handle:
            handle.write(orjson.dumps(data, option=orjson.OPT_INDENT_2) + b"\n")
            handle.flush()
            os.fsync(handle.fileno())
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
    return backup


def _section(parent: dict[str, Any], key: str, where: str) -> dict[str, Any]:
    value = parent.setdefault(key, {})
    if not isinstance(value, dict):
        raise ConfigError(f"{where}.{key} must be an object; fix it and run again")
    return value


def install(
    *,
    home: str | None = None,
    link: bool = False,
    config: dict[str, Any] | None = None,
    python: str | None = None,
) -> dict[str, str]:
    """Install the extension and the plugin entry; returns what was done (paths)."""
    root = openclaw_home(home)
    cfg_path = config_path(root, explicit_home=home is not None)
    data = _read(cfg_path)  # validate before touching anything
    target = root / "extensions" / PLUGIN_ID
    target.parent.mkdir(parents=True, exist_ok=True)
    if target.is_symlink() or target.is_file():
        target.unlink()
    elif target.exists():
        shutil.rmtree(target)
    if link:
        target.symlink_to(EXTENSION_DIR, target_is_directory=True)
    else:
        shutil.copytree(EXTENSION_DIR, target, ignore=shutil.ignore_patterns("*.test.mjs"))
    plugins = _section(data, "plugins", str(cfg_path))
    entries = _section(plugins, "entries", f"{cfg_path}: plugins")
    entry = _section(entries, PLUGIN_ID, f"{cfg_path}: plugins.entries")
    entry["enabled"] = True
    _section(entry, "hooks", f"{cfg_path}: plugins.entries.{PLUGIN_ID}")[
        "allowConversationAccess"
    ] = True
    plugin_config = _section(entry, "config", f"{cfg_path}: plugins.entries.{PLUGIN_ID}")
    plugin_config.update(config or {})
    plugin_config["pythonPath"] = python or sys.executable
    backup = _write_atomic(cfg_path, data)
    return {
        "extension": str(target),
        "config": str(cfg_path),
        "backup": str(backup) if backup else "",
    }


def uninstall(*, home: str | None = None) -> dict[str, str]:
    """Remove the extension folder and the plugin entry (other settings untouched)."""
    root = openclaw_home(home)
    cfg_path = config_path(root, explicit_home=home is not None)
    data = _read(cfg_path)
    target = root / "extensions" / PLUGIN_ID
    if target.is_symlink() or target.is_file():
        target.unlink()
    elif target.exists():
        shutil.rmtree(target)
    entries = (
        data.get("plugins", {}).get("entries") if isinstance(data.get("plugins"), dict) else None
    )
    backup = None
    if isinstance(entries, dict) and PLUGIN_ID in entries:
        del entries[PLUGIN_ID]
        backup = _write_atomic(cfg_path, data)
    return {"extension": str(target), "config": str(cfg_path), "backup": str(backup or "")}
