"""The tuning loop end to end: shadow telemetry -> recall -> propose (gated) -> apply -> reload."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import jsonschema
import orjson
import pytest
from tuning_support import CUSTOM_TOOLS, HELD_OUT, TRAINING, host_tools, read_lines
from tuning_support import record_shadow_telemetry as record

from resolver import Resolver, ResolverConfig, ToolInfo, TurnRequest
from resolver._data import data_dir
from resolver.cli import main
from resolver.tuning import load_proposal

REPO = Path(__file__).resolve().parent.parent
CURATED = REPO / "benchmark" / "benchmark-v1-curated.json"
MARGINS = REPO / "benchmark" / "margins-default.json"
HAND_WRITTEN = {
    "flight_status": "Look up a flight's status, delays and gate by flight number.",
}


@pytest.fixture(scope="module")
def recorded(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    """Shadow telemetry written by the real sidecar (one child process for the module)."""
    root = tmp_path_factory.mktemp("shadow")
    telemetry = root / "telemetry.jsonl"
    config = {
        "telemetryFile": str(telemetry),
        "shadowSampleRate": 1,
        "catalogOverridesFile": str(root / "unused-catalog.json"),
    }
    answers = record(config, root)
    regression = orjson.loads(CURATED.read_bytes())
    regression["cases"] = regression["cases"][:60]  # a subset keeps the test fast
    (root / "regression.json").write_bytes(orjson.dumps(regression))
    (root / "tools.json").write_text(json.dumps(host_tools()))
    return {"telemetry": telemetry, "answers": answers, "root": root}


@pytest.fixture
def deployment(tmp_path: Path, recorded: dict[str, Any]) -> dict[str, Path]:
    """A config whose override file holds one hand-written description and a _meta note."""
    overrides = tmp_path / "resolver-catalog.json"
    overrides.write_text(
        json.dumps(
            {
                "schemaVersion": 1,
                "tools": HAND_WRITTEN,
                "_meta": {"note": "written by hand"},
                "groups": {"travel": ["flight_status"]},
            },
            indent=2,
        )
    )
    config = tmp_path / "config.json"
    config.write_text(json.dumps({"catalogOverridesFile": str(overrides)}))
    return {"overrides": overrides, "config": config, "out": tmp_path / "proposals"}


def _propose(
    recorded: dict[str, Any], deployment: dict[str, Path], margins: Path = MARGINS
) -> Path:
    root = recorded["root"]
    code = main(
        [
            "tune",
            "propose",
            "--telemetry",
            str(recorded["telemetry"]),
            "--out",
            str(deployment["out"]),
            "--cases",
            str(root / "regression.json"),
            "--margins",
            str(margins),
            "--tools-file",
            str(root / "tools.json"),
            "--config",
            str(deployment["config"]),
        ]
    )
    assert code == 0
    (found,) = deployment["out"].glob("*-tuning.json")
    return found


def _entry_id(proposal: Path, tool: str) -> str:
    return next(e.id for e in load_proposal(proposal).entries if e.tool == tool)


def _apply(proposal: Path, deployment: dict[str, Path], *extra: str) -> int:
    return main(["tune", "apply", str(proposal), "--config", str(deployment["config"]), *extra])


def _allowed(resolver: Resolver, prompt: str) -> list[str]:
    tools = [ToolInfo(**t) for t in host_tools()]
    resolution = resolver.resolve_sync(TurnRequest(prompt=prompt, tools=tools))
    assert resolution.tools_allow is not None
    return resolution.tools_allow


def test_sidecar_shadow_turns_abstain_and_record_used_tools(recorded: dict[str, Any]) -> None:
    """Every shadow turn answers abstain to the host, and its one line carries what would have
    been allowed plus the tool calls the host reported for that run."""
    answers = recorded["answers"]
    lines = {line.get("runId"): line for line in read_lines(recorded["telemetry"])}
    for i, (_, used) in enumerate(TRAINING, start=1):
        result = answers[f"r{i}"]["result"]
        assert result["toolsAllow"] is None and result["source"] == "shadow"
        assert "shadow_mode" in result["reasonCodes"]
        line = lines[f"r{i}"]
        assert line["source"] == "shadow" and line["toolsAllow"] is None
        assert line["shadowToolsAllow"] and line["usedTools"] == used
    assert len(read_lines(recorded["telemetry"])) == len(TRAINING) + 1  # one line per turn
    assert "ledger_post" not in lines["r1"]["shadowToolsAllow"]  # the miss is real


def test_whole_loop_approve_one_entry_and_the_running_resolver_picks_it_up(
    recorded: dict[str, Any], deployment: dict[str, Path], capsys: pytest.CaptureFixture[str]
) -> None:
    """Shadow misses -> a proposal whose entries pass the gate -> approving one entry changes
    the override file by exactly that entry -> a live resolver now surfaces the tool for
    prompts that were never in the telemetry."""
    overrides = deployment["overrides"]
    config = ResolverConfig(catalogOverridesFile=str(overrides))
    live = Resolver(config, llm=None)
    assert all("ledger_post" not in _allowed(live, p) for p in HELD_OUT)

    before = json.loads(overrides.read_text())
    proposal_path = _propose(recorded, deployment)
    proposal = load_proposal(proposal_path)
    assert proposal_path.with_suffix(".md").exists()
    assert json.loads(overrides.read_text()) == before  # propose never writes the catalog
    tools = {e.tool: e for e in proposal.entries}
    assert {"ledger_post", "crm_lookup"} <= set(tools)
    assert all(e.gate.passed for e in proposal.entries)
    ledger = tools["ledger_post"]
    assert (
        ledger.evidence.misses == 4
        and ledger.evidence.shadow_turns == 9
        and ledger.current == CUSTOM_TOOLS[0]["description"]
    )
    assert ledger.gate.failure_set.treatment_hits > ledger.gate.failure_set.control_hits
    assert ledger.gate.regression_gate["pass"] is True

    capsys.readouterr()
    assert _apply(proposal_path, deployment, "--approve", ledger.id) == 0
    assert "a running resolver picks the change up" in capsys.readouterr().out
    after = json.loads(overrides.read_text())
    assert after["tools"] == {**HAND_WRITTEN, "ledger_post": ledger.proposed}
    assert after["groups"] == before["groups"]
    meta = after.pop("_meta")
    assert meta["note"] == "written by hand"
    assert meta["proposalId"] == proposal.proposal_id and meta["entryIds"] == [ledger.id]
    assert meta["lastModifiedBy"] and meta["lastModifiedAt"].endswith("Z")
    before.pop("_meta")
    after["tools"].pop("ledger_post")
    before["tools"].pop("ledger_post", None)
    assert after == before  # exactly that entry changed
    (backup,) = overrides.parent.glob("resolver-catalog.json.*.bak")
    assert json.loads(backup.read_text())["tools"] == HAND_WRITTEN

    for prompt in [TRAINING[0][0], *HELD_OUT]:
        assert "ledger_post" in _allowed(live, prompt)  # reloaded without a restart
    assert "crm_lookup" not in _allowed(live, TRAINING[4][0])  # e2 was not approved


def test_an_unapproved_proposal_changes_nothing(
    recorded: dict[str, Any], deployment: dict[str, Path], capsys: pytest.CaptureFixture[str]
) -> None:
    """Proposing writes only the proposal files; an unknown id or a dry run writes nothing."""
    overrides = deployment["overrides"]
    raw = overrides.read_bytes()
    proposal = _propose(recorded, deployment)
    assert overrides.read_bytes() == raw
    assert _apply(proposal, deployment, "--approve", "e99") == 2
    assert "unknown entry id" in capsys.readouterr().err
    entry = _entry_id(proposal, "ledger_post")
    assert _apply(proposal, deployment, "--approve", entry, "--dry-run") == 0
    out = capsys.readouterr().out
    assert '+    "ledger_post": "Record a transaction' in out and "not written" in out
    assert overrides.read_bytes() == raw
    assert sorted(p.name for p in overrides.parent.iterdir()) == [
        "config.json",
        "proposals",
        "resolver-catalog.json",
    ]


def test_a_proposal_that_fails_validation_is_marked_and_needs_force(
    recorded: dict[str, Any],
    deployment: dict[str, Path],
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
) -> None:
    """Margins frozen with a surface-reduction claim: a description addition cannot shrink
    the surface, so every entry fails its gate; apply refuses it unless --force."""
    strict = json.loads(MARGINS.read_text())
    strict["claimSurfaceReduction"] = True
    margins = tmp_path / "margins-claim-reduction.json"
    margins.write_text(json.dumps(strict))
    proposal = _propose(recorded, deployment, margins)
    entries = load_proposal(proposal).entries
    assert entries and not any(e.gate.passed for e in entries)
    assert any("surface reduction claimed" in c for c in entries[0].gate.checks)
    assert "FAIL" in proposal.with_suffix(".md").read_text()
    raw = deployment["overrides"].read_bytes()
    entry = _entry_id(proposal, "ledger_post")
    assert _apply(proposal, deployment, "--approve", entry) == 2
    assert "validation gate failed" in capsys.readouterr().err
    assert deployment["overrides"].read_bytes() == raw
    assert _apply(proposal, deployment, "--approve", entry, "--force") == 0
    assert "ledger_post" in json.loads(deployment["overrides"].read_text())["tools"]


def test_a_corrupt_override_file_is_never_clobbered(
    recorded: dict[str, Any], deployment: dict[str, Path], capsys: pytest.CaptureFixture[str]
) -> None:
    """Invalid JSON or an invalid catalog: apply refuses (naming the file), even with --force."""
    proposal = _propose(recorded, deployment)
    entry = _entry_id(proposal, "ledger_post")
    overrides = deployment["overrides"]
    for broken in (b'{"schemaVersion": 1, "tools": {"a": "b",}', b'{"tools": {}}'):
        overrides.write_bytes(broken)
        assert _apply(proposal, deployment, "--approve", entry, "--force") == 2
        err = capsys.readouterr().err
        assert str(overrides) in err and "never overwritten while invalid" in err
        assert overrides.read_bytes() == broken
    assert not list(overrides.parent.glob("*.bak"))


def test_a_hand_edited_tool_is_not_overwritten_without_force(
    recorded: dict[str, Any], deployment: dict[str, Path], capsys: pytest.CaptureFixture[str]
) -> None:
    """A tool whose description changed since the proposal was made is refused; --force
    overwrites it and keeps the hand edit in the backup."""
    proposal = _propose(recorded, deployment)
    entry = _entry_id(proposal, "ledger_post")
    overrides = deployment["overrides"]
    edited = json.loads(overrides.read_text())
    edited["tools"]["ledger_post"] = "Post a bookkeeping entry (edited by the admin)."
    overrides.write_text(json.dumps(edited))
    raw = overrides.read_bytes()
    assert _apply(proposal, deployment, "--approve", entry) == 2
    assert "edited since" in capsys.readouterr().err
    assert overrides.read_bytes() == raw
    assert _apply(proposal, deployment, "--approve", entry, "--force") == 0
    (backup,) = overrides.parent.glob("*.bak")
    assert backup.read_bytes() == raw


def test_the_proposal_file_matches_its_shipped_schema(
    recorded: dict[str, Any], deployment: dict[str, Path]
) -> None:
    """The written proposal validates against schemas/proposal.v1.json."""
    proposal = _propose(recorded, deployment)
    schema = json.loads((data_dir("schemas") / "proposal.v1.json").read_text())
    jsonschema.validate(json.loads(proposal.read_text()), schema)


def test_cache_learn_and_generate_cases_read_the_shadow_lines(
    recorded: dict[str, Any], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """`resolver cache learn` learns from the lines' usedTools and `resolver bench generate`
    puts the missed shadow turns in category miss (judged by shadowToolsAllow)."""
    telemetry = str(recorded["telemetry"])
    assert main(["cache", "learn", telemetry, "--file", str(tmp_path / "cache.json")]) == 0
    assert "9 with usedTools" in capsys.readouterr().out
    out = tmp_path / "cases.json"
    assert main(["bench", "generate", telemetry, "--out", str(out)]) == 0
    cases = {c["prompt"]: c for c in json.loads(out.read_text())["cases"]}
    assert cases[TRAINING[0][0]]["category"] == "miss"
    assert cases[TRAINING[0][0]]["must_include"] == ["ledger_post"]
    assert cases[TRAINING[8][0]]["category"] == "hit"


def test_apply_creates_a_missing_override_file(
    recorded: dict[str, Any], deployment: dict[str, Path]
) -> None:
    """No override file yet: apply creates a valid catalog holding only the approved entry."""
    proposal = _propose(recorded, deployment)
    deployment["overrides"].unlink()
    entry = load_proposal(proposal).entries[0]
    assert _apply(proposal, deployment, "--approve", entry.id) == 0
    data = json.loads(deployment["overrides"].read_text())
    assert data["schemaVersion"] == 1 and data["tools"] == {entry.tool: entry.proposed}
    assert data["_meta"]["entryIds"] == [entry.id]
    assert not list(deployment["overrides"].parent.glob("*.bak"))
