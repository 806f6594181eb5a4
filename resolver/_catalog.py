"""Layered description catalogs (DESIGN §4.1).

Layers, later wins per key, unset keys inherit:

1. the shipped ``default-catalog.json``;
2. inline overrides from config (``toolDescriptionOverrides``, ``skillDescriptionOverrides``);
3. the override file (``catalogOverridesFile``, default ``~/.openclaw/resolver-catalog.json``).

A description the host supplies fills in only where no layer describes the tool. ``_meta`` is
ignored; unknown sections are tolerated; unknown tool keys are kept but unused. A missing
override file is fine. An invalid one is reported (file, location, fix) and the last good
catalog stays in force. The override file is re-read when its mtime/size/inode change.
"""

from __future__ import annotations

import hashlib
import logging
import threading
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Annotated, Any

import orjson
from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    StringConstraints,
    ValidationError,
    field_validator,
)

from ._config import ResolverConfig
from ._data import default_catalog_path
from ._errors import CatalogError
from ._files import read_regular
from ._limits import (
    MAX_CANDIDATES,
    MAX_DESCRIPTION_CHARS,
    MAX_ID_CHARS,
    MAX_KEYWORD_CHARS,
    MAX_KEYWORDS_PER_TOOL,
    bound_keywords,
    clip,
)
from ._state import schema_problem

logger = logging.getLogger("resolver")

MAX_CATALOG_BYTES = 5 * 1024 * 1024
SUPPORTED_SCHEMA_VERSIONS = (1,)


class ConversationMarkers(BaseModel):
    """Phrases (any language) that mark a clause as conversation rather than a task: a clause
    made of such a phrase and at most a couple of other words needs no tool; one with a
    ``topical`` phrase also with a longer topic, when the rest asks for no tool (README, "The
    offline classifier"). A layer that sets a list replaces that list."""

    model_config = ConfigDict(extra="ignore", populate_by_name=True)

    social: list[str] | None = None
    """Thanks, greetings, farewells, acknowledgements, laughter, apologies, compliments,
    feelings and small talk."""
    self_contained: list[str] | None = Field(default=None, alias="selfContained")
    """Requests the assistant answers from its own knowledge: "how many", "convert", "what is",
    "why does" ..."""
    topical: list[str] | None = None
    """Markers that take a topic: thanks and apologies ("thanks for ...", "sorry for ..."),
    explain, define, translate, write a poem, tips for ... . The rest of their clause is what
    the conversation is about, however long: such a clause needs no tool while that rest holds
    no value a tool would act on (a link, a path, a file name, a channel, a handle, code), is one
    request (no "and then ...") and is only weak evidence for any tool (the offline classifier's
    `WEAK_SCORE`)."""


MAX_LOOKUP_PHRASES = 4000
"""At most this many phrases in each `LookupCues` list."""
_Phrase = Annotated[str, StringConstraints(min_length=1, max_length=MAX_KEYWORD_CHARS)]
MAX_COMPANIONS = 8
"""At most this many companions per tool (`CatalogFile.companions`)."""
MAX_IMPLIED_PHRASES = 400
"""At most this many implied phrases per tool (`CatalogFile.implied`)."""
MAX_LAYER_PHRASES = 30_000
"""At most this many phrases in one catalog layer, its keywords, implied phrases, look-up cues
and conversation markers together. Each is tokenized when an index is built for a new candidate
set (about 10-30 us a phrase on this project's 2-core machine), so the per-field bounds alone
let a 5 MB override hold 400,000 of them: 8-10 s of CPU for every new surface, every such turn
past its deadline. The shipped default catalog holds about 11,000."""
_ToolName = Annotated[str, StringConstraints(min_length=1, max_length=MAX_ID_CHARS)]


