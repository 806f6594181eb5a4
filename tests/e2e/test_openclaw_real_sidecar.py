"""Real OpenClaw with the real sidecar (``python -m resolver.hosts.openclaw``).

The plugin is installed the way users do it, ``resolver install openclaw``; the classifier is
the loopback mock (``llmApiBase``), so the whole path runs: hook -> extension -> sidecar ->
classifier request -> ``toolsAllow`` -> the primary model's request. The resolver's telemetry
file (``telemetryFile``) gives each turn's answer, which the tests compare with the tools the
primary model received.
"""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Any

import pytest

from resolver import ResolverConfig

from .harness import AgentRun, OpenClawHome, module_sidecar
from .mock_llm import ClassifierReply, LoggedRequest, MockLLM

pytestmark = pytest.mark.e2e

FULL_SURFACE = 54
GATEWAY_FULL_SURFACE = 55  # the Gateway adds github_identity_status
CLASSIFIER_KEY = "sk-" + "test-not-a-real-key-0000"  # a dummy: the mock accepts anything
TELEMETRY_TAG = "e2e-suite"
HOST_REQUIRED: frozenset[str] = frozenset()
"""Tools OpenClaw adds to any toolsAllow with ``tools.toolSearch=false`` (none; see
docs/openclaw-e2e.md, "Host-required tools")."""
HOST_IMPLIED = {"write": "apply_patch"}
"""OpenClaw's tool policy lets an allowed ``write`` admit ``apply_patch`` too (OPENCLAW.md)."""


def host_expected(allowed: set[str], full: set[str]) -> set[str]:
    """What OpenClaw sends for ``toolsAllow=allowed``: the set, what it implies, the required."""
    implied = {HOST_IMPLIED[name] for name in allowed if name in HOST_IMPLIED}
    return allowed | (implied & full) | HOST_REQUIRED


def plugin_config(home: OpenClawHome, mock: MockLLM) -> dict[str, Any]:
    return {
        "logDecisions": True,
        "llmApiBase": mock.base_url,
        "llmApiKey": CLASSIFIER_KEY,
        "llmModel": "mock-classifier",
        "telemetryFile": str(telemetry_path(home)),
        "telemetry": {"tags": [TELEMETRY_TAG]},
    }


def telemetry_path(home: OpenClawHome) -> Path:
    return home.home / "resolver-telemetry.jsonl"


def surface_state_path(home: OpenClawHome) -> Path:
    return home.home / ".openclaw" / "resolver-surface.json"


def install(home: OpenClawHome, mock: MockLLM, *, tool_search: bool | None = False) -> None:
    """``resolver install openclaw`` with the mock classifier (`tool_search`: OpenClaw's
    ``tools.toolSearch``, None = left at its default, on)."""
    home.write_config(None, tool_search=tool_search)
    home.install_with_resolver_cli(module_sidecar(), plugin_config(home, mock))
    # The helper's --config file holds the key; the key now lives in openclaw.json only.
    (home.home / "resolver-config.json").unlink()
    assert (home.home / ".openclaw" / "extensions" / "openclaw-tool-resolver").is_dir()


def wait_for(check: Any, what: str, timeout: float = 20.0) -> Any:
    """Poll ``check()`` until it returns something truthy (the sidecar writes after the CLI
    exits: it gets SIGTERM when the host process ends, then flushes)."""
    deadline = time.monotonic() + timeout
    while True:
        value = check()
        if value or time.monotonic() > deadline:
            assert value, f"timed out waiting for {what}"
            return value
        time.sleep(0.2)


def telemetry_lines(home: OpenClawHome) -> list[dict[str, Any]]:
    path = telemetry_path(home)
    if not path.exists():
        return []
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]


def wait_telemetry(home: OpenClawHome, count: int) -> list[dict[str, Any]]:
    lines = wait_for(
        lambda: (lambda got: got if len(got) >= count else None)(telemetry_lines(home)),
        f"{count} telemetry lines",
    )
    assert len(lines) == count, lines
    return list(lines)


def receipt(run: AgentRun) -> dict[str, Any]:
    """``terminalReceipt`` of the ``--json`` output: the turn's runId and sessionId."""
    found = run.receipt()
    assert found, run.stdout[-3000:]
    return found


