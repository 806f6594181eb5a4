"""Record and replay the LLM classifier's decisions (``--record DIR`` / ``--replay DIR``).

A recording is a folder with two files:

- ``meta.json``: format, model, API base, the case file's name and sha256, when recorded;
- ``decisions.jsonl``: one JSON object per case: ``{"case", "input", "outcome", ...}`` where
  ``outcome`` is ``"ok"`` (the `Classification`: selected, confidence, scores, reasoning,
  cutoff, classifier, dropped, duplicates, usage, latency_ms), ``"error"`` (the exception's
  type, reason code and a redacted message) or ``"timeout"`` (the pipeline's deadline passed).

``input`` is a sha256 of what the classifier saw (prompt, messages, candidate names and
descriptions). Replaying serves the recorded decision for the case id when its input matches;
anything else is a miss, reported after the run (re-record). The pipeline around the
classifier (keyword fallback, continuity, core tools, guards) runs for real on replay, so a
replay re-scores deterministically with no network. No credential is written: the key is not
part of any record, and error messages are redacted.
"""

from __future__ import annotations

import asyncio
import hashlib
import re
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import orjson

from .._classify import Classification, Classifier, ClassifyInput
from .._errors import ClassifierError, ClassifierOutputError, ClassifierTimeout, ConfigError
from .._types import Usage
from .runner import CURRENT_CASE

FORMAT = "resolver-bench-decisions/1"
DECISIONS = "decisions.jsonl"
META = "meta.json"

_SECRET = re.compile(r"(sk-[A-Za-z0-9_\-]{6,}|Bearer\s+\S+|api[_-]?key[=:]\s*\S+)", re.I)


def redact(text: str, secrets: tuple[str, ...] = ()) -> str:
    """`text` with key-like tokens and the given secret values replaced by ``[redacted]``."""
    for secret in secrets:
        if secret:
            text = text.replace(secret, "[redacted]")
    return _SECRET.sub("[redacted]", text)


def input_digest(request: ClassifyInput) -> str:
    """sha256 of what a classifier sees for one turn."""
    payload = {
        "prompt": request.prompt,
        "messages": [m.model_dump(mode="json") for m in request.messages],
        "tools": [list(t) for t in request.tools],
        "skills": dict(sorted(request.skills.items())),
    }
    return hashlib.sha256(orjson.dumps(payload, option=orjson.OPT_SORT_KEYS)).hexdigest()


def _classification_record(result: Classification) -> dict[str, Any]:
    return {
        "selected": list(result.selected),
        "confidence": result.confidence,
        "scores": dict(result.scores),
        "reasoning": result.reasoning,
        "cutoff": result.cutoff,
        "classifier": result.classifier,
        "dropped": list(result.dropped),
        "duplicates": result.duplicates,
        "usage": result.usage.model_dump() if result.usage else None,
        "latency_ms": result.latency_ms,
        "has_signal": result.has_signal,
    }


def _classification_from(record: dict[str, Any]) -> Classification:
    usage = record.get("usage")
    return Classification(
        selected=tuple(record["selected"]),
        confidence=float(record["confidence"]),
        scores=dict(record.get("scores") or {}),
        reasoning=str(record.get("reasoning") or ""),
        cutoff=record.get("cutoff"),
        classifier=str(record.get("classifier") or "llm"),
        dropped=tuple(record.get("dropped") or ()),
        duplicates=int(record.get("duplicates") or 0),
        usage=Usage.model_validate(usage) if usage else None,
        latency_ms=record.get("latency_ms"),
        has_signal=bool(record.get("has_signal", True)),
    )


class RecordingClassifier:
    """Wraps a classifier and appends each decision (or fault) to ``DIR/decisions.jsonl``."""

    def __init__(
        self,
        inner: Classifier,
        directory: str | Path,
        *,
        meta: dict[str, Any],
        secrets: tuple[str, ...] = (),
    ) -> None:
        self.inner = inner
        self.name = getattr(inner, "name", "llm")
        self.directory = Path(directory)
        self.directory.mkdir(parents=True, exist_ok=True)
        self._secrets = secrets
        meta = {
            "format": FORMAT,
            **meta,
            "recordedAt": datetime.now(UTC).isoformat(timespec="seconds"),
        }
        (self.directory / META).write_bytes(orjson.dumps(meta, option=orjson.OPT_INDENT_2))
        self._path = self.directory / DECISIONS
        self._path.write_bytes(b"")

    def _write(self, record: dict[str, Any]) -> None:
        with self._path.open("ab") as handle:
            handle.write(orjson.dumps(record) + b"\n")

    async def classify(self, request: ClassifyInput) -> Classification:
        base = {"case": CURRENT_CASE.get(), "input": input_digest(request)}
        try:
            result = await self.inner.classify(request)
        except asyncio.CancelledError:  # the pipeline's deadline cancelled the call
            self._write({**base, "outcome": "timeout"})
            raise
        except ClassifierError as exc:
            self._write(
                {
                    **base,
                    "outcome": "error",
                    "error": {
                        "type": type(exc).__name__,
                        "reason": exc.reason,
                        "message": redact(str(exc), self._secrets),
                    },
                }
            )
            raise
        self._write({**base, "outcome": "ok", **_classification_record(result)})
        return result


class ReplayClassifier:
    """Serves recorded decisions by case id; records misses instead of calling anything."""

    name = "replay"

    def __init__(self, directory: str | Path) -> None:
        self.directory = Path(directory)
        path = self.directory / DECISIONS
        try:
            lines = path.read_bytes().splitlines()
        except OSError as exc:
            raise ConfigError(
                f"{path}: cannot read the recording ({exc.strerror}); record one with --record",
                source=str(path),
            ) from None
        self.records: dict[str, dict[str, Any]] = {}
        for number, line in enumerate(lines, 1):
            if not line.strip():
                continue
            try:
                record = orjson.loads(line)
            except orjson.JSONDecodeError as exc:
                raise ConfigError(
                    f"{path}:{number}: invalid JSON ({exc})", source=str(path)
                ) from None
            if isinstance(record, dict) and isinstance(record.get("case"), str):
                self.records[record["case"]] = record
        self.misses: list[str] = []
        self.meta: dict[str, Any] = {}
        meta_path = self.directory / META
        if meta_path.exists():
            loaded = orjson.loads(meta_path.read_bytes())
            self.meta = loaded if isinstance(loaded, dict) else {}

    async def classify(self, request: ClassifyInput) -> Classification:
        case = CURRENT_CASE.get() or ""
        record = self.records.get(case)
        if record is None or record.get("input") != input_digest(request):
            self.misses.append(case)
            raise ClassifierError(f"no recorded decision for case {case!r}")
        outcome = record.get("outcome")
        if outcome == "timeout":
            raise ClassifierTimeout("recorded timeout", timeout_seconds=request.timeout_s)
        if outcome == "error":
            error = record.get("error") or {}
            message = str(error.get("message") or "recorded error")
            reason = str(error.get("reason") or "llm_error_fallback")
            if error.get("type") == "ClassifierOutputError":
                raise ClassifierOutputError(message, reason=reason)
            raise ClassifierError(message, reason=reason)
        return _classification_from(record)

    def check(self) -> None:
        """Raise `ConfigError` when any case had no (matching) recording."""
        if self.misses:
            shown = ", ".join(self.misses[:5])
            raise ConfigError(
                f"{self.directory}: {len(self.misses)} case(s) have no recorded decision, or "
                f"their classifier input changed since recording ({shown}); re-record with "
                "--record",
                source=str(self.directory),
            )