class LookupCues(BaseModel):
    """Questions about the current state of the world ("what time does the last train leave
    today?", "¿qué tiempo hará el sábado?") need the general look-up tool even when no word
    names it (README, "The offline classifier"). A clause with an `ask` phrase *and* a `current`
    phrase gets the `tools` that are candidates. A layer that sets a list replaces that list."""

    model_config = ConfigDict(extra="ignore")

    tools: list[_Phrase] | None = Field(default=None, max_length=MAX_KEYWORDS_PER_TOOL)
    """The tools that answer questions about the world (e.g. a web search tool)."""
    ask: list[_Phrase] | None = Field(default=None, max_length=MAX_LOOKUP_PHRASES)
    """Question words and find-out verbs (what, when, how much, check if, 查一下, 언제 ...)."""
    current: list[_Phrase] | None = Field(default=None, max_length=MAX_LOOKUP_PHRASES)
    """Words tying a clause to a time-varying state (today, now, latest, price, 明天 ...)."""


class CatalogFile(BaseModel):
    """One catalog layer as written on disk (``schemas/catalog.v1.json``)."""

    model_config = ConfigDict(extra="ignore", populate_by_name=True)

    schema_: str | None = Field(default=None, alias="$schema")
    schema_version: int = Field(alias="schemaVersion")
    tools: dict[str, str] = Field(default_factory=dict)
    """Tool name -> classifier-oriented description."""
    skills: dict[str, str] = Field(default_factory=dict)
    """Skill name -> description."""
    keywords: dict[str, list[str]] = Field(default_factory=dict)
    """Optional: tool name -> user-vocabulary terms that signal it (any language)."""
    groups: dict[str, list[str]] = Field(default_factory=dict)
    """Optional: group name -> tool names (informational)."""
    companions: dict[_ToolName, Annotated[list[_ToolName], Field(max_length=MAX_COMPANIONS)]] = (
        Field(default_factory=dict, max_length=MAX_CANDIDATES)
    )
    """Optional: tool name -> tools kept beside it whenever it is kept for the turn (by the
    classifier, the keyword cache or continuity; not by the core list): host tools that overlap
    for one act, where the classifier may pick the narrow one ("conversations_send" posts to a
    chat by reference, "message" is the host's general send tool). Only adds, one hop, only
    candidates. A layer that sets a tool's list replaces it; an empty list removes it."""
    state_requirements: dict[str, dict[str, dict[str, Any]]] = Field(
        default_factory=dict, alias="stateRequirements"
    )
    """Optional: tool -> {semantic state id -> JSON Schema the host's value must satisfy}."""
    implied: dict[_ToolName, Annotated[list[_Phrase], Field(max_length=MAX_IMPLIED_PHRASES)]] = (
        Field(default_factory=dict, max_length=MAX_CANDIDATES)
    )
    """Optional: tool name -> phrases that state a situation needing the tool without any of
    its words ("while I'm driving", "hands are full" -> a text-to-speech tool; "I keep
    forgetting" -> a scheduler). A clause holding one keeps the tool as its own pick (the
    offline classifier; scores unchanged): unlike keywords, a long list dilutes nothing. A
    layer that sets a tool's list replaces it; an empty list removes it."""
    conversation: ConversationMarkers | None = None
    """Optional: phrases that mark a conversational turn (no tool needed)."""
    lookup: LookupCues | None = None
    """Optional: what makes a clause a question about the current state of the world."""
    meta: dict[str, Any] = Field(default_factory=dict, alias="_meta")
    """Provenance; ignored by the resolver."""

    @field_validator("schema_version")
    @classmethod
    def _known_version(cls, value: int) -> int:
        if value not in SUPPORTED_SCHEMA_VERSIONS:
            raise ValueError(
                f"schemaVersion {value} is not supported (this resolver reads schemaVersion 1); "
                'set "schemaVersion": 1 or upgrade the resolver'
            )
        return value

    @field_validator("tools", "skills")
    @classmethod
    def _non_empty(cls, value: dict[str, str]) -> dict[str, str]:
        for key, text in value.items():
            if not key.strip():
                raise ValueError("names must be non-empty strings")
            if not text.strip():
                raise ValueError(f"{key!r}: description is empty; write one or remove the key")
        return value

    @field_validator("state_requirements")
    @classmethod
    def _valid_state_schemas(
        cls, value: dict[str, dict[str, dict[str, Any]]]
    ) -> dict[str, dict[str, dict[str, Any]]]:
        for tool, fields in value.items():
            if not tool.strip():
                raise ValueError("tool names must be non-empty strings")
            for field_id, schema in fields.items():
                if not field_id.strip():
                    raise ValueError(f"{tool}: state ids must be non-empty strings")
                problem = schema_problem(schema)
                if problem is not None:
                    raise ValueError(
                        f"tool {tool!r}, field {field_id!r}: {problem}; "
                        "fix the schema or remove the field"
                    )
        return value


