"""Shadow mode in the pipeline, held telemetry lines and the production recall report."""

from __future__ import annotations

import asyncio
import json
import random
from pathlib import Path

import pytest
from conftest import FakeClock
from tuning_support import read_lines

from resolver import Resolver, ResolverConfig, ToolInfo, TurnRequest
from resolver.cli import main
from resolver.hosts.python import (
    before_prompt_build,
    finish_run,
    report_tool_calls,
    track_tool_calls,
)
from resolver.telemetry import TelemetryObserver
from resolver.telemetry._observer import HOLD_TIMEOUT_S

PROMPT = "search the web for the latest PostgreSQL release"


def _resolver(tmp_path: Path, rate: float, **kw: object) -> tuple[Resolver, TelemetryObserver]:
    config = ResolverConfig(
        telemetryFile=str(tmp_path / "t.jsonl"),
        shadowSampleRate=rate,
        catalogOverridesFile=None,
    )
    observer = TelemetryObserver(config, **kw)  # type: ignore[arg-type]
    return Resolver(config, llm=None, observers=[observer], rng=random.Random(0)), observer


def test_a_shadow_turn_abstains_but_keeps_and_records_its_answer(
    tmp_path: Path, surface: list[ToolInfo]
) -> None:
    """shadowSampleRate=1: the host gets abstain (source shadow, shadow_mode) and the line
    records what would have been allowed; the surface after = the surface before."""
    resolver, observer = _resolver(tmp_path, 1.0)
    plain = Resolver(ResolverConfig(catalogOverridesFile=None), llm=None)
    expected = plain.resolve_sync(TurnRequest(prompt=PROMPT, tools=surface)).tools_allow
    resolution = resolver.resolve_sync(TurnRequest(prompt=PROMPT, tools=surface))
    assert resolution.tools_allow is None and resolution.abstained
    assert resolution.source == "shadow" and resolution.reason_codes[-1] == "shadow_mode"
    assert resolution.shadow_tools_allow == expected and "web_search" in expected
    observer.close()
    (line,) = read_lines(tmp_path / "t.jsonl")
    assert line["toolsAllow"] is None and line["shadowToolsAllow"] == expected
    assert line["surfaceAfter"] == line["surfaceBefore"] and line["tokensSaved"] == 0
    assert line["usedTools"] is None  # no host reported tool calls


def test_the_sample_follows_the_injected_rng(tmp_path: Path, surface: list[ToolInfo]) -> None:
    """At rate 0.5 exactly the turns whose draw is below 0.5 are shadow turns; rate 0 never
    draws; an abstention is never turned into a shadow turn."""
    resolver, observer = _resolver(tmp_path, 0.5)
    draws = random.Random(0)
    expected = ["shadow" if draws.random() < 0.5 else "offline" for _ in range(12)]
    got = [
        resolver.resolve_sync(TurnRequest(prompt=PROMPT, tools=surface)).source for _ in expected
    ]
    assert got == expected and "shadow" in got and "offline" in got
    unknown = resolver.resolve_sync(TurnRequest(prompt=PROMPT, tools=None))
    assert unknown.source == "abstain" and unknown.shadow_tools_allow is None
    observer.close()
    never, obs0 = _resolver(tmp_path / "zero", 0.0)
    state = never.rng.getstate()
    assert never.resolve_sync(TurnRequest(prompt=PROMPT, tools=surface)).source == "offline"
    assert never.rng.getstate() == state
    obs0.close()


def test_held_lines_get_used_tools_and_are_written_on_release(
    tmp_path: Path, surface: list[ToolInfo], clock: FakeClock
) -> None:
    """With hold_runs a shadow line waits for its run's tool calls: written at the session's
    next turn, after HOLD_TIMEOUT_S, or at close; other lines are written at once."""
    resolver, observer = _resolver(tmp_path, 1.0, clock=clock)
    observer.hold_runs = True

    def turn(run: str, session: str) -> None:
        resolver.resolve_sync(
            TurnRequest(prompt=PROMPT, tools=surface, sessionId=session, runId=run)
        )

    turn("a1", "A")
    turn("b1", "B")
    assert observer.held == 2
    assert observer.record_tool_calls("a1", ["web_search", "web_fetch", "web_search"])
    assert not observer.record_tool_calls("zz", ["read"])  # no line held for that run
    assert observer.release(session_id="A", keep_run="a2") == 1
    resolver.resolve_sync(TurnRequest(prompt=PROMPT, tools=None, sessionId="C", runId="c1"))
    clock.advance(HOLD_TIMEOUT_S - 1)
    assert observer.release(stale_only=True) == 0
    clock.advance(1)
    turn("a2", "A")
    assert observer.release(stale_only=True) == 1  # b1 is stale, a2 is fresh
    turn("a3", "A")
    observer.record_tool_calls("a3", ["read"])
    turn("a3", "A")  # the same run resolved again: the first line is written, not lost
    observer.close()  # a2 and the second a3 at exit
    a3 = [line for line in read_lines(tmp_path / "t.jsonl") if line["runId"] == "a3"]
    assert [line["usedTools"] for line in a3] == [["read"], []]
    lines = {line["runId"]: line for line in read_lines(tmp_path / "t.jsonl")}
    assert lines["a1"]["usedTools"] == ["web_search", "web_fetch"]
    assert lines["b1"]["usedTools"] == [] and lines["a2"]["usedTools"] == []
    assert lines["c1"]["source"] == "abstain" and lines["c1"]["usedTools"] is None


