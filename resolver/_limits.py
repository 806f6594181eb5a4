"""Input bounds: every per-turn input is cut to a documented size before any work is done.

The resolver runs inside somebody else's turn, so the size of what it works on must not depend
on what a user pastes or a host sends. `bound_request` is the first thing `Resolver.resolve`
does; each cut is recorded with a reason code (README, "Input bounds"):

- prompt: `MAX_PROMPT_CHARS`; a longer one keeps its first `PROMPT_HEAD_CHARS` and last
  `PROMPT_TAIL_CHARS` characters (``prompt_truncated``);
- messages: the last `MAX_MESSAGES`; per message `MAX_MESSAGE_CHARS` of text, `MAX_PARTS`
  content parts and `MAX_CALLS` tool calls, and only the fields the resolver reads
  (``history_truncated``);
- host tool descriptions and skills: `MAX_DESCRIPTION_CHARS` each (parameter words
  `MAX_PARAMETERS_CHARS`), and all of a surface's
  descriptions together `MAX_SURFACE_CHARS` (each then gets an equal share, at least
  `MIN_DESCRIPTION_CHARS`); at most `MAX_SKILLS` skills (``description_truncated``);
- session, agent and run ids: `MAX_ID_CHARS` (a longer id keeps its head and a hash of the
  whole); execution state: `MAX_STATE_KEYS` keys, `MAX_STATE_VALUE_BYTES` of JSON per value (a
  bigger value becomes null, which fails closed) (``input_truncated``);
- candidate tools: at most `MAX_CANDIDATES`; a bigger surface abstains
  (``surface_too_large_abstain``).

Catalog keywords are bounded when a layer is loaded (`MAX_KEYWORD_CHARS` per phrase,
`MAX_KEYWORDS_PER_TOOL` phrases per tool; a warning names the file and the tool), and a tool's
name is kept whole in ``toolsAllow`` however long it is (only its indexed text is cut).

Every string that reaches the resolver also loses lone UTF-16 surrogates (``"\\ud83d"``, half an
emoji, which ``JSON.stringify`` emits and a shell passes on from invalid UTF-8): each becomes
U+FFFD, so no later stage (JSON encoding, hashing, telemetry) can fail on one.
"""

from __future__ import annotations

import hashlib
import operator
import re
from collections.abc import Sequence
from dataclasses import dataclass
from operator import attrgetter
from typing import Any, Generic, TypeVar

import orjson

from ._types import Message, ReasonCode, ToolInfo, TurnRequest

T = TypeVar("T")

MAX_PROMPT_CHARS = 16_000
PROMPT_HEAD_CHARS = 12_000
PROMPT_TAIL_CHARS = 4_000
PROMPT_CUT_MARK = "\n[…]\n"
MAX_MESSAGES = 64
MAX_MESSAGE_CHARS = 4_000
MAX_PARTS = 64
MAX_CALLS = 64
MAX_DESCRIPTION_CHARS = 8_000
"""Host descriptions of the default OpenClaw tools reach 5,324 characters (``automations``)."""
MAX_PARAMETERS_CHARS = 1_500
"""A tool's parameter words (`ToolInfo.parameters`)."""
MAX_SURFACE_CHARS = 2_000_000
"""All host descriptions of one surface together (a bigger surface gets shorter ones)."""
MIN_DESCRIPTION_CHARS = 200
MAX_SKILLS = 500
MAX_ID_CHARS = 256
MAX_STATE_KEYS = 256
MAX_STATE_VALUE_BYTES = 16_384
MAX_CANDIDATES = 10_000
MAX_KEYWORD_CHARS = 200
MAX_KEYWORDS_PER_TOOL = 1_000

_SURROGATE = re.compile("[\ud800-\udfff]")
TOOL_NAME, TOOL_DESCRIPTION, TOOL_PARAMETERS = map(
    attrgetter, ("name", "description", "parameters")
)
"""Getters of a `ToolInfo`'s fields, for one C-level pass over a surface (`map`)."""
_PART_KEYS = ("type", "text", "id", "name", "tool_use_id", "toolCallId")
_CALL_KEYS = ("id", "name", "type")


