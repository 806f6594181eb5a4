"""The lexical conversation head (character n-grams): the default install's way to give a turn
that needs no tool the core tools only, without taking tasks from the ones that do."""

from __future__ import annotations

import asyncio
import json
import math
from collections import Counter
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from resolver import Resolver, ResolverConfig, ToolInfo, TurnRequest, _offline
from resolver import _ngram_head as ngram_mod
from resolver._ngram_head import (
    MAX_CHARS,
    MAX_N,
    NgramConversation,
    NgramHead,
    Positions,
    Table,
    features,
    ngram_head,
    ngrams,
)
from resolver._surface import default_surface
from resolver._tool_head import tool_head

# Written for these tests (not benchmark cases): social turns that share a word with a default
# OpenClaw tool (screenshot, message, drafted, then) but ask for nothing.
SOCIAL = (
    "haha that screenshot you sent me earlier was hilarious",
    "you're the best, that message you drafted for my landlord worked perfectly",
    "ugh, monday again. coffee first, then we'll see",
)


def allowed(prompt: str, **config: object) -> set[str]:
    """The tools one default-surface turn keeps beyond the core ones."""
    cfg = ResolverConfig(catalogOverridesFile=None, keywordCacheFile=None, **config)
    resolver = Resolver(cfg)
    res = asyncio.run(resolver.resolve(TurnRequest(prompt=prompt, tools=default_surface())))
    assert res.tools_allow is not None
    return set(res.tools_allow) - set(cfg.core_tools)


def test_the_shipped_head_loads_with_a_threshold_chosen_for_at_most_one_percent_of_tasks() -> None:
    head = ngram_head()
    assert head is not None
    assert 0.5 <= head.threshold < 1.0
    meta = json.loads((Path(__file__).parents[1] / "catalogs/conversation-ngrams.json").read_text())
    assert meta["_meta"]["maxTaskLoss"] == 0.01
    assert all(path.startswith("benchmark/training/") for path in meta["_meta"]["trainedOn"])


@pytest.mark.parametrize("prompt", SOCIAL)
def test_a_social_turn_with_a_tools_word_gets_the_core_tools_only(prompt: str) -> None:
    """On by default; off (`offlineConversationHead: false`) the same turn gets the tools its
    words match, so the head is what empties it."""
    assert allowed(prompt) == set()
    assert allowed(prompt, offlineConversationHead=False)


@pytest.mark.parametrize(
    ("prompt", "tool"),
    [
        ("thanks so much! can you remind me tomorrow at 9 to call the dentist", "automations"),
        ("lol you're the best. what's the weather in Lisbon right now?", "web_search"),
        ("haha love it, now send that screenshot to Ana on WhatsApp", "message"),
        ("gracias!! recuérdame mañana a las 8 llamar al banco", "automations"),
    ],
)
def test_a_task_said_in_a_friendly_way_keeps_its_tool(prompt: str, tool: str) -> None:
    assert tool in allowed(prompt)


def test_a_value_keeps_a_social_sounding_turn_a_task(monkeypatch: pytest.MonkeyPatch) -> None:
    """The head's exceptions hold for the lexical head too: a file name is a value a tool acts
    on, so the turn keeps the tools its words match."""
    prompt = "haha you are the best, thanks for retro.md"
    head = ngram_head()
    assert head is not None
    p = head.probability(prompt)
    assert p is not None and p >= head.threshold
    assert allowed(prompt)
    monkeypatch.setattr(_offline, "HEAD_YIELDS_TO_VALUES", False)
    assert allowed(prompt) == set()


def test_the_turn_records_the_lexical_heads_probability() -> None:
    cfg = ResolverConfig(catalogOverridesFile=None, keywordCacheFile=None)
    res = asyncio.run(Resolver(cfg).resolve(TurnRequest(prompt=SOCIAL[0], tools=default_surface())))
    assert "conversation_core_only" in res.reason_codes
    assert res.source == "offline"


