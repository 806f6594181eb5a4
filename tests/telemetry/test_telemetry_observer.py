"""The telemetry observer end to end: real resolver turns -> lines in a real file."""

from __future__ import annotations

import asyncio
import hashlib
import json
import logging
import subprocess
import sys
import threading
from pathlib import Path
from typing import Any

import jsonschema
import pytest
from sidecar_support import run_sidecar

from resolver import (
    Classification,
    ClassifyInput,
    Resolver,
    ResolverConfig,
    ToolInfo,
    TurnRequest,
    Usage,
)
from resolver._data import schema_path
from resolver.telemetry import TelemetryObserver, observers_for, redact

CONFIGURED_KEY = "zq-CONFIGURED-7f3a9c1e5b2d8f4a6c0e"
"""A key shaped like nothing the redaction patterns know: only the literal rule can catch it."""

SECRET_PROMPTS = [
    f"my key is {CONFIGURED_KEY}, keep it safe",
    "use OPENAI key sk-" + "proj-4f8a9b2c1d3e5f6a7b8c9d0e1f2a3b4c for the call",
    "anthropic: sk-" + "ant-api03-AbCdEfGhIjKlMnOpQrStUv-xyz please",
    "curl -H 'Authorization: Bearer abc.def-ghi_jkl~123456' https://api.example.com",
    "connect to postgres://admin:S3cr3tPw@db.internal:5432/app and list tables",
    "-----BEGIN RSA PRIVATE KEY-----\nMIIEowIBAAKCAQEAu1SU1LfVLPHCozMxH2Mo4lgO\n"
    "-----END RSA PRIVATE KEY-----\nwhat is this file?",
    "export GITHUB_TOKEN=ghp_1234567890abcdefghijABCDEFGHIJ123456 then push",
    "password=hunter2hunter2 for the wifi",
    f"twice: {CONFIGURED_KEY}{CONFIGURED_KEY} and as a url https://x:{CONFIGURED_KEY}@h/",
]
SECRETS = [
    CONFIGURED_KEY,
    "sk-proj-4f8a9b2c1d3e",
    "sk-ant-api03-AbCdEf",
    "abc.def-ghi_jkl",
    "S3cr3tPw",
    "MIIEowIBAAKCAQEAu1SU1LfVLPHCozMxH2Mo4lgO",
    "ghp_1234567890abcdef",
    "hunter2hunter2",
]


class EchoClassifier:
    """A scripted LLM classifier whose reasoning repeats the prompt (the worst case)."""

    name = "echo"

    async def classify(self, request: ClassifyInput) -> Classification:
        names = {n for n, _ in request.tools}
        return Classification(
            selected=tuple(n for n in ("web_search", "exec") if n in names),
            confidence=0.9,
            classifier="llm:gpt-5.4-mini",
            reasoning=f"user said: {request.prompt}",
            usage=Usage(prompt_tokens=1200, cached_tokens=1000, completion_tokens=40),
            latency_ms=12.5,
        )


def config(tmp_path: Path, **extra: Any) -> ResolverConfig:
    return ResolverConfig.model_validate(
        {
            "telemetryFile": str(tmp_path / "telemetry.jsonl"),
            "catalogOverridesFile": None,
            **extra,
        }
    )


def run_turns(
    cfg: ResolverConfig,
    prompts: list[str],
    tools: list[ToolInfo] | None,
    *,
    llm: Any = None,
    **request: Any,
) -> tuple[Resolver, list[dict[str, Any]]]:
    observers = observers_for(cfg)
    resolver = Resolver(cfg, observers=observers, **({"llm": llm} if llm else {}))
    for prompt in prompts:
        asyncio.run(resolver.resolve(TurnRequest(prompt=prompt, tools=tools, **request)))
    for observer in observers:
        observer.close()
    assert cfg.telemetry_file is not None
    lines = Path(cfg.telemetry_file).read_bytes().splitlines()
    return resolver, [json.loads(line) for line in lines]


