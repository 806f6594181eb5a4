"""The Python host API: ``await resolve(request)`` and an OpenClaw-shaped hook function.

Shadow mode (docs/tuning.md): a host that knows which tools the primary model called on a turn
calls `track_tool_calls(resolver)` once, passes a ``runId`` with each turn (``ctx["runId"]`` or
``TurnRequest(runId=...)``), reports the calls with `report_tool_calls` and ends the run with
`finish_run`; the shadow turn's telemetry line then carries ``usedTools``.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from .._pipeline import Resolver
from .._types import Message, Resolution, ToolInfo, TurnRequest


async def resolve(request: TurnRequest, *, resolver: Resolver) -> Resolution:
    """Resolve one turn with `resolver` (never raises)."""
    return await resolver.resolve(request)


async def before_prompt_build(
    event: Mapping[str, Any],
    ctx: Mapping[str, Any],
    *,
    resolver: Resolver,
    tools: Sequence[ToolInfo | Mapping[str, Any]] | None,
    state: Mapping[str, Any] | None = None,
) -> dict[str, Any]:
    """Same input/output shape as OpenClaw's `before_prompt_build` hook.

    `event` carries ``prompt`` and ``messages``; `ctx` carries ``sessionId``/``sessionKey`` and
    ``agentId``; `tools` is the surface the host offers (None when unknown). Returns
    ``{"toolsAllow": [...]}`` or ``{}`` to abstain. Never raises.
    """
    try:
        messages = [
            Message.model_validate(m) for m in event.get("messages") or [] if isinstance(m, dict)
        ]
        request = TurnRequest(
            prompt=str(event.get("prompt") or ""),
            messages=messages,
            tools=[t if isinstance(t, ToolInfo) else ToolInfo.model_validate(t) for t in tools]
            if tools is not None
            else None,
            sessionId=_str(ctx.get("sessionId")) or _str(ctx.get("sessionKey")),
            agentId=_str(ctx.get("agentId")),
            runId=_str(ctx.get("runId")),
            state=dict(state) if state is not None else None,
        )
    except Exception:
        return {}
    resolution = await resolver.resolve(request)
    if resolution.tools_allow is None:
        return {}
    return {"toolsAllow": list(resolution.tools_allow)}


def _str(value: Any) -> str | None:
    return value if isinstance(value, str) and value else None


def _observers(resolver: Resolver) -> list[Any]:
    from ..telemetry import TelemetryObserver

    return [o for o in resolver.observers if isinstance(o, TelemetryObserver)]


def track_tool_calls(resolver: Resolver) -> None:
    """Hold each shadow turn's telemetry line until its run is finished (`finish_run`)."""
    for observer in _observers(resolver):
        observer.hold_runs = True


def report_tool_calls(resolver: Resolver, run_id: str, names: Sequence[str]) -> bool:
    """Record tools the primary model called in `run_id`; False when no line waits for it."""
    return any([o.record_tool_calls(run_id, names) for o in _observers(resolver)])


def finish_run(resolver: Resolver, run_id: str) -> int:
    """Write the held line of `run_id` (with its usedTools); returns how many were written."""
    return sum(o.release(run_id=run_id) for o in _observers(resolver))