def assert_narrowed_exactly(req: LoggedRequest, line: dict[str, Any], full: set[str]) -> None:
    """The primary request's tools are exactly the resolved set plus host-required tools
    (and ``apply_patch`` when ``write`` is in the set)."""
    assert line["toolsAllow"] is not None, line
    allowed = set(line["toolsAllow"])
    assert allowed <= full, allowed - full
    assert set(req.tool_names) == host_expected(allowed, full), (sorted(req.tool_names), line)
    assert len(req.tool_names) == len(set(req.tool_names))
    assert line["surfaceAfter"]["tools"] == len(allowed)


def assert_attributed(classify_req: LoggedRequest) -> None:
    """The classifier request carries the attribution fields."""
    assert classify_req.headers.get("x-openclaw-caller") == "tool-resolver"
    assert classify_req.headers.get("authorization") == f"Bearer {CLASSIFIER_KEY}"
    assert classify_req.body.get("user") == "openclaw-resolver"
    tags = (classify_req.body.get("metadata") or {}).get("tags")
    assert tags == ["openclaw-resolver", "resolver:classify", TELEMETRY_TAG], classify_req.body
    assert not classify_req.body.get("stream")


def assert_key_never_leaks(home: OpenClawHome, texts: list[str]) -> None:
    """The classifier key is in openclaw.json (the user put it there) and nowhere else we
    write or log: run output, Gateway log, telemetry, surface state, OpenClaw's logs."""
    for text in texts:
        assert CLASSIFIER_KEY not in text
    scanned = 0
    for path in home.home.rglob("*"):
        if not path.is_file() or path.name.startswith("openclaw.json"):
            continue
        if path.suffix in {".sqlite", ".sqlite-wal", ".sqlite-shm"} or ".git" in path.parts:
            continue  # OpenClaw's own stores (its config journal may hold its config)
        assert CLASSIFIER_KEY.encode() not in path.read_bytes(), path
        scanned += 1
    assert telemetry_path(home).exists() and surface_state_path(home).exists()
    assert scanned >= 2


def test_one_shot_cli_narrows_from_its_second_run(
    openclaw_home: OpenClawHome, mock_llm: MockLLM
) -> None:
    """`openclaw agent --local`, three separate processes, each with a fresh sidecar.

    Run 1 knows no surface: it abstains (the model gets all 54 tools) and the sidecar saves
    what llm_input showed it in ``resolver-surface.json``. Runs 2 and 3 load that file and
    narrow: the model gets exactly the tools in the turn's telemetry ``toolsAllow``.
    """
    answers = {
        "weather": ("web_search", "web_fetch"),
        "browser": ("browser",),
    }

    def classify(req: LoggedRequest) -> ClassifierReply:
        text = json.dumps(req.body.get("messages"))
        topic = "browser" if "kittens gallery" in text else "weather"
        return ClassifierReply(tools=answers[topic], confidence=0.95)

    mock_llm.classifier_responder = classify
    install(openclaw_home, mock_llm)
    state = surface_state_path(openclaw_home)
    assert not state.exists()

    runs: list[AgentRun] = []
    prompts = [
        "Search the web for today's weather in Paris",
        "Search the web for tomorrow's weather in Lyon",
        # no link: a link is evidence for the web tools by itself, and this run shows that the
        # weather runs' tools do not follow it
        "Open the kittens gallery in the browser and take a screenshot",
    ]
    for i, prompt in enumerate(prompts, start=1):
        run = openclaw_home.run_agent(prompt)
        assert run.returncode == 0, run.stderr[-3000:]
        runs.append(run)
        wait_telemetry(openclaw_home, i)
        if i == 1:  # the sidecar of run 1 saved the surface it saw before exiting
            saved = wait_for(lambda: state.exists() and json.loads(state.read_text()), "state")
            assert len(saved["tools"]) == FULL_SURFACE
            assert saved["lastFullView"] is not None

    lines = telemetry_lines(openclaw_home)
    first, *narrowed = mock_llm.primary_requests
    assert len(narrowed) == 2, [len(r.tool_names) for r in mock_llm.primary_requests]

    # Run 1: surface unknown -> abstain -> the full surface.
    assert len(first.tool_names) == FULL_SURFACE
    assert lines[0]["toolsAllow"] is None
    assert "surface_unknown_abstain" in lines[0]["reasonCodes"]
    assert "surface_unknown_abstain" in runs[0].stderr
    full = set(first.tool_names)

    # Runs 2 and 3: new processes, narrowed to exactly the resolved set.
    for req, line, want in zip(narrowed, lines[1:], answers.values(), strict=True):
        assert_narrowed_exactly(req, line, full)
        assert set(want) <= set(req.tool_names)
        assert line["source"] == "llm", line
        assert req.tools_bytes < first.tools_bytes
    assert "browser" not in narrowed[0].tool_names
    assert "web_search" not in narrowed[1].tool_names

    # One classifier request per narrowed run, attributed; run 1 made none (no surface yet).
    assert len(mock_llm.classifier_requests) == 2
    for classify_req in mock_llm.classifier_requests:
        assert_attributed(classify_req)

    # Each telemetry line names the session and agent from the hook context.
    for run, line in zip(runs, lines, strict=True):
        turn = receipt(run)
        assert line["sessionId"] == turn["sessionId"], (line, turn)
        assert line["agentId"] == "main"
        assert line["tags"] == ["openclaw-resolver", "resolver:classify", TELEMETRY_TAG]

    assert_key_never_leaks(openclaw_home, [r.stdout + r.stderr for r in runs])