def parse_catalog_bytes(raw: bytes, *, path: str) -> CatalogFile:
    """Parse and validate one catalog layer; raise `CatalogError` naming file, place and fix."""
    if len(raw) > MAX_CATALOG_BYTES:
        raise CatalogError(
            f"{path}: catalog is {len(raw):,} bytes, over the {MAX_CATALOG_BYTES:,}-byte limit; "
            "keep descriptions short (a catalog of 5,000 tools fits easily)",
            path=path,
        )
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise CatalogError(
            f"{path}: not UTF-8 (invalid byte 0x{raw[exc.start]:02x} at offset {exc.start}); "
            "save the file as UTF-8",
            path=path,
            location=f"byte {exc.start}",
        ) from None
    try:
        data = orjson.loads(text)
    except orjson.JSONDecodeError as exc:
        raise CatalogError(
            f"{path}: invalid JSON at line {exc.lineno}, column {exc.colno}: {exc.msg}; "
            "fix the syntax (check commas and quotes)",
            path=path,
            location=f"line {exc.lineno}, column {exc.colno}",
        ) from None
    if not isinstance(data, dict):
        raise CatalogError(
            f'{path}: a catalog must be a JSON object with "schemaVersion": 1 and "tools"',
            path=path,
        )
    try:
        layer = CatalogFile.model_validate(data)
    except ValidationError as exc:
        problems = []
        for item in exc.errors():
            loc = ".".join(str(p) for p in item["loc"]) or "(root)"
            msg = item["msg"].removeprefix("Value error, ")
            if item["type"] == "missing":
                msg = "required key is missing"
            problems.append(f"{loc}: {msg}")
        first_loc = ".".join(str(p) for p in exc.errors()[0]["loc"])
        raise CatalogError(
            f"{path}: invalid catalog: " + "; ".join(problems),
            path=path,
            location=first_loc,
        ) from None
    layer = _within_bounds(layer, path)
    _check_phrase_count(layer, path)
    return layer


def _phrase_counts(layer: CatalogFile) -> dict[str, int]:
    """The phrases of each section of `layer` that an index build tokenizes."""
    lookup, talk = layer.lookup, layer.conversation
    return {
        "keywords": sum(len(v) for v in layer.keywords.values()),
        "implied": sum(len(v) for v in layer.implied.values()),
        "lookup": sum(len(v or ()) for v in (lookup.ask, lookup.current)) if lookup else 0,
        "conversation": (
            sum(len(v or ()) for v in (talk.social, talk.self_contained, talk.topical))
            if talk
            else 0
        ),
    }


def _check_phrase_count(layer: CatalogFile, path: str) -> None:
    """Reject a layer over `MAX_LAYER_PHRASES`, naming its largest section and the fix."""
    counts = _phrase_counts(layer)
    total = sum(counts.values())
    if total <= MAX_LAYER_PHRASES:
        return
    largest = max(counts, key=lambda k: counts[k])
    parts = ", ".join(f"{k} {n:,}" for k, n in counts.items() if n)
    raise CatalogError(
        f"{path}: {total:,} phrases ({parts}), over the {MAX_LAYER_PHRASES:,} a catalog may "
        f"hold; keep the phrases users say for each tool (most tools need a few dozen), "
        f"starting with {largest!r}",
        path=path,
        location=largest,
    )


