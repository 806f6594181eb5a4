"""Summaries: reading (with rotation), aggregates, prices, and the CLI table."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from telemetry_fixtures import write_telemetry

from resolver import ToolInfo
from resolver.cli import main
from resolver.telemetry import read_events, summarize, with_rotated
from resolver.telemetry._summary import percentile, price_for


@pytest.fixture
def telemetry_file(tmp_path: Path, surface: list[ToolInfo]) -> Path:
    """A telemetry file written by 24 real turns of several kinds."""
    return write_telemetry(tmp_path, surface)


def test_summary_counts_sources_fallbacks_and_usage(telemetry_file: Path) -> None:
    """Every turn is counted once; sources, fallbacks and classifier tokens add up."""
    result = read_events([telemetry_file])
    events = result.events
    s = summarize(events)
    assert s.turns == 24 and result.skipped == 0 and s.sessions == 3
    assert sum(s.sources.values()) == 24 and s.sources["disabled"] == 8
    assert s.sources["offline"] == 8
    llm_turns = [e for e in events if e.usage is not None]
    assert s.fallbacks["llm_rate_limited_fallback"] == 2
    assert s.fallbacks.get("low_confidence_full_surface", 0) == sum(
        1 for e in events if "low_confidence_full_surface" in e.reason_codes
    )
    (model,) = s.models
    assert model.model == "gpt-5.4-mini" and model.requests == len(llm_turns)
    assert model.prompt_tokens == 1500 * len(llm_turns)
    fresh, cached, out = 300 * len(llm_turns), 1200 * len(llm_turns), 30 * len(llm_turns)
    expected = (fresh * 0.75 + cached * 0.075 + out * 4.50) / 1e6
    assert model.cost_usd == pytest.approx(expected)
    saved = sum(e.tokens_saved for e in events)
    assert s.saved_by_unit == {"tokens:o200k_base": saved}
    assert s.mean_tools_before == 54
    assert s.latency_p95 is not None and s.latency_p50 is not None


def test_price_override_wins_over_the_table() -> None:
    """--price-per-mtok-in/out replace the table's prices, for unknown models too."""
    price = price_for("some-local-model", 1.0, 2.0)
    assert price is not None and (price.input, price.output) == (1.0, 2.0)
    assert price_for("some-local-model", None, None) is None


@pytest.mark.parametrize(
    ("values", "q", "expected"),
    [([1, 2, 3, 4], 50, 2.5), ([10], 95, 10), ([], 50, None), ([1, 2, 3, 4, 5], 100, 5)],
)
def test_percentile_interpolates(values: list[float], q: float, expected: float | None) -> None:
    """Percentiles interpolate linearly between ranks."""
    assert percentile(values, q) == expected


def test_rotated_files_are_read_oldest_first(tmp_path: Path) -> None:
    """with_rotated() lists file.N ... file.1, file, ignoring unrelated siblings."""
    for name in ("t.jsonl", "t.jsonl.1", "t.jsonl.2", "t.jsonl.lock", "t.jsonl.bak"):
        (tmp_path / name).write_text("")
    assert [p.name for p in with_rotated(tmp_path / "t.jsonl")] == [
        "t.jsonl.2",
        "t.jsonl.1",
        "t.jsonl",
    ]


