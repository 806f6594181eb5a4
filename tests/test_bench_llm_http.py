"""`resolver bench --classifier llm` over real HTTP (loopback server), recorded then replayed."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from bench_support import TOOLS, write_case_file

from resolver import ResolverConfig
from resolver._llm import LLMClassifier, VotedClassifier
from resolver.bench.models import ModelEntry, default_llm_factory
from resolver.cli import main
from resolver.testing import FAKE_KEY, LLMServer, Recorded, Reply, completion


def answer(recorded: Recorded) -> Reply:
    """Choose tools whose name parts occur in the turn (the last message)."""
    last = recorded.body["messages"][-1]["content"]
    text = json.dumps(last).lower()
    chosen = [n for n, _ in TOOLS if any(part in text for part in n.split("_") if len(part) > 3)]
    return completion({"tools": chosen, "confidence": 0.9, "reasoning": "matched words"})


@pytest.mark.http
def test_llm_run_recorded_then_replayed_without_network(
    tmp_path: Path, llm_server: LLMServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The real LLM classifier answers over HTTP; a replay with the server down scores the same."""
    cases = write_case_file(tmp_path / "cases.json")
    monkeypatch.setenv("LLM_API_BASE", llm_server.base_url)
    monkeypatch.setenv("LLM_API_KEY", FAKE_KEY)
    monkeypatch.setenv("LLM_MODEL", "loopback-model")
    llm_server.script(*([answer] * 12))
    rec, first, second = tmp_path / "rec", tmp_path / "first.json", tmp_path / "second.json"
    common = ["bench", "--file", str(cases), "--classifier", "llm", "--no-progress", "--quiet"]
    assert main([*common, "--record", str(rec), "--json-out", str(first)]) == 0
    assert len(llm_server.requests) == 12
    llm_server.stop()
    assert main([*common, "--replay", str(rec), "--json-out", str(second)]) == 0
    a, b = json.loads(first.read_text()), json.loads(second.read_text())
    for key in ("must_include_accuracy", "avg_recall", "precision", "exact_match", "mean_surface"):
        assert a["metrics"][key] == b["metrics"][key]
    assert a["failures"] == b["failures"]
    assert a["metrics"]["errors"] == 0 and a["config"]["llmModel"] == "loopback-model"
    assert a["metrics"]["llm_p50_ms"] == b["metrics"]["llm_p50_ms"]
    for path in [first, second, *rec.iterdir()]:
        assert FAKE_KEY not in path.read_text()


def test_default_model_factory_uses_the_pipeline_classifiers() -> None:
    """Deterministic entries get LLMClassifier; voted entries the pipeline's VotedClassifier."""
    config = ResolverConfig(llmApiBase="http://127.0.0.1:9/v1", llmApiKey=FAKE_KEY)
    one = default_llm_factory(config, ModelEntry(label="a", llmModel="m"))
    assert isinstance(one, LLMClassifier) and one.temperature == 0.0
    voted = default_llm_factory(
        config, ModelEntry(label="b", llmModel="m", votes=5, temperature=0.7)
    )
    assert isinstance(voted, VotedClassifier) and voted.n == 5
