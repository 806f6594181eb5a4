"""resolver.bench.models: several models side by side, recorded and replayed."""

from __future__ import annotations

import argparse
import json
from pathlib import Path

from bench_support import ScriptedLLM, write_case_file

from resolver import ResolverConfig
from resolver.bench.models import ModelEntry, compare_models
from resolver.cli.cmd_bench import _execute


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

    def factory(config: ResolverConfig, entry: ModelEntry) -> ScriptedLLM:
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
