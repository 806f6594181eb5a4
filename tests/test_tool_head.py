"""The offline classifier's tool head (character n-grams per tool): it adds the tools a request
implies without a word the catalogs hold, only adds, reads only surfaces of the tools it was
trained on, and reads a bounded part of any prompt."""

from __future__ import annotations

import asyncio
import json
import math
from pathlib import Path
from typing import Any

import pytest

from resolver import Resolver, ResolverConfig, ToolInfo, TurnRequest
from resolver import _offline as offline_mod
from resolver._surface import default_surface
from resolver._tool_head import MAX_ADDED, READ_CHARS, ToolHead, parse, tool_head

ROOT = Path(__file__).resolve().parents[1]

# Written for these tests (not benchmark cases, not training requests): each says what it needs
# without a word the catalogs hold for the tool the head adds.
IMPLIED = (
    (
        "I'm up on a ladder fixing the gutter, what's the wind doing in Galway this afternoon?",
        "tts",
    ),
    ("ich sitze im Auto, wie wird das Wetter morgen in Graz?", "tts"),
    # the head's first version also read "did the Lakers win last night" as a web search (0.16);
    # with the second training file it reads 0.089, under the threshold: an illustration moved
    ("is the ferry to Bergen still running in this storm?", "web_search"),
)
SOCIAL = (
    "haha that screenshot you sent me earlier was hilarious",
    "you're the best, thanks a lot",
)


def resolve(prompt: str, tools: list[ToolInfo] | None = None, **config: object) -> Any:
    cfg = ResolverConfig(catalogOverridesFile=None, keywordCacheFile=None, **config)
    request = TurnRequest(prompt=prompt, tools=tools or default_surface())
    return asyncio.run(Resolver(cfg).resolve(request))


def allowed(prompt: str, tools: list[ToolInfo] | None = None, **config: object) -> set[str]:
    res = resolve(prompt, tools, **config)
    assert res.tools_allow is not None
    return set(res.tools_allow)


def test_the_shipped_head_knows_the_default_tools_and_was_trained_on_the_training_files() -> None:
    head = tool_head()
    assert head is not None
    assert set(head.tools) == {t.name for t in default_surface()}
    assert 0.0 < head.threshold < 0.5
    meta = json.loads((ROOT / "catalogs/tool-ngrams.json").read_text())["_meta"]
    files = ["benchmark/training/tool-requests.json", "benchmark/training/tool-requests-2.json"]
    assert meta["trainedOn"] == files
    by_file = [json.loads((ROOT / f).read_text())["examples"] for f in files]
    examples = [e for file in by_file for e in file]
    assert meta["examples"] == len(examples)
    assert len({e["text"] for e in examples}) == len(examples)  # no request twice
    for file in by_file:
        assert {t for e in file for t in e["tools"]} == set(head.tools)


@pytest.mark.parametrize(("prompt", "tool"), IMPLIED)
def test_the_head_adds_the_tool_a_request_implies(prompt: str, tool: str) -> None:
    """Off (`offlineToolHead: false`) the turn lacks the tool; on, it has it, and every tool it
    had before."""
    off = allowed(prompt, offlineToolHead=False)
    on = allowed(prompt)
    assert tool not in off
    assert tool in on
    assert off <= on
    assert len(on - off) <= MAX_ADDED
    assert "the tool head adds" in resolve(prompt).reasoning


@pytest.mark.parametrize("prompt", SOCIAL)
def test_a_conversation_turn_gets_nothing_from_the_head(prompt: str) -> None:
    core = set(ResolverConfig().core_tools)
    assert allowed(prompt) == core


def test_the_head_never_adds_a_tool_the_host_did_not_offer() -> None:
    prompt, tool = IMPLIED[0]
    tools = [t for t in default_surface() if t.name != tool]
    kept = allowed(prompt, tools)
    assert tool not in kept
    assert kept <= {t.name for t in tools}


def test_on_a_surface_mostly_of_tools_it_never_saw_the_head_does_not_read() -> None:
    """An MCP-heavy host: a server's own tools may serve the need; the head would only add."""
    prompt, _tool = IMPLIED[0]
    extra = [
        ToolInfo(name=f"srv__tool_{i}", description=f"Server tool number {i} for records")
        for i in range(60)
    ]
    tools = default_surface() + extra
    assert allowed(prompt, tools) == allowed(prompt, tools, offlineToolHead=False)
    head = tool_head()
    assert head is not None
    assert head.reads([t.name for t in default_surface()])
    assert not head.reads([t.name for t in tools])
    assert not head.reads([])


