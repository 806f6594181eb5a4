"""Telemetry fixture: a telemetry file written by real resolver turns of several kinds.

A plain module, not a conftest.py: a second conftest would shadow tests/conftest.py, which
other tests import by name.
"""

from __future__ import annotations

from pathlib import Path

from resolver import (
    Classification,
    ClassifierError,
    ClassifyInput,
    Resolver,
    ResolverConfig,
    ToolInfo,
    TurnRequest,
    Usage,
)
from resolver.telemetry import observers_for

PROMPTS = [
    "remind me tomorrow at 9 to call mom",
    "search the web for the latest PostgreSQL release",
    "read notes.txt and summarise it",
    "send a message to the team channel saying I'm late",
    "what's the weather in Lisbon",
    "thanks, that's all",
    "spawn a sub-agent to review this PR",
    "take a screenshot of the browser tab",
]


class ScriptedLLM:
    """A scripted LLM classifier: fixed picks and usage, or a fault on every third call."""

    name = "scripted"

    def __init__(self) -> None:
        self.calls = 0

    async def classify(self, request: ClassifyInput) -> Classification:
        self.calls += 1
        if self.calls % 3 == 0:
            raise ClassifierError("rate limited", reason="llm_rate_limited_fallback")
        names = [n for n, _ in request.tools]
        return Classification(
            selected=tuple(names[self.calls % 7 :: 9]),
            confidence=0.3 if self.calls % 5 == 0 else 0.85,
            classifier="llm:gpt-5.4-mini",
            reasoning="scripted",
            usage=Usage(prompt_tokens=1500, cached_tokens=1200, completion_tokens=30),
            latency_ms=200.0 + 37 * (self.calls % 11),
        )


def write_telemetry(tmp_path: Path, surface: list[ToolInfo]) -> Path:
    """24 turns: offline, LLM, low-confidence full surface, rate-limit fallbacks, abstains."""
    path = tmp_path / "telemetry.jsonl"
    base = {"telemetryFile": str(path), "catalogOverridesFile": None}
    runs: list[tuple[ResolverConfig, ScriptedLLM | None]] = [
        (ResolverConfig.model_validate(base), None),
        (ResolverConfig.model_validate(base), ScriptedLLM()),
        (ResolverConfig.model_validate({**base, "enabled": False}), None),
    ]
    for config, llm in runs:
        observers = observers_for(config)
        resolver = Resolver(config, observers=observers, **({"llm": llm} if llm else {}))
        for i, prompt in enumerate(PROMPTS):
            resolver.resolve_sync(TurnRequest(prompt=prompt, tools=surface, sessionId=f"s{i % 3}"))
        for observer in observers:
            observer.close()
    return path
