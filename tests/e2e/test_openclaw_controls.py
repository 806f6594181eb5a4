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
from .test_openclaw_real_sidecar import GATEWAY_FULL_SURFACE, install, telemetry_lines, wait_for

pytestmark = pytest.mark.e2e

PROMPT = "Search the web for today's weather in Paris"
SESSION_KEY = "agent:main:main"


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
