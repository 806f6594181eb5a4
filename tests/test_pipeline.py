"""The pipeline: invariants (property tests), fault handling, guards."""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import resolver._pipeline as pipeline
from resolver import (
    Classification,
    ClassifierError,
    ClassifyInput,
    Message,
    Resolver,
    ResolverConfig,
    ToolInfo,
    TurnRequest,
)

CORE = ("read", "write", "edit", "exec", "process", "memory_search", "memory_get", "session_status")


class ScriptedClassifier:
    """A classifier double returning a fixed answer, raising, or hanging."""

    name = "scripted"

    def __init__(
        self,
        selected: tuple[str, ...] = (),
        confidence: float = 0.9,
        raises: BaseException | None = None,
        hang: bool = False,
    ) -> None:
        self.selected, self.confidence, self.raises, self.hang = selected, confidence, raises, hang
        self.calls = 0

    async def classify(self, request: ClassifyInput) -> Classification:
        self.calls += 1
        if self.hang:
            await asyncio.Event().wait()
        if self.raises is not None:
            raise self.raises
        names = {n for n, _ in request.tools}
        kept = tuple(n for n in dict.fromkeys(self.selected) if n in names)
        dropped = tuple(n for n in self.selected if n not in names)
        return Classification(
            selected=kept,
            confidence=self.confidence,
            classifier="llm:scripted",
            dropped=dropped,
            reasoning="scripted",
        )


def make(config: ResolverConfig | None = None, **kwargs: Any) -> Resolver:
    return Resolver(config or ResolverConfig(catalogOverridesFile=None), **kwargs)


def run(resolver: Resolver, prompt: str, tools: list[ToolInfo] | None, **kw: Any):  # type: ignore[no-untyped-def]
    return asyncio.run(resolver.resolve(TurnRequest(prompt=prompt, tools=tools, **kw)))


def test_reminder_prompt_resolves_to_automations_and_few_tools(surface: list[ToolInfo]) -> None:
    """'remind me tomorrow at 9 to call mom' includes automations, far fewer than 54 tools."""
    res = run(make(), "remind me tomorrow at 9 to call mom", surface)
    assert res.tools_allow is not None
    assert "automations" in res.tools_allow
    assert len(res.tools_allow) <= 14
    assert res.source == "offline" and "core_always" in res.reason_codes


def test_chit_chat_gets_core_tools_only(surface: list[ToolInfo]) -> None:
    """A no-tool prompt gets exactly the core tools."""
    res = run(make(), "thanks, that's all", surface)
    assert res.tools_allow is not None and set(res.tools_allow) == set(CORE)


def test_unknown_surface_abstains() -> None:
    """No candidate list: abstain (the host keeps its surface)."""
    res = run(make(), "search the web", None)
    assert res.tools_allow is None and res.reason_codes == ("surface_unknown_abstain",)


def test_disabled_abstains(surface: list[ToolInfo]) -> None:
    """enabled=false: abstain with the `disabled` code."""
    res = run(make(ResolverConfig(enabled=False, catalogOverridesFile=None)), "x", surface)
    assert res.tools_allow is None and res.source == "disabled"


def test_llm_selection_reaches_tools_allow_and_invented_names_are_dropped(
    surface: list[ToolInfo],
) -> None:
    """The classifier's selection is the base; invented names are dropped and recorded."""
    llm = ScriptedClassifier(("web_search", "made_up_tool"), confidence=0.9)
    res = run(make(llm=llm), "what's new in rust", surface)
    assert res.tools_allow is not None
    assert "web_search" in res.tools_allow and "made_up_tool" not in res.tools_allow
    assert res.source == "llm"
    assert "unknown_tools_dropped" in res.reason_codes
    assert res.dropped_tools == ("made_up_tool",)


def test_low_confidence_returns_full_surface(surface: list[ToolInfo]) -> None:
    """Confidence below the threshold: every candidate."""
    res = run(make(llm=ScriptedClassifier(("web_search",), confidence=0.2)), "hmm", surface)
    assert res.tools_allow is not None and len(res.tools_allow) == 54
    assert res.source == "full" and "low_confidence_full_surface" in res.reason_codes


def test_classifier_error_falls_back_to_offline(surface: list[ToolInfo]) -> None:
    """A classifier fault ends in the keyword/offline answer with the fault's reason code."""
    llm = ScriptedClassifier(raises=ClassifierError("boom", reason="llm_rate_limited_fallback"))
    res = run(make(llm=llm), "remind me tomorrow at 9 to call mom", surface)
    assert res.source == "keyword"
    assert "llm_rate_limited_fallback" in res.reason_codes
    assert res.tools_allow is not None and "automations" in res.tools_allow


def test_classifier_error_without_offline_signal_is_full_surface(surface: list[ToolInfo]) -> None:
    """A fault and no offline signal: the full surface."""
    llm = ScriptedClassifier(raises=ClassifierError("boom"))
    res = run(make(llm=llm), "zzqx", surface)
    assert res.tools_allow is not None and len(res.tools_allow) == 54
    assert "no_signal_full_surface" in res.reason_codes