def _within_bounds(layer: CatalogFile, path: str) -> CatalogFile:
    """The layer with descriptions and keywords cut to the input bounds (`_limits`), and one
    warning naming the file and the tools that were cut."""
    keywords, cut = bound_keywords(layer.keywords)
    long_tools = [n for n, t in layer.tools.items() if len(t) > MAX_DESCRIPTION_CHARS]
    long_skills = [n for n, t in layer.skills.items() if len(t) > MAX_DESCRIPTION_CHARS]
    if not (cut or long_tools or long_skills):
        return layer
    logger.warning(
        "resolver: %s: cut to the input bounds (descriptions %d characters, keyword phrases %d "
        "characters, %d phrases per tool): %s",
        path,
        MAX_DESCRIPTION_CHARS,
        MAX_KEYWORD_CHARS,
        MAX_KEYWORDS_PER_TOOL,
        ", ".join(sorted({*cut, *long_tools, *long_skills})[:10]),
    )
    return layer.model_copy(
        update={
            "keywords": keywords,
            "tools": {n: clip(t, MAX_DESCRIPTION_CHARS) for n, t in layer.tools.items()},
            "skills": {n: clip(t, MAX_DESCRIPTION_CHARS) for n, t in layer.skills.items()},
        }
    )


def load_catalog_file(path: str | Path) -> CatalogFile:
    """Read and validate a catalog file."""
    path = Path(path).expanduser()
    try:
        raw, _ = read_regular(path, MAX_CATALOG_BYTES)
    except FileNotFoundError:
        raise CatalogError(f"{path}: file not found", path=str(path)) from None
    except OSError as exc:
        raise CatalogError(f"{path}: cannot read ({exc.strerror})", path=str(path)) from None
    except ValueError as exc:
        raise CatalogError(
            f"{path}: {exc}; keep descriptions short (a catalog of 5,000 tools fits easily)"
            if "limit" in str(exc)
            else f"{path}: {exc}",
            path=str(path),
        ) from None
    return parse_catalog_bytes(raw, path=str(path))


@dataclass(frozen=True)
class Lookup:
    """The merged `LookupCues` in force."""

    tools: tuple[str, ...] = ()
    ask: tuple[str, ...] = ()
    current: tuple[str, ...] = ()

    def updated(self, layer: LookupCues) -> Lookup:
        """This with the lists `layer` sets replaced."""
        return Lookup(
            tuple(layer.tools) if layer.tools is not None else self.tools,
            tuple(layer.ask) if layer.ask is not None else self.ask,
            tuple(layer.current) if layer.current is not None else self.current,
        )


