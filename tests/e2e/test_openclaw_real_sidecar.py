"""Real OpenClaw with the real sidecar (``python -m resolver.hosts.openclaw``).

The plugin is installed the way users do it, ``resolver install openclaw``; the classifier is
the loopback mock (``llmApiBase``), so the whole path runs: hook -> extension -> sidecar ->
classifier request -> ``toolsAllow`` -> the primary model's request.
"""

from __future__ import annotations

import pytest

from .harness import OpenClawHome, module_sidecar
from .mock_llm import ClassifierReply, LoggedRequest, MockLLM

pytestmark = pytest.mark.e2e

FULL_SURFACE = 54
GATEWAY_FULL_SURFACE = 55  # the Gateway adds github_identity_status
CLASSIFIER_KEY = "mock-classifier-key"


def test_one_shot_cli_turn_abstains_until_the_sidecar_has_seen_the_surface(
    openclaw_home: OpenClawHome, mock_llm: MockLLM
) -> None:
    """`openclaw agent --local` starts a fresh sidecar per turn: no known surface, so abstain."""
    openclaw_home.write_config(None)
    openclaw_home.install_with_resolver_cli(module_sidecar(), {"logDecisions": True})
    assert (openclaw_home.home / ".openclaw" / "extensions" / "openclaw-tool-resolver").is_dir()

    run = openclaw_home.run_agent("Search the web for today's weather in Paris")
    assert run.returncode == 0, run.stderr[-3000:]
    (req,) = mock_llm.primary_requests
    assert len(req.tool_names) == FULL_SURFACE
    assert "surface_unknown_abstain" in run.stderr


def test_gateway_narrows_the_second_turn_with_the_classifier_answer(
    openclaw_home: OpenClawHome, mock_llm: MockLLM
) -> None:
    """In a Gateway the sidecar outlives the turn: turn 1 shows it the surface, turn 2 narrows."""

    def classify(req: LoggedRequest) -> ClassifierReply:
        return ClassifierReply(tools=("web_search", "web_fetch"), confidence=0.95)

    mock_llm.classifier_responder = classify
    openclaw_home.write_config(None)
    openclaw_home.install_with_resolver_cli(
        module_sidecar(),
        {
            "logDecisions": True,
            "llmApiBase": mock_llm.base_url,
            "llmApiKey": CLASSIFIER_KEY,
            "llmModel": "mock-classifier",
        },
    )
    with openclaw_home.start_gateway() as gateway:
        first = gateway.turn("Search the web for today's weather in Paris")
        second = gateway.turn("Search the web for tomorrow's weather in Lyon")
        log = gateway.log()
    assert first.returncode == 0, first.stderr[-3000:] + log[-3000:]
    assert second.returncode == 0, second.stderr[-3000:] + log[-3000:]

    turn1, turn2 = mock_llm.primary_requests
    assert len(turn1.tool_names) == GATEWAY_FULL_SURFACE  # surface not yet known: abstain
    assert "github_identity_status" in turn1.tool_names
    names = set(turn2.tool_names)
    assert {"web_search", "web_fetch"} <= names
    assert len(names) < GATEWAY_FULL_SURFACE
    assert turn2.tools_bytes < turn1.tools_bytes

    assert mock_llm.classifier_requests, log[-3000:]
    classify_req = mock_llm.classifier_requests[-1]
    assert classify_req.headers.get("x-openclaw-caller") == "tool-resolver"
    assert classify_req.headers.get("authorization") == f"Bearer {CLASSIFIER_KEY}"
    assert classify_req.body.get("user") == "openclaw-resolver"
    tags = (classify_req.body.get("metadata") or {}).get("tags")
    assert tags is None or "openclaw-resolver" in str(tags)
    assert CLASSIFIER_KEY not in log, "the classifier key must never reach the Gateway log"
