"""State-aware eligibility: declared requirements, fail-closed exclusion, catalog validation."""

from __future__ import annotations

import asyncio
import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from resolver import (
    CatalogError,
    Classification,
    ClassifyInput,
    Exclusion,
    Message,
    Resolution,
    Resolver,
    ResolverConfig,
    ToolInfo,
    TurnRequest,
    as_dict,
    before_prompt_build,
    load_catalog_file,
    state_from_openclaw_ctx,
)
from resolver._state import MISSING_WHY, check_field, evaluate

VOICE = "use a different voice for the call, something deeper"
"""A prompt the offline classifier answers with talk_voice."""

REQUIREMENTS: dict[str, dict[str, dict[str, Any]]] = {
    "talk_voice": {"channel": {"type": "string", "enum": ["discord", "voice"]}},
    "message": {"channel": {"type": "string"}, "trigger": {"const": "user"}},
}


def catalog_config(tmp_path: Path, reqs: dict[str, Any] | None = None) -> ResolverConfig:
    """A config whose override file declares `reqs` (default: REQUIREMENTS)."""
    path = tmp_path / "resolver-catalog.json"
    layer = {"schemaVersion": 1, "stateRequirements": REQUIREMENTS if reqs is None else reqs}
    path.write_text(json.dumps(layer), encoding="utf-8")
    # the longest turn deadline: these tests are about exclusions, not speed (a first turn
    # builds the index, which a loaded 2-core machine can stretch past the default 4 s)
    return ResolverConfig(catalogOverridesFile=str(path), llmTimeoutMs=14_000)


def resolve(resolver: Resolver, prompt: str, tools: list[ToolInfo], **kw: Any) -> Resolution:
    return asyncio.run(resolver.resolve(TurnRequest(prompt=prompt, tools=tools, **kw)))


class ScriptedClassifier:
    """A classifier double with a fixed selection and confidence."""

    name = "scripted"

    def __init__(self, selected: tuple[str, ...], confidence: float) -> None:
        self.selected, self.confidence = selected, confidence

    async def classify(self, request: ClassifyInput) -> Classification:
        names = {n for n, _ in request.tools}
        return Classification(
            selected=tuple(n for n in self.selected if n in names),
            confidence=self.confidence,
            classifier="llm:scripted",
        )


# ---------------------------------------------------------------- the rule, end to end


def test_satisfied_requirement_keeps_the_tool(tmp_path: Path, surface: list[ToolInfo]) -> None:
    """A declared requirement the state meets changes nothing: the tool stays, no exclusion."""
    state = {"channel": "discord", "trigger": "user"}
    res = resolve(Resolver(catalog_config(tmp_path)), VOICE, surface, state=state)
    assert res.tools_allow is not None and "talk_voice" in res.tools_allow
    assert res.exclusions == () and "state_ineligible_excluded" not in res.reason_codes


def test_missing_field_excludes_the_tool(tmp_path: Path, surface: list[ToolInfo]) -> None:
    """A declared id absent from the state excludes the tool with a structured reason."""
    res = resolve(Resolver(catalog_config(tmp_path)), VOICE, surface, state={"trigger": "user"})
    assert res.tools_allow is not None and "talk_voice" not in res.tools_allow
    assert Exclusion(tool="talk_voice", field="channel", why=MISSING_WHY) in res.exclusions
    assert "state_ineligible_excluded" in res.reason_codes
    card = next(c for c in res.candidates if c.name == "talk_voice")
    assert not card.selected and card.excluded == f"channel: {MISSING_WHY}"
    assert card.signals == ("classifier", "state")
    assert "excluded by state" in res.summary


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        pytest.param(7, 'expected type "string", got integer', id="integer-for-string"),
        pytest.param(["a"], 'expected type "string", got array', id="array-for-string"),
        pytest.param(None, 'expected type "string", got null', id="null-for-string"),
    ],
)
def test_wrong_type_excludes_the_tool(
    tmp_path: Path, surface: list[ToolInfo], value: Any, expected: str
) -> None:
    """A value of the wrong JSON type excludes the tool (fail-closed), saying so."""
    state = {"channel": value, "trigger": "user"}
    res = resolve(
        Resolver(catalog_config(tmp_path)), "message Anna on telegram", surface, state=state
    )
    assert res.tools_allow is not None and "message" not in res.tools_allow
    (exclusion,) = [e for e in res.exclusions if e.tool == "message"]
    assert exclusion == Exclusion(tool="message", field="channel", why=expected)


