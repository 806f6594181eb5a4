"""The tuning proposal file (``schemas/proposal.v1.json``): written by ``resolver tune
propose``, read by ``resolver tune apply``. Strict: a hand-edited proposal with a misspelt key
is an error, not a silently ignored field.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Literal

import orjson
from pydantic import BaseModel, ConfigDict, Field, ValidationError
from pydantic.alias_generators import to_camel

from .._errors import ConfigError
from .._files import read_user_json


class _Model(BaseModel):
    model_config = ConfigDict(
        alias_generator=to_camel, populate_by_name=True, extra="forbid", frozen=True
    )


class Evidence(_Model):
    """Why the entry exists: what the shadow turns showed for this tool."""

    shadow_turns: int = Field(ge=0)
    """Measured shadow turns in the telemetry (known, non-empty usedTools)."""
    used: int = Field(ge=0)
    """Shadow turns on which the primary model called this tool."""
    misses: int = Field(ge=1)
    """Of those, turns where the resolver would have left the tool out."""
    examples: list[str]
    """Redacted prompt excerpts of missed turns (at most 3)."""
    added_terms: list[str]
    """The user terms added to the description (frequent in the missed prompts, absent from
    the description, rarer in the other shadow prompts)."""


class SetFigures(_Model):
    """Control vs treatment on one case set."""

    cases: int = Field(ge=0)
    control_hits: int = Field(ge=0)
    treatment_hits: int = Field(ge=0)
    control_recall: float
    """Average per-case recall of the must-include tools."""
    treatment_recall: float


class GateResult(_Model):
    """The validation of one entry, run before it was proposed."""

    passed: bool
    """Non-inferior on the regression set within the frozen margins AND the failure set
    improved (more hits, average recall not lower)."""
    checks: list[str]
    """One line per criterion, with its figures."""
    classifier: Literal["offline", "llm"]
    failure_set: SetFigures
    regression_set: SetFigures
    regression_gate: dict[str, Any]
    """The gate's verdict (`resolver.bench.gate.compare`): differences, 95% task-cluster
    bootstrap intervals, margins."""
    margins_path: str
    margins_sha256: str
    regression_sources: list[str]
    """Where the regression cases came from (case file path + sha256, production hits)."""


class ProposalEntry(_Model):
    """One proposed change: a new description for one tool."""

    id: str = Field(min_length=1)
    """What `--approve` names."""
    tool: str = Field(min_length=1)
    kind: Literal["description"] = "description"
    current: str
    """The effective description when the proposal was made (checked again before apply)."""
    current_origin: str
    """Which catalog layer it came from: default, inline, file, host, or none."""
    proposed: str = Field(min_length=1)
    evidence: Evidence
    gate: GateResult


class Finding(_Model):
    """A systemic pattern reported for a human (no automatic change)."""

    kind: Literal["unfixable_miss", "fallback", "low_confidence_cluster", "rare_miss"]
    subject: str
    """The tool, reason code or top-ranked tool the finding is about."""
    count: int = Field(ge=0)
    detail: str
    examples: list[str] = Field(default_factory=list)


class TelemetrySource(_Model):
    path: str
    sha256: str


class Proposal(_Model):
    """A tuning proposal: entries a human approves one by one (`resolver tune apply`)."""

    schema_: str | None = Field(default=None, alias="$schema")
    schema_version: Literal[1] = 1
    proposal_id: str = Field(min_length=1)
    created: str
    """ISO 8601 UTC."""
    telemetry: list[TelemetrySource]
    telemetry_sha256: str
    """sha256 over the telemetry files' hashes (in order): the evidence this proposal rests on."""
    catalog_fingerprint: str
    """The effective catalog the proposal was validated against."""
    override_file: str | None
    """The override file the config named (apply writes there unless told otherwise)."""
    shadow_turns: int = Field(ge=0)
    shadow_misses: int = Field(ge=0)
    min_support: int = Field(ge=1)
    entries: list[ProposalEntry]
    findings: list[Finding] = Field(default_factory=list)

    def dumps(self) -> bytes:
        data = self.model_dump(mode="json", by_alias=True, exclude_none=False)
        return orjson.dumps(data, option=orjson.OPT_INDENT_2) + b"\n"


def load_proposal(path: str | Path) -> Proposal:
    """Read a proposal file; raise `ConfigError` naming the file and the field."""
    path, data = read_user_json(path, "proposal")
    try:
        return Proposal.model_validate(data)
    except ValidationError as exc:
        problems = "; ".join(
            f"{'.'.join(str(p) for p in e['loc']) or '(root)'}: {e['msg']}"
            for e in exc.errors()[:5]
        )
        raise ConfigError(
            f"{path}: not a tuning proposal (schemas/proposal.v1.json): {problems}",
            source=str(path),
        ) from None
