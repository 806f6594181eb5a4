"""Benchmark case files (``schemas/benchmark-case.v1.json``) and loading them.

A file is ``{"name", "source", "license", "tools"? | "surface"?, "cases": [...]}``. When it
carries ``tools`` they are the candidate surface (their descriptions fill in wherever no catalog
layer describes the tool); ``surface`` names a tools file instead (a path relative to the case
file: a JSON list of tools or an object with a ``tools`` list, e.g. the MCP surface OpenClaw
sent, or the surface file telemetry writes); otherwise the default OpenClaw surface is used.
Extra top-level keys (provenance such as ``stats`` or ``name_map``) are kept and ignored; case
entries are strict so a misspelt key (``must_inclde``) is an error, not a silently empty list.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import orjson
from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator, model_validator

from .._errors import ConfigError
from .._files import read_user_file
from .._surface import default_surface, load_tools_file
from .._types import Message, ToolInfo

MCP_SETS = (
    "mcp",
    "mcp-heldout",
    "mcp-heldout-2",
    "mcp-heldout-3",
    "mcp-heldout-4",
    "mcp-heldout-5",
    "mcp-heldout-6",
)
"""The MCP case sets (``benchmark/benchmark-v1-<name>.json``): the MCP set and its held-out
sets, all on the 268-tool surface of OpenClaw 2026.9.6 with 15 MCP servers."""


class CaseTool(BaseModel):
    """One candidate tool of a case file (extra keys are ignored; ``parameters``, a JSON
    Schema or its words, feeds the offline classifier as `ToolInfo.parameters` does)."""

    model_config = ConfigDict(extra="ignore", frozen=True)

    name: str = Field(min_length=1)
    description: str = ""
    parameters: Any = None


class BenchmarkCase(BaseModel):
    """One turn to replay and the tools it must surface."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    id: str = Field(min_length=1)
    """Unique within the file."""
    prompt: str
    """The user's message for the turn."""
    must_include: list[str]
    """Tools the turn needs (empty = no optional tool needed)."""
    category: str = Field(min_length=1)
    """Reporting group (per-category table); the bootstrap cluster unless `cluster` is set."""
    messages: list[Message] | None = None
    """The conversation before the prompt (OpenAI-style chat messages), oldest first."""
    cluster: str | None = None
    """Task cluster for the gate's bootstrap (e.g. a session); defaults to `category`."""
    notes: str | None = None
    """Free text for humans."""
    meta: dict[str, Any] = Field(default_factory=dict)
    """Provenance (e.g. written by generate-cases); ignored by the harness."""


class CaseFile(BaseModel):
    """A benchmark case file."""

    model_config = ConfigDict(extra="allow", populate_by_name=True)

    schema_: str | None = Field(default=None, alias="$schema")
    name: str = Field(min_length=1)
    source: str
    """Where the cases come from (hand-written, a data set with its commit, telemetry)."""
    license: str
    tools: list[CaseTool] | None = None
    """The candidate surface; absent = the default OpenClaw surface."""
    surface: str | None = None
    """A tools file holding the candidate surface (relative to the case file); not with
    `tools`."""
    cases: list[BenchmarkCase] = Field(min_length=1)

    @model_validator(mode="after")
    def _one_surface(self) -> CaseFile:
        if self.tools is not None and self.surface is not None:
            raise ValueError('give the surface either inline ("tools") or as a file ("surface")')
        return self

    @field_validator("tools")
    @classmethod
    def _unique_tools(cls, tools: list[CaseTool] | None) -> list[CaseTool] | None:
        if tools is not None:
            seen: set[str] = set()
            for tool in tools:
                if tool.name in seen:
                    raise ValueError(f"tool {tool.name!r} is listed twice")
                seen.add(tool.name)
        return tools

    @model_validator(mode="after")
    def _unique_ids(self) -> CaseFile:
        seen: set[str] = set()
        for case in self.cases:
            if case.id in seen:
                raise ValueError(f"case id {case.id!r} is used twice; ids must be unique")
            seen.add(case.id)
        return self


@dataclass(frozen=True)
class CaseSet:
    """A loaded, checked case file: its cases, the candidate surface and the file's hash."""

    path: str
    sha256: str
    file: CaseFile
    candidates: tuple[ToolInfo, ...]
    default_surface: bool
    """True when the file has no ``tools`` and the default OpenClaw surface is used."""

    @property
    def cases(self) -> list[BenchmarkCase]:
        return self.file.cases

    def limited(self, limit: int | None) -> CaseSet:
        """The first `limit` cases (all when None)."""
        if limit is None or limit >= len(self.file.cases):
            return self
        file = self.file.model_copy(update={"cases": self.file.cases[:limit]})
        return CaseSet(self.path, self.sha256, file, self.candidates, self.default_surface)


def parse_case_file(raw: bytes, *, path: str) -> CaseSet:
    """Validate case-file bytes; raise `ConfigError` naming the file, the field and the fix."""
    try:
        data = orjson.loads(raw)
    except orjson.JSONDecodeError as exc:
        raise ConfigError(f"{path}: invalid JSON ({exc})", source=path) from None
    if not isinstance(data, dict):
        raise ConfigError(
            f'{path}: a case file is a JSON object with "name", "source", "license", "cases"',
            source=path,
        )
    try:
        file = CaseFile.model_validate(data)
    except ValidationError as exc:
        problems = []
        for item in exc.errors()[:10]:
            loc = ".".join(str(p) for p in item["loc"]) or "(root)"
            msg = item["msg"].removeprefix("Value error, ")
            if item["type"] == "missing":
                msg = "required key is missing"
            elif item["type"] == "extra_forbidden":
                msg = "unknown key (case keys: " + ", ".join(BenchmarkCase.model_fields) + ")"
            problems.append(f"{loc}: {msg}")
        raise ConfigError(
            f"{path}: invalid case file ({exc.error_count()} problem(s)): " + "; ".join(problems),
            source=path,
        ) from None
    if file.tools is not None:
        candidates = tuple(
            ToolInfo(name=t.name, description=t.description, parameters=t.parameters)
            for t in file.tools
        )
        where = "the file's tools"
    elif file.surface is not None:
        surface_path = Path(path).parent / file.surface
        candidates = tuple(load_tools_file(surface_path))
        where = f"the surface in {surface_path}"
    else:
        candidates = tuple(default_surface())
        where = "the default OpenClaw surface"
    names = {t.name for t in candidates}
    unknown = [(c.id, t) for c in file.cases for t in c.must_include if t not in names]
    if unknown:
        shown = ", ".join(f"{cid}: {tool}" for cid, tool in unknown[:5])
        raise ConfigError(
            f"{path}: {len(unknown)} must_include tool(s) are not among {where} ({shown}); "
            'add them to "tools" or fix the names',
            source=path,
        )
    digest = hashlib.sha256(raw).hexdigest()
    return CaseSet(path, digest, file, candidates, file.tools is None and file.surface is None)


def load_case_file(path: str | Path) -> CaseSet:
    """Read and check a case file."""
    path, raw = read_user_file(path, "case file")
    return parse_case_file(raw, path=str(path))