def test_hanging_classifier_answers_at_the_deadline(surface: list[ToolInfo]) -> None:
    """A classifier that never answers: the fallback answer comes at the deadline."""
    # 1 s, not less: under load the offline fallback must still fit in what is left of it
    config = ResolverConfig(llmTimeoutMs=1000, catalogOverridesFile=None)
    llm = ScriptedClassifier(hang=True)
    resolver = make(config, llm=llm)
    res = run(resolver, "search the web for flights", surface)
    assert "llm_timeout_fallback" in res.reason_codes
    assert res.tools_allow is not None and "web_search" in res.tools_allow
    assert res.source == "keyword" and res.timings.llm_ms is not None


@pytest.mark.parametrize(
    "target",
    ["apply_core", "apply_continuity", "finalize", "apply_classification"],
)
def test_fault_in_any_stage_is_a_defined_answer(
    monkeypatch: pytest.MonkeyPatch, surface: list[ToolInfo], target: str
) -> None:
    """A bug in any stage ends in abstain with internal_error_abstain; nothing raises."""

    def boom(*args: Any, **kwargs: Any) -> Any:
        raise RuntimeError("injected")

    monkeypatch.setattr(pipeline, target, boom)
    res = run(make(), "search the web for flights", surface)
    assert res.tools_allow is None
    assert res.reason_codes == ("internal_error_abstain",)


def test_fault_in_catalog_and_offline_classifier_is_a_defined_answer(
    surface: list[ToolInfo],
) -> None:
    """Faults in the catalog store or the offline classifier also end in abstain."""
    resolver = make()

    def boom(*args: Any, **kwargs: Any) -> Any:
        raise OSError("disk gone")

    resolver.catalogs.current = boom  # type: ignore[method-assign]
    assert run(resolver, "x", surface).reason_codes == ("internal_error_abstain",)
    resolver = make()
    resolver.offline.classify_sync = boom  # type: ignore[method-assign]
    assert run(resolver, "x", surface).tools_allow is None


def test_observer_failure_never_fails_the_turn(surface: list[ToolInfo]) -> None:
    """A failing observer (telemetry) is logged, the answer stands."""

    def bad(*args: Any) -> None:
        raise OSError("disk full")

    res = run(make(observers=[bad]), "search the web", surface)
    assert res.tools_allow is not None


def test_continuity_keeps_tools_used_last_turns(surface: list[ToolInfo]) -> None:
    """A follow-up keeps the tool the previous turn used."""
    messages = [
        Message(role="user", content="show me the garage camera"),
        Message(
            role="assistant",
            content=None,
            tool_calls=[
                {"id": "c1", "type": "function", "function": {"name": "nodes", "arguments": "{}"}}
            ],
        ),
        Message(role="tool", tool_call_id="c1", content="ok"),
        Message(role="assistant", content="Here it is."),
    ]
    res = run(make(), "do it again for the kitchen one", surface, messages=messages)
    assert res.tools_allow is not None and "nodes" in res.tools_allow
    assert "continuity_kept" in res.reason_codes


def test_pending_tool_call_stays_callable(surface: list[ToolInfo]) -> None:
    """A tool call with no result yet keeps its tool, even with continuity off."""
    config = ResolverConfig(continuityTurns=0, catalogOverridesFile=None)
    messages = [
        Message(
            role="assistant",
            tool_calls=[
                {"id": "c9", "type": "function", "function": {"name": "browser", "arguments": "{}"}}
            ],
        )
    ]
    res = run(make(config), "ok", surface, messages=messages)
    assert res.tools_allow is not None and "browser" in res.tools_allow
    assert "pending_call_kept" in res.reason_codes


names = st.text(alphabet="abcdefghij_", min_size=1, max_size=6)


@settings(
    max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(
    candidates=st.lists(names, min_size=1, max_size=20, unique=True),
    picked=st.lists(names, max_size=10),
    core=st.lists(names, max_size=5),
    confidence=st.floats(min_value=0, max_value=1),
    prompt=st.text(max_size=40),
    mode=st.sampled_from(["ok", "error", "none"]),
)
def test_invariants_hold_for_any_selection(
    candidates: list[str],
    picked: list[str],
    core: list[str],
    confidence: float,
    prompt: str,
    mode: str,
) -> None:
    """toolsAllow ⊆ candidates; every candidate core tool is present; never raises."""
    config = ResolverConfig(coreTools=core, catalogOverridesFile=None)
    llm = (
        None
        if mode == "none"
        else ScriptedClassifier(
            tuple(picked), confidence, raises=ClassifierError("x") if mode == "error" else None
        )
    )
    resolver = make(config, llm=llm)
    tools = [ToolInfo(name=n, description=f"tool {n}") for n in candidates]
    res = run(resolver, prompt, tools)
    assert res.tools_allow is not None
    assert set(res.tools_allow) <= set(candidates)
    assert {c for c in core if c in candidates} <= set(res.tools_allow)
    assert len(res.tools_allow) == len(set(res.tools_allow))
    assert [c.name for c in res.candidates if c.selected] == res.tools_allow


SelectionFn = Callable[[list[str]], list[str]]
