"""LLM classifier happy paths replayed from vcrpy cassettes (tests/cassettes/test_llm_cassettes/).

Replay-only by default (``record_mode="none"``): CI never touches a network. To re-record
against the loopback server (tests/llm_server.py), run
``RESOLVER_RECORD_CASSETTES=1 .venv/bin/python -m pytest tests/test_llm_cassettes.py``.
Requests match on method, scheme, host, path and the attribution/format fields of the body
(not the port, which the loopback server picks, nor the catalog text, which other work
changes). The authorization header is filtered before a cassette is written, and every
replay must play every recorded interaction.
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest
import vcr
from vcr.cassette import Cassette

from resolver import Message, Resolver, ResolverConfig, ToolInfo, TurnRequest
from resolver._llm import CLIENTS, LLMClassifier, VotedClassifier
from resolver.testing import FAKE_KEY, LLMServer, Recorded, Reply, completion, error

pytestmark = pytest.mark.http

RECORD = os.environ.get("RESOLVER_RECORD_CASSETTES") == "1"
CASSETTES = Path(__file__).parent / "cassettes"
MODULE_DIR = CASSETTES / "test_llm_cassettes"
REPLAY_BASE = "http://127.0.0.1:9/v1"
"""Replay never connects: vcrpy answers before any socket opens (port 9 is discard)."""
BODY_FIELDS = ("model", "user", "metadata", "temperature", "max_completion_tokens")


def _body(request: Any) -> dict[str, Any]:
    raw = request.body or b"{}"
    data = json.loads(raw.decode() if isinstance(raw, bytes) else raw)
    assert isinstance(data, dict)
    return data


def _attribution(r1: Any, r2: Any) -> None:
    """vcrpy matcher: the same attribution, model, sampling and response_format type."""
    b1, b2 = _body(r1), _body(r2)
    for key in BODY_FIELDS:
        assert b1.get(key) == b2.get(key), f"{key}: {b1.get(key)!r} != {b2.get(key)!r}"
    kind1 = (b1.get("response_format") or {}).get("type")
    kind2 = (b2.get("response_format") or {}).get("type")
    assert kind1 == kind2, f"response_format: {kind1} != {kind2}"
    assert r1.headers.get("x-openclaw-caller") == r2.headers.get("x-openclaw-caller")


RECORDER = vcr.VCR(
    cassette_library_dir=str(MODULE_DIR),
    record_mode="all" if RECORD else "none",
    filter_headers=["authorization", "api-key", "x-api-key", "openai-organization"],
    match_on=["method", "scheme", "host", "path", "attribution"],
    decode_compressed_response=True,
)
RECORDER.register_matcher("attribution", _attribution)


@contextmanager
def cassette(name: str) -> Iterator[Cassette]:
    """Use tests/cassettes/test_llm_cassettes/<name>.yaml; fail if an interaction went unplayed."""
    with RECORDER.use_cassette(f"{name}.yaml") as cass:
        yield cass
    if not RECORD:
        unplayed = len(cass.data) - cass.play_count
        assert cass.all_played, f"{name}.yaml: {unplayed} recorded interaction(s) never played"


@pytest.fixture
def endpoint(request: pytest.FixtureRequest) -> Iterator[tuple[str, LLMServer | None]]:
    """The API base: a live loopback server when recording, an unused address when replaying."""
    CLIENTS.clear()
    if RECORD:
        with LLMServer() as server:
            yield server.base_url, server
    else:
        yield REPLAY_BASE, None
    CLIENTS.clear()


def config_for(base: str, **extra: Any) -> ResolverConfig:
    return ResolverConfig(
        llmApiBase=base,
        llmApiKey=FAKE_KEY,
        catalogOverridesFile=None,
        llmTimeoutMs=5000,
        telemetry={"tags": ["team:agents"]},
        **extra,
    )


async def test_happy_path_selection(
    endpoint: tuple[str, LLMServer | None], surface: list[ToolInfo]
) -> None:
    """A replayed structured-output answer becomes toolsAllow with usage and latency."""
    base, server = endpoint
    if server:
        server.script(
            completion(
                {
                    "tools": ["automations"],
                    "confidence": 0.93,
                    "reasoning": "A timed reminder needs the scheduler.",
                },
                prompt_tokens=1534,
                cached_tokens=1408,
                completion_tokens=31,
            )
        )
    with cassette("test_happy_path_selection"):
        res = await Resolver(config_for(base)).resolve(
            TurnRequest(prompt="remind me tomorrow at 9 to call mom", tools=surface)
        )
    assert res.source == "llm" and res.classifier == "llm:gpt-5.4-mini"
    assert res.llm_tools == ("automations",) and "automations" in (res.tools_allow or [])
    assert res.usage is not None and res.usage.cached_tokens == 1408
    assert res.reasoning == "A timed reminder needs the scheduler."


async def test_follow_up_with_history(
    endpoint: tuple[str, LLMServer | None], surface: list[ToolInfo]
) -> None:
    """A follow-up turn ('do the same for the other one') keeps the earlier tool via the LLM."""
    base, server = endpoint
    if server:
        server.script(
            completion(
                {"tools": ["browser"], "confidence": 0.81, "reasoning": "Same browser task."}
            )
        )
    history = [
        Message(role="user", content="take a screenshot of example.com"),
        Message(
            role="assistant",
            content="Done, here it is.",
            tool_calls=[{"id": "c1", "function": {"name": "browser", "arguments": "{}"}}],
        ),
        Message(role="tool", tool_call_id="c1", content="ok"),
    ]
    with cassette("test_follow_up_with_history"):
        res = await Resolver(config_for(base, continuityTurns=0)).resolve(
            TurnRequest(prompt="now do the same for example.org", messages=history, tools=surface)
        )
    assert res.source == "llm" and res.llm_tools == ("browser",)


async def test_json_mode_fallback(
    endpoint: tuple[str, LLMServer | None], surface: list[ToolInfo]
) -> None:
    """A server without json_schema support: 400, then JSON mode answers (two interactions)."""
    base, server = endpoint
    if server:

        def respond(request: Recorded) -> Reply:
            if request.body["response_format"]["type"] == "json_schema":
                return error(400, "response_format type json_schema is not supported")
            answer = {"tools": ["web_search"], "confidence": 0.9, "reasoning": "Needs search."}
            return completion(answer)

        server.default = respond
    with cassette("test_json_mode_fallback"):
        classifier = LLMClassifier(config_for(base))
        res = await Resolver(config_for(base), llm=classifier).resolve(
            TurnRequest(prompt="search the web for the latest python release", tools=surface)
        )
    assert res.source == "llm" and res.llm_tools == ("web_search",)


async def test_voted_three_samples(
    endpoint: tuple[str, LLMServer | None], surface: list[ToolInfo]
) -> None:
    """Voted mode replays three samples at temperature 0.7 and keeps tools with one vote."""
    base, server = endpoint
    if server:
        for tools in (["web_search"], ["web_search", "web_fetch"], ["web_search"]):
            server.script(completion({"tools": tools, "confidence": 0.8, "reasoning": "Web."}))
    config = config_for(base)
    with cassette("test_voted_three_samples"):
        res = await Resolver(config, llm=VotedClassifier(config, n=3, temperature=0.7)).resolve(
            TurnRequest(prompt="what's new in python 3.14? check the web", tools=surface)
        )
    assert res.source == "llm"
    assert set(res.llm_tools or ()) == {"web_search", "web_fetch"}
    assert res.llm_tools is not None and res.llm_tools[0] == "web_search"


@pytest.mark.skipif(RECORD, reason="checks replay behaviour")
def test_unplayed_interactions_fail() -> None:
    """A replay that leaves a recorded interaction unplayed fails the test."""
    with pytest.raises(AssertionError, match="never played"), cassette("test_happy_path_selection"):
        pass


@pytest.mark.skipif(RECORD, reason="checks replay behaviour")
def test_cassettes_are_replay_only_and_filtered() -> None:
    """Cassettes exist, replay only, and hold no authorization header or key."""
    files = sorted(CASSETTES.rglob("*.yaml"))
    assert {f.stem for f in files} >= {
        "test_happy_path_selection",
        "test_follow_up_with_history",
        "test_json_mode_fallback",
        "test_voted_three_samples",
    }
    assert RECORDER.record_mode == "none"
    for path in files:
        text = path.read_text()
        assert "authorization" not in text.lower(), path
        assert FAKE_KEY not in text and "Bearer" not in text, path