def test_every_line_validates_against_the_shipped_schema(
    tmp_path: Path, surface: list[ToolInfo]
) -> None:
    """Lines from real turns (offline, LLM, abstain) validate against telemetry-event.v1.json."""
    schema = json.loads(schema_path("telemetry-event.v1.json").read_text())
    cfg = config(tmp_path, telemetry={"tags": ["team:infra"]})
    run_turns(cfg, ["remind me tomorrow at 9 to call mom"], surface, sessionId="s1")
    run_turns(cfg, ["search the web"], surface, llm=EchoClassifier(), agentId="main")
    _, events = run_turns(cfg, ["anything"], None)  # the file now holds all three turns
    assert len(events) == 3
    for event in events:
        jsonschema.validate(event, schema)
        assert event["tags"] == ["openclaw-resolver", "resolver:classify", "team:infra"]
    first = events[0]
    assert first["sessionId"] == "s1" and first["source"] == "offline"
    assert first["surfaceBefore"] == {"tools": 54, "bytes": 104_829, "tokens": 23_125}
    assert first["tokensSavedUnit"] == "tokens:o200k_base"
    assert (
        first["tokensSaved"] == first["surfaceBefore"]["tokens"] - first["surfaceAfter"]["tokens"]
    )
    assert first["surfaceAfter"]["tools"] == len(first["toolsAllow"])
    assert len(first["topScores"]) == 5 and set(first["topScores"][0]) == {"name", "score"}
    second = events[1]
    assert second["classifierModel"] == "gpt-5.4-mini" and second["llmLatencyMs"] == 12.5
    assert second["usage"] == {"promptTokens": 1200, "cachedTokens": 1000, "completionTokens": 40}
    assert second["llmTools"] == ["web_search", "exec"] and second["agentId"] == "main"


def test_abstained_turn_saves_nothing(tmp_path: Path, surface: list[ToolInfo]) -> None:
    """When the resolver abstains the host keeps its surface: after == before, 0 saved."""
    _, events = run_turns(config(tmp_path, enabled=False), ["x"], surface)
    event = events[0]
    assert event["toolsAllow"] is None and event["source"] == "disabled"
    assert event["surfaceAfter"] == event["surfaceBefore"] and event["tokensSaved"] == 0


def test_no_secret_and_never_the_configured_key_reaches_the_file(
    tmp_path: Path, surface: list[ToolInfo]
) -> None:
    """Prompts full of keys, tokens, URL passwords and PEM keys leave none of them on disk."""
    cfg = config(tmp_path, llmApiKey=CONFIGURED_KEY)
    weird_tools = [*surface, ToolInfo(name=f"tool_{CONFIGURED_KEY}", description="odd")]
    _, events = run_turns(
        cfg,
        SECRET_PROMPTS,
        weird_tools,
        llm=EchoClassifier(),
        sessionId=f"session-{CONFIGURED_KEY}",
    )
    assert len(events) == len(SECRET_PROMPTS)
    raw = (tmp_path / "telemetry.jsonl").read_text()
    for secret in SECRETS:
        assert secret not in raw, secret
    assert "[REDACTED:configured_key]" in raw and "[REDACTED:private_key]" in raw
    for event, prompt in zip(events, SECRET_PROMPTS, strict=True):
        assert event["promptLength"] == len(prompt)
        assert "[REDACTED" in event["promptExcerpt"] and "[REDACTED" in event["reasoning"]


def test_key_from_the_environment_is_redacted_too(
    tmp_path: Path, surface: list[ToolInfo], monkeypatch: pytest.MonkeyPatch
) -> None:
    """With no llmApiKey, the OPENAI_API_KEY the classifier would use is the configured key."""
    monkeypatch.setenv("OPENAI_API_KEY", CONFIGURED_KEY)
    _, events = run_turns(
        config(tmp_path), [f"echo {CONFIGURED_KEY}"], surface, llm=EchoClassifier()
    )
    assert CONFIGURED_KEY not in (tmp_path / "telemetry.jsonl").read_text()
    assert events[0]["promptExcerpt"] == "echo [REDACTED:configured_key]"


def test_capture_prompts_off_writes_only_hash_and_length(
    tmp_path: Path, surface: list[ToolInfo]
) -> None:
    """capturePrompts false: no excerpt and no reasoning; a hash of the redacted prompt + length."""
    prompt = "plan my trip to Lisbon with my passport number X1234567"
    cfg = config(tmp_path, capturePrompts=False)
    _, events = run_turns(cfg, [prompt], surface, llm=EchoClassifier())
    raw = (tmp_path / "telemetry.jsonl").read_text()
    assert "Lisbon" not in raw and "X1234567" not in raw
    event = events[0]
    assert event["promptExcerpt"] is None and event["reasoning"] is None
    assert event["promptLength"] == len(prompt)
    expected = hashlib.sha256(redact(prompt).encode()).hexdigest()
    assert event["promptHash"] == f"sha256:{expected}"


def test_excerpt_is_cut_to_prompt_excerpt_length(tmp_path: Path, surface: list[ToolInfo]) -> None:
    """The excerpt is at most promptExcerptLength characters, after redaction."""
    prompt = "search the web for " + "llamas " * 100
    _, events = run_turns(config(tmp_path, promptExcerptLength=40), [prompt], surface)
    assert events[0]["promptExcerpt"] == prompt[:40]


