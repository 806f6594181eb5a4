"""Decision reuse: exact, session-scoped, isolated; every miss has its reason code."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import pytest
from conftest import FakeClock
from doubles import ScriptedClassifier, failing

from resolver import Message, Resolution, Resolver, ResolverConfig, ToolInfo, TurnRequest
from resolver._reuse import ReuseLookup, ReuseStore, key_fingerprint

TOOLS = [
    ToolInfo(name="web_search", description="Search the web for current information"),
    ToolInfo(name="automations", description="Schedule reminders and recurring jobs"),
    ToolInfo(name="nodes", description="Control paired devices and cameras"),
    ToolInfo(name="message", description="Send a message on a chat channel"),
    ToolInfo(name="read", description="Read a file"),
]
PROMPT = "what's the weather in Lisbon"


def config(**kw: Any) -> ResolverConfig:
    base: dict[str, Any] = {
        "catalogOverridesFile": None,
        "llmApiBase": "http://127.0.0.1:9/v1",
        "llmApiKey": "sk-key-one",
        "coreTools": ["read"],
    }
    base.update(kw)
    return ResolverConfig.model_validate(base)


def turn(
    resolver: Resolver,
    prompt: str = PROMPT,
    session: str | None = "s1",
    tools: list[ToolInfo] | None = None,
    **kw: Any,
) -> Resolution:
    request = TurnRequest(prompt=prompt, tools=tools or TOOLS, sessionId=session, **kw)
    return asyncio.run(resolver.resolve(request))


def reuse_code(res: Resolution) -> str | None:
    codes = [c for c in res.reason_codes if c.startswith("reuse_") or c == "route_reused"]
    assert len(codes) <= 1, res.reason_codes
    return codes[0] if codes else None


@pytest.fixture
def llm() -> ScriptedClassifier:
    return ScriptedClassifier(("web_search",), confidence=0.9)


class RecordingStore(ReuseStore):
    """The real store, remembering each lookup's outcome (to see which key part changed)."""

    def __init__(self, clock: FakeClock) -> None:
        super().__init__(ttl_seconds=90, max_entries=64, clock=clock)
        self.lookups: list[ReuseLookup] = []

    def lookup(self, **kw: Any) -> ReuseLookup:
        self.lookups.append(super().lookup(**kw))
        return self.lookups[-1]


@pytest.fixture
def store(clock: FakeClock) -> RecordingStore:
    return RecordingStore(clock)


def test_same_session_exact_repeat_within_ttl_is_a_hit(
    llm: ScriptedClassifier, clock: FakeClock
) -> None:
    """A repeat in the same session within the TTL reuses the decision; the LLM is not asked."""
    resolver = Resolver(config(), llm=llm, clock=clock)
    first = turn(resolver)
    clock.advance(89)
    second = turn(resolver, prompt="  What's the WEATHER in   Lisbon ")  # normalized: same
    assert reuse_code(first) == "reuse_miss_new" and reuse_code(second) == "route_reused"
    assert llm.calls == 1
    assert second.source == "reuse" and second.classifier == "reuse"
    assert second.tools_allow == first.tools_allow
    assert second.llm_tools == ("web_search",) and second.usage is None
    card = next(c for c in second.candidates if c.name == "web_search")
    assert card.signals == ("reuse",)


def test_expired_entry_is_a_miss(llm: ScriptedClassifier, clock: FakeClock) -> None:
    """Past the TTL the entry is dropped: reuse_miss_expired, and the LLM is asked again."""
    resolver = Resolver(config(), llm=llm, clock=clock)
    turn(resolver)
    clock.advance(90)
    assert reuse_code(turn(resolver)) == "reuse_miss_expired"
    assert llm.calls == 2
    assert reuse_code(turn(resolver)) == "route_reused"  # the new decision was stored


@pytest.mark.parametrize(
    ("change", "part"),
    [
        ({"llmApiBase": "http://127.0.0.1:10/v1"}, "apiBase"),
        ({"llmApiKey": "sk-key-two"}, "account"),
        ({"llmModel": "gpt-other"}, "model"),
        ({"toolDescriptionOverrides": {"nodes": "Cameras and sensors"}}, "catalog"),
        ({"coreTools": ["read", "message"]}, "options"),
        ({"confidenceThreshold": 0.7}, "options"),
        ({"continuityTurns": 1}, "options"),
    ],
    ids=["api-base", "key", "model", "catalog", "core-tools", "threshold", "continuity"],
)
def test_isolation_key_change_is_a_miss(
    llm: ScriptedClassifier, store: RecordingStore, change: dict[str, Any], part: str
) -> None:
    """Any change of API base, key, model, catalog or options: reuse_miss_isolation."""
    turn(Resolver(config(), llm=llm, reuse=store))
    changed = Resolver(config(**change), llm=llm, reuse=store)
    res = turn(changed)
    assert reuse_code(res) == "reuse_miss_isolation" and llm.calls == 2
    assert part in store.lookups[-1].changed  # names the part(s), never a value
    assert reuse_code(turn(changed)) == "route_reused"  # the new decision replaced the old
    assert len(store) == 1


