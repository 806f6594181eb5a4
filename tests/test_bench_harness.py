"""resolver.bench.harness: which classifier a run uses (the LLM_* variables), the keyword cache
left out of results, and the header that says so."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from bench_support import write_case_file

from resolver.bench.harness import base_config, choose_classifier
from resolver.testing import LLMServer, completion

REPO = Path(__file__).resolve().parent.parent
HARNESS = REPO / "benchmark" / "replay-harness.py"


def _harness(args: list[str], env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    base = {k: v for k, v in os.environ.items() if not k.startswith("LLM_")}
    return subprocess.run(
        [sys.executable, str(HARNESS), *args],
        env={**base, **env},
        capture_output=True,
        text=True,
        timeout=300,
    )


def test_llm_variables_alone_select_the_llm(tmp_path: Path, llm_server: LLMServer) -> None:
    """`LLM_MODEL=... LLM_API_BASE=... LLM_API_KEY=... python benchmark/replay-harness.py
    --file F` benchmarks the LLM, and its header says so and why."""
    llm_server.default = completion({"tools": ["get_weather"], "confidence": 0.9, "reasoning": ""})
    cases = write_case_file(tmp_path / "cases.json")
    out, md = tmp_path / "r.json", tmp_path / "r.md"
    env = {
        "LLM_MODEL": "gpt-5.4-mini",
        "LLM_API_BASE": llm_server.base_url,
        "LLM_API_KEY": "sk-" + "bench-test-not-a-key-000",
    }
    args = ["--file", str(cases), "--no-progress", "--json-out", str(out), "--md-out", str(md)]
    proc = _harness(args, env)
    assert proc.returncode == 0, proc.stderr
    assert llm_server.requests, "the LLM was never asked"
    assert "classifier: llm" in proc.stderr and "gpt-5.4-mini" in proc.stderr
    assert "LLM_API_BASE" in proc.stderr
    doc = json.loads(out.read_text())
    assert doc["config"]["classifier"] == "llm" and doc["config"]["llmModel"] == "gpt-5.4-mini"
    assert "LLM_API_BASE, LLM_MODEL, LLM_API_KEY set" in doc["config"]["classifierChosenBy"]
    header = md.read_text()
    assert "(llm classifier)" in header and "- Classifier: `llm` (`gpt-5.4-mini`" in header


def test_explicit_offline_stays_offline(tmp_path: Path, llm_server: LLMServer) -> None:
    """`--classifier offline` with the LLM_* variables set makes no LLM request."""
    cases = write_case_file(tmp_path / "cases.json")
    out = tmp_path / "r.json"
    env = {"LLM_API_BASE": llm_server.base_url, "LLM_MODEL": "gpt-5.4-mini"}
    args = [
        "--file",
        str(cases),
        "--classifier",
        "offline",
        "--no-progress",
        "--json-out",
        str(out),
    ]
    proc = _harness(args, env)
    assert proc.returncode == 0, proc.stderr
    assert llm_server.requests == []
    assert json.loads(out.read_text())["config"]["classifier"] == "offline"
    assert "classifier: offline — --classifier offline" in proc.stderr


@pytest.mark.parametrize(
    ("explicit", "env", "kind"),
    [
        (None, {}, "offline"),
        (None, {"LLM_MODEL": "m"}, "llm"),
        (None, {"LLM_API_KEY": "k"}, "llm"),
        ("offline", {"LLM_API_BASE": "http://x"}, "offline"),
        ("llm", {}, "llm"),
    ],
    ids=["nothing", "model-only", "key-only", "explicit-offline", "explicit-llm"],
)
def test_choose_classifier(explicit: str | None, env: dict[str, str], kind: str) -> None:
    """--classifier wins; otherwise any LLM_* variable means the LLM."""
    assert choose_classifier(explicit, env)[0] == kind  # type: ignore[arg-type]


def test_results_never_use_this_machines_learned_cache(tmp_path: Path) -> None:
    """The keyword cache is off in a run unless the config file names one."""
    assert base_config(None).keyword_cache_file is None
    plain = tmp_path / "c.json"
    plain.write_text(json.dumps({"llmModel": "m"}))
    assert base_config(str(plain)).keyword_cache_file is None
    named = tmp_path / "named.json"
    named.write_text(json.dumps({"keywordCacheFile": str(tmp_path / "kc.json")}))
    assert base_config(str(named)).keyword_cache_file == str(tmp_path / "kc.json")