@dataclass(frozen=True)
class EffectiveCatalog:
    """The merged catalog in force: what the classifiers read."""

    tools: Mapping[str, str]
    skills: Mapping[str, str]
    keywords: Mapping[str, tuple[str, ...]]
    state_requirements: Mapping[str, Mapping[str, Mapping[str, Any]]]
    fingerprint: str
    """sha256 of the merged content (tools, skills, keywords, requirements, markers)."""
    origins: Mapping[str, str] = field(default_factory=dict)
    """Tool name -> which layer its description came from ("default", "inline", "file")."""
    social: tuple[str, ...] = ()
    """Conversation markers (`ConversationMarkers.social`)."""
    self_contained: tuple[str, ...] = ()
    """Conversation markers (`ConversationMarkers.self_contained`)."""
    topical: tuple[str, ...] = ()
    """Conversation markers that take a topic (`ConversationMarkers.topical`)."""
    lookup: Lookup = field(default_factory=lambda: Lookup())
    """The look-up tools and the cues that call for them (`LookupCues`)."""
    companions: Mapping[str, tuple[str, ...]] = field(default_factory=dict)
    """Tool name -> the tools kept beside it (`CatalogFile.companions`, merged)."""
    implied: Mapping[str, tuple[str, ...]] = field(default_factory=dict)
    """Tool name -> the phrases that imply it (`CatalogFile.implied`, merged)."""

    @property
    def markers(self) -> tuple[str, ...]:
        """Every conversation marker (social, self-contained and topical)."""
        return self.social + self.self_contained + self.topical

    def describe(self, name: str, host_description: str = "") -> str:
        """The effective description of a tool (catalog first, then the host's, then '')."""
        return self.tools.get(name) or host_description.strip()

    def with_host_descriptions(self, tools: Sequence[tuple[str, str]]) -> EffectiveCatalog:
        """A copy where host descriptions fill in tools no layer describes."""
        missing = {n: d.strip() for n, d in tools if n not in self.tools and d.strip()}
        if not missing:
            return self
        merged = {**self.tools, **missing}
        origins = {**self.origins, **dict.fromkeys(missing, "host")}
        return _build(
            merged,
            self.skills,
            self.keywords,
            self.state_requirements,
            origins,
            (self.social, self.self_contained, self.topical),
            self.lookup,
            self.companions,
            self.implied,
        )


def _fingerprint(payload: Any) -> str:
    return hashlib.sha256(orjson.dumps(payload, option=orjson.OPT_SORT_KEYS)).hexdigest()[:16]


def _build(
    tools: Mapping[str, str],
    skills: Mapping[str, str],
    keywords: Mapping[str, tuple[str, ...]],
    reqs: Mapping[str, Mapping[str, Mapping[str, Any]]],
    origins: Mapping[str, str],
    markers: tuple[tuple[str, ...], tuple[str, ...], tuple[str, ...]] = ((), (), ()),
    lookup: Lookup | None = None,
    companions: Mapping[str, tuple[str, ...]] | None = None,
    implied: Mapping[str, tuple[str, ...]] | None = None,
) -> EffectiveCatalog:
    lookup = lookup or Lookup()
    companions = companions or {}
    implied = implied or {}
    fp = _fingerprint(
        {
            "tools": dict(tools),
            "skills": dict(skills),
            "keywords": {k: list(v) for k, v in keywords.items()},
            "req": {k: dict(v) for k, v in reqs.items()},
            "conversation": [list(m) for m in markers],
            "lookup": [list(lookup.tools), list(lookup.ask), list(lookup.current)],
            "companions": {k: list(v) for k, v in companions.items()},
            "implied": {k: list(v) for k, v in implied.items()},
        }
    )
    return EffectiveCatalog(
        tools, skills, keywords, reqs, fp, origins, *markers, lookup, companions, implied
    )


def merge_layers(layers: Sequence[tuple[str, CatalogFile]]) -> EffectiveCatalog:
    """Merge layers in order (later wins per key)."""
    tools: dict[str, str] = {}
    skills: dict[str, str] = {}
    keywords: dict[str, tuple[str, ...]] = {}
    reqs: dict[str, Mapping[str, Mapping[str, Any]]] = {}
    companions: dict[str, tuple[str, ...]] = {}
    implied: dict[str, tuple[str, ...]] = {}
    origins: dict[str, str] = {}
    social: tuple[str, ...] = ()
    self_contained: tuple[str, ...] = ()
    topical: tuple[str, ...] = ()
    lookup = Lookup()
    for label, layer in layers:
        if layer.conversation is not None:
            if layer.conversation.social is not None:
                social = tuple(layer.conversation.social)
            if layer.conversation.self_contained is not None:
                self_contained = tuple(layer.conversation.self_contained)
            if layer.conversation.topical is not None:
                topical = tuple(layer.conversation.topical)
        if layer.lookup is not None:
            lookup = lookup.updated(layer.lookup)
        for name, text in layer.tools.items():
            tools[name] = text
            origins[name] = label
        skills.update(layer.skills)
        for name, terms in layer.keywords.items():
            keywords[name] = tuple(terms)
        reqs.update(layer.state_requirements)
        for name, others in layer.companions.items():
            companions[name] = tuple(dict.fromkeys(o for o in others if o != name))
        for name, phrases in layer.implied.items():
            implied[name] = tuple(dict.fromkeys(phrases))
    return _build(
        tools,
        skills,
        keywords,
        reqs,
        origins,
        (social, self_contained, topical),
        lookup,
        {name: others for name, others in companions.items() if others},
        {name: phrases for name, phrases in implied.items() if phrases},
    )


