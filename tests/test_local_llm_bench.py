"""benchmark/local-llm.py without a model server: the rival row at the LLM's surface (`padded`,
`arm`, `rankings`) and the shared config file (`shared_settings`)."""

from __future__ import annotations

import importlib.util
import json
import re
import sys
from pathlib import Path
from types import ModuleType

import pytest

from resolver import ResolverConfig
from resolver._types import Resolution
from resolver.bench.cases import load_case_file
from resolver.bench.metrics import CaseOutcome, score_case

REPO = Path(__file__).resolve().parent.parent


@pytest.fixture(scope="module")
def bench() -> ModuleType:
    spec = importlib.util.spec_from_file_location(
        "local_llm_bench", REPO / "benchmark" / "local-llm.py"
    )
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module


def _outcome(case_id: str, required: tuple[str, ...], surface: tuple[str, ...]) -> CaseOutcome:
    return CaseOutcome(
        id=case_id,
        category="c",
        cluster="c",
        required=required,
        surface=surface,
        candidates=10,
        score=score_case(required, surface),
        latency_ms=1.0,
        source="offline",
    )


def test_padded_grows_each_surface_by_its_own_next_best_to_the_target_mean(
    bench: ModuleType,
) -> None:
    rows = [
        (_outcome("a", ("x", "n1"), ("x",)), ["n1", "n2", "n3"]),
        (_outcome("b", ("y", "m2"), ("y",)), ["m1", "m2"]),
        (_outcome("c", ("z",), ("z",)), []),
    ]
    same = bench.padded(rows, 1.0, frozenset())
    assert same["must_include_accuracy"]["hits"] == 1  # only "c" holds all it needs
    assert same["mean_surface"] == pytest.approx(1.0)
    # 1.0 -> 2.0: three extra tools, one per case; "a" gains n1 (its next best)
    one = bench.padded(rows, 2.0, frozenset())
    assert one["must_include_accuracy"]["hits"] == 2
    # "c" has no scored tool left: its share is lost, not moved to another case
    assert one["mean_surface"] == pytest.approx(5 / 3, abs=1e-3)  # summaries round
    # 2.67 -> 5 extra: two each, the larger shares first in file order; "b" reaches m2
    more = bench.padded(rows, 8 / 3, frozenset())
    assert more["must_include_accuracy"]["hits"] == 3


def test_padded_never_shrinks_a_surface(bench: ModuleType) -> None:
    rows = [(_outcome("a", ("x",), ("x", "k")), ["n1"])]
    assert bench.padded(rows, 1.0, frozenset())["mean_surface"] == pytest.approx(2.0)


def test_rankings_leave_the_surface_out_best_first(bench: ModuleType, tmp_path: Path) -> None:
    path = tmp_path / "cases.json"  # no tools: the default OpenClaw surface
    path.write_text(
        json.dumps(
            {
                "name": "one",
                "source": "written for the test",
                "license": "Apache-2.0",
                "cases": [
                    {
                        "id": "t1",
                        "prompt": "remind me tomorrow at 9 to call mom",
                        "must_include": ["automations"],
                        "category": "single",
                    }
                ],
            }
        )
    )
    cases = load_case_file(path)
    config = ResolverConfig.model_validate(
        {"catalogOverridesFile": None, "keywordCacheFile": None, "reuse": {"enabled": False}}
    )
    resolutions: dict[str, Resolution] = {}
    _, outcomes = bench.arm(cases, config, llm=False, resolutions=resolutions)
    [(outcome, ranked)] = bench.rankings(outcomes, resolutions)
    assert "automations" in outcome.surface
    assert ranked and not set(ranked) & set(outcome.surface)


def test_shared_settings_name_the_file_on_a_bad_config(bench: ModuleType, tmp_path: Path) -> None:
    assert bench.shared_settings(None) == {}
    good = tmp_path / "good.json"
    good.write_text(json.dumps({"offlineSemantic": True}))
    assert bench.shared_settings(str(good)) == {"offlineSemantic": True}
    for name, text in (("list.json", "[1]"), ("broken.json", "{"), ("key.json", '{"nope": 1}')):
        bad = tmp_path / name
        bad.write_text(text)
        with pytest.raises(SystemExit, match=re.escape(name)):
            bench.shared_settings(str(bad))
    with pytest.raises(SystemExit, match=re.escape("missing.json")):
        bench.shared_settings(str(tmp_path / "missing.json"))
