"""resolver.bench.report: the terminal tables fit the terminal without cutting a cell."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from resolver._data import shipped_benchmark
from resolver.cli import main


@pytest.mark.parametrize("baseline", [[], ["--baseline", "bm25"]], ids=["resolver", "with-bm25"])
def test_bench_tables_at_80_columns_cut_nothing(
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
    baseline: list[str],
) -> None:
    """`resolver bench` on an 80-column terminal: no "…" in any cell, every category whole."""
    monkeypatch.setenv("COLUMNS", "80")
    cases = shipped_benchmark("benchmark-v1-curated.json")
    out = tmp_path / "r.json"
    args = ["bench", "--file", str(cases), "--no-progress", "--json-out", str(out), *baseline]
    assert main(args) == 0
    err = capsys.readouterr().err
    assert "…" not in err
    table_lines = [line for line in err.splitlines() if line[:1] in "┏┃┡│└"]
    assert table_lines and max(len(line) for line in table_lines) <= 80
    assert all(line.rstrip()[-1] in "┓┃┩│┘" for line in table_lines)  # nothing cropped
    for category in json.loads(out.read_text())["by_category"]:
        assert category in err
