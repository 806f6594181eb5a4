"""The ranked card (`resolver explain`, human and JSON) and top-K over it (filter vs backfill)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from resolver import (
    Candidate,
    Resolution,
    Resolver,
    ResolverConfig,
    TurnRequest,
    explain_data,
    top_k,
)
from resolver._surface import default_surface
from resolver.cli import main

PROMPT = (
    "search the web for flight prices and message the results to Anna on telegram, "
    "then remind me tomorrow"
)
"""A multi-domain prompt: web search, messaging, a reminder."""

DOMAIN_TOOLS = ("web_search", "message", "automations")


def reference(config: ResolverConfig, state: dict[str, object] | None = None) -> Resolution:
    """The same turn through the Python API, to compare the CLI's card against."""
    request = TurnRequest(prompt=PROMPT, tools=default_surface(), state=state)
    return Resolver(config).resolve_sync(request)


@pytest.fixture
def gated(tmp_path: Path) -> tuple[Path, Path]:
    """A config whose override file makes `message` require channel=telegram, and a state file
    saying channel=discord (so `message` is excluded)."""
    catalog = tmp_path / "catalog.json"
    catalog.write_text(
        json.dumps(
            {
                "schemaVersion": 1,
                "stateRequirements": {"message": {"channel": {"enum": ["telegram"]}}},
            }
        )
    )
    config = tmp_path / "config.json"
    config.write_text(json.dumps({"catalogOverridesFile": str(catalog)}))
    state = tmp_path / "state.json"
    state.write_text(json.dumps({"channel": "discord"}))
    return config, state


def table_rows(out: str) -> dict[str, list[str]]:
    """Rows of the printed table: tool name -> [rank, tool, score, kept, signals...]."""
    rows: dict[str, list[str]] = {}
    for line in out.splitlines():
        parts = line.split()
        if len(parts) >= 5 and parts[0].isdigit():
            rows[parts[1]] = parts
    return rows


def test_explain_human_output_for_a_multi_domain_prompt(
    capsys: pytest.CaptureFixture[str],
) -> None:
    """The card prints the summary, cut-off, below-cut-off count and ranked rows with signals."""
    assert main(["explain", PROMPT]) == 0
    out = capsys.readouterr().out
    res = reference(ResolverConfig())
    lines = out.splitlines()
    assert lines[0] == f"summary: {res.summary}"
    assert res.cutoff is not None
    assert f"cut-off: {res.cutoff:.3f}   below the cut-off: {res.below_cutoff}" in out
    rows = table_rows(out)
    ranked = [c.name for c in res.candidates]
    for tool in DOMAIN_TOOLS:
        rank, _, score, kept, signals = rows[tool][:5]
        assert int(rank) == ranked.index(tool) + 1
        assert kept == "yes" and signals == "classifier"
        # a clause's or a coverage pick may sit below the whole-prompt cut-off
        assert float(score) > 0
    core_rows = [r for r in rows.values() if r[4] == "core"]
    assert core_rows and all(r[3] == "yes" for r in core_rows)
    assert any(r[3] == "no" and r[4] == "-" for r in rows.values())
    assert "more below (--top 0 shows all)" in out
    assert "exclusions" not in out


def test_explain_json_is_the_ranked_card_as_data(capsys: pytest.CaptureFixture[str]) -> None:
    """--json gives rank, name, score, selected, signals per row, plus cut-off and summary."""
    assert main(["explain", PROMPT, "--json", "--top", "0"]) == 0
    data = json.loads(capsys.readouterr().out)
    res = reference(ResolverConfig())
    assert [r["name"] for r in data["ranked"]] == [c.name for c in res.candidates]
    assert [r["rank"] for r in data["ranked"]] == list(range(1, 55))
    assert data["notShown"] == 0 and data["availableTools"] == 54
    assert data["cutoff"] == res.cutoff and data["belowCutoff"] == res.below_cutoff
    assert data["summary"] == res.summary and data["exclusions"] == []
    by_name = {r["name"]: r for r in data["ranked"]}
    for tool in DOMAIN_TOOLS:
        assert by_name[tool]["selected"] and by_name[tool]["signals"] == ["classifier"]
    scores = [r["score"] for r in data["ranked"] if "classifier" in r["signals"]]
    assert scores == sorted(scores, reverse=True)
    assert sum(not r["selected"] for r in data["ranked"]) == data["belowCutoff"]
    assert all("description" not in r for r in data["ranked"])


def test_explain_shows_state_exclusions(
    gated: tuple[Path, Path], capsys: pytest.CaptureFixture[str]
) -> None:
    """With --state-file, an excluded tool keeps its rank, is marked OUT, and its reason shows."""
    config, state = gated
    assert main(["explain", PROMPT, "--config", str(config), "--state-file", str(state)]) == 0
    out = capsys.readouterr().out
    res = reference(
        ResolverConfig(catalogOverridesFile=str(config.parent / "catalog.json")),
        {"channel": "discord"},
    )
    rows = table_rows(out)
    # wanted by the classifier and as the companion of a kept conversations_* tool
    assert rows["message"][3] == "OUT"
    assert rows["message"][4:] == ["classifier,", "companion,", "state"]
    assert int(rows["message"][0]) == [c.name for c in res.candidates].index("message") + 1
    assert "exclusions (state_ineligible_excluded):" in out
    assert f"  message  channel: {res.exclusions[0].why}" in out
    assert "1 excluded by state (message)" in out.splitlines()[0]

    args = ["explain", PROMPT, "--config", str(config), "--state-file", str(state), "--json"]
    assert main(args) == 0
    data = json.loads(capsys.readouterr().out)
    assert data["exclusions"] == [
        {"tool": "message", "field": "channel", "why": res.exclusions[0].why}
    ]
    row = next(r for r in data["ranked"] if r["name"] == "message")
    assert row["selected"] is False and row["excluded"].startswith("channel: ")


