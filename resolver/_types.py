"""Value types shared by every stage: the turn request, the resolution and their parts.

Host payloads (`TurnRequest`, `Message`, `ToolInfo`) are pydantic models with
``extra="ignore"`` so a new host field never breaks the hook. Everything the resolver
produces is frozen.
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator

from ._text import schema_text

Source = Literal[
    "llm",  # the LLM classifier's selection
    "offline",  # the embedded offline classifier (no endpoint configured)
    "keyword",  # fallback after an LLM fault: keyword cache + offline classifier
    "reuse",  # a session-scoped exact decision reuse
    "full",  # the full candidate surface (low confidence, or no signal)
    "abstain",  # no answer: the host keeps its own surface
    "disabled",  # the resolver is switched off
    "shadow",  # shadow mode: resolved, recorded, but abstained
]
"""Who decided the final surface."""

ReasonCode = Literal[
    "llm_selected",
    "offline_selected",
    "conversation_core_only",
    "cache_added",
    "companion_added",
    "core_always",
    "search_catalog_widened",
    "continuity_kept",
    "pending_call_kept",
    "route_reused",
    "reuse_miss_new",
    "reuse_miss_expired",
    "reuse_miss_isolation",
    "reuse_miss_refresh",
    "reuse_disabled",
    "unknown_tools_dropped",
    "duplicate_tools_dropped",
    "low_confidence_full_surface",
    "no_signal_full_surface",
    "llm_timeout_fallback",
    "llm_error_fallback",
    "llm_auth_fallback",
    "llm_rate_limited_fallback",
    "llm_unknown_model_fallback",
    "llm_invalid_output_fallback",
    "llm_truncated_fallback",
    "llm_refusal_fallback",
    "llm_degenerate_fallback",
    "llm_floor_added",
    "llm_empty_selection",
    "llm_constant_confidence",
    "deadline_exceeded",
    "surface_unknown_abstain",
    "surface_refresh_abstain",
    "mcp_surface_unknown_abstain",
    "empty_surface_abstain",
    "state_ineligible_excluded",
    "catalog_layer_invalid",
    "internal_error_abstain",
    "surface_too_large_abstain",
    "prompt_truncated",
    "history_truncated",
    "description_truncated",
    "input_truncated",
    "disabled",
    "shadow_mode",
]
"""The closed vocabulary of reason codes (documented in README, "Reason codes")."""

REASON_CODES: tuple[str, ...] = ReasonCode.__args__  # type: ignore[attr-defined]

LLM_FALLBACK_CODES: frozenset[str] = frozenset(
    code for code in REASON_CODES if code.startswith("llm_") and code.endswith("_fallback")
)
"""The LLM failed and the offline classifier answered (one code per cause)."""

Signal = Literal[
    "classifier",
    "floor",
    "cache",
    "continuity",
    "companion",
    "core",
    "search",
    "reuse",
    "full",
    "state",
]
"""Which signal put a tool into the surface (the per-candidate rationale)."""


class _HostModel(BaseModel):
    """Lenient base for host payloads: unknown fields are ignored."""

    model_config = ConfigDict(extra="ignore", populate_by_name=True, frozen=True)


class ToolInfo(_HostModel):
    """A tool the host offers this turn."""

    name: str
    """The tool's name as the host matches it."""
    description: str = ""
    """The host's own description; used only where no catalog layer describes the tool."""
    parameters: str = ""
    """The words of the tool's parameter schema (property names, enum values, short property
    descriptions; a JSON Schema object is reduced to them, `_text.schema_text`): matched by the
    offline classifier, never sent to the LLM classifier."""

    @field_validator("parameters", mode="before")
    @classmethod
    def _schema_words(cls, value: Any) -> str:
        if value is None:
            return ""
        return value if isinstance(value, str) else schema_text(value)


class ToolCall(_HostModel):
    """A tool call found in the conversation history."""

    id: str | None = None
    name: str


class Message(_HostModel):
    """One chat message of the conversation before the prompt (OpenAI-style, lenient)."""

    role: str = "user"
    content: Any = None
    """A string, or a list of content parts (only text parts are read)."""
    tool_calls: list[dict[str, Any]] | None = None
    tool_call_id: str | None = Field(default=None, alias="toolCallId")
    """The call a tool-result message answers (``tool_call_id``, or OpenClaw's ``toolCallId``)."""
    name: str | None = None

    def text(self) -> str:
        """The message's plain text (text parts joined), '' when there is none."""
        if isinstance(self.content, str):
            return self.content
        if isinstance(self.content, list):
            parts: list[str] = []
            for part in self.content:
                if isinstance(part, dict):
                    text = part.get("text")
                    if isinstance(text, str):
                        parts.append(text)
                elif isinstance(part, str):
                    parts.append(part)
            return "\n".join(parts)
        return ""

    def calls(self) -> list[ToolCall]:
        """Tool calls this (assistant) message made, in the OpenAI or Anthropic shape."""
        found: list[ToolCall] = []
        for raw in self.tool_calls or []:
            if not isinstance(raw, dict):
                continue
            fn = raw.get("function")
            name = fn.get("name") if isinstance(fn, dict) else raw.get("name")
            if isinstance(name, str) and name:
                call_id = raw.get("id")
                found.append(ToolCall(id=call_id if isinstance(call_id, str) else None, name=name))
        if isinstance(self.content, list):
            for part in self.content:
                if (
                    isinstance(part, dict)
                    and part.get("type") in ("tool_use", "toolCall", "tool_call")
                    and isinstance(part.get("name"), str)
                ):
                    part_id = part.get("id")
                    found.append(
                        ToolCall(
                            id=part_id if isinstance(part_id, str) else None, name=part["name"]
                        )
                    )
        return found