def test_turn_counts_per_session_across_threads(tmp_path: Path, surface: list[ToolInfo]) -> None:
    """`turn` is 1..n per session id in this process, also when threads resolve concurrently."""
    cfg = config(tmp_path)
    observer = TelemetryObserver(cfg)
    resolver = Resolver(cfg, observers=[observer])

    def work(session: str) -> None:
        for _ in range(10):
            resolver.resolve_sync(
                TurnRequest(prompt="search the web", tools=surface, sessionId=session)
            )

    threads = [threading.Thread(target=work, args=(f"s{i}",)) for i in range(3)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    observer.close()
    events = [json.loads(x) for x in (tmp_path / "telemetry.jsonl").read_bytes().splitlines()]
    by_session: dict[str, list[int]] = {}
    for event in events:
        by_session.setdefault(event["sessionId"], []).append(event["turn"])
    assert {k: sorted(v) for k, v in by_session.items()} == {
        f"s{i}": list(range(1, 11)) for i in range(3)
    }


def test_unwritable_telemetry_file_never_affects_the_turn(
    tmp_path: Path, surface: list[ToolInfo], caplog: pytest.LogCaptureFixture
) -> None:
    """A telemetry path that cannot be written: same answers, one warning, nothing raised."""
    blocker = tmp_path / "file"
    blocker.write_text("x")
    cfg = ResolverConfig(telemetryFile=str(blocker / "t.jsonl"), catalogOverridesFile=None)
    plain = Resolver(ResolverConfig(catalogOverridesFile=None))
    observers = observers_for(cfg)
    resolver = Resolver(cfg, observers=observers)
    with caplog.at_level(logging.WARNING, logger="resolver"):
        for prompt in ("search the web for llamas", "remind me at 9", "read notes.txt"):
            request = TurnRequest(prompt=prompt, tools=surface)
            assert (
                resolver.resolve_sync(request).tools_allow
                == plain.resolve_sync(request).tools_allow
            )
        observers[0].close()
    warnings = [r for r in caplog.records if "cannot write telemetry" in r.getMessage()]
    assert len(warnings) == 1
    assert observers[0].writer.failed == 3


def test_no_telemetry_file_means_no_observer() -> None:
    """observers_for() is empty unless telemetryFile is set."""
    assert observers_for(ResolverConfig()) == []


def test_cli_run_writes_its_line_at_exit(tmp_path: Path) -> None:
    """A one-shot `resolver resolve` with telemetryFile set leaves exactly one line on exit."""
    telemetry = tmp_path / "t.jsonl"
    config = tmp_path / "config.json"
    config.write_text(json.dumps({"telemetryFile": str(telemetry)}))
    proc = subprocess.run(
        [sys.executable, "-m", "resolver", "resolve", "search the web", "--config", str(config)],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert proc.returncode == 0, proc.stderr
    (line,) = telemetry.read_bytes().splitlines()
    event = json.loads(line)
    assert event["promptExcerpt"] == "search the web" and event["turn"] == 1
    assert event["tokensSavedUnit"] == "tokens:o200k_base"


def test_openclaw_sidecar_writes_one_line_per_turn(tmp_path: Path) -> None:
    """The OpenClaw sidecar (a real child over stdio) writes a line per resolve, flushed at exit."""
    telemetry = tmp_path / "t.jsonl"
    ctx = {"sessionId": "s1", "agentId": "main"}
    frames = [
        {
            "id": "c",
            "method": "configure",
            "params": {"config": {"telemetryFile": str(telemetry), "capturePrompts": False}},
        },
        {"id": "r1", "method": "resolve", "params": {"event": {"prompt": "hi"}, "ctx": ctx}},
        {
            "id": "o",
            "method": "observe_surface",
            "params": {"tools": [{"name": "jira_search", "description": "Search Jira"}], "ctx": {}},
        },
        {
            "id": "r2",
            "method": "resolve",
            "params": {"event": {"prompt": "find jira tickets about login"}, "ctx": ctx},
        },
    ]
    answers = run_sidecar(frames, timeout=120)
    events = [json.loads(x) for x in telemetry.read_bytes().splitlines()]
    assert [e["turn"] for e in events] == [1, 2]
    assert all(e["sessionId"] == "s1" and e["agentId"] == "main" for e in events)
    assert all(e["promptExcerpt"] is None for e in events)
    assert "login" not in telemetry.read_text()  # capturePrompts off: no prompt text at all
    assert events[1]["toolsAllow"] == answers["r2"]["result"]["toolsAllow"]
    assert events[1]["unknownSchemas"] >= 1 and events[1]["sizeBasis"] == "mixed"