@pytest.mark.parametrize(("top", "shown"), [("0", 54), ("3", 3)])
def test_explain_top_limits_rows(capsys: pytest.CaptureFixture[str], top: str, shown: int) -> None:
    """--top N prints the first N ranks (0: all)."""
    assert main(["explain", PROMPT, "--top", top]) == 0
    out = capsys.readouterr().out
    assert len(table_rows(out)) == shown
    assert ("more below" in out) == (shown < 54)


def test_explain_abstain(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """An abstaining turn says so instead of printing a table."""
    tools = tmp_path / "tools.json"
    tools.write_text("[]")
    assert main(["explain", "hello", "--tools-file", str(tools)]) == 0
    out = capsys.readouterr().out
    assert "abstain" in out and "empty_surface_abstain" in out and not table_rows(out)


def test_explain_bad_input_exits_2(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """A state file that is not a JSON object, or a negative --top, is refused with exit 2."""
    state = tmp_path / "state.json"
    state.write_text('["discord"]')
    assert main(["explain", PROMPT, "--state-file", str(state)]) == 2
    assert str(state) in capsys.readouterr().err
    with pytest.raises(SystemExit) as info:
        main(["explain", PROMPT, "--top", "-1"])
    assert info.value.code == 2


def test_resolve_accepts_a_state_file(
    gated: tuple[Path, Path], capsys: pytest.CaptureFixture[str]
) -> None:
    """`resolver resolve --state-file` applies the state; --json carries the exclusions."""
    config, state = gated
    args = ["resolve", PROMPT, "--config", str(config), "--state-file", str(state), "--json"]
    assert main(args) == 0
    data = json.loads(capsys.readouterr().out)
    assert "message" not in data["toolsAllow"]
    assert [e["tool"] for e in data["exclusions"]] == ["message"]


# ---------------------------------------------------------------- top-K


def test_backfill_preserves_global_rank_and_filter_keeps_top_k(
    gated: tuple[Path, Path],
) -> None:
    """On a real card: filter drops the excluded tool from the top K, backfill refills K."""
    config, _ = gated
    res = reference(
        ResolverConfig(catalogOverridesFile=str(config.parent / "catalog.json")),
        {"channel": "discord"},
    )
    ranked = [c.name for c in res.candidates]
    k = ranked.index("message") + 2  # the excluded tool sits inside the top K
    filtered = [c.name for c in top_k(res, k, "filter")]
    backfilled = [c.name for c in top_k(res, k, "backfill")]
    assert filtered == [n for n in ranked[:k] if n != "message"]
    assert len(filtered) == k - 1
    assert backfilled == [n for n in ranked if n != "message"][:k]
    assert len(backfilled) == k and backfilled[:-1] == filtered
    assert sorted(backfilled, key=ranked.index) == backfilled


def card(names: list[str], excluded: list[bool]) -> Resolution:
    """A resolution whose ranking is `names` (scores descending), some excluded."""
    return Resolution(
        tools_allow=[],
        source="offline",
        confidence=1.0,
        reason_codes=(),
        candidates=tuple(
            Candidate(
                name=n,
                score=float(len(names) - i),
                selected=False,
                excluded="f: missing" if x else None,
            )
            for i, (n, x) in enumerate(zip(names, excluded, strict=True))
        ),
    )


@given(
    flags=st.lists(st.booleans(), max_size=20),
    k=st.integers(min_value=0, max_value=25),
)
def test_top_k_modes_hold_for_any_ranking(flags: list[bool], k: int) -> None:
    """filter = top K minus ineligible; backfill = first K eligible; both keep global order."""
    names = [f"t{i}" for i in range(len(flags))]
    res = card(names, flags)
    eligible = [n for n, x in zip(names, flags, strict=True) if not x]
    filtered = [c.name for c in top_k(res, k, "filter")]
    backfilled = [c.name for c in top_k(res, k, "backfill")]
    assert backfilled == eligible[:k]
    assert len(backfilled) == min(k, len(eligible))
    assert filtered == [n for n in names[:k] if n in eligible]
    assert backfilled[: len(filtered)] == filtered
    assert all(c.excluded is None for c in top_k(res, k, "backfill"))


def test_top_k_rejects_negative_k() -> None:
    """A negative K is a caller bug: ValueError."""
    with pytest.raises(ValueError, match="k must be >= 0"):
        top_k(card(["a"], [False]), -1)


def test_explain_data_default_rows_cover_every_kept_or_excluded_tool() -> None:
    """By default the card shows every kept or excluded candidate and five more."""
    res = card([f"t{i}" for i in range(12)], [False] * 3 + [True] + [False] * 8)
    data = explain_data(res)
    assert [r["name"] for r in data["ranked"]] == [f"t{i}" for i in range(9)]
    assert data["notShown"] == 3
