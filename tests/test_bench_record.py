"""resolver.bench.record: LLM decisions recorded, then replayed to identical scores."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import pytest
from bench_support import ScriptedLLM, write_case_file

from resolver import ConfigError, ResolverConfig
from resolver.bench.cases import load_case_file, parse_case_file
from resolver.bench.harness import RunSpec, run
from resolver.bench.metrics import summarize

SECRET = "sk-" + "test-9f8e7d6c5b4a39281706"


def spec(cases_path: Path, **kw: object) -> RunSpec:
    config = ResolverConfig(
        catalog_overrides_file=None, llm_api_base="http://127.0.0.1:9/v1", llm_api_key=SECRET
    )
    return RunSpec(cases=load_case_file(cases_path), config=config, classifier="llm", **kw)  # type: ignore[arg-type]


def test_record_then_replay_gives_identical_scores(tmp_path: Path) -> None:
    """A replay of a recording re-scores every case exactly, without calling the classifier."""
    cases = write_case_file(tmp_path / "cases.json")
    llm = ScriptedLLM()
    recorded = asyncio.run(run(spec(cases, llm=llm, record=str(tmp_path / "rec"))))
    assert llm.calls == 12
    replayed = asyncio.run(run(spec(cases, replay=str(tmp_path / "rec"))))
    assert llm.calls == 12
    assert [(o.id, o.surface, o.score, o.source, o.reason_codes) for o in recorded.outcomes] == [
        (o.id, o.surface, o.score, o.source, o.reason_codes) for o in replayed.outcomes
    ]
    first, second = summarize(recorded.outcomes), summarize(replayed.outcomes)
    for key in ("must_include_accuracy", "avg_recall", "precision", "exact_match"):
        assert first[key] == second[key]
    assert first["mean_surface"] == second["mean_surface"]
    assert first["llm_p50_ms"] == second["llm_p50_ms"] == 42.0
    assert {o.source for o in replayed.outcomes} == {"llm"}


def test_recorded_faults_replay_as_the_same_fallback_and_hold_no_key(tmp_path: Path) -> None:
    """An LLM error is recorded (redacted) and replayed into the same fallback answer."""
    cases_path = tmp_path / "cases.json"
    doc = json.loads(write_case_file(cases_path).read_text())
    doc["cases"][0]["prompt"] = "FAIL weather in Paris"
    cases_path.write_text(json.dumps(doc))
    recorded = asyncio.run(
        run(spec(cases_path, llm=ScriptedLLM(SECRET), record=str(tmp_path / "r")))
    )
    replayed = asyncio.run(run(spec(cases_path, replay=str(tmp_path / "r"))))
    assert recorded.outcomes[0].error == "llm_auth_fallback"
    assert replayed.outcomes[0].reason_codes == recorded.outcomes[0].reason_codes
    assert replayed.outcomes[0].surface == recorded.outcomes[0].surface
    for file in (tmp_path / "r").iterdir():
        assert SECRET not in file.read_text()
    assert "[redacted]" in (tmp_path / "r" / "decisions.jsonl").read_text()


def test_replay_of_changed_input_is_reported(tmp_path: Path) -> None:
    """Replaying after the cases changed names the cases to re-record."""
    cases_path = write_case_file(tmp_path / "cases.json")
    asyncio.run(run(spec(cases_path, llm=ScriptedLLM(), record=str(tmp_path / "r"))))
    doc = json.loads(cases_path.read_text())
    doc["cases"][3]["prompt"] = "convert 200 dollars to euros"
    changed = parse_case_file(json.dumps(doc).encode(), path="changed.json")
    replay = RunSpec(
        cases=changed,
        config=ResolverConfig(catalog_overrides_file=None),
        classifier="llm",
        replay=str(tmp_path / "r"),
    )
    with pytest.raises(ConfigError, match=r"1 case\(s\) have no recorded decision.*c04"):
        asyncio.run(run(replay))


def test_llm_without_endpoint_is_a_clear_error(tmp_path: Path) -> None:
    """--classifier llm with no endpoint and no replay says what to set."""
    cases = load_case_file(write_case_file(tmp_path / "cases.json"))
    bare = RunSpec(
        cases=cases, config=ResolverConfig(catalog_overrides_file=None), classifier="llm"
    )
    with pytest.raises(ConfigError, match="LLM_API_BASE"):
        asyncio.run(run(bare))