class TurnRequest(_HostModel):
    """Everything the resolver knows about one turn."""

    prompt: str
    """The user's message for this turn."""
    messages: list[Message] = Field(default_factory=list)
    """The conversation before the prompt, oldest first."""
    tools: list[ToolInfo] | None = None
    """The candidate surface. ``None`` means the host's surface is unknown (-> abstain)."""
    skills: dict[str, str] = Field(default_factory=dict)
    """Skills the agent has (name -> description); shown to the classifier."""
    session_id: str | None = Field(default=None, alias="sessionId")
    agent_id: str | None = Field(default=None, alias="agentId")
    state: dict[str, Any] | None = None
    """Host execution state (semantic id -> value) for state-aware eligibility."""
    recent_tool_calls: list[str] = Field(default_factory=list, alias="recentToolCalls")
    """Tools the host reports the primary model called recently in this session."""
    refresh: bool = False
    """Skip decision reuse for this turn (and replace the stored decision)."""
    run_id: str | None = Field(default=None, alias="runId")
    """The host's id for this turn's agent run (links tool calls reported later to the turn)."""


class Usage(BaseModel):
    """Classifier token usage as reported by the endpoint."""

    model_config = ConfigDict(frozen=True)

    prompt_tokens: int = 0
    cached_tokens: int = 0
    completion_tokens: int = 0


class Candidate(BaseModel):
    """One ranked candidate: its score and why it is (or is not) in the surface."""

    model_config = ConfigDict(frozen=True)

    name: str
    score: float
    selected: bool
    signals: tuple[Signal, ...] = ()
    """Signals that put the tool in the surface (empty when it fell below the cut-off).

    For a tool excluded by state: the signals that wanted it, then ``"state"``."""
    excluded: str | None = None
    """Why a candidate was excluded by a fail-closed rule (state eligibility), if it was:
    ``"<field>: <why>"``, several joined with ``"; "``."""


class Exclusion(BaseModel):
    """A structured reason a tool was ruled out by declared state requirements."""

    model_config = ConfigDict(frozen=True)

    tool: str
    field: str
    why: str


class Timings(BaseModel):
    """Where the turn's time went, in milliseconds."""

    model_config = ConfigDict(frozen=True)

    total_ms: float = 0.0
    classifier_ms: float = 0.0
    llm_ms: float | None = None
    """Wall time of the LLM request, when one was made."""


class Resolution(BaseModel):
    """The resolver's answer for one turn."""

    model_config = ConfigDict(frozen=True)

    tools_allow: list[str] | None
    """The tools the primary model may see; ``None`` = abstain (host keeps its surface)."""
    source: Source
    confidence: float
    reason_codes: tuple[ReasonCode, ...]
    candidates: tuple[Candidate, ...]
    """Every candidate, best first."""
    cutoff: float | None = None
    """The score cut-off the classifier used, when it used one."""
    below_cutoff: int = 0
    """How many candidates fell below the cut-off and were not added by another signal
    (excluded candidates are counted in `exclusions`, not here)."""
    timings: Timings = Field(default_factory=Timings)
    classifier: str = "offline"
    """Which classifier answered: "offline", "llm:<model>", "reuse", ..."""
    reasoning: str = ""
    conversation: float | None = None
    """Semantic extra: the conversation head's probability that the turn needs no tool (None
    when the head did not run: lexical only, or another classifier answered)."""
    llm_tools: tuple[str, ...] | None = None
    """The LLM's own selection (after dropping unknown names), when an LLM answered."""
    validation: str | None = None
    """How the keyword cache judged an LLM selection: "agree", "cache_added", "no_signal"."""
    dropped_tools: tuple[str, ...] = ()
    """Names the classifier returned that are not candidates (dropped, recorded)."""
    exclusions: tuple[Exclusion, ...] = ()
    usage: Usage | None = None
    available_tools: int = 0
    """How many candidates the host offered."""
    summary: str = ""
    """One line: why this surface."""
    shadow_tools_allow: list[str] | None = None
    """Shadow mode: what the resolver would have allowed (``tools_allow`` is then ``None``,
    ``source`` is ``"shadow"``). ``None`` on every other turn."""
    fallback: str | None = None
    """Why the LLM classifier's answer was not used, when it was not: the reason code and the
    fault ("llm_timeout_fallback: no answer from http://127.0.0.1:8080/v1 within 3.95s")."""

    @property
    def abstained(self) -> bool:
        """True when the host should keep its own surface."""
        return self.tools_allow is None