def test_gateway_narrows_the_second_turn_with_the_classifier_answer(
    openclaw_home: OpenClawHome, mock_llm: MockLLM
) -> None:
    """In a Gateway the sidecar outlives the turn: turn 1 shows it the surface, turn 2 narrows."""

    def classify(req: LoggedRequest) -> ClassifierReply:
        return ClassifierReply(tools=("web_search", "web_fetch"), confidence=0.95)

    mock_llm.classifier_responder = classify
    install(openclaw_home, mock_llm)
    with openclaw_home.start_gateway() as gateway:
        first = gateway.turn("Search the web for today's weather in Paris")
        second = gateway.turn("Search the web for tomorrow's weather in Lyon")
        log = gateway.log()
    assert first.returncode == 0, first.stderr[-3000:] + log[-3000:]
    assert second.returncode == 0, second.stderr[-3000:] + log[-3000:]

    turn1, turn2 = mock_llm.primary_requests
    assert len(turn1.tool_names) == GATEWAY_FULL_SURFACE  # surface not yet known: abstain
    assert "github_identity_status" in turn1.tool_names
    line1, line2 = wait_telemetry(openclaw_home, 2)
    assert line1["toolsAllow"] is None
    assert_narrowed_exactly(turn2, line2, set(turn1.tool_names))
    assert {"web_search", "web_fetch"} <= set(turn2.tool_names)
    assert turn2.tools_bytes < turn1.tools_bytes
    assert line2["sessionId"] == receipt(second)["sessionId"]
    assert line2["agentId"] == "main"

    (classify_req,) = mock_llm.classifier_requests
    assert_attributed(classify_req)
    assert_key_never_leaks(openclaw_home, [first.stdout, first.stderr, second.stderr, log])