def _no_surrogate(text: str) -> bool:
    return text.isascii() or _SURROGATE.search(text) is None


def clean(text: str) -> str:
    """`text` with every lone surrogate replaced by U+FFFD (a no-op for ordinary text)."""
    if _no_surrogate(text):
        return text
    return _SURROGATE.sub("\ufffd", text)


def clip(text: str, limit: int) -> str:
    """`text` cut to at most `limit` characters (surrogates cleaned)."""
    return clean(text[:limit])


def bound_id(value: str | None) -> str | None:
    """An id of at most `MAX_ID_CHARS` characters: a longer one keeps its head and a hash of
    the whole, so two long ids that share a head stay apart."""
    if value is None:
        return None
    value = clean(value)
    if len(value) <= MAX_ID_CHARS:
        return value
    digest = hashlib.sha256(value.encode("utf-8")).hexdigest()[:16]
    return f"{value[: MAX_ID_CHARS - 18]}#{digest}"


def bound_prompt(prompt: str) -> str:
    """The prompt's first `PROMPT_HEAD_CHARS` and last `PROMPT_TAIL_CHARS` characters."""
    if len(prompt) <= MAX_PROMPT_CHARS:
        return clean(prompt)
    return clean(prompt[:PROMPT_HEAD_CHARS] + PROMPT_CUT_MARK + prompt[-PROMPT_TAIL_CHARS:])


@dataclass(frozen=True)
class Bounded:
    """A request cut to the bounds, and which bounds cut it."""

    request: TurnRequest
    codes: tuple[ReasonCode, ...] = ()
    too_many_tools: bool = False


def _slim_value(value: Any, limit: int) -> tuple[Any, bool]:
    """A string cut to `limit`; anything else (numbers, None) as it is, containers dropped."""
    if isinstance(value, str):
        return clip(value, limit), len(value) > limit
    if value is None or isinstance(value, bool | int | float):
        return value, False
    return None, True


def _slim_dict(
    raw: dict[str, Any], keys: tuple[str, ...], limit: int
) -> tuple[dict[str, Any], bool]:
    out: dict[str, Any] = {}
    cut = False
    for key in keys:
        if key in raw:
            value, was_cut = _slim_value(raw[key], limit)
            cut |= was_cut
            if value is not None:
                out[key] = value
    return out, cut


def _slim_message(message: Message) -> tuple[Message, bool]:
    """Only what the resolver reads of a message: role, text (cut), call and result ids."""
    content: Any = message.content
    if (
        isinstance(content, str)
        and len(content) <= MAX_MESSAGE_CHARS
        and message.tool_calls is None
        and clean(content) is content
        and len(message.role) <= MAX_ID_CHARS
        and len(message.tool_call_id or "") <= MAX_ID_CHARS
        and len(message.name or "") <= MAX_ID_CHARS
    ):
        return message, False  # the common case: a plain text message within bounds
    cut = False
    if isinstance(content, str):
        cut = len(content) > MAX_MESSAGE_CHARS
        content = clip(content, MAX_MESSAGE_CHARS)
    elif isinstance(content, list):
        parts: list[Any] = []
        budget = MAX_MESSAGE_CHARS
        cut = len(content) > MAX_PARTS
        for part in content[:MAX_PARTS]:
            if isinstance(part, str):
                parts.append(clip(part, max(0, budget)))
                cut |= len(part) > budget
                budget -= len(part)
            elif isinstance(part, dict):
                slim, was_cut = _slim_dict(part, _PART_KEYS, MAX_ID_CHARS)
                text = part.get("text")
                if isinstance(text, str):
                    slim["text"] = clip(text, max(0, budget))
                    was_cut = len(text) > budget
                    budget -= len(text)
                parts.append(slim)
                cut |= was_cut
            else:
                cut = True
        content = parts
    elif content is not None:
        content, cut = None, True
    calls: list[dict[str, Any]] | None = None
    if message.tool_calls is not None:
        calls = []
        cut |= len(message.tool_calls) > MAX_CALLS
        for raw in message.tool_calls[:MAX_CALLS]:
            if not isinstance(raw, dict):
                cut = True
                continue
            slim, was_cut = _slim_dict(raw, _CALL_KEYS, MAX_ID_CHARS)
            fn = raw.get("function")
            if isinstance(fn, dict):
                name, name_cut = _slim_value(fn.get("name"), MAX_ID_CHARS)
                slim["function"] = {"name": name} if isinstance(name, str) else {}
                was_cut |= name_cut
            calls.append(slim)
            cut |= was_cut
    slim_message = Message(
        role=clip(message.role, MAX_ID_CHARS),
        content=content,
        tool_calls=calls,
        toolCallId=bound_id(message.tool_call_id),
        name=bound_id(message.name),
    )
    return slim_message, cut


