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
- ``availableTools`` / ``candidateTools`` / ``tools`` when a list of names: the host surface;
  the union over the lines becomes the file's ``tools`` (descriptions left to the catalog).
  Without any such list the file has no ``tools`` and the default OpenClaw surface is used.

Duplicate turns (same normalized prompt and used tools) are kept once.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterable
from pathlib import Path
from typing import Any

import orjson

from .._errors import ConfigError


def _names(value: Any) -> list[str] | None:
    if isinstance(value, list) and all(isinstance(v, str) for v in value):
        return [v for v in value if v]
    return None


def _short_hash(text: str) -> str:
    return hashlib.sha256(text.encode()).hexdigest()[:10]


def cases_from_telemetry(
    paths: Iterable[str], *, name: str, include_empty: bool = False
) -> tuple[dict[str, Any], int]:
    """A case-file document from telemetry files, and how many lines were skipped."""
    cases: list[dict[str, Any]] = []
    seen: set[tuple[str, tuple[str, ...]]] = set()
    surface: dict[str, None] = {}
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
        for line in raw.splitlines():
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
            meta = {k: event[k] for k in ("ts", "source", "agentId") if k in event}
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
    if surface:
        needed = {t for c in cases for t in c["must_include"]}
        doc["tools"] = [{"name": n} for n in dict.fromkeys([*surface, *sorted(needed)])]
    doc["cases"] = cases
    return doc, skipped
