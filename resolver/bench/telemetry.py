"""Cases from telemetry: turns whose actually-used tools are known (``generate-cases``).

Each telemetry line is a JSON object; lines are read leniently (bad JSON or missing fields are
skipped and counted). Fields relied on:

- ``prompt`` or ``promptExcerpt`` (string): the turn's prompt (present when ``capturePrompts``
  is on); lines without one are skipped;
- ``usedTools`` (list of names): the tools the primary model actually called on that turn
  (recorded on shadow turns); lines without it are skipped, and lines where it is empty are
  skipped unless ``--include-empty`` (then the case needs no optional tool);
- ``shadowToolsAllow`` (shadow turns) else ``toolsAllow`` (list or null): what the resolver
  would have allowed / answered; a case whose used tools were not all in it is put in category
  ``miss`` (the failure set), otherwise ``hit`` (regression set);
- ``sessionId``: becomes the case's bootstrap ``cluster`` as a one-way hash (never the id);
- ``surfaceId``: the turn's candidate surface, written once beside the telemetry file
  (``<telemetry>.surfaces/<surfaceId>.json``, `resolver.telemetry._surfaces`). The surfaces
  the lines name (their union when there are several, with descriptions) become a tools file
  written next to the case file, which the case file names as its ``"surface"``: the cases
  replay against the surface they came from. A named surface file that is missing is an error;
- ``availableTools`` / ``candidateTools`` / ``tools`` when a list of names (older writers): the
  host surface; the union over the lines becomes the file's ``tools`` (descriptions left to
  the catalog). With neither, the file has no surface and the default OpenClaw surface is used.

Duplicate turns (same normalized prompt and used tools) are kept once.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import orjson

from .._errors import ConfigError
from .._surface import load_tools_file
from ..telemetry._surfaces import surface_file


def _names(value: Any) -> list[str] | None:
    if isinstance(value, list) and all(isinstance(v, str) for v in value):
        return [v for v in value if v]
    return None


def _short_hash(text: str) -> str:
    return hashlib.sha256(text.encode()).hexdigest()[:10]


@dataclass
class Generated:
    """A generated case file and what goes with it."""

    doc: dict[str, Any]
    skipped: int
    surface: list[dict[str, str]] | None = None
    """The tools file the case file names as ``"surface"`` (write it with `write_cases`)."""
    surface_ids: list[str] = field(default_factory=list)
    """The telemetry surfaces it holds (several: their union)."""


def write_cases(generated: Generated, out: str | Path) -> Path | None:
    """Write the case file at `out` and, when it has one, its surface beside it
    (``<out stem>.surface.json``, named relative to the case file); the surface's path."""
    out = Path(out)
    out.parent.mkdir(parents=True, exist_ok=True)
    doc = dict(generated.doc)
    surface_path = None
    if generated.surface is not None:
        surface_path = out.with_name(f"{out.stem}.surface.json")
        body = {"surfaceIds": generated.surface_ids, "tools": generated.surface}
        surface_path.write_bytes(orjson.dumps(body, option=orjson.OPT_INDENT_2) + b"\n")
        doc = {k: v for k, v in doc.items() if k != "cases"}
        doc["surface"] = surface_path.name
        doc["cases"] = generated.doc["cases"]
    out.write_bytes(orjson.dumps(doc, option=orjson.OPT_INDENT_2) + b"\n")
    return surface_path