def test_bad_lines_are_skipped_and_reported(
    telemetry_file: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Garbage lines are counted and named on stderr; the summary still prints."""
    with telemetry_file.open("a") as handle:
        handle.write('not json\n{"schemaVersion": 1}\n')
    assert main(["telemetry", "summary", str(telemetry_file), "--json"]) == 0
    captured = capsys.readouterr()
    assert "skipped 2 line(s)" in captured.err and f"{telemetry_file}:25" in captured.err
    data = json.loads(captured.out)
    assert data["turns"] == 24 and data["skipped_lines"] == 2


def test_cli_summary_prints_the_table(
    telemetry_file: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """`resolver telemetry summary FILE` prints every measure, cost labelled an estimate."""
    assert main(["telemetry", "summary", str(telemetry_file)]) == 0
    out = capsys.readouterr().out
    for label in (
        "turns",
        "mean surface, tools",
        "mean surface, o200k tokens",
        "source mix",
        "fallbacks by cause",
        "llm_rate_limited_fallback",
        "latency p50 / p95",
        "confidence",
        "saved (tokens:o200k_base)",
        "classifier gpt-5.4-mini",
        "estimate",
    ):
        assert label in out, label


def test_cli_summary_price_override(
    telemetry_file: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Command-line prices are used and named as the source."""
    args = ["telemetry", "summary", str(telemetry_file), "--json"]
    assert main([*args, "--price-per-mtok-in", "10", "--price-per-mtok-out", "100"]) == 0
    (model,) = json.loads(capsys.readouterr().out)["models"]
    fresh_plus_cached = model["prompt_tokens"]
    expected = (fresh_plus_cached * 10 + model["completion_tokens"] * 100) / 1e6
    assert model["price_source"] == "command line"
    assert model["cost_usd"] == pytest.approx(expected)


def test_cli_missing_file_exits_2(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """A missing telemetry file: exit 2, naming it."""
    missing = tmp_path / "nope.jsonl"
    assert main(["telemetry", "summary", str(missing)]) == 2
    assert str(missing) in capsys.readouterr().err


def test_cold_and_warm_turns_are_recorded_and_summarised_apart(
    tmp_path: Path, surface: list[ToolInfo], capsys: pytest.CaptureFixture[str]
) -> None:
    """A one-shot CLI turn builds its index (indexCold: true); in one process the next turn on
    the same surface is warm; the summary reports both latencies apart."""
    import subprocess
    import sys

    from resolver import Resolver, ResolverConfig, TurnRequest
    from resolver.telemetry import observers_for

    telemetry = tmp_path / "t.jsonl"
    config_file = tmp_path / "c.json"
    config_file.write_text(json.dumps({"telemetryFile": str(telemetry)}))
    proc = subprocess.run(
        [
            sys.executable,
            "-m",
            "resolver",
            "resolve",
            "remind me at 9",
            "--config",
            str(config_file),
        ],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert proc.returncode == 0, proc.stderr
    config = ResolverConfig(telemetryFile=str(telemetry), catalogOverridesFile=None)
    observers = observers_for(config)
    resolver = Resolver(config, observers=observers)
    for prompt in ("search the web for llamas", "read notes.txt", "remind me at 9"):
        resolver.resolve_sync(TurnRequest(prompt=prompt, tools=surface))
    observers[0].close()
    lines = [json.loads(line) for line in telemetry.read_text().splitlines()]
    assert [line["indexCold"] for line in lines] == [True, True, False, False]
    s = summarize(read_events([telemetry]).events)
    assert (s.cold_turns, s.warm_turns) == (2, 2)
    assert s.latency_cold_p50 is not None and s.latency_warm_p50 is not None
    assert main(["telemetry", "summary", str(telemetry)]) == 0
    out = capsys.readouterr().out
    assert "warm (index built)" in out and "cold (built the index)" in out
    assert "(in-hook)" in out


def test_the_conversation_heads_readings_are_summarised_for_moving_the_threshold(
    tmp_path: Path, surface: list[ToolInfo], capsys: pytest.CaptureFixture[str]
) -> None:
    """Lines from a resolver with the semantic extra carry the head's probability; the summary
    counts the turns read and taken, and per `conversationThreshold` value the turns at or
    above it and, among those with reported tool calls, the ones that called a tool."""
    import asyncio

    from resolver import Resolver, ResolverConfig, TurnRequest
    from resolver.telemetry import observers_for

    log = tmp_path / "t.jsonl"
    config = ResolverConfig.model_validate(
        {
            "catalogOverridesFile": None,
            "keywordCacheFile": None,
            "offlineSemantic": True,
            "conversationThreshold": 0.5,
            "telemetryFile": str(log),
        }
    )
    observers = observers_for(config)
    resolver = Resolver(config, observers=observers)
    resolver.warm(surface)
    prompts = ("haha that screenshot was so cursed", "remind me at 9 to call mom", "ok")
    for prompt in prompts:
        asyncio.run(resolver.resolve(TurnRequest(prompt=prompt, tools=surface)))
    for observer in observers:
        observer.close()
    events = read_events([log]).events
    read = [e for e in events if e.conversation is not None]
    assert len(events) == 3 and len(read) >= 2  # "ok" has no content word for the head
    s = summarize(events)
    assert s.conversation_turns == len(read)
    taken = [e for e in events if "conversation_core_only" in e.reason_codes]
    assert s.conversation_taken == len(taken)
    assert all(e.conversation is not None and e.conversation >= 0.5 for e in taken)
    for bar, (above, reported, called) in s.conversation_at.items():
        assert above == sum(1 for e in read if (e.conversation or 0.0) >= float(bar))
        assert reported == called == 0  # no host reported its tool calls
    # a host that reports the turns' tool calls: one called a tool, one called none
    reported_events = [
        e.model_copy(update={"used_tools": ["automations"] if i == 0 else []})
        for i, e in enumerate(read)
    ]
    low = min(s.conversation_at, key=float)
    above, reported, called = summarize(reported_events).conversation_at[low]
    expected = [e for e in reported_events if (e.conversation or 0.0) >= float(low)]
    assert (above, reported) == (len(expected), len(expected))
    assert called == sum(1 for e in expected if e.used_tools)
    assert main(["telemetry", "summary", str(log)]) == 0
    out = capsys.readouterr().out
    assert "conversation head" in out and "conversationThreshold 0.5" in out
