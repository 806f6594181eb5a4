"""`resolver install openclaw` / `resolver uninstall openclaw`.

Install puts the extension folder at ``<openclaw home>/extensions/openclaw-tool-resolver`` (a
copy, or a symlink with ``link=True``) and adds or updates
``plugins.entries.openclaw-tool-resolver`` in ``openclaw.json`` — ``enabled``,
``hooks.allowConversationAccess: true`` (without it OpenClaw silently skips the hook) and
``config`` (``pythonPath`` = this interpreter; other keys the user set are kept). Settings in
the original design's place, ``plugins.openclaw-tool-resolver`` (which OpenClaw 2026.9.6
refuses: "plugins: Unrecognized key"), are moved into that ``config`` (keys already there
win). Nothing else in the file changes.

``openclaw.json`` is JSON5 (OpenClaw accepts comments and trailing commas): it is read as
such and written back as plain, indented JSON — which OpenClaw reads as well — and the report
says how many comments could not be kept. Before the file is changed it is copied to
``openclaw.json.bak-resolver`` (one backup, replaced on the next change, so runs do not pile
up files); the new file is written atomically. A file that is unchanged is not rewritten. A
malformed file is an error, never overwritten.

Uninstall undoes what install did and is idempotent: the extension folder (and
``extensions/`` when it is left empty), the plugin entry (and ``plugins.entries`` /
``plugins`` when they are left empty), and the sidecar's own state (the surface file, lock
files). It leaves the user's data — telemetry, the learned keyword cache, the override
catalog, the backup — and reports each with its path. A second run changes nothing and says
so.
"""

from __future__ import annotations

import os
import shutil
import sys
import tempfile
from contextlib import AbstractContextManager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import orjson

from ..._config import (
    ResolverConfig,
    deprecation_notice,
    legacy_plugin_config,
    state_dir,
)
from ..._errors import ConfigError
from ..._files import count_comments, parse_json5
from ._mcp import DEFAULT_TIMEOUT_S, SyncReport, servers_from_config, sync

PLUGIN_ID = "openclaw-tool-resolver"
EXTENSION_DIR = Path(__file__).resolve().parent / "extension"
BACKUP_SUFFIX = ".bak-resolver"


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


def backup_path(path: Path) -> Path:
    """The one backup the installer keeps beside `path`."""
    return path.with_name(path.name + BACKUP_SUFFIX)


@dataclass
class ConfigDocument:
    """``openclaw.json`` as read: its data and what a rewrite as plain JSON would lose."""

    path: Path
    data: dict[str, Any]
    exists: bool
    plain_json: bool = True
    comments: int = 0

    @classmethod
    def read(cls, path: Path) -> ConfigDocument:
        """Read (JSON or JSON5); a missing file is an empty document, a bad one an error that
        says nothing was changed."""
        if not path.exists():
            return cls(path, {}, exists=False)
        try:
            raw = path.read_bytes()
        except OSError as exc:
            raise ConfigError(
                f"{path}: cannot read ({exc.strerror}); nothing was changed", source=str(path)
            ) from None
        hint = "fix it (or move it away) and run the command again — nothing was changed"
        data, plain = parse_json5(raw, str(path), hint=hint)
        if not isinstance(data, dict):
            raise ConfigError(
                f"{path}: expected a JSON object at the top level; nothing was changed",
                source=str(path),
            )
        comments = 0 if plain else count_comments(raw.decode("utf-8"))
        return cls(path, data, exists=True, plain_json=plain, comments=comments)

    def write(self, data: dict[str, Any]) -> Path | None:
        """Back the old file up (one backup) and write `data` atomically; the backup's path."""
        path = self.path
        path.parent.mkdir(parents=True, exist_ok=True)
        backup = None
        if path.exists():
            backup = backup_path(path)
            shutil.copy2(path, backup)
        fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", dir=path.parent)
        try:
            with os.fdopen(fd, "wb") as handle:
                handle.write(orjson.dumps(data, option=orjson.OPT_INDENT_2) + b"\n")
                handle.flush()
                os.fsync(handle.fileno())
            if path.exists():
                os.chmod(tmp, path.stat().st_mode & 0o777)
            os.replace(tmp, path)
        except BaseException:
            Path(tmp).unlink(missing_ok=True)
            raise
        return backup