def _line(used: list[str] | None, allowed: list[str] | None, prompt: str) -> dict[str, object]:
    return {
        "schemaVersion": 1,
        "ts": "2026-11-29T10:00:00.000Z",
        "turn": 1,
        "pid": 1,
        "sessionId": "s",
        "source": "shadow" if allowed is not None else "offline",
        "reasonCodes": ["offline_selected", "shadow_mode"],
        "toolsAllow": None if allowed is not None else ["read"],
        "shadowToolsAllow": allowed,
        "usedTools": used,
        "availableTools": 5,
        "confidence": 0.5,
        "classifier": "offline",
        "tags": ["openclaw-resolver", "resolver:classify"],
        "latencyMs": 1.0,
        "classifierMs": 1.0,
        "surfaceBefore": {"tools": 5, "bytes": 500},
        "surfaceAfter": {"tools": 5, "bytes": 500},
        "sizeBasis": "nameDescription",
        "unknownSchemas": 5,
        "tokensSaved": 0,
        "tokensSavedUnit": "bytes",
        "topScores": [],
        "promptExcerpt": prompt,
        "promptHash": "x",
        "promptLength": len(prompt),
    }


def test_recall_report_figures_by_hand(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """4 measured shadow turns, 3 hits: recall 75.0%, Wilson 95% [30.1%, 95.4%]; tool recall
    5/6; one miss of cron with its prompt; non-shadow, unreported and no-tool turns apart."""
    lines = [
        _line(["web_search"], ["web_search", "read"], "search the news"),
        _line(["read", "write"], ["read", "write"], "copy the file"),
        _line(["message"], ["message", "read"], "tell Anna"),
        _line(["cron", "message"], ["message"], "every morning at 8 send me the agenda"),
        _line([], ["read"], "thanks"),
        _line(None, ["read"], "hello"),
        _line(["read"], None, "not a shadow turn"),
    ]
    path = tmp_path / "t.jsonl"
    path.write_text("".join(json.dumps(x) + "\n" for x in lines))
    assert main(["telemetry", "recall", str(path), "--json"]) == 0
    report = json.loads(capsys.readouterr().out)
    assert (report["measuredTurns"], report["hits"], report["shadowLines"]) == (4, 3, 6)
    assert (report["noToolTurns"], report["withoutUsedTools"]) == (1, 1)
    # Wilson, z=1.96, p=0.75, n=4: centre 0.6275, half-width 0.3269 (computed by hand)
    assert report["mustIncludeRecall"] == 0.75 and report["ci95"] == [0.3006, 0.9544]
    assert report["toolRecall"] == round(5 / 6, 4)
    assert report["misses"] == [
        {"tool": "cron", "misses": 1, "used": 1, "examples": [lines[3]["promptExcerpt"]]}
    ]
    assert main(["telemetry", "recall", str(path)]) == 0
    out = capsys.readouterr().out
    assert "must-include recall 75.0% (3/4), Wilson 95% [30.1%, 95.4%]" in out
    assert "cron: missed 1 of 1 turns that used it" in out


def test_a_python_host_reports_tool_calls_for_its_shadow_turns(
    tmp_path: Path, surface: list[ToolInfo]
) -> None:
    """The hook passes ctx.runId; reported calls land in that turn's line when it finishes."""
    resolver, observer = _resolver(tmp_path, 1.0)
    track_tool_calls(resolver)
    answer = asyncio.run(
        before_prompt_build(
            {"prompt": PROMPT},
            {"sessionId": "s", "runId": "run-1"},
            resolver=resolver,
            tools=surface,
        )
    )
    assert answer == {}  # shadow: the host keeps its surface
    assert report_tool_calls(resolver, "run-1", ["web_search"])
    assert not report_tool_calls(resolver, "run-2", ["read"])
    assert finish_run(resolver, "run-1") == 1
    observer.close()
    (line,) = read_lines(tmp_path / "t.jsonl")
    assert line["runId"] == "run-1" and line["usedTools"] == ["web_search"]
    assert "web_search" in line["shadowToolsAllow"]