def test_a_long_aside_that_ends_in_a_request_keeps_it(monkeypatch: pytest.MonkeyPatch) -> None:
    """The lexical head judges at most `MAX_CHARS`, so it reads every clause of a rambling turn
    (the semantic head embeds at most `CLAUSE_PICK_MAX`): a turn of more clauses than that,
    taken whole for conversation, keeps the tool its request clause asks for."""
    prompt = (
        "ugh what a day. the bus was late, the coffee machine broke, my boss was grumpy, lunch "
        "was cold, it rained on the way home, the cat knocked over a plant, the neighbours are "
        "loud again. anyway, remind me at 8 tomorrow to call the plumber. sorry for ranting"
    )
    assert len(_offline.clauses_of(prompt)) > _offline.CLAUSE_PICK_MAX
    real = NgramConversation.conversation

    def whole_is_chat(self: NgramConversation, text: str) -> float | None:
        return 0.99 if text == prompt else real(self, text)

    monkeypatch.setattr(NgramConversation, "conversation", whole_is_chat)
    assert "automations" in allowed(prompt)
    monkeypatch.setattr(_offline, "HEAD_PER_CLAUSE", False)
    assert allowed(prompt) == set()


def test_the_probability_is_the_documented_formula() -> None:
    """sigmoid(bias + w . x), x the unit tf-idf vector of the known n-grams; a text with no
    known n-gram has no probability (the turn stays a task)."""
    head = NgramHead(
        idf={" a": 1.0, "a ": 2.0, " b": 1.5},
        weights={" a": 0.5, "a ": -1.0},
        bias=0.25,
        threshold=0.8,
        max_n=2,
    )
    counts = ngrams("a a", max_n=2)
    assert counts[" a"] == 2 and counts["a "] == 2
    assert ngrams("hi   you", max_n=3)["i y"] == 1  # across words, white space folded
    vec = features(counts, head.idf)
    assert math.isclose(sum(v * v for v in vec.values()), 1.0)
    z = 0.25 + 0.5 * vec[" a"] - 1.0 * vec["a "]
    assert math.isclose(head.probability("a a") or 0.0, 1 / (1 + math.exp(-z)))
    assert head.probability("zzz") is None


def test_hostile_input_is_bounded_and_never_raises() -> None:
    """A megabyte of one character or of mixed scripts: only `MAX_CHARS` are read, and a text
    longer than that is not judged (the turn stays a task)."""
    head = ngram_head()
    assert head is not None
    for text in ("a" * 1_000_000, "😀𝕏\u200b\x00 مرحبا 你好 " * 50_000, ""):
        counts = ngrams(text)
        assert sum(counts.values()) <= MAX_N * (MAX_CHARS + 2)
        assert head.probability(text) is None  # too long to judge, or nothing known
    p = head.probability("😀𝕏\u200b\x00 مرحبا 你好 " * 10)
    assert p is not None and 0.0 <= p <= 1.0
    assert head.probability("thanks so much! " * 30) is None  # longer than any training text


@pytest.mark.parametrize(
    "content",
    [
        b"",
        b"not json",
        b"[]",
        b'{"format": "resolver-conversation-ngrams/1"}',
        b'{"format": "resolver-conversation-ngrams/1", "ngrams": {"a": "x"}, "bias": 0, '
        b'"threshold": 0.8}',
        b'{"format": "resolver-conversation-ngrams/1", "ngrams": {"a": [1, 1]}, "bias": 0, '
        b'"threshold": 7}',
        b'{"format": "other/1", "ngrams": {"a": [1, 1]}, "bias": 0, "threshold": 0.8}',
    ],
)
def test_a_missing_or_malformed_head_file_leaves_the_classifier_without_a_head(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, content: bytes
) -> None:
    """No head: the turn goes on as the lexical classifier alone would answer it."""
    folder = tmp_path / "catalogs"
    folder.mkdir()
    (folder / "conversation-ngrams.json").write_bytes(content)
    monkeypatch.setattr(ngram_mod, "shipped_table", lambda name: _table(folder / name))
    ngram_head.cache_clear()
    try:
        assert ngram_head() is None
        assert allowed(SOCIAL[0])  # the words' tools, as without a head
    finally:
        ngram_head.cache_clear()