def test_value_outside_the_contract_excludes_the_tool(
    tmp_path: Path, surface: list[ToolInfo]
) -> None:
    """A value of the right type that the schema rejects (not in the enum) excludes the tool."""
    state = {"channel": "telegram", "trigger": "user"}
    res = resolve(Resolver(catalog_config(tmp_path)), VOICE, surface, state=state)
    assert res.tools_allow is not None and "talk_voice" not in res.tools_allow
    assert [(e.tool, e.field) for e in res.exclusions] == [("talk_voice", "channel")]
    assert "not one of the allowed values" in res.exclusions[0].why


def test_why_never_carries_the_state_value() -> None:
    """The reason names the contract and the value's JSON type, never the value itself."""
    why = check_field("channel", {"enum": ["discord"]}, {"channel": "tok-9f8e7d6c5b4a"})
    assert why is not None and "tok-9f8e7d6c5b4a" not in why and "string" in why


def test_values_are_read_as_json() -> None:
    """State values are checked as JSON: a tuple is an array; a non-JSON object fails closed."""
    assert check_field("x", {"type": "array"}, {"x": ("a", "b")}) is None
    why = check_field("x", {"type": "string"}, {"x": object()})
    assert why == 'expected type "string", got non-JSON object'
    long = "v" * 1000
    assert check_field("x", {"maxLength": 10}, {"x": long}) == "string value fails 'maxLength' 10"


def test_no_state_is_stateless(tmp_path: Path, surface: list[ToolInfo]) -> None:
    """When the host passes no state, declared requirements are not checked at all."""
    declared = resolve(Resolver(catalog_config(tmp_path)), VOICE, surface)
    plain = resolve(Resolver(ResolverConfig(catalogOverridesFile=None)), VOICE, surface)
    assert declared.tools_allow == plain.tools_allow
    assert declared.tools_allow is not None and "talk_voice" in declared.tools_allow
    assert declared.exclusions == ()


def test_empty_state_fails_closed_for_every_declared_tool(
    tmp_path: Path, surface: list[ToolInfo]
) -> None:
    """An empty state dict is 'state passed': every declared id is missing."""
    res = resolve(Resolver(catalog_config(tmp_path)), VOICE, surface, state={})
    assert {(e.tool, e.field) for e in res.exclusions} == {
        ("message", "channel"),
        ("message", "trigger"),
        ("talk_voice", "channel"),
    }
    card = next(c for c in res.candidates if c.name == "message")
    assert card.excluded == f"channel: {MISSING_WHY}; trigger: {MISSING_WHY}"


def test_core_tool_with_unmet_requirement_is_excluded(
    tmp_path: Path, surface: list[ToolInfo]
) -> None:
    """Fail-closed beats always-on: a core tool whose requirement is unmet is excluded."""
    config = catalog_config(tmp_path, {"exec": {"sandbox": {"const": True}}})
    res = resolve(Resolver(config), "run the tests", surface, state={"sandbox": False})
    assert res.tools_allow is not None and "exec" not in res.tools_allow
    assert {"read", "write", "edit"} <= set(res.tools_allow)
    assert res.exclusions == (Exclusion(tool="exec", field="sandbox", why=res.exclusions[0].why),)
    card = next(c for c in res.candidates if c.name == "exec")
    assert "core" in card.signals and card.signals[-1] == "state"


def test_no_later_layer_re_adds_an_excluded_tool(tmp_path: Path, surface: list[ToolInfo]) -> None:
    """Continuity (even a pending call) and the low-confidence full surface skip excluded tools."""
    messages = [
        Message(role="user", content="switch the voice"),
        Message(
            role="assistant",
            content="",
            tool_calls=[{"id": "c1", "type": "function", "function": {"name": "talk_voice"}}],
        ),
    ]
    config = catalog_config(tmp_path)
    state = {"channel": "sms", "trigger": "user"}
    res = resolve(Resolver(config), VOICE, surface, messages=messages, state=state)
    assert res.tools_allow is not None and "talk_voice" not in res.tools_allow
    assert "pending_call_kept" not in res.reason_codes
    low = Resolver(config, llm=ScriptedClassifier(("talk_voice",), confidence=0.1))
    full = resolve(low, VOICE, surface, state=state)
    assert full.source == "full" and full.tools_allow is not None
    assert set(full.tools_allow) == {t.name for t in surface} - {"talk_voice"}


def test_llm_selection_of_an_excluded_tool_is_not_applied(
    tmp_path: Path, surface: list[ToolInfo]
) -> None:
    """The classifier may rank an ineligible tool; the exclusion runs first and wins."""
    llm = ScriptedClassifier(("talk_voice", "tts"), confidence=0.9)
    res = resolve(Resolver(catalog_config(tmp_path), llm=llm), VOICE, surface, state={})
    assert res.tools_allow is not None
    assert "tts" in res.tools_allow and "talk_voice" not in res.tools_allow
    assert res.llm_tools == ("talk_voice", "tts")


