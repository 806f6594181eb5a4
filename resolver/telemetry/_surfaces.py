"""The candidate surfaces telemetry lines refer to (``surfaceId``), each written once.

A line stays small: it carries only ``surfaceId``, a 16-hex-digit fingerprint of the turn's
candidate tools (names and host descriptions, in the host's order). The surface itself is
written once per surface to a folder beside the telemetry file::

    <telemetryFile>.surfaces/<surfaceId>.json
    {"surfaceId": "...", "tools": [{"name": "...", "description": "..."}, ...]}

— a tools file that `resolver bench --file` case files can name as their ``"surface"``, which
is how ``resolver bench generate`` makes cases replay against the surface they came from. The
folder is created 0700 and each file 0600, written atomically (temp file, ``os.replace``) on the
telemetry writer's thread, never on the turn's path; an existing file is left alone (same id,
same content). Rotated telemetry files (``file.1``) share their base file's folder.
"""

from __future__ import annotations

import contextlib
import hashlib
import logging
import os
import re
import tempfile
from collections.abc import Sequence
from pathlib import Path

import orjson

logger = logging.getLogger("resolver")

SURFACE_ID_CHARS = 16
_ROTATED = re.compile(r"\.\d+$")
_SURFACE_ID = re.compile(r"^[0-9a-f]{16}$")


def surface_fingerprint(candidates: Sequence[tuple[str, str]]) -> str:
    """The ``surfaceId`` of a candidate surface: (name, host description) pairs in order."""
    return hashlib.sha256(orjson.dumps([list(c) for c in candidates])).hexdigest()[
        :SURFACE_ID_CHARS
    ]


def surfaces_dir(telemetry_file: str | Path) -> Path:
    """The folder of surface files for a telemetry file (or one of its rotated backups)."""
    path = Path(telemetry_file).expanduser()
    return path.with_name(_ROTATED.sub("", path.name) + ".surfaces")


def surface_file(telemetry_file: str | Path, surface_id: str) -> Path | None:
    """Where the surface `surface_id` of a telemetry file is written (None for an id that is
    not a fingerprint: a line from elsewhere never names a path outside the folder)."""
    if not _SURFACE_ID.match(surface_id):
        return None
    return surfaces_dir(telemetry_file) / f"{surface_id}.json"


class SurfaceFiles:
    """Writes each surface of one telemetry file once (the writer thread's side)."""

    def __init__(self, telemetry_file: str | Path, guards: Sequence[bytes] = ()) -> None:
        self.folder = surfaces_dir(telemetry_file)
        self.guards = tuple(g for g in guards if g)
        """Byte strings never written (the configured key, should a description carry it)."""
        self._written: set[str] = set()
        self._warned = False

    def ensure(self, surface_id: str, candidates: Sequence[tuple[str, str]]) -> Path | None:
        """Write the surface unless this process or another already did; its path (None
        when it could not be written: one warning, the line is written anyway)."""
        path = self.folder / f"{surface_id}.json"
        if surface_id in self._written:
            return path
        try:
            if not path.exists():
                self._write(path, surface_id, candidates)
        except OSError as exc:
            if not self._warned:
                self._warned = True
                logger.warning(
                    "resolver: telemetry surface file %s not saved (%s); lines still name it",
                    path,
                    exc.strerror or exc,
                )
            return None
        self._written.add(surface_id)
        return path

    def _write(self, path: Path, surface_id: str, candidates: Sequence[tuple[str, str]]) -> None:
        self.folder.mkdir(mode=0o700, parents=True, exist_ok=True)
        payload = orjson.dumps(
            {
                "surfaceId": surface_id,
                "tools": [{"name": name, "description": desc} for name, desc in candidates],
            },
            option=orjson.OPT_INDENT_2,
        )
        for guard in self.guards:
            payload = payload.replace(guard, b"[REDACTED:configured_key]")
        fd, tmp = tempfile.mkstemp(dir=self.folder, prefix=f".{path.name}.", suffix=".tmp")
        try:
            os.fchmod(fd, 0o600)
            with os.fdopen(fd, "wb") as handle:
                handle.write(payload + b"\n")
            os.replace(tmp, path)
        except BaseException:
            with contextlib.suppress(OSError):
                os.unlink(tmp)
            raise