@dataclass
class _FileState:
    signature: tuple[int, int, int] | None = None
    layer: CatalogFile | None = None
    error: str | None = None


class CatalogStore:
    """Holds the effective catalog; re-reads the override file when it changes.

    Thread-safe; `current()` costs one ``stat`` per call once loaded.
    """

    def __init__(
        self,
        config: ResolverConfig,
        *,
        default_path: Path | None = None,
    ) -> None:
        self._config = config
        self._default_path = default_path or default_catalog_path()
        self._default = load_catalog_file(self._default_path)
        self._inline = CatalogFile.model_validate(
            {
                "schemaVersion": 1,
                "tools": dict(config.tool_description_overrides),
                "skills": dict(config.skill_description_overrides),
            }
        )
        self._file = _FileState()
        self._lock = threading.Lock()
        self._effective: EffectiveCatalog | None = None
        self._announced = False

    @property
    def error(self) -> str | None:
        """The last override-file problem, if the file in force is not the one on disk."""
        return self._file.error

    @property
    def override_path(self) -> Path | None:
        return self._config.overrides_path()

    def current(self) -> EffectiveCatalog:
        """The effective catalog, reloading the override file if it changed on disk."""
        with self._lock:
            changed = self._refresh_file()
            if self._effective is None or changed:
                layers: list[tuple[str, CatalogFile]] = [("default", self._default)]
                layers.append(("inline", self._inline))
                if self._file.layer is not None:
                    layers.append(("file", self._file.layer))
                self._effective = merge_layers(layers)
                self._announce()
            return self._effective

    def _refresh_file(self) -> bool:
        path = self.override_path
        if path is None:
            return False
        try:
            st = path.stat()
            signature: tuple[int, int, int] | None = (st.st_mtime_ns, st.st_size, st.st_ino)
        except FileNotFoundError:
            signature = None
        except OSError as exc:
            self._file.error = f"{path}: cannot stat ({exc.strerror})"
            return False
        if signature == self._file.signature:
            return False
        self._file.signature = signature
        if signature is None:
            had_layer = self._file.layer is not None
            self._file.layer, self._file.error = None, None
            return had_layer
        try:
            self._file.layer = load_catalog_file(path)
            self._file.error = None
            self._announced = False
            return True
        except CatalogError as exc:
            # Keep the last good layer in force; report once per change.
            self._file.error = str(exc)
            logger.error("resolver: override catalog ignored, last good catalog stays: %s", exc)
            return False

    def _announce(self) -> None:
        if self._announced:
            return
        self._announced = True
        inline_t, inline_s = len(self._inline.tools), len(self._inline.skills)
        file_t = len(self._file.layer.tools) if self._file.layer else 0
        file_s = len(self._file.layer.skills) if self._file.layer else 0
        where = str(self.override_path) if self._file.layer else "no override file"
        logger.info(
            "resolver: catalog active: %d tool and %d skill overrides "
            "(inline config: %d tools, %d skills; %s: %d tools, %d skills)",
            inline_t + file_t,
            inline_s + file_s,
            inline_t,
            inline_s,
            where,
            file_t,
            file_s,
        )