def test_exclusions_are_in_the_host_json(tmp_path: Path, surface: list[ToolInfo]) -> None:
    """`as_dict` carries the structured exclusions (tool, field, why)."""
    res = resolve(Resolver(catalog_config(tmp_path)), VOICE, surface, state={})
    data = as_dict(res)
    assert {"tool": "talk_voice", "field": "channel", "why": MISSING_WHY} in data["exclusions"]


def test_python_hook_passes_state(tmp_path: Path, surface: list[ToolInfo]) -> None:
    """The OpenClaw-shaped Python hook applies the state it is given."""
    resolver = Resolver(catalog_config(tmp_path))
    ctx = {"sessionId": "s1", "messageProvider": "telegram"}
    answer = asyncio.run(
        before_prompt_build(
            {"prompt": VOICE},
            ctx,
            resolver=resolver,
            tools=surface,
            state=state_from_openclaw_ctx(ctx),
        )
    )
    assert "talk_voice" not in answer["toolsAllow"]
    ok_ctx = {"sessionId": "s1", "messageProvider": "discord"}
    answer = asyncio.run(
        before_prompt_build(
            {"prompt": VOICE},
            ok_ctx,
            resolver=resolver,
            tools=surface,
            state=state_from_openclaw_ctx(ok_ctx),
        )
    )
    assert "talk_voice" in answer["toolsAllow"]


def test_openclaw_context_maps_to_semantic_ids() -> None:
    """The OpenClaw hook context gives channel, channelId, model ids, trigger and agentId."""
    ctx = {
        "messageProvider": "telegram",
        "channelId": "chat-1",
        "modelProviderId": "openai",
        "modelId": "gpt-5.4",
        "trigger": "user",
        "agentId": "main",
        "sessionId": "s1",
        "workspaceDir": "/home/u/ws",
        "runId": 42,
    }
    assert state_from_openclaw_ctx(ctx) == {
        "channel": "telegram",
        "channelId": "chat-1",
        "modelProviderId": "openai",
        "modelId": "gpt-5.4",
        "trigger": "user",
        "agentId": "main",
    }
    assert state_from_openclaw_ctx({"channel": "discord", "trigger": ""}) == {"channel": "discord"}


# ---------------------------------------------------------------- invariants


@pytest.fixture(scope="module")
def shared_resolver(tmp_path_factory: pytest.TempPathFactory) -> Resolver:
    """One resolver with REQUIREMENTS declared, shared by the property test's examples."""
    return Resolver(catalog_config(tmp_path_factory.mktemp("catalog")))


JSON_VALUES = st.one_of(
    st.none(), st.booleans(), st.integers(), st.text(max_size=8), st.sampled_from(["discord"])
)
STATES = st.one_of(
    st.none(),
    st.dictionaries(st.sampled_from(["channel", "trigger", "other"]), JSON_VALUES, max_size=3),
)


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(state=STATES, prompt=st.sampled_from([VOICE, "message Anna on telegram", "thanks"]))
def test_undeclared_tools_are_unchanged_by_any_state(
    shared_resolver: Resolver,
    state: dict[str, Any] | None,
    prompt: str,
) -> None:
    """For any state: the surface is the stateless one minus declared, unmet tools."""
    resolver = shared_resolver
    surface = [ToolInfo(name=n) for n in sorted(resolver.catalogs.current().tools)]
    stateless = resolve(resolver, prompt, surface)
    stateful = resolve(resolver, prompt, surface, state=state)
    excluded = {e.tool for e in stateful.exclusions}
    assert excluded <= set(REQUIREMENTS)
    assert stateless.tools_allow is not None and stateful.tools_allow is not None
    assert set(stateful.tools_allow) == set(stateless.tools_allow) - excluded
    assert [c.name for c in stateful.candidates] == [c.name for c in stateless.candidates]
    if state is None:
        assert excluded == set()


def test_evaluate_checks_only_declared_tools_in_order() -> None:
    """`evaluate` skips undeclared tools and lists unmet fields per tool, sorted by id."""
    found = evaluate(REQUIREMENTS, ["read", "message", "talk_voice"], {"trigger": "cron"})
    assert [(e.tool, e.field) for e in found] == [
        ("message", "channel"),
        ("message", "trigger"),
        ("talk_voice", "channel"),
    ]
    assert evaluate(REQUIREMENTS, ["read", "message"], None) == ()


# ---------------------------------------------------------------- catalog validation