def _table(path: Path) -> dict[str, object] | None:
    try:
        data = json.loads(path.read_bytes())
    except ValueError:
        return None
    return data if isinstance(data, dict) else None


def test_the_head_is_off_with_the_switch_and_validated() -> None:
    from pydantic import ValidationError

    assert ResolverConfig().offline_conversation_head is True
    with pytest.raises(ValidationError, match="offlineConversationHead"):
        ResolverConfig(offlineConversationHead="maybe")


def test_the_head_yields_when_the_best_tool_has_no_catalog_keywords(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Beside an operator's own screenshot tool, a turn about a screenshot keeps it: the head
    learnt what a task is on other tools (`HEAD_YIELDS_TO_UNLISTED`); with the rule off the
    head empties the turn."""
    own = ToolInfo(name="capture_screenshot", description="Capture a screenshot of the screen.")
    tools = [*default_surface(), own]
    config = ResolverConfig(catalogOverridesFile=None, keywordCacheFile=None)

    def kept() -> set[str]:
        res = asyncio.run(Resolver(config).resolve(TurnRequest(prompt=SOCIAL[0], tools=tools)))
        return set(res.tools_allow or []) - set(config.core_tools)

    assert "capture_screenshot" in kept()
    monkeypatch.setattr(_offline, "HEAD_YIELDS_TO_UNLISTED", False)
    assert kept() == set()


@pytest.mark.slow
def test_the_shipped_head_is_what_the_training_script_makes(tmp_path: Path) -> None:
    """`benchmark/train-conversation-ngrams.py` on the committed training files gives the
    shipped weights and threshold exactly (plain numpy, deterministic)."""
    import subprocess
    import sys

    root = Path(__file__).parents[1]
    out = tmp_path / "head.json"
    subprocess.run(
        [sys.executable, str(root / "benchmark/train-conversation-ngrams.py"), "--out", str(out)],
        cwd=root,
        check=True,
        capture_output=True,
        timeout=1800,  # about 2 minutes alone; CI shares 2 cores
    )
    made = json.loads(out.read_text())
    shipped = json.loads((root / "catalogs/conversation-ngrams.json").read_text())
    for key in ("format", "maxN", "bias", "threshold", "ngrams"):
        assert made[key] == shipped[key], key


def test_the_warm_up_loads_the_head_so_the_first_turn_does_not() -> None:
    ngram_head.cache_clear()
    resolver = Resolver(ResolverConfig(catalogOverridesFile=None, keywordCacheFile=None))
    assert not ngram_head.built()
    resolver.warm(default_surface())
    assert ngram_head.built()


def test_a_sure_head_reads_a_keyword_phrase_as_a_topic_and_a_tool_name_as_a_request(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A catalog keyword phrase ("group chat", `conversations_list`'s) keeps a turn the head
    calls conversation a task only below `HEAD_SURE_P`; a tool's whole multi-word name keeps it
    at any probability. The head's probability is set here, so the test does not depend on how
    the shipped head reads these sentences."""
    topic = "the group chat has been chaos all morning lol"
    name = "lol the agents list thing you showed me was cute"
    real = NgramConversation.conversation
    sure = {topic: 0.97, name: 0.97}

    def read(self: NgramConversation, text: str) -> float | None:
        return sure.get(text, real(self, text))

    monkeypatch.setattr(NgramConversation, "conversation", read)
    assert allowed(topic) == set()
    assert "agents_list" in allowed(name)
    sure[topic] = _offline.HEAD_SURE_P - 0.02  # still over the bar, not sure
    assert sure[topic] >= NgramConversation().conversation_bar()
    assert "conversations_list" in allowed(topic)
    sure[topic] = 0.97
    monkeypatch.setattr(_offline, "HEAD_SURE_P", 1.0)  # every phrase counts
    assert "conversations_list" in allowed(topic)


def test_a_clause_that_reads_as_a_task_but_asks_no_tool_leaves_the_turn_conversation(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """`CLAUSE_NEEDS_EVIDENCE`: a clause the head reads as a task on its own keeps the turn a
    task only when it is evidence for some tool beyond the core ones; a rhetorical question
    after a story ("honestly, what is wrong with us?") is not. The probabilities are set here
    (the whole turn conversation, the question a task), so the test does not depend on the
    shipped head."""
    prompt = (
        "we spent an hour of the code review arguing about tabs and spaces. "
        "honestly, what is wrong with us?"
    )
    question = next(p for p in _offline.clauses_of(prompt) if "wrong with us" in p)
    real = NgramConversation.conversation

    def read(self: NgramConversation, text: str) -> float | None:
        if text == question:
            return 0.2
        return 0.99 if text.strip() and text in prompt else real(self, text)

    monkeypatch.setattr(NgramConversation, "conversation", read)
    assert allowed(prompt, offlineConversationHead=False)  # its words match tools
    assert allowed(prompt) == set()
    monkeypatch.setattr(_offline, "CLAUSE_NEEDS_EVIDENCE", False)
    assert allowed(prompt)


def test_a_sure_head_reads_quoted_code_as_a_topic_but_a_path_as_a_value(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """`HEAD_SURE_IGNORES_CODE`: a turn the head is sure is conversation stays so though it
    quotes code (an explanation is asked for); a path outside the quotes, or a head less sure,
    keeps the value rule. The probabilities are set here, so the test does not depend on the
    shipped head. Prompts written for this test."""
    sure = {"value": 0.99}
    monkeypatch.setattr(NgramConversation, "conversation", lambda self, text: sure["value"])
    explain = "what does this line do? `const total = items.reduce((a, b) => a + b.price, 0);`"
    assert allowed(explain) == set()
    # a path outside the quotes is still a value a tool acts on
    assert allowed("what does `reduce` do in src/cart/total.js?")
    # a head that is not sure keeps quoted code a value
    sure["value"] = _offline.HEAD_SURE_P - 0.05
    assert allowed(explain)
    sure["value"] = 0.99
    monkeypatch.setattr(_offline, "HEAD_SURE_IGNORES_CODE", False)
    assert allowed(explain)


def _as_rows(counts: Counter[str], rows: dict[str, int]) -> dict[int, int]:
    return {rows[g]: c for g, c in counts.items() if g in rows}


def _found(positions: Positions, text: str | None = None) -> dict[int, int]:
    at, tf = positions.counts(text)
    return dict(zip(at.tolist(), tf.tolist(), strict=True))


# a small alphabet, so that clauses repeat n-grams of the text and of the table; white space
# of several kinds, an accent, a ligature, a lone surrogate and a character outside the BMP
_TEXT = st.text(alphabet="ab  \t\nÉéﬁ,\ud800😀", max_size=40)


@settings(max_examples=300, deadline=None)
@given(text=_TEXT, cut=st.tuples(st.integers(0, 40), st.integers(0, 40)), other=_TEXT)
def test_positions_count_what_ngrams_count(text: str, cut: tuple[int, int], other: str) -> None:
    """The heads find a text's n-grams by position, hashed, and count a clause by slicing the
    prompt's: the counts are `ngrams`' exactly, for the whole text, any stretch of it, and a
    text that is not in it."""
    vocabulary = ngrams("ab aé ﬁ, b\ud800😀 ba", 4) + ngrams(other, 4)
    rows = {g: i for i, g in enumerate(sorted(vocabulary))}
    table = Table(rows)
    assert not table.clash
    positions = Positions(table, 4, text)
    assert _found(positions) == _as_rows(ngrams(text, 4), rows)
    low, high = sorted(cut)
    for part in (text[low:high], other, text):
        assert _found(positions, part) == _as_rows(ngrams(part, 4), rows)


def test_the_shipped_tables_hash_every_ngram_apart() -> None:
    """No two n-grams of a shipped head share a hash (the lookup could not tell them apart)."""
    head = ngram_head()
    tools = tool_head()
    assert head is not None and tools is not None
    assert len(head.idf) > 100_000 and len(tools.rows) > 50_000
    assert not Table({g: i for i, g in enumerate(head.idf)}).clash
    assert not Table(tools.rows).clash