@pytest.mark.parametrize(
    "tools",
    [
        [*TOOLS, ToolInfo(name="browser", description="Drive a web browser")],
        TOOLS[:-1],
        [ToolInfo(name=t.name, description=t.description + " (v2)") for t in TOOLS],
    ],
    ids=["tool-added", "tool-removed", "description-changed"],
)
def test_candidate_set_change_is_a_miss(
    llm: ScriptedClassifier, clock: FakeClock, tools: list[ToolInfo]
) -> None:
    """A different candidate set (names or descriptions): reuse_miss_isolation."""
    resolver = Resolver(config(), llm=llm, clock=clock)
    turn(resolver)
    assert reuse_code(turn(resolver, tools=tools)) == "reuse_miss_isolation"
    assert llm.calls == 2


def test_catalog_override_file_change_is_a_miss(
    llm: ScriptedClassifier, clock: FakeClock, tmp_path: Path
) -> None:
    """Editing the override catalog file changes the catalog fingerprint: a miss."""
    override = tmp_path / "cat.json"
    resolver = Resolver(config(catalogOverridesFile=str(override)), llm=llm, clock=clock)
    turn(resolver)
    override.write_text('{"schemaVersion": 1, "tools": {"web_search": "Find things online"}}')
    assert reuse_code(turn(resolver)) == "reuse_miss_isolation"


def test_another_session_with_the_same_prompt_is_a_miss(llm: ScriptedClassifier) -> None:
    """Nothing is shared across sessions: the same prompt in another session asks the LLM."""
    resolver = Resolver(config(), llm=llm)
    turn(resolver, session="alice")
    res = turn(resolver, session="bob")
    assert reuse_code(res) == "reuse_miss_new" and llm.calls == 2


def test_two_sessions_resolving_concurrently_share_nothing() -> None:
    """Two sessions with the same prompt at once: both miss, each answer is its own."""
    answers = {"alice": ("web_search",), "bob": ("message",)}
    current: dict[str, tuple[str, ...]] = {}

    def by_session(request: Any) -> tuple[str, ...]:
        return current[request.prompt]

    llm = ScriptedClassifier(by_session)
    resolver = Resolver(config(), llm=llm)

    async def both() -> list[Resolution]:
        async def one(session: str) -> Resolution:
            prompt = PROMPT if session == "alice" else PROMPT + " "  # same normalized prompt
            current[prompt] = answers[session]
            return await resolver.resolve(
                TurnRequest(prompt=prompt, tools=TOOLS, sessionId=session)
            )

        first = await asyncio.gather(one("alice"), one("bob"))
        again = await asyncio.gather(one("alice"), one("bob"))
        return [*first, *again]

    a1, b1, a2, b2 = asyncio.run(both())
    assert reuse_code(a1) == reuse_code(b1) == "reuse_miss_new"
    assert reuse_code(a2) == reuse_code(b2) == "route_reused"
    assert llm.calls == 2
    assert a1.llm_tools == a2.llm_tools == ("web_search",)
    assert b1.llm_tools == b2.llm_tools == ("message",)


def test_refresh_skips_and_replaces(llm: ScriptedClassifier) -> None:
    """refresh=true: reuse_miss_refresh, the LLM is asked, and the new decision is stored."""
    resolver = Resolver(config(), llm=llm)
    turn(resolver)
    llm.answer = ("nodes",)
    res = turn(resolver, refresh=True)
    assert reuse_code(res) == "reuse_miss_refresh" and llm.calls == 2
    again = turn(resolver)
    assert reuse_code(again) == "route_reused" and again.llm_tools == ("nodes",)


def test_disabled_reuse_never_hits(llm: ScriptedClassifier) -> None:
    """reuse.enabled=false: every turn asks the LLM and says reuse_disabled."""
    resolver = Resolver(config(reuse={"enabled": False}), llm=llm)
    codes = [reuse_code(turn(resolver)) for _ in range(3)]
    assert codes == ["reuse_disabled"] * 3 and llm.calls == 3 and len(resolver.reuse) == 0


def test_no_session_id_means_no_reuse(llm: ScriptedClassifier) -> None:
    """Without a session id nothing is stored or reused (and no reuse code is recorded)."""
    resolver = Resolver(config(), llm=llm)
    turn(resolver, session=None)
    res = turn(resolver, session=None)
    assert reuse_code(res) is None and llm.calls == 2 and len(resolver.reuse) == 0