def bound_messages(messages: list[Message]) -> tuple[list[Message], bool]:
    """The last `MAX_MESSAGES` messages, each slimmed to what the resolver reads."""
    cut = len(messages) > MAX_MESSAGES
    out: list[Message] = []
    for message in messages[-MAX_MESSAGES:]:
        slim, was_cut = _slim_message(message)
        out.append(slim)
        cut |= was_cut
    return out, cut


def _bound_state(state: dict[str, Any] | None) -> tuple[dict[str, Any] | None, bool]:
    if state is None:
        return None, False
    cut = len(state) > MAX_STATE_KEYS
    out: dict[str, Any] = {}
    for key, value in list(state.items())[:MAX_STATE_KEYS]:
        if not isinstance(key, str) or len(key) > MAX_ID_CHARS:
            cut = True
            continue
        try:
            size = len(orjson.dumps(value))
        except (TypeError, orjson.JSONEncodeError):
            size = MAX_STATE_VALUE_BYTES + 1
        if size > MAX_STATE_VALUE_BYTES:
            out[clean(key)] = None  # fails closed against any declared requirement
            cut = True
        else:
            out[clean(key)] = value
    return out, cut


def description_cap(lengths: list[int]) -> int:
    """The per-tool description bound for a surface: `MAX_DESCRIPTION_CHARS`, lowered so all
    descriptions together stay within `MAX_SURFACE_CHARS` (never below `MIN_DESCRIPTION_CHARS`)."""
    if sum(lengths) <= MAX_SURFACE_CHARS or (
        sum(min(n, MAX_DESCRIPTION_CHARS) for n in lengths) <= MAX_SURFACE_CHARS
    ):
        return MAX_DESCRIPTION_CHARS
    return max(MIN_DESCRIPTION_CHARS, MAX_SURFACE_CHARS // max(1, len(lengths)))


class SameTools(Generic[T]):
    """The answer for the last tool list, reused while a caller passes the very same tool
    objects (and the same `tag`, e.g. a catalog fingerprint). `ToolInfo` is frozen, so the same
    objects have the same fields; checking identity is one C-level pass, never ``==``. A host
    passes the same surface turn after turn. Safe across threads: one tuple, read and replaced
    whole."""

    def __init__(self) -> None:
        self._last: tuple[tuple[ToolInfo, ...], object, T | None] = ((), None, None)

    def get(self, tools: Sequence[ToolInfo], tag: object = None) -> T | None:
        last_tools, last_tag, value = self._last
        if value is None or not tools or tag != last_tag or len(tools) != len(last_tools):
            return None
        return value if all(map(operator.is_, tools, last_tools)) else None

    def put(self, tools: Sequence[ToolInfo], value: T, tag: object = None) -> T:
        self._last = (tuple(tools), tag, value)
        return value


_BOUNDED: SameTools[tuple[list[ToolInfo], bool]] = SameTools()


def bound_tools(tools: list[ToolInfo]) -> tuple[list[ToolInfo], bool]:
    """Host descriptions cut to the surface's `description_cap`, surrogates cleaned (names
    kept); the last surface's answer when the host passes the same tool objects."""
    last = _BOUNDED.get(tools)
    out, cut = last if last is not None else _BOUNDED.put(tools, _bound_tools_now(tools))
    return list(out), cut


def _bound_tools_now(tools: list[ToolInfo]) -> tuple[list[ToolInfo], bool]:
    descriptions = list(map(TOOL_DESCRIPTION, tools))
    lengths = list(map(len, descriptions))
    cap = description_cap(lengths)
    if (
        max(lengths, default=0) <= cap
        and max(map(len, map(TOOL_PARAMETERS, tools)), default=0) <= MAX_PARAMETERS_CHARS
        and _no_surrogate("".join(map(TOOL_NAME, tools)))
        and _no_surrogate("".join(descriptions))
    ):
        return list(tools), False  # the common case: one pass per field, no tool copied
    cut = False
    out: list[ToolInfo] = []
    for tool in tools:
        name, desc = tool.name, tool.description
        if len(tool.parameters) > MAX_PARAMETERS_CHARS:
            tool = tool.model_copy(
                update={"parameters": clip(tool.parameters, MAX_PARAMETERS_CHARS)}
            )
            cut = True
        if len(desc) <= cap and _no_surrogate(name) and _no_surrogate(desc):
            out.append(tool)
            continue
        cut |= len(desc) > cap
        out.append(
            ToolInfo(
                name=clean(name),
                description=clip(desc, cap),
                parameters=clip(tool.parameters, MAX_PARAMETERS_CHARS),
            )
        )
    return out, cut


def _bound_skills(skills: dict[str, str]) -> tuple[dict[str, str], bool]:
    cut = len(skills) > MAX_SKILLS
    out: dict[str, str] = {}
    for name, text in list(skills.items())[:MAX_SKILLS]:
        if not isinstance(name, str) or not isinstance(text, str):
            cut = True
            continue
        cut |= len(text) > MAX_DESCRIPTION_CHARS or len(name) > MAX_ID_CHARS
        out[clip(name, MAX_ID_CHARS)] = clip(text, MAX_DESCRIPTION_CHARS)
    return out, cut


def bound_request(request: TurnRequest) -> Bounded:
    """`request` within every bound of the module docstring, and the reason codes of the cuts.

    Cheap when nothing needs cutting (length checks; the tool list is only walked when the
    surface is within `MAX_CANDIDATES`)."""
    codes: list[ReasonCode] = []
    prompt = bound_prompt(request.prompt)
    if len(request.prompt) > MAX_PROMPT_CHARS:
        codes.append("prompt_truncated")
    messages, history_cut = bound_messages(request.messages)
    if history_cut:
        codes.append("history_truncated")
    too_many = request.tools is not None and len(request.tools) > MAX_CANDIDATES
    tools = request.tools
    described_cut = False
    if tools is not None and not too_many:
        tools, described_cut = bound_tools(tools)
    skills, skills_cut = _bound_skills(request.skills)
    if described_cut or skills_cut:
        codes.append("description_truncated")
    state, state_cut = _bound_state(request.state)
    ids = (request.session_id, request.agent_id, request.run_id)
    bounded_ids = tuple(bound_id(v) for v in ids)
    recent = [clip(n, MAX_ID_CHARS) for n in request.recent_tool_calls[:MAX_CALLS]]
    other_cut = (
        state_cut
        or any(v is not None and len(v) > MAX_ID_CHARS for v in ids)
        or len(request.recent_tool_calls) > MAX_CALLS
    )
    if other_cut:
        codes.append("input_truncated")
    bounded = request.model_copy(
        update={
            "prompt": prompt,
            "messages": messages,
            "tools": tools,
            "skills": skills,
            "state": state,
            "session_id": bounded_ids[0],
            "agent_id": bounded_ids[1],
            "run_id": bounded_ids[2],
            "recent_tool_calls": recent,
        }
    )
    return Bounded(bounded, tuple(codes), too_many)


def bound_keywords(
    keywords: dict[str, list[str]],
) -> tuple[dict[str, list[str]], list[str]]:
    """Catalog keywords within `MAX_KEYWORD_CHARS` / `MAX_KEYWORDS_PER_TOOL`, and the tools
    whose keywords were cut (for the load-time warning)."""
    out: dict[str, list[str]] = {}
    cut: list[str] = []
    for tool, phrases in keywords.items():
        kept = [clip(p, MAX_KEYWORD_CHARS) for p in phrases[:MAX_KEYWORDS_PER_TOOL]]
        if len(phrases) > MAX_KEYWORDS_PER_TOOL or any(len(p) > MAX_KEYWORD_CHARS for p in phrases):
            cut.append(tool)
        out[tool] = kept
    return out, cut
