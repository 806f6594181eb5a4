"""Related words (resolver/_synonyms.py `related`, catalogs/related.json): a word a request says
that is no synonym of a tool's word but implies it ("rows" -> "sql", "pod" -> "kubernetes",
"lat/lng" -> "coordinates") adds that word to the query, weakly, for the tools without catalog
keywords; the target never adds its cues."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import pytest

import resolver._offline as offline
import resolver._synonyms as synonyms_module
from resolver import Resolver, ResolverConfig, ToolInfo, TurnRequest
from resolver._synonyms import related
from resolver._text import stem

TOOLS = [
    ToolInfo(name="warehouse__query", description="Run a read-only SQL query"),
    ToolInfo(name="sheets__row_counter", description="Count the rows of a spreadsheet"),
    ToolInfo(name="maps__reverse_geocode", description="Convert coordinates into an address"),
    ToolInfo(name="maps__elevation", description="Get the elevation of a place"),
    ToolInfo(name="k8s__get", description="Get Kubernetes resources by type"),
    ToolInfo(name="chat__post_message", description="Post a message to a channel"),
]


def scores(prompt: str) -> dict[str, float]:
    config = ResolverConfig(catalogOverridesFile=None, keywordCacheFile=None, coreTools=[])
    res = asyncio.run(Resolver(config).resolve(TurnRequest(prompt=prompt, tools=TOOLS)))
    return {c.name: c.score for c in res.candidates}


@pytest.fixture
def off(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(offline, "RELATED", False)


def test_the_table_ships_one_word_targets_with_their_cues() -> None:
    raw = json.loads((Path(__file__).parents[1] / "catalogs" / "related.json").read_text())
    entries = raw["related"]
    assert len(entries) >= 50
    for entry in entries:
        assert len(entry["target"].split()) == 1 and entry["target"] == entry["target"].lower()
        assert 1 <= len(entry["cues"]) <= synonyms_module.MAX_CUES, entry
    table = related()
    assert table is not None and stem("sql") in table.targets


@pytest.mark.parametrize(
    ("prompt", "tool"),
    [
        ("how many pending orders, grouped by the status columns?", "warehouse__query"),
        ("what address is at lat 35.66 lng 139.75", "maps__reverse_geocode"),
        ("which pods in the payments namespace keep restarting", "k8s__get"),
        # everyday words (the supplement, `_meta.supplementEveryday`)
        ("is the walk up to the cabin very hilly?", "maps__elevation"),
        # implied steps (`_meta.supplementSteps`)
        ("give the team a shout out for shipping the beta", "chat__post_message"),
    ],
    ids=[
        "rows-to-sql",
        "lat-lng-to-coordinates",
        "pod-to-kubernetes",
        "hilly-to-elevation",
        "shout-out-to-post",
    ],
)
def test_a_cue_reaches_the_tool_that_says_its_target(
    monkeypatch: pytest.MonkeyPatch, prompt: str, tool: str
) -> None:
    with_related = scores(prompt)
    assert with_related.get(tool, 0.0) > 0.0
    # the cue's evidence is what found it
    monkeypatch.setattr(offline, "RELATED", False)
    assert scores(prompt).get(tool, 0.0) < with_related[tool]


def test_the_target_does_not_bring_its_cues(off: None) -> None:
    """'sql' is no evidence for a tool about rows: the table is directional."""
    plain = scores("run this sql for me")
    offline.RELATED = True
    assert scores("run this sql for me").get("sheets__row_counter", 0.0) == plain.get(
        "sheets__row_counter", 0.0
    )


def test_a_related_word_counts_less_than_the_word_itself() -> None:
    said = scores("find the place at these coordinates")["maps__reverse_geocode"]
    implied = scores("find the place at this lat lng")["maps__reverse_geocode"]
    assert 0.0 < implied < said


def test_a_malformed_table_is_read_as_far_as_it_is_well_formed(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    table = {
        "related": [
            "not an entry",
            {"target": "spreadsheet rows", "cues": ["x"]},
            {"target": 7, "cues": ["x"]},
            {"target": "sql", "cues": "rows"},
            {"target": "sql", "cues": ["rows", 3, "", "sql statement", "left join"]},
        ]
    }
    monkeypatch.setattr(synonyms_module, "shipped_table", lambda name: table)
    related.cache_clear()
    try:
        loaded = related()
        assert loaded is not None
        assert dict(loaded.single) == {stem("rows"): ((stem("sql"), 1.0),)}
        assert set(loaded.phrases) == {("left", "join")}  # a cue holding its target: left out
    finally:
        related.cache_clear()


def test_no_table_no_related_words(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(synonyms_module, "shipped_table", lambda name: None)
    related.cache_clear()
    try:
        assert related() is None
    finally:
        related.cache_clear()
