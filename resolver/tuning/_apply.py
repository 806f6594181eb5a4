"""`resolver tune apply`: write approved entries of a proposal into the override catalog.

Only the approved entries' descriptions change; every other key of the existing file is kept.
The write is atomic (temp file, fsync, replace) with a backup of the old file beside it, and
``_meta`` records who applied what. Refusals (nothing is written):

- the override file exists but is not valid JSON / not a valid catalog (never clobbered);
- an approved entry failed its validation gate (unless ``force``);
- the tool's effective description is no longer the proposal's ``current`` — the catalog was
  edited since the proposal was made (unless ``force``).

A running resolver picks the file up on its next turn (`CatalogStore` reloads on change).
"""

from __future__ import annotations

import difflib
import getpass
import shutil
import socket
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import orjson

from .._cache import atomic_write
from .._catalog import CatalogStore, parse_catalog_bytes
from .._config import ResolverConfig
from .._errors import CatalogError, ConfigError
from ._proposal import Proposal, ProposalEntry

SCHEMA_URL = "https://openclaw-tool-resolver/schemas/catalog.v1.json"


@dataclass(frozen=True)
class ApplyResult:
    path: Path
    entries: tuple[str, ...]
    diff: str
    written: bool
    backup: Path | None
    unchanged: tuple[str, ...] = ()
    """Approved entries whose proposed description was already in force."""


def _who() -> str:
    try:
        return f"{getpass.getuser()}@{socket.gethostname()} (resolver tune apply)"
    except Exception:  # no user name in this environment (e.g. a container without passwd)
        return "resolver tune apply"


def _read_existing(path: Path) -> tuple[bytes | None, dict[str, Any]]:
    if not path.exists():
        return None, {"$schema": SCHEMA_URL, "schemaVersion": 1, "tools": {}}
    try:
        raw = path.read_bytes()
    except OSError as exc:
        raise ConfigError(f"{path}: cannot read ({exc.strerror})", source=str(path)) from None
    try:
        parse_catalog_bytes(raw, path=str(path))
    except CatalogError as exc:
        raise ConfigError(
            f"refusing to write the override catalog: {exc}. Fix or move the file by hand, "
            "then run the command again (it is never overwritten while invalid)",
            source=str(path),
        ) from None
    data: dict[str, Any] = orjson.loads(raw)
    return raw, data


def _select(proposal: Proposal, ids: list[str]) -> list[ProposalEntry]:
    by_id = {e.id: e for e in proposal.entries}
    unknown = [i for i in ids if i not in by_id]
    if unknown:
        known = ", ".join(by_id) or "none"
        raise ConfigError(
            f"--approve: unknown entry id(s) {', '.join(unknown)} in proposal "
            f"{proposal.proposal_id} (its entries: {known})",
            source="--approve",
        )
    return [by_id[i] for i in dict.fromkeys(ids)]


def _render(data: dict[str, Any]) -> bytes:
    return orjson.dumps(data, option=orjson.OPT_INDENT_2) + b"\n"


def apply_proposal(
    proposal: Proposal,
    ids: list[str],
    config: ResolverConfig,
    *,
    dry_run: bool = False,
    force: bool = False,
    now: datetime | None = None,
) -> ApplyResult:
    """Write the approved entries into ``config``'s override file (see module docstring)."""
    if not ids:
        raise ConfigError("--approve: name at least one entry id", source="--approve")
    path = config.overrides_path()
    if path is None:
        raise ConfigError(
            "the config has no catalogOverridesFile; set one (e.g. "
            '"~/.openclaw/resolver-catalog.json") and pass it with --config',
            source="catalogOverridesFile",
        )
    entries = _select(proposal, ids)
    old_raw, data = _read_existing(path)
    effective = CatalogStore(config).current()
    problems: list[str] = []
    changes: dict[str, str] = {}
    unchanged: list[str] = []
    for entry in entries:
        if not entry.gate.passed and not force:
            problems.append(
                f"{entry.id} ({entry.tool}): its validation gate failed "
                f"({'; '.join(entry.gate.checks[-2:])}); pass --force to apply it anyway"
            )
            continue
        now_text = effective.tools.get(entry.tool, "")
        if now_text == entry.proposed:
            unchanged.append(entry.id)
            continue
        edited = now_text != entry.current and not (entry.current_origin == "host" and not now_text)
        if edited and not force:
            problems.append(
                f"{entry.id} ({entry.tool}): the description in force differs from the "
                "proposal's 'current' (the catalog was edited since); re-run `resolver tune "
                "propose`, or pass --force to overwrite the edit"
            )
            continue
        changes[entry.tool] = entry.proposed
    if problems:
        raise ConfigError(
            f"{path}: nothing written:\n  - " + "\n  - ".join(problems), source=str(path)
        )
    applied = tuple(e.id for e in entries if e.tool in changes)
    new = dict(data)
    new["tools"] = {**data.get("tools", {}), **changes}
    stamp = (now or datetime.now(UTC)).strftime("%Y-%m-%dT%H:%M:%SZ")
    if changes:
        meta = dict(data.get("_meta") or {}) if isinstance(data.get("_meta"), dict) else {}
        meta.update(
            lastModifiedBy=_who(),
            lastModifiedAt=stamp,
            proposalId=proposal.proposal_id,
            entryIds=list(applied),
        )
        new["_meta"] = meta
    payload = _render(new)
    parse_catalog_bytes(payload, path=str(path))  # never write what the resolver would reject
    before = _render(data).decode() if old_raw is not None else ""
    diff = "".join(
        difflib.unified_diff(
            before.splitlines(keepends=True),
            payload.decode().splitlines(keepends=True),
            fromfile=f"{path} (now)" if old_raw is not None else "/dev/null",
            tofile=f"{path} (approved)",
        )
    )
    if dry_run or not changes:
        return ApplyResult(path, applied, diff, False, None, tuple(unchanged))
    backup: Path | None = None
    if old_raw is not None:
        backup = path.with_name(f"{path.name}.{stamp.replace(':', '')}.bak")
        shutil.copy2(path, backup)
    atomic_write(path, payload)
    return ApplyResult(path, applied, diff, True, backup, tuple(unchanged))