@dataclass
class InstallReport:
    """What `install` did."""

    extension: Path
    config: Path
    changed: bool
    """False when openclaw.json already said what install writes (not rewritten)."""
    backup: Path | None = None
    moved: list[str] = field(default_factory=list)
    """Keys moved from the legacy ``plugins.openclaw-tool-resolver``."""
    deprecation: str | None = None
    json5: bool = False
    """The file was JSON5 and is now plain JSON."""
    comments_lost: int = 0


@dataclass
class UninstallReport:
    """What `uninstall` removed and what it left (with why)."""

    config: Path
    removed: list[str] = field(default_factory=list)
    left: list[tuple[Path, str]] = field(default_factory=list)
    backup: Path | None = None
    comments_lost: int = 0


def _section(parent: dict[str, Any], key: str, where: str) -> dict[str, Any]:
    value = parent.setdefault(key, {})
    if not isinstance(value, dict):
        raise ConfigError(f"{where}.{key} must be an object; fix it and run again")
    return value


def _remove_path(path: Path) -> bool:
    if path.is_symlink() or path.is_file():
        path.unlink()
        return True
    if path.exists():
        shutil.rmtree(path)
        return True
    return False


def install(
    *,
    home: str | None = None,
    link: bool = False,
    config: dict[str, Any] | None = None,
    python: str | None = None,
) -> InstallReport:
    """Install the extension and the plugin entry; see the module docstring."""
    root = openclaw_home(home)
    cfg_path = config_path(root, explicit_home=home is not None)
    doc = ConfigDocument.read(cfg_path)  # validate before touching anything
    data = orjson.loads(orjson.dumps(doc.data))  # a deep copy to compare against
    plugins = _section(data, "plugins", str(cfg_path))
    legacy = legacy_plugin_config(data, str(cfg_path))
    entries = _section(plugins, "entries", f"{cfg_path}: plugins")
    entry = _section(entries, PLUGIN_ID, f"{cfg_path}: plugins.entries")
    entry["enabled"] = True
    _section(entry, "hooks", f"{cfg_path}: plugins.entries.{PLUGIN_ID}")[
        "allowConversationAccess"
    ] = True
    plugin_config = _section(entry, "config", f"{cfg_path}: plugins.entries.{PLUGIN_ID}")
    moved: list[str] = []
    if legacy is not None:
        moved = sorted(k for k in legacy if k not in plugin_config)
        entry["config"] = plugin_config = {**legacy, **plugin_config}
        del plugins[PLUGIN_ID]
    plugin_config.update(config or {})
    plugin_config["pythonPath"] = python or sys.executable

    target = root / "extensions" / PLUGIN_ID
    target.parent.mkdir(parents=True, exist_ok=True)
    _remove_path(target)
    if link:
        target.symlink_to(EXTENSION_DIR, target_is_directory=True)
    else:
        shutil.copytree(EXTENSION_DIR, target, ignore=shutil.ignore_patterns("*.test.mjs"))

    changed = not doc.exists or data != doc.data
    backup = doc.write(data) if changed else None
    return InstallReport(
        extension=target,
        config=cfg_path,
        changed=changed,
        backup=backup,
        moved=moved,
        deprecation=deprecation_notice(str(cfg_path)) if legacy is not None else None,
        json5=changed and doc.exists and not doc.plain_json,
        comments_lost=doc.comments if changed else 0,
    )


def _plugin_settings(data: dict[str, Any]) -> dict[str, Any]:
    """The resolver's settings in a config (either place), without validating them."""
    plugins = data.get("plugins")
    if not isinstance(plugins, dict):
        return {}
    found: dict[str, Any] = {}
    legacy = plugins.get(PLUGIN_ID)
    if isinstance(legacy, dict):
        found.update(legacy)
    entries = plugins.get("entries")
    entry = entries.get(PLUGIN_ID) if isinstance(entries, dict) else None
    settings = entry.get("config") if isinstance(entry, dict) else None
    if isinstance(settings, dict):
        found.update(settings)
    return found


def _setting(settings: dict[str, Any], key: str, default: str | None) -> Path | None:
    value = settings.get(key, default)
    return Path(value).expanduser() if isinstance(value, str) and value else None


