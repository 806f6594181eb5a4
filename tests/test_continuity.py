"""Continuity: tools the primary model used in the last turns, and pending calls, stay."""

from __future__ import annotations

import asyncio
from typing import Any

from doubles import ScriptedClassifier

from resolver import Message, Resolution, Resolver, ResolverConfig, ToolInfo, TurnRequest

TOOLS = [
    ToolInfo(name=n, description=f"the {n} tool")
    for n in ("web_search", "nodes", "message", "automations", "browser", "read")
]


def call(name: str, call_id: str) -> dict[str, Any]:
    return {"id": call_id, "type": "function", "function": {"name": name, "arguments": "{}"}}


def assistant(*calls: dict[str, Any], text: str | None = None) -> Message:
    return Message(role="assistant", content=text, tool_calls=list(calls) or None)


def resolve(messages: list[Message], *, turns: int = 3, **kw: Any) -> Resolution:
    config = ResolverConfig(
        catalogOverridesFile=None, coreTools=["read"], continuityTurns=turns, llmRecallFloor=False
    )
    resolver = Resolver(config, llm=ScriptedClassifier(()))
    request = TurnRequest(prompt="do it again", tools=TOOLS, messages=messages, **kw)
    return asyncio.run(resolver.resolve(request))


def test_followup_keeps_the_tool_the_last_turn_used() -> None:
    """'do it again for the kitchen camera' keeps the camera tool the previous turn called."""
    history = [
        Message(role="user", content="take a picture from the front door camera"),
        assistant(call("nodes", "c1")),
        Message(role="tool", tool_call_id="c1", content='{"ok": true}'),
        assistant(text="Here is the front door."),
    ]
    res = resolve(history)
    assert res.llm_tools == () and res.tools_allow == ["nodes", "read"]
    assert "continuity_kept" in res.reason_codes
    assert next(c for c in res.candidates if c.name == "nodes").signals == ("continuity",)


def test_a_turn_with_many_tool_rounds_counts_once() -> None:
    """Turns start at user messages: a turn with several tool rounds is one turn."""
    history = [
        Message(role="user", content="find flights and message Tom"),
        assistant(call("web_search", "a")),
        Message(role="tool", tool_call_id="a", content="..."),
        assistant(call("browser", "b")),
        Message(role="tool", tool_call_id="b", content="..."),
        assistant(call("message", "c")),
        Message(role="tool", tool_call_id="c", content="..."),
        assistant(text="done"),
    ]
    res = resolve(history, turns=1)
    assert set(res.tools_allow or []) == {"web_search", "browser", "message", "read"}


def test_tools_older_than_the_window_are_not_kept() -> None:
    """continuityTurns=1 keeps only the last turn's tools, not the turn before."""
    history = [
        Message(role="user", content="snap the camera"),
        assistant(call("nodes", "a")),
        Message(role="tool", tool_call_id="a", content="ok"),
        Message(role="user", content="now search the web"),
        assistant(call("web_search", "b")),
        Message(role="tool", tool_call_id="b", content="ok"),
    ]
    assert set(resolve(history, turns=1).tools_allow or []) == {"web_search", "read"}
    assert set(resolve(history, turns=2).tools_allow or []) == {"web_search", "nodes", "read"}


def test_anthropic_tool_results_do_not_start_a_turn() -> None:
    """A user message carrying only tool_result parts belongs to the same turn."""
    history = [
        Message(role="user", content="snap the camera"),
        Message(role="assistant", content=[{"type": "tool_use", "id": "t1", "name": "nodes"}]),
        Message(role="user", content=[{"type": "tool_result", "tool_use_id": "t1"}]),
        Message(role="assistant", content=[{"type": "tool_use", "id": "t2", "name": "message"}]),
        Message(role="user", content=[{"type": "tool_result", "tool_use_id": "t2"}]),
    ]
    res = resolve(history, turns=1)
    assert set(res.tools_allow or []) == {"nodes", "message", "read"}
    assert "pending_call_kept" not in res.reason_codes


def test_openclaw_tool_results_answer_their_calls() -> None:
    """OpenClaw's shape (toolCall parts, toolResult messages with toolCallId) is understood."""
    history = [
        Message.model_validate({"role": "user", "content": "snap it"}),
        Message.model_validate(
            {"role": "assistant", "content": [{"type": "toolCall", "id": "x1", "name": "nodes"}]}
        ),
        Message.model_validate({"role": "toolResult", "toolCallId": "x1", "content": "ok"}),
    ]
    res = resolve(history, turns=0)
    assert "pending_call_kept" not in res.reason_codes
    assert res.tools_allow == ["read"]
    res = resolve(history[:2], turns=0)  # no result yet: the call is pending
    assert "pending_call_kept" in res.reason_codes and "nodes" in (res.tools_allow or [])


def test_host_reported_calls_are_kept_and_unknown_names_ignored() -> None:
    """recentToolCalls from the host are kept; names that are not candidates are ignored."""
    res = resolve([], recentToolCalls=["automations", "not_a_tool"])
    assert set(res.tools_allow or []) == {"automations", "read"}
    assert "continuity_kept" in res.reason_codes
    off = resolve([], turns=0, recentToolCalls=["automations"])
    assert off.tools_allow == ["read"]
