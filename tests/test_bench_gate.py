"""resolver.bench.gate: frozen margins, cluster bootstrap, pass/fail on the real pipeline."""

from __future__ import annotations

import hashlib
import json
import shutil
from pathlib import Path

import pytest
from bench_support import TOOLS, write_case_file

from resolver import ConfigError
from resolver.bench.gate import load_margins
from resolver.cli import main

REPO = Path(__file__).resolve().parent.parent


def margins(path: Path, *, claim: bool = False) -> Path:
    path.write_text(
        json.dumps(
            {
                "schemaVersion": 1,
                "margins": {"must_include_accuracy": 0.05, "avg_recall": 0.05},
                "claimSurfaceReduction": claim,
                "bootstrap": {"reps": 500, "seed": 11},
            }
        )
    )
    return path


def configs(tmp_path: Path) -> tuple[Path, Path]:
    """A control (defaults) and a treatment whose override catalog scrambles descriptions."""
    names = [n for n, _ in TOOLS]
    rotated = names[1:] + names[:1]
    override = tmp_path / "scrambled-catalog.json"
    override.write_text(
        json.dumps(
            {
                "schemaVersion": 1,
                "tools": {n: dict(TOOLS)[other] for n, other in zip(names, rotated, strict=True)},
            }
        )
    )
    control = tmp_path / "control.json"
    control.write_text(json.dumps({"catalogOverridesFile": None}))
    treatment = tmp_path / "treatment.json"
    treatment.write_text(json.dumps({"catalogOverridesFile": str(override)}))
    return control, treatment


def test_treatment_that_drops_recall_fails(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Misleading override descriptions lose recall beyond the margin: exit 1, FAIL."""
    cases = write_case_file(tmp_path / "cases.json")
    control, treatment = configs(tmp_path)
    m = margins(tmp_path / "m.json")
    out = tmp_path / "gate.json"
    code = main(
        [
            "bench",
            "gate",
            "--file",
            str(cases),
            "--control",
            str(control),
            "--treatment",
            str(treatment),
            "--margins",
            str(m),
            "--json-out",
            str(out),
            "--no-progress",
        ]
    )
    assert code == 1
    doc = json.loads(out.read_text())
    assert doc["gate"]["pass"] is False
    recall = doc["gate"]["differences"]["avg_recall"]
    assert recall["pass"] is False and recall["ci95"][0] < -0.05
    assert (
        doc["treatment"]["metrics"]["avg_recall"]["value"]
        < doc["control"]["metrics"]["avg_recall"]["value"]
    )
    assert doc["margins"]["sha256"] == hashlib.sha256(m.read_bytes()).hexdigest()
    assert doc["gate"]["clusters"] == 12
    assert "# Gate: FAIL" in capsys.readouterr().out


def test_identical_configs_pass_unless_a_reduction_is_claimed(tmp_path: Path) -> None:
    """Control vs itself is non-inferior; claiming a surface reduction it lacks fails."""
    cases = write_case_file(tmp_path / "cases.json")
    control, _ = configs(tmp_path)
    args = [
        "bench",
        "gate",
        "--file",
        str(cases),
        "--control",
        str(control),
        "--treatment",
        str(control),
        "--no-progress",
    ]
    assert main([*args, "--margins", str(margins(tmp_path / "a.json"))]) == 0
    out = tmp_path / "claimed.json"
    claimed = margins(tmp_path / "b.json", claim=True)
    assert main([*args, "--margins", str(claimed), "--json-out", str(out)]) == 1
    surface = json.loads(out.read_text())["gate"]["differences"]["mean_surface"]
    assert surface["ci95"] == [0.0, 0.0] and surface["pass"] is False


def test_few_clusters_are_flagged(tmp_path: Path) -> None:
    """Without cluster fields the categories are the clusters; fewer than 10 draw a warning."""
    cases = write_case_file(tmp_path / "cases.json", clusters=False)
    control, _ = configs(tmp_path)
    out = tmp_path / "g.json"
    main(
        [
            "bench",
            "gate",
            "--file",
            str(cases),
            "--control",
            str(control),
            "--treatment",
            str(control),
            "--margins",
            str(margins(tmp_path / "m.json")),
            "--json-out",
            str(out),
            "--no-progress",
        ]
    )
    gate = json.loads(out.read_text())["gate"]
    assert gate["clusters"] == 2 and "unreliable" in gate["warning"]


def test_shipped_margins_file_is_valid(tmp_path: Path) -> None:
    """benchmark/margins-default.json loads; its hash is over the file's bytes."""
    copy = tmp_path / "m.json"
    shutil.copy(REPO / "benchmark" / "margins-default.json", copy)
    loaded, digest = load_margins(copy)
    assert loaded.margins.must_include_accuracy > 0
    assert digest == hashlib.sha256(copy.read_bytes()).hexdigest()


def test_bad_margins_name_the_file_and_key(tmp_path: Path) -> None:
    """A margins file with an unknown key is rejected with the key named."""
    bad = tmp_path / "bad.json"
    bad.write_text(
        json.dumps(
            {
                "schemaVersion": 1,
                "margins": {"must_include_accuracy": 0.1, "avg_recall": 0.1},
                "x": 1,
            }
        )
    )
    with pytest.raises(ConfigError, match=r"bad.json.*x"):
        load_margins(bad)