def uninstall(*, home: str | None = None) -> UninstallReport:
    """Remove what `install` put in place and the sidecar's own state; see the module
    docstring. Running it again changes nothing."""
    root = openclaw_home(home)
    cfg_path = config_path(root, explicit_home=home is not None)
    doc = ConfigDocument.read(cfg_path)
    report = UninstallReport(config=cfg_path)
    data = orjson.loads(orjson.dumps(doc.data))
    settings = _plugin_settings(data)
    defaults = ResolverConfig()

    plugins = data.get("plugins")
    if isinstance(plugins, dict):
        if PLUGIN_ID in plugins:
            del plugins[PLUGIN_ID]
            report.removed.append(f"plugins.{PLUGIN_ID} (the deprecated place) in {cfg_path}")
        entries = plugins.get("entries")
        if isinstance(entries, dict) and PLUGIN_ID in entries:
            del entries[PLUGIN_ID]
            report.removed.append(f"plugins.entries.{PLUGIN_ID} in {cfg_path}")
            if not entries:
                del plugins["entries"]
        if not plugins:
            del data["plugins"]
    if data != doc.data:
        report.backup = doc.write(data)
        report.comments_lost = doc.comments

    target = root / "extensions" / PLUGIN_ID
    if _remove_path(target):
        report.removed.append(str(target))
    extensions = target.parent
    if extensions.is_dir() and not any(extensions.iterdir()):
        extensions.rmdir()
        report.removed.append(f"{extensions} (left empty)")

    # The sidecar's own state: nobody's data, and useless without the plugin.
    surface_files = {
        root / "resolver-surface.json",
        _setting(settings, "surfaceStateFile", defaults.surface_state_file),
    }
    telemetry = _setting(settings, "telemetryFile", None)
    cache = _setting(settings, "keywordCacheFile", defaults.keyword_cache_file)
    state: set[Path | None] = set(surface_files)
    for data_file in (telemetry, cache):
        if data_file is not None:
            state.add(data_file.with_name(data_file.name + ".lock"))
    for path in sorted((p for p in state if p is not None), key=str):
        if path.is_file() or path.is_symlink():
            path.unlink()
            report.removed.append(str(path))
    for surface in (p for p in surface_files if p is not None):
        if surface.parent.is_dir():
            for tmp in surface.parent.glob(f".{surface.name}.*"):
                tmp.unlink(missing_ok=True)

    # What stays: the user's data, each with its path.
    if telemetry is not None:
        for path in sorted(telemetry.parent.glob(telemetry.name + "*")):
            if path.name != telemetry.name + ".lock":
                report.left.append((path, "telemetry (your data)"))
    if cache is not None and cache.exists():
        report.left.append((cache, "the learned keyword cache"))
    overrides = _setting(settings, "catalogOverridesFile", defaults.catalog_overrides_file)
    if overrides is not None and overrides.exists():
        report.left.append((overrides, "your override catalog"))
    for path in sorted(cfg_path.parent.glob(cfg_path.name + ".bak-*")):
        why = "openclaw.json before the resolver's last change"
        if path.name != cfg_path.name + BACKUP_SUFFIX:
            why = "a backup an earlier resolver version wrote"
        report.left.append((path, why))
    folder = state_dir()
    if folder.is_dir() and not any(folder.iterdir()):
        folder.rmdir()
        report.removed.append(f"{folder} (left empty)")
    return report


def sync_mcp(
    *,
    home: str | None = None,
    only: list[str] | None = None,
    timeout: float | None = None,
    state_file: Path | None = None,
    lock: AbstractContextManager[Any] | None = None,
) -> SyncReport | None:
    """`resolver openclaw sync-mcp`: list the tools of the MCP servers in ``openclaw.json``
    into the sidecar's surface state (``_mcp.sync``). None when the config has no
    ``mcp.servers`` or the surface state file is off. ``state_file``/``lock``: the sidecar's
    own file and write lock (its background sync), instead of the config's setting."""
    root = openclaw_home(home)
    cfg_path = config_path(root, explicit_home=home is not None)
    doc = ConfigDocument.read(cfg_path)
    if not servers_from_config(doc.data):
        return None
    state = state_file or _setting(
        _plugin_settings(doc.data), "surfaceStateFile", ResolverConfig().surface_state_file
    )
    if state is None:
        return None
    try:
        return sync(doc.data, state, only=only, timeout=timeout or DEFAULT_TIMEOUT_S, lock=lock)
    except KeyError as exc:
        raise ConfigError(
            f"{cfg_path}: mcp.servers has no server named {exc.args[0]}; "
            "name servers listed under mcp.servers"
        ) from None
    except ValueError as exc:
        raise ConfigError(str(exc)) from None
