"""A real OpenClaw 2026.9.6 with the real sidecar: the `/resolver refresh` chat command, and
the config shapes users arrive with (the legacy key, JSON5) through `resolver install`.

The chat command is a plugin command (``api.registerCommand``): OpenClaw's chat dispatcher runs
it without a model turn. ``openclaw agent --message`` does not run chat commands, so the test
sends it the way the Control UI/WebChat does, with the Gateway's ``chat.send``.
"""

from __future__ import annotations

import json
import secrets
import time
from typing import Any

import pytest

from .harness import Gateway, OpenClawHome, module_sidecar
from .mock_llm import ClassifierReply, LoggedRequest, MockLLM
from .test_openclaw_real_sidecar import (
    GATEWAY_FULL_SURFACE,
    install,
    surface_state_path,
    telemetry_lines,
    wait_for,
)

pytestmark = pytest.mark.e2e

PROMPT = "Search the web for today's weather in Paris"
SESSION_KEY = "agent:main:main"
REFRESH = ["surface_refresh_abstain"]


def gateway_call(gateway: Gateway, method: str, params: dict[str, Any]) -> dict[str, Any]:
    """``openclaw gateway call <method>`` against this Gateway; its JSON answer."""
    token = gateway.home.read_config()["gateway"]["auth"]["token"]
    run = gateway.home.openclaw(
        "gateway",
        "call",
        method,
        "--params",
        json.dumps(params),
        "--port",
        str(gateway.port),
        "--token",
        token,
        "--json",
    )
    assert run.returncode == 0, run.stdout[-2000:] + run.stderr[-2000:]
    answer = run.json()
    assert isinstance(answer, dict), run.stdout[-2000:]
    return answer


def test_resolver_refresh_chat_command_refreshes_the_session(
    openclaw_home: OpenClawHome, mock_llm: MockLLM
) -> None:
    """`/resolver refresh` sent in chat is answered by the plugin without a model turn; the
    session's next turn keeps the full surface and the one after is classified afresh instead
    of reusing the stored decision."""

    def classify(req: LoggedRequest) -> ClassifierReply:
        return ClassifierReply(tools=("web_search", "web_fetch"), confidence=0.95)

    mock_llm.classifier_responder = classify
    install(openclaw_home, mock_llm)
    with openclaw_home.start_gateway() as gateway:
        for _ in range(3):  # unknown surface (abstain), narrowed, reused
            assert gateway.turn(PROMPT).returncode == 0
        wait_for(lambda: len(telemetry_lines(openclaw_home)) >= 3, "3 telemetry lines")
        primary_before = len(mock_llm.primary_requests)
        sent = gateway_call(
            gateway,
            "chat.send",
            {
                "sessionKey": SESSION_KEY,
                "message": "/resolver refresh",
                "idempotencyKey": secrets.token_hex(8),
            },
        )
        assert sent, sent

        def replied() -> str | None:
            history = json.dumps(gateway_call(gateway, "chat.history", {"sessionKey": SESSION_KEY}))
            return history if "picked afresh" in history else None

        wait_for(replied, "the command's reply in the chat history", timeout=30)
        time.sleep(0.5)  # a model turn would have started by now
        assert len(mock_llm.primary_requests) == primary_before  # no model turn for a command
        for _ in range(2):  # full surface (refresh), then classified afresh
            assert gateway.turn(PROMPT).returncode == 0
        log = gateway.log()
    lines = wait_for(
        lambda: (lambda got: got if len(got) >= 5 else None)(telemetry_lines(openclaw_home)),
        "5 telemetry lines",
    )
    codes = [line["reasonCodes"] for line in lines]
    assert "surface_unknown_abstain" in codes[0], codes
    assert "route_reused" in codes[2], codes
    assert codes[3] == ["surface_refresh_abstain"], codes
    assert lines[3]["toolsAllow"] is None
    assert len(mock_llm.primary_requests[-2].tool_names) == GATEWAY_FULL_SURFACE
    assert "reuse_miss_refresh" in codes[4] and lines[4]["source"] == "llm", codes
    assert len(mock_llm.classifier_requests) == 2, log[-3000:]  # turns 2 and 5