@pytest.mark.parametrize(
    "llm",
    [failing("llm_timeout_fallback"), ScriptedClassifier(("web_search",), confidence=0.1)],
    ids=["fallback", "low-confidence"],
)
def test_fallbacks_and_low_confidence_are_not_stored(llm: ScriptedClassifier) -> None:
    """A keyword fallback or a low-confidence full surface is never reused."""
    resolver = Resolver(config(), llm=llm)
    turn(resolver)
    assert reuse_code(turn(resolver)) == "reuse_miss_new"
    assert llm.calls == 2 and len(resolver.reuse) == 0


def test_offline_decisions_are_reused(clock: FakeClock) -> None:
    """In offline mode the offline classifier's decision is stored and reused."""
    resolver = Resolver(ResolverConfig(catalogOverridesFile=None), clock=clock)
    first = turn(resolver, prompt="remind me to water the plants")
    second = turn(resolver, prompt="remind me to water the plants")
    assert reuse_code(second) == "route_reused" and second.tools_allow == first.tools_allow
    assert second.llm_tools is None


def test_clear_reuse_per_session_and_all(llm: ScriptedClassifier) -> None:
    """Resolver.clear_reuse drops one session's entries, or all of them."""
    resolver = Resolver(config(), llm=llm)
    turn(resolver, session="a")
    turn(resolver, session="b")
    assert resolver.clear_reuse("a") == 1
    assert reuse_code(turn(resolver, session="a")) == "reuse_miss_new"
    assert reuse_code(turn(resolver, session="b")) == "route_reused"
    assert resolver.clear_reuse() == 2 and len(resolver.reuse) == 0


def test_store_is_bounded(llm: ScriptedClassifier, clock: FakeClock) -> None:
    """reuse.maxEntries bounds the store; the least recently used entry goes first."""
    resolver = Resolver(config(reuse={"maxEntries": 2}), llm=llm, clock=clock)
    for prompt in ("one", "two", "three"):
        turn(resolver, prompt=prompt)
    assert len(resolver.reuse) == 2
    assert reuse_code(turn(resolver, prompt="one")) == "reuse_miss_new"


def test_continuity_and_core_still_run_on_a_reused_turn(llm: ScriptedClassifier) -> None:
    """Only the classifier's decision is reused: tools used since then are still kept."""
    resolver = Resolver(config(), llm=llm)
    turn(resolver)
    history = [
        Message(role="user", content="send it to Tom"),
        Message(
            role="assistant",
            tool_calls=[{"id": "c1", "type": "function", "function": {"name": "message"}}],
        ),
        Message(role="tool", tool_call_id="c1", content="sent"),
    ]
    res = turn(resolver, messages=history)
    assert reuse_code(res) == "route_reused"
    assert res.tools_allow is not None
    assert {"web_search", "message", "read"} <= set(res.tools_allow)


def test_a_reused_turn_teaches_the_cache_nothing(llm: ScriptedClassifier) -> None:
    """Learning happens on the fresh LLM decision only, not again on each reuse."""
    resolver = Resolver(config(), llm=llm)
    for _ in range(4):
        turn(resolver)
    assert resolver.cache.learned == 1


def test_the_key_is_never_stored(llm: ScriptedClassifier) -> None:
    """The store holds a one-way fingerprint of the API key, never the key."""
    store = ReuseStore(clock=lambda: 0.0)
    turn(Resolver(config(llmApiKey="sk-very-secret-value"), llm=llm, reuse=store))
    dumped = repr(store._entries)
    assert "sk-very-secret-value" not in dumped
    assert key_fingerprint("sk-very-secret-value") in dumped
    assert key_fingerprint(None) == "" and len(key_fingerprint("x")) == 32


@pytest.mark.parametrize("target", ["apply_reused", "apply_cache", "learn_from_turn"])
def test_fault_in_reuse_or_cache_stage_is_a_defined_answer(
    monkeypatch: pytest.MonkeyPatch, llm: ScriptedClassifier, target: str
) -> None:
    """A bug in the reuse or cache stages ends in abstain (internal_error_abstain), not a raise."""
    import resolver._pipeline as pipeline

    def boom(*args: Any, **kwargs: Any) -> Any:
        raise RuntimeError("injected")

    resolver = Resolver(config(), llm=llm)
    turn(resolver)  # stores a decision, so the next turn takes the reuse path
    monkeypatch.setattr(pipeline, target, boom)
    res = turn(resolver)
    assert res.tools_allow is None and res.reason_codes == ("internal_error_abstain",)