def test_gateway_with_tool_search_on_widens_the_searchable_catalog(
    openclaw_home: OpenClawHome, mock_llm: MockLLM
) -> None:
    """Tool Search left at OpenClaw's default (on): the model's request carries the search
    controls, and `toolsAllow` bounds what `tool_search` can find. The sidecar sees the control
    in the host's request (``llm_input``) and widens the classifier's picks with the next
    best-scored tools (``search_catalog_widened``) instead of cutting the catalog to them."""

    def classify(req: LoggedRequest) -> ClassifierReply:
        return ClassifierReply(tools=("web_search", "web_fetch"), confidence=0.95)

    mock_llm.classifier_responder = classify
    install(openclaw_home, mock_llm, tool_search=None)
    assert openclaw_home.read_config().get("tools", {}).get("toolSearch") is not False
    with openclaw_home.start_gateway() as gateway:
        first = gateway.turn("Search the web for today's weather in Paris")
        second = gateway.turn("Search the web for tomorrow's weather in Lyon")
        third = gateway.turn("Search the web for the weekend's weather in Nice")
        log = gateway.log()
    for run in (first, second, third):
        assert run.returncode == 0, run.stderr[-3000:] + log[-3000:]
    turn1, turn2, turn3 = mock_llm.primary_requests
    assert all("tool_search" in t.tool_names for t in (turn1, turn2, turn3))
    line1, line2, line3 = wait_telemetry(openclaw_home, 3)
    assert line1["toolsAllow"] is None  # the surface not yet seen: abstain
    # turn 3 follows a narrowed turn (whose llm_input lists what toolsAllow kept): still wide
    for line in (line2, line3):
        assert "search_catalog_widened" in line["reasonCodes"], line
    allowed = set(line2["toolsAllow"])
    core = set(ResolverConfig().core_tools)
    assert {"web_search", "web_fetch"} <= allowed
    assert len(allowed - core - {"web_search", "web_fetch"}) >= 2, sorted(allowed)
    # the model is still sent the search controls and a few direct tools, not the catalog
    assert len(turn2.tool_names) < len(allowed), (sorted(turn2.tool_names), sorted(allowed))


def test_gateway_with_the_semantic_extra_classifies_with_the_model(
    openclaw_home: OpenClawHome, mock_llm: MockLLM
) -> None:
    """The semantic extra in a real Gateway, set up as the README says: the extra installed in
    the sidecar's Python (the test's own has it), ``"offlineSemantic": true`` in the plugin's
    config, no classifier endpoint. Turn 1 abstains (surface not yet seen) and shows the sidecar
    the surface, which it embeds in its warm-up thread and keeps on disk; once that matrix is
    there (under load the sidecar's first warm-up took 27 s), a turn is classified offline with
    the model (telemetry ``classifier`` ``offline+semantic``, the conversation head's probability
    on the line) and the model gets exactly its ``toolsAllow``; thanks get the core tools only."""
    config = {
        "logDecisions": True,
        "offlineSemantic": True,
        "telemetryFile": str(telemetry_path(openclaw_home)),
        "telemetry": {"tags": [TELEMETRY_TAG]},
    }
    openclaw_home.write_config(None, tool_search=False)
    openclaw_home.install_with_resolver_cli(module_sidecar(), config)
    matrices = openclaw_home.home / ".cache" / "openclaw-tool-resolver" / "semantic"
    with openclaw_home.start_gateway() as gateway:
        first = gateway.turn("hi! quick one: what's on the web about the Lisbon tram strike?")
        # three matrices: the default surface's tools and its catalog phrases, which the
        # sidecar warms when configured, then the tools of the one the Gateway shows (55 tools;
        # its catalog phrases are the default surface's, the same file); until that is built
        # its turns are lexical
        wait_for(
            lambda: len(list(matrices.glob("*.npy"))) >= 3, "the Gateway surface's matrix", 240
        )
        second = gateway.turn("Search the web for the opening hours of the Lisbon Oceanarium")
        third = gateway.turn("thanks a lot, that's all for today!")
        log = gateway.log()
    for run in (first, second, third):
        assert run.returncode == 0, run.stderr[-3000:] + log[-3000:]
    assert mock_llm.classifier_requests == []  # no endpoint: the offline classifier only

    turn1, turn2, turn3 = mock_llm.primary_requests[:3]
    full = set(turn1.tool_names)
    line1, line2, line3 = wait_telemetry(openclaw_home, 3)
    assert line1["toolsAllow"] is None and "surface_unknown_abstain" in line1["reasonCodes"]
    assert line2["classifier"] == "offline+semantic", line2
    assert isinstance(line2["conversation"], float) and line2["conversation"] < 0.5
    assert_narrowed_exactly(turn2, line2, full)
    assert "web_search" in turn2.tool_names
    core = set(ResolverConfig().core_tools)
    assert line3["classifier"] == "offline+semantic", line3
    assert set(line3["toolsAllow"] or []) <= core, line3
    assert_narrowed_exactly(turn3, line3, full)