def test_a_hot_reloaded_config_change_refreshes_the_surface_once(
    openclaw_home: OpenClawHome, mock_llm: MockLLM
) -> None:
    """The extension sends a fingerprint of OpenClaw's live config with every turn: turns on an
    unchanged config stay narrowed (no periodic full-surface turn), and the first turn after a
    hot-reloaded `tools` change keeps the whole surface, which now lacks the denied tool."""

    def classify(req: LoggedRequest) -> ClassifierReply:
        return ClassifierReply(tools=("web_search", "web_fetch"), confidence=0.95)

    mock_llm.classifier_responder = classify
    install(openclaw_home, mock_llm)
    prompts = [f"{PROMPT}, take {n}" for n in range(100)]
    with openclaw_home.start_gateway() as gateway:
        for prompt in prompts[:3]:  # unknown surface (abstain), then narrowed twice
            assert gateway.turn(prompt).returncode == 0
        wait_for(lambda: len(telemetry_lines(openclaw_home)) >= 3, "3 telemetry lines")
        state = json.loads(surface_state_path(openclaw_home).read_text())
        key = state.get("surfaceKey")
        assert isinstance(key, str) and len(key) == 32, state.get("surfaceKey")
        tools = {**openclaw_home.read_config().get("tools", {}), "deny": ["canvas"]}
        openclaw_home.update_config(tools=tools)  # hot-applies: no plugin re-registration
        time.sleep(3)  # the Gateway's watcher debounces, then applies the change

        def refreshed() -> bool:
            count = len(telemetry_lines(openclaw_home))
            assert gateway.turn(prompts[count]).returncode == 0
            wait_for(lambda: len(telemetry_lines(openclaw_home)) > count, "the turn's line")
            return telemetry_lines(openclaw_home)[count]["reasonCodes"] == REFRESH

        wait_for(refreshed, "a turn that re-takes the surface after the change", timeout=60)
        turns = len(telemetry_lines(openclaw_home)) + 1
        assert gateway.turn(prompts[turns - 1]).returncode == 0
        log = gateway.log()
    lines = wait_for(
        lambda: (lambda got: got if len(got) >= turns else None)(telemetry_lines(openclaw_home)),
        f"{turns} telemetry lines",
    )
    codes = [line["reasonCodes"] for line in lines]
    assert "surface_unknown_abstain" in codes[0], codes
    assert all(line["toolsAllow"] for line in lines[1:3]), codes  # no refresh before the change
    refresh = codes.index(["surface_refresh_abstain"])
    assert refresh >= 3 and all(c != ["surface_refresh_abstain"] for c in codes[refresh + 1 :])
    assert lines[-1]["toolsAllow"], codes  # narrowed again after the refresh
    full = mock_llm.primary_requests[refresh].tool_names
    assert "canvas" not in full and len(full) == GATEWAY_FULL_SURFACE - 1, (len(full), log[-2000:])
    after = json.loads(surface_state_path(openclaw_home).read_text())["surfaceKey"]
    assert after != key


def test_install_fixes_a_json5_config_with_the_legacy_key(openclaw_home: OpenClawHome) -> None:
    """OpenClaw refuses the original plugins.openclaw-tool-resolver key; `resolver install`
    moves it into plugins.entries.<id>.config, reads the JSON5 file, and OpenClaw's own
    `config validate` then accepts the result."""
    base = openclaw_home.write_config(None)
    legacy = {"llmModel": "gpt-5.4-mini", "logDecisions": True}
    text = json.dumps({**base, "plugins": {"openclaw-tool-resolver": legacy}}, indent=2)
    openclaw_home.config_path.write_text("// my OpenClaw\n" + text[:-2] + ",\n}\n")
    refused = openclaw_home.openclaw("config", "validate")
    assert refused.returncode != 0
    assert 'Unrecognized key: "openclaw-tool-resolver"' in refused.stdout + refused.stderr
    proc = openclaw_home.install_with_resolver_cli(module_sidecar())
    assert "moved:" in proc.stdout and "1 comment(s) could not be kept" in proc.stdout
    assert "deprecated" in proc.stderr
    accepted = openclaw_home.openclaw("config", "validate")
    assert accepted.returncode == 0, accepted.stdout[-2000:] + accepted.stderr[-2000:]
    entry = openclaw_home.read_config()["plugins"]["entries"]["openclaw-tool-resolver"]
    assert entry["config"]["llmModel"] == "gpt-5.4-mini"
