"""resolver.bench.models: several models side by side; voted configurations."""

from __future__ import annotations

import argparse
import asyncio
import json
from pathlib import Path

import pytest
from bench_support import ScriptedLLM, write_case_file

from resolver import Classification, ClassifyInput, ResolverConfig
from resolver._catalog import merge_layers
from resolver.bench.models import VotedClassifier, compare_models
from resolver.cli.cmd_bench import _execute


class Fixed:
    """A classifier double that always answers the same selection."""

    name = "llm:fixed"

    def __init__(self, *selected: str) -> None:
        self.selected = selected

    async def classify(self, request: ClassifyInput) -> Classification:
        return Classification(selected=self.selected, confidence=0.8, latency_ms=10.0)


def test_voted_classifier_keeps_tools_with_enough_votes() -> None:
    """Three samples, share 0.5: a tool chosen by two of them stays, one by a single goes."""
    request = ClassifyInput(
        prompt="p",
        messages=(),
        tools=(("a", ""), ("b", ""), ("c", "")),
        skills={},
        catalog=merge_layers([]),
        timeout_s=1.0,
    )
    voted = VotedClassifier(
        [Fixed("a", "b"), Fixed("a"), Fixed("b", "c")], min_share=0.5, label="llm:x"
    )
    result = asyncio.run(voted.classify(request))
    assert result.selected == ("a", "b")
    assert result.scores["c"] == 1 / 3
    assert result.confidence == pytest.approx(0.8)


def test_models_table_with_record_and_replay(tmp_path: Path) -> None:
    """Two configurations give one table; a replay of the recording gives the same table."""
    cases = write_case_file(tmp_path / "cases.json")
    models = tmp_path / "models.json"
    models.write_text(
        json.dumps(
            {
                "models": [
                    {"label": "scripted", "llmModel": "m1", "llmApiBase": "http://127.0.0.1:9/v1"},
                    {
                        "label": "scripted voted",
                        "llmModel": "m1",
                        "llmApiBase": "http://127.0.0.1:9/v1",
                        "votes": 3,
                        "temperature": 0.7,
                    },
                ]
            }
        )
    )

    def factory(config: ResolverConfig, temperature: float) -> ScriptedLLM:
        return ScriptedLLM()

    def args(**kw: object) -> argparse.Namespace:
        base = dict(
            models=str(models),
            file=str(cases),
            limit=None,
            config=None,
            record=None,
            replay=None,
            concurrency=1,
            no_progress=True,
            argv=["bench", "models"],
        )
        base.update(kw)
        return argparse.Namespace(**base)

    doc, markdown = compare_models(
        args(record=str(tmp_path / "rec")), _execute, llm_factory=factory
    )
    assert [m["label"] for m in doc["models"]] == ["scripted", "scripted voted"]
    assert "voted x3" in markdown and "| scripted |" in markdown
    again, markdown2 = compare_models(args(replay=str(tmp_path / "rec")), _execute)
    assert [m["metrics"]["avg_recall"] for m in again["models"]] == [
        m["metrics"]["avg_recall"] for m in doc["models"]
    ]
    assert markdown2 == markdown
    assert (tmp_path / "rec" / "scripted-voted" / "decisions.jsonl").exists()