def test_without_the_shipped_head_the_classifier_works_as_before(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    prompt, _tool = IMPLIED[0]
    off = allowed(prompt, offlineToolHead=False)
    monkeypatch.setattr(offline_mod, "tool_head", lambda: None)
    assert allowed(prompt) == off


def test_the_head_reads_a_bounded_part_of_any_prompt() -> None:
    head = tool_head()
    assert head is not None
    clauses = offline_mod.clauses_of
    short = "look up the ferry times to Naxos and text them to Eleni"
    parts = head.parts(short, clauses(short))
    assert parts[0] == short and len(parts) >= 3  # the prompt whole, then each clause
    assert head.parts("wake me at six", clauses("wake me at six")) == ["wake me at six"]
    long = ", then ".join(
        f"check the status of build number {i} on the staging box" for i in range(40)
    )
    parts = head.parts(long, clauses(long))
    assert sum(map(len, parts)) <= READ_CHARS
    huge = "ab " * 50_000
    assert head.parts(huge, clauses(huge)) == [huge[:READ_CHARS]]
    assert len(head.picks(head.parts(long, clauses(long)), head.tools)) <= MAX_ADDED
    assert head.picks(["", "   "], head.tools) == []


def test_clauses_counted_from_the_prompts_ngrams_score_as_read_alone() -> None:
    """The head finds the prompt's n-grams once and counts each clause from them: the same
    log-odds as each part read on its own, for a prompt read whole with its clauses and for a
    long one read by its clauses only (written for this test, not a benchmark case)."""
    head = tool_head()
    assert head is not None
    for prompt in (
        "look up the ferry times to Naxos, then text them to Eleni and put the 9:15 one in "
        "my calendar",
        "so the week was rough, the boiler broke again, my brother wants the car on Friday, "
        "the kids have a school trip, and the dog ate a sock; anyway, can you check tomorrow's "
        "forecast for Utrecht, then remind me at 7 to take the bins out, and also find a "
        "plumber open on Saturday near Lombok, and read me the answer out loud",
    ):
        parts = head.parts(prompt, offline_mod.clauses_of(prompt))
        assert len(parts) >= 3
        together = head._logits(parts, prompt)
        alone = [head.logits(part) for part in parts]
        assert together is not None and all(z is not None for z in alone)
        for row, z in zip(together, alone, strict=True):
            assert max(abs(float(a) - float(b)) for a, b in zip(row, z, strict=True)) < 1e-4
        assert head.picks(parts, head.tools, prompt) == head.picks(parts, head.tools)


def small_head(**changes: object) -> dict[str, object]:
    data: dict[str, object] = {
        "format": "resolver-tool-ngrams/1",
        "maxN": 3,
        "threshold": 0.5,
        "tools": ["alpha", "beta"],
        "biases": [-2.0, -2.0],
        "ngrams": {"tid": [1.5, 0, 9.0], "ide": [1.5, 1, 9.0], "wav": [2.0]},
    }
    data.update(changes)
    return data


def test_a_small_head_reads_as_its_weights_say() -> None:
    head = parse(small_head())
    assert isinstance(head, ToolHead)
    assert head.picks(["tide"], ["alpha", "beta"]) == ["alpha", "beta"]  # both n-grams in "tide"
    assert head.picks(["tide"], ["beta"]) == ["beta"]
    z = head.logits("tid")
    assert z is not None
    assert math.isclose(float(z[0]), 7.0, rel_tol=1e-5)  # one known n-gram: unit length
    assert head.logits("zzz") is None  # no known n-gram


@pytest.mark.parametrize(
    "changes",
    [
        {"format": "resolver-tool-ngrams/0"},
        {"threshold": 1.0},
        {"threshold": "high"},
        {"biases": [0.0]},
        {"tools": []},
        {"maxN": 0},
        {"ngrams": {}},
        {"ngrams": {"tid": [1.5, 2, 1.0]}},  # no such tool
        {"ngrams": {"tid": [1.5, -1, 1.0]}},
        {"ngrams": {"tid": [float("nan"), 0, 1.0]}},
        {"ngrams": {"tid": [1.5, 0, float("inf")]}},
        {"ngrams": {"tid": "x"}},
        {"ngrams": ["tid"]},
    ],
)
def test_a_malformed_head_is_not_used(changes: dict[str, object]) -> None:
    assert parse(small_head(**changes)) is None


def test_a_missing_key_or_another_type_is_not_a_head() -> None:
    data = small_head()
    del data["tools"]
    assert parse(data) is None
    assert parse([1, 2]) is None
    assert parse(None) is None


def test_a_multi_part_request_gets_the_heads_best_guess_under_its_threshold() -> None:
    """Under the threshold (0.5 here), a tool at `LOW_BAR` or more is added in a request of two
    or more parts when no tool reaches the threshold, the most probable only; a one-part
    request gets nothing under the threshold."""
    from resolver._tool_head import LOW_BAR

    # "ide" alone: beta at sigmoid(-2 + 1.5) = 0.38, alpha at sigmoid(-3) = 0.047
    head = parse(small_head(ngrams={"ide": [1.0, 1, 1.5]}, biases=[-3.0, -2.0]))
    assert isinstance(head, ToolHead) and LOW_BAR < 0.38 and LOW_BAR > 0.047
    assert head.picks(["ide"], ["alpha", "beta"]) == []  # one part: the threshold only
    assert head.picks(["ide", "ide"], ["alpha", "beta"]) == ["beta"]
    assert head.picks(["ide", "ide"], ["alpha"]) == []  # alpha under the low bar
    # a tool over the threshold is added as before, and nothing under it beside it
    over = parse(small_head())
    assert isinstance(over, ToolHead)
    assert over.picks(["tid", "tid"], ["alpha", "beta"]) == ["alpha"]