def cases_from_telemetry(
    paths: Iterable[str], *, name: str, include_empty: bool = False
) -> Generated:
    """A case-file document from telemetry files (see the module docstring)."""
    cases: list[dict[str, Any]] = []
    seen: set[tuple[str, tuple[str, ...]]] = set()
    surface: dict[str, None] = {}
    described: dict[str, str] = {}
    """The union of the surfaces the lines name by surfaceId: name -> description."""
    surface_ids: dict[str, None] = {}
    loaded: set[str] = set()
    skipped = 0
    sources: list[str] = []
    for path in paths:
        try:
            raw = Path(path).read_bytes()
        except OSError as exc:
            raise ConfigError(
                f"{path}: cannot read telemetry ({exc.strerror})", source=path
            ) from None
        sources.append(Path(path).name)
        for number, line in enumerate(raw.splitlines(), start=1):
            try:
                event = orjson.loads(line)
            except orjson.JSONDecodeError:
                skipped += 1
                continue
            if not isinstance(event, dict):
                skipped += 1
                continue
            prompt = event.get("prompt") or event.get("promptExcerpt")
            used = _names(event.get("usedTools"))
            if not isinstance(prompt, str) or not prompt.strip() or used is None:
                skipped += 1
                continue
            if not used and not include_empty:
                skipped += 1
                continue
            surface_id = event.get("surfaceId")
            if isinstance(surface_id, str) and surface_id:
                if surface_id not in loaded:
                    _load_surface(path, number, surface_id, described)
                    loaded.add(surface_id)
                surface_ids[surface_id] = None
            for key in ("availableTools", "candidateTools", "tools"):
                offered = _names(event.get(key))
                if offered:
                    surface.update(dict.fromkeys(offered))
                    break
            used_key = tuple(sorted(set(used)))
            normalized = " ".join(prompt.lower().split())
            if (normalized, used_key) in seen:
                continue
            seen.add((normalized, used_key))
            allow = _names(event.get("shadowToolsAllow"))
            if allow is None:
                allow = _names(event.get("toolsAllow"))
            missed = allow is not None and not set(used_key) <= set(allow)
            session = event.get("sessionId")
            case: dict[str, Any] = {
                "id": f"tel-{_short_hash(normalized + '|' + ','.join(used_key))}",
                "prompt": prompt,
                "must_include": list(used_key),
                "category": "miss" if missed else "hit",
            }
            if isinstance(session, str) and session:
                case["cluster"] = f"s-{_short_hash(session)}"
            meta = {k: event[k] for k in ("ts", "source", "agentId", "surfaceId") if k in event}
            if meta:
                case["meta"] = meta
            cases.append(case)
    if not cases:
        raise ConfigError(
            "no usable telemetry line: a case needs a prompt (prompt or promptExcerpt; turn on "
            "capturePrompts) and usedTools (recorded on shadow turns)"
        )
    doc: dict[str, Any] = {
        "name": name,
        "source": "telemetry: " + ", ".join(sources),
        "license": "private (generated from local telemetry)",
    }
    needed = sorted({t for c in cases for t in c["must_include"]})
    doc["cases"] = cases
    if described:
        union = {**dict.fromkeys(surface, ""), **described}
        tools = [{"name": n, "description": union.get(n, "")} for n in [*union, *needed]]
        unique = list({t["name"]: t for t in tools}.values())
        return Generated(doc, skipped, surface=unique, surface_ids=list(surface_ids))
    if surface:
        tools_doc = [{"name": n} for n in dict.fromkeys([*surface, *needed])]
        doc = {**{k: v for k, v in doc.items() if k != "cases"}, "tools": tools_doc}
        doc["cases"] = cases
    return Generated(doc, skipped)


def _load_surface(telemetry: str, number: int, surface_id: str, into: dict[str, str]) -> None:
    """Add the tools of the surface a line names (written beside its telemetry file)."""
    path = surface_file(telemetry, surface_id)
    if path is None or not path.is_file():
        where = path or f"{telemetry}.surfaces/"
        raise ConfigError(
            f"{telemetry}:{number}: the line names surface {surface_id!r}, but {where} is "
            "missing; the surfaces folder is written beside the telemetry file: copy it "
            "along with the file (cases replayed against another surface would mislead)",
            source=telemetry,
        )
    for tool in load_tools_file(path):
        into.setdefault(tool.name, tool.description)