@pytest.mark.parametrize(
    ("schema", "expected"),
    [
        pytest.param({"type": "strng"}, "invalid JSON Schema at /type", id="bad-type-name"),
        pytest.param({"enum": "discord"}, "invalid JSON Schema at /enum", id="enum-not-array"),
        pytest.param({"minLength": -1}, "invalid JSON Schema", id="negative-minLength"),
        pytest.param({"$ref": "https://example.com/s.json"}, "is not local", id="remote-ref"),
        pytest.param({"$ref": "#/$defs/none"}, "cannot be resolved", id="dangling-ref"),
        pytest.param({"$schema": "http://example.com/x", "type": "string"}, "unknown $schema"),
    ],
)
def test_invalid_schema_is_a_catalog_error_naming_file_tool_field(
    tmp_path: Path, schema: dict[str, Any], expected: str
) -> None:
    """A catalog with an invalid state schema fails at load, naming file, tool and field."""
    path = tmp_path / "bad-catalog.json"
    path.write_text(
        json.dumps({"schemaVersion": 1, "stateRequirements": {"talk_voice": {"channel": schema}}})
    )
    with pytest.raises(CatalogError) as info:
        load_catalog_file(path)
    message = str(info.value)
    assert str(path) in message and "'talk_voice'" in message and "'channel'" in message
    assert expected in message


def test_invalid_state_schema_in_override_keeps_last_good_catalog(
    tmp_path: Path, surface: list[ToolInfo]
) -> None:
    """An override file with a bad state schema is ignored (reported); defaults stay in force."""
    config = catalog_config(tmp_path, {"talk_voice": {"channel": {"type": 5}}})
    resolver = Resolver(config)
    res = resolve(resolver, VOICE, surface, state={})
    assert "catalog_layer_invalid" in res.reason_codes
    assert resolver.catalogs.error is not None and "'talk_voice'" in resolver.catalogs.error
    assert res.exclusions == ()


def test_valid_schemas_of_other_drafts_and_local_refs_load(tmp_path: Path) -> None:
    """Draft-07 schemas and local $defs references are accepted and evaluated."""
    reqs = {
        "talk_voice": {
            "channel": {"$schema": "http://json-schema.org/draft-07/schema#", "type": "string"},
            "mode": {"$defs": {"m": {"enum": ["a", "b"]}}, "$ref": "#/$defs/m"},
        }
    }
    path = tmp_path / "ok.json"
    path.write_text(json.dumps({"schemaVersion": 1, "stateRequirements": reqs}))
    layer = load_catalog_file(path)
    assert evaluate(layer.state_requirements, ["talk_voice"], {"channel": "x", "mode": "a"}) == ()
    (bad,) = evaluate(layer.state_requirements, ["talk_voice"], {"channel": "x", "mode": "c"})
    assert bad.field == "mode"


def test_jsonschema_loads_only_for_declared_requirements() -> None:
    """Importing resolver and resolving without declarations never imports jsonschema."""
    code = (
        "import sys, resolver\n"
        "from resolver import Resolver, ResolverConfig, ToolInfo, TurnRequest\n"
        "r = Resolver(ResolverConfig(catalogOverridesFile=None))\n"
        "r.resolve_sync(TurnRequest(prompt='hi', tools=[ToolInfo(name='read')], state={'a': 1}))\n"
        "print('jsonschema' in sys.modules)\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"


def test_dangling_nested_reference_fails_closed(tmp_path: Path, surface: list[ToolInfo]) -> None:
    """A nested local $ref that points nowhere (not caught at load) excludes the tool."""
    schema = {"type": "object", "properties": {"a": {"$ref": "#/$defs/none"}}}
    config = catalog_config(tmp_path, {"talk_voice": {"call": schema}})
    res = resolve(Resolver(config), VOICE, surface, state={"call": {"a": 1}})
    assert res.tools_allow is not None and "talk_voice" not in res.tools_allow
    assert "cannot be resolved" in res.exclusions[0].why


def test_fault_in_the_state_stage_is_a_defined_answer(
    monkeypatch: pytest.MonkeyPatch, surface: list[ToolInfo]
) -> None:
    """A bug in the state stage ends in abstain (internal_error_abstain); nothing raises."""
    import resolver._pipeline as pipeline

    def boom(*args: Any, **kwargs: Any) -> Any:
        raise RuntimeError("injected")

    monkeypatch.setattr(pipeline, "apply_state", boom)
    res = resolve(Resolver(ResolverConfig(catalogOverridesFile=None)), VOICE, surface, state={})
    assert res.tools_allow is None and res.reason_codes == ("internal_error_abstain",)
