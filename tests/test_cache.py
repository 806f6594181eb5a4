"""The keyword cache: learning gates, pollution guards, bounds, atomic file, corrupt file."""

from __future__ import annotations

import asyncio
import json
import logging
import os
import subprocess
import sys
import textwrap
from pathlib import Path
from typing import Any

import orjson
import pytest
from doubles import ScriptedClassifier, failing
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import resolver._cache as cache_mod
from resolver import Resolver, ResolverConfig, ToolInfo, TurnRequest
from resolver._cache import CacheLimits, KeywordCache, learn_telemetry, prompt_terms

REPO = Path(__file__).resolve().parent.parent


def teach(cache: KeywordCache, prompt: str, tools: tuple[str, ...], times: int) -> None:
    for _ in range(times):
        cache.learn(prompt, tools)


def resolve(resolver: Resolver, prompt: str, tools: list[ToolInfo], **kw: Any):  # type: ignore[no-untyped-def]
    return asyncio.run(resolver.resolve(TurnRequest(prompt=prompt, tools=tools, **kw)))


def make(tmp_path: Path, **config: Any) -> ResolverConfig:
    return ResolverConfig(catalogOverridesFile=None, **config)


# ---------------------------------------------------------------- terms and guards


def test_prompt_terms_drop_stopwords_numbers_and_add_bigrams() -> None:
    """Terms are stemmed words without stop-words or bare numbers, plus adjacent bigrams."""
    terms = prompt_terms("Please water the plants at 6 tomorrow")
    water, plant = prompt_terms("water")[0], prompt_terms("plants")[0]
    assert {water, plant, "tomorrow", f"{water} {plant}"} <= set(terms)
    assert not {"please", "the", "at", "6"} & set(terms)


def test_stopword_only_prompt_learns_nothing() -> None:
    """A prompt of stop-words, numbers and redaction markers adds no term."""
    cache = KeywordCache()
    marker = "[REDACTED:bearer] [REDACTED:configured_key] [REDACTED]"
    assert cache.learn(f"thanks, please do it 42 {marker}", ("web_search",)) is False
    assert len(cache) == 0


def test_association_needs_minimum_support() -> None:
    """A term -> tool association is used only after `min_support` learn events."""
    cache = KeywordCache()
    teach(cache, "zorblat inventory", ("gizmo",), 2)
    assert cache.suggest("zorblat", ["gizmo"]).tools == ()
    cache.learn("zorblat inventory", ("gizmo",))
    assert cache.suggest("zorblat", ["gizmo"]).tools == ("gizmo",)


def test_association_needs_precision() -> None:
    """A term seen often but rarely with the tool (below min_precision) is not used."""
    cache = KeywordCache()
    teach(cache, "status report", ("gizmo",), 3)
    teach(cache, "status update", ("other",), 5)
    # "status" went with gizmo 3 of 8 times: not used; "report" went with it 3 of 3 times.
    assert cache.suggest("status", ["gizmo", "other"]).tools == ("other",)
    assert cache.suggest("report", ["gizmo", "other"]).tools == ("gizmo",)


def test_promiscuous_term_is_ignored() -> None:
    """A term seen with more than max_distinct_tools different tools says nothing."""
    cache = KeywordCache(limits=CacheLimits(max_distinct_tools=3, min_support=1))
    teach(cache, "widget", ("a",), 20)
    assert cache.suggest("widget", "abcdef").tools == ("a",)
    for tool in "bcd":
        cache.learn("widget", (tool,))
    assert cache.suggest("widget", "abcdef").tools == ()


def test_tools_per_term_are_capped() -> None:
    """No term keeps more than max_tools_per_term tools; the weakest is replaced."""
    cache = KeywordCache(limits=CacheLimits(max_tools_per_term=3))
    teach(cache, "frobnicate", ("strong",), 5)
    for tool in ("t1", "t2", "t3", "t4", "t5"):
        cache.learn("frobnicate", (tool,))
    entry = cache.to_file().terms[prompt_terms("frobnicate")[0]]
    assert len(entry.tools) == 3 and "strong" in entry.tools


def test_term_count_is_bounded_least_recently_reinforced_evicted() -> None:
    """Over max_terms, the least recently reinforced terms go first (down to 90%)."""
    cache = KeywordCache(limits=CacheLimits(max_terms=50, min_support=1))
    cache.learn("keepalive", ("old",))
    for i in range(60):
        cache.learn(f"term{chr(97 + i % 26)}{chr(97 + i // 26)}", ("t",))
        cache.learn("keepalive", ("old",))  # reinforced every time: never evicted
    assert len(cache) <= 50
    assert prompt_terms("keepalive")[0] in cache.to_file().terms
    assert "termaa" not in cache.to_file().terms  # the oldest unreinforced term went


def test_suggestions_only_name_candidates_and_are_capped() -> None:
    """Suggestions are restricted to the turn's candidates and capped per turn."""
    cache = KeywordCache(limits=CacheLimits(max_suggestions=2))
    teach(cache, "quux", ("a", "b", "c"), 3)
    assert set(cache.suggest("quux", ["a", "c", "z"]).tools) == {"a", "c"}
    assert len(cache.suggest("quux", ["a", "b", "c"]).tools) == 2
    assert cache.suggest("quux", ["z"]).tools == ()


# ---------------------------------------------------------------- file


def test_save_and_reload_round_trip(tmp_path: Path) -> None:
    """A saved cache is a version-1 JSON file that loads to the same suggestions."""
    path = tmp_path / "kc.json"
    cache = KeywordCache(path)
    teach(cache, "water the plants", ("automations",), 3)
    assert cache.save() is True
    data = json.loads(path.read_text())
    assert data["version"] == 1 and "plant" in data["terms"]
    again = KeywordCache(path)
    assert again.suggest("plants", ["automations"]).tools == ("automations",)
    assert again.save() is False  # nothing new: not rewritten


def test_failed_replace_leaves_old_file_intact(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A crash at os.replace leaves the previous file byte-identical and no temp file behind."""
    path = tmp_path / "kc.json"
    cache = KeywordCache(path)
    teach(cache, "water plants", ("automations",), 3)
    cache.save()
    before = path.read_bytes()
    teach(cache, "camera snapshot", ("nodes",), 3)

    def crash(src: Any, dst: Any) -> None:
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(cache_mod.os, "replace", crash)
    with pytest.raises(OSError):
        cache.save()
    assert path.read_bytes() == before
    # no temp file is left behind (the lock file of concurrent saves stays by design)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["kc.json", "kc.json.lock"]
    assert cache.dirty  # still unsaved: the next save tries again


def test_process_killed_between_write_and_replace_keeps_old_file(tmp_path: Path) -> None:
    """A process that dies after writing the temp file but before the rename: old file intact."""
    path = tmp_path / "kc.json"
    cache = KeywordCache(path)
    teach(cache, "water plants", ("automations",), 3)
    cache.save()
    before = path.read_bytes()
    script = textwrap.dedent(
        f"""
        import os
        import resolver._cache as m
        cache = m.KeywordCache({str(path)!r})
        for _ in range(3):
            cache.learn("camera snapshot", ("nodes",))
        def die(src, dst):
            assert os.path.getsize(src) > 0  # the new content is fully written and fsynced
            os._exit(9)                      # killed before the rename
        m.os.replace = die
        cache.save()
        """
    )
    proc = subprocess.run([sys.executable, "-c", script], cwd=REPO, capture_output=True)
    assert proc.returncode == 9, proc.stderr
    assert path.read_bytes() == before
    reloaded = KeywordCache(path)
    assert reloaded.corrupt is None
    assert reloaded.suggest("plants", ["automations"]).tools == ("automations",)


@pytest.mark.parametrize(
    "content",
    [b"{not json", b"[1, 2]", b'{"version": 1, "terms": {"x": {"seen": "many"}}}', b"\xff\xfe"],
    ids=["syntax", "not-object", "bad-field", "binary"],
)
def test_corrupt_file_is_reported_and_ignored(
    tmp_path: Path, caplog: pytest.LogCaptureFixture, content: bytes
) -> None:
    """A corrupt cache: one warning naming the file, an empty cache, turns still resolve."""
    path = tmp_path / "kc.json"
    path.write_bytes(content)
    with caplog.at_level(logging.WARNING, logger="resolver"):
        resolver = Resolver(make(tmp_path, keywordCacheFile=str(path)))
        res = resolve(resolver, "remind me tomorrow at 9 to call mom", [ToolInfo(name="x")])
    warnings = [r for r in caplog.records if r.levelno == logging.WARNING]
    assert len(warnings) == 1 and str(path) in warnings[0].getMessage()
    assert resolver.cache.corrupt and len(resolver.cache) == 0
    assert res.tools_allow is not None
    assert path.read_bytes() == content  # untouched: nothing was learned


def test_unsupported_version_is_ignored_not_overwritten(tmp_path: Path) -> None:
    """A file of a newer format version is reported and left alone."""
    path = tmp_path / "kc.json"
    path.write_text('{"version": 2, "terms": {}}')
    cache = KeywordCache(path)
    assert cache.corrupt is not None and "version 2" in cache.corrupt
    assert cache.save() is False and path.read_text() == '{"version": 2, "terms": {}}'


def test_corrupt_file_is_backed_up_on_first_valid_learn(tmp_path: Path) -> None:
    """The first valid learn moves the corrupt file to <file>.corrupt, then writes a good one."""
    path = tmp_path / "kc.json"
    path.write_bytes(b"{garbage")
    cache = KeywordCache(path)
    teach(cache, "water plants", ("automations",), 3)
    assert cache.save() is True
    assert (tmp_path / "kc.json.corrupt").read_bytes() == b"{garbage"
    assert KeywordCache(path).suggest("plants", ["automations"]).tools == ("automations",)


def test_two_writers_merge_their_learn_events(tmp_path: Path) -> None:
    """A save re-reads a file another process rewrote and replays only its own new events."""
    path = tmp_path / "kc.json"
    a, b = KeywordCache(path), KeywordCache(path)
    teach(a, "water plants", ("automations",), 3)
    a.save()
    teach(b, "camera snapshot", ("nodes",), 3)
    b.save()
    merged = KeywordCache(path)
    assert merged.learned == 6
    hint = merged.suggest("plants camera", ["automations", "nodes"])
    assert set(hint.tools) == {"automations", "nodes"}


# ---------------------------------------------------------------- in the pipeline

TOOLS = [
    ToolInfo(name=n, description=d)
    for n, d in [
        ("web_search", "Search the web for current information"),
        ("automations", "Schedule reminders and recurring jobs"),
        ("nodes", "Control paired devices and cameras"),
        ("message", "Send a message on a chat channel"),
        ("read", "Read a file"),
    ]
]


def test_confident_llm_decisions_teach_the_cache_and_validation_follows(tmp_path: Path) -> None:
    """Three confident LLM turns teach 'plants' -> automations; a fourth LLM miss is corrected."""
    llm = ScriptedClassifier({"water the plants": ("automations",)}, confidence=0.9)
    resolver = Resolver(make(tmp_path, coreTools=["read"]), llm=llm)
    for _ in range(3):
        res = resolve(resolver, "water the plants", TOOLS)
        assert res.validation in ("no_signal", "agree")
    assert resolve(resolver, "water the plants", TOOLS).validation == "agree"
    res = resolve(resolver, "plants again please", TOOLS)  # the LLM now picks nothing
    assert res.llm_tools == ()
    assert res.validation == "cache_added" and "cache_added" in res.reason_codes
    assert res.tools_allow is not None and "automations" in res.tools_allow
    card = next(c for c in res.candidates if c.name == "automations")
    assert card.signals == ("cache",)


@pytest.mark.parametrize(
    "llm",
    [
        ScriptedClassifier(("automations",), confidence=0.3),  # low confidence -> full surface
        ScriptedClassifier(("automations",), confidence=0.6),  # answered, below learn threshold
        failing(),  # a fault -> keyword fallback
        None,  # offline mode
    ],
    ids=["low-confidence", "below-learn-threshold", "fallback", "offline"],
)
def test_only_confident_llm_decisions_are_learned(tmp_path: Path, llm: Any) -> None:
    """Fallbacks, offline answers and answers below the learn threshold teach nothing."""
    resolver = Resolver(make(tmp_path), llm=llm)
    for _ in range(5):
        resolve(resolver, "water the plants", TOOLS)
    assert resolver.cache.learned == 0


def test_cache_additions_are_not_learned_back(tmp_path: Path) -> None:
    """Learning takes the LLM's own selection, never the tools the cache added."""
    cache = KeywordCache()
    teach(cache, "plants", ("automations",), 3)
    resolver = Resolver(make(tmp_path), llm=ScriptedClassifier(()), cache=cache)
    resolve(resolver, "plants", TOOLS)
    entry = cache.to_file().terms[prompt_terms("plants")[0]]
    assert entry.tools == {"automations": 3} and entry.seen == 4


def test_fallback_uses_cache_when_offline_classifier_has_no_signal(tmp_path: Path) -> None:
    """LLM fault + no offline signal + a cache signal: the cache's tools, not the full surface."""
    cache = KeywordCache()
    teach(cache, "zorblat", ("nodes",), 3)
    resolver = Resolver(make(tmp_path, coreTools=["read"]), llm=failing(), cache=cache)
    res = resolve(resolver, "zorblat", TOOLS)
    assert res.source == "keyword" and "llm_error_fallback" in res.reason_codes
    assert "no_signal_full_surface" not in res.reason_codes
    assert set(res.tools_allow or []) == {"nodes", "read"}
    empty = Resolver(make(tmp_path, coreTools=["read"]), llm=failing())
    assert "no_signal_full_surface" in resolve(empty, "zorblat", TOOLS).reason_codes


def test_offline_mode_adds_cache_suggestions(tmp_path: Path) -> None:
    """In offline mode the cache is one more added signal."""
    cache = KeywordCache()
    teach(cache, "zorblat", ("nodes",), 3)
    res = resolve(Resolver(make(tmp_path), cache=cache), "zorblat", TOOLS)
    assert res.source == "offline" and res.tools_allow is not None and "nodes" in res.tools_allow
    assert "cache_added" in res.reason_codes and res.validation is None


def test_online_learning_is_saved_off_the_hot_path(tmp_path: Path) -> None:
    """A confident LLM turn with a cache file: the file is written (in a worker thread)."""
    path = tmp_path / "kc.json"
    llm = ScriptedClassifier(("automations",))
    resolver = Resolver(make(tmp_path, keywordCacheFile=str(path)), llm=llm)
    resolve(resolver, "water the plants", TOOLS)  # asyncio.run waits for the executor
    assert json.loads(path.read_text())["learned"] == 1


# ---------------------------------------------------------------- telemetry learning


def test_learn_from_telemetry_reads_leniently() -> None:
    """Confident llm lines and usedTools lines teach; the rest is counted as skipped."""
    lines = [
        {"source": "llm", "confidence": 0.9, "promptExcerpt": "water plants", "llmTools": ["a"]},
        {"source": "llm", "confidence": 0.2, "promptExcerpt": "water plants", "llmTools": ["b"]},
        {"source": "keyword", "confidence": 0.9, "promptExcerpt": "water plants"},
        {"source": "keyword", "promptExcerpt": "camera snap", "usedTools": ["nodes"]},
        {"source": "llm", "confidence": 0.95, "toolsAllow": ["a", "read"]},
        {
            "source": "llm",
            "confidence": 0.95,
            "promptExcerpt": "water plants",
            "toolsAllow": ["a", "read"],
        },
    ]
    raw = [orjson.dumps(line) for line in lines] + [b"not json", b"[]", b""]
    cache = KeywordCache()
    report = learn_telemetry(cache, raw, min_confidence=0.7, core_tools=["read"])
    assert (report.lines, report.learned) == (8, 3)
    assert (report.from_llm, report.from_used_tools) == (2, 1)
    assert sum(report.skipped.values()) == 5
    terms = cache.to_file().terms
    assert terms[prompt_terms("water")[0]].tools == {
        "a": 2
    }  # core tool 'read' not learned, 'b' not learned
    assert terms["camera"].tools == {"nodes": 1}


# ---------------------------------------------------------------- invariant

tool_names = st.sampled_from(["t0", "t1", "t2", "t3", "t4", "t5", "t6", "t7"])
words = st.sampled_from(["alpha", "bravo", "charlie", "delta", "echo", "foxtrot", "golf"])
prompts = st.lists(words, min_size=1, max_size=4).map(" ".join)


@settings(
    max_examples=80, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(
    history=st.lists(st.tuples(prompts, st.lists(tool_names, max_size=3).map(tuple)), max_size=30),
    picked=st.lists(tool_names, max_size=5),
    prompt=prompts,
    confidence=st.floats(min_value=0.5, max_value=1.0),
    min_support=st.integers(min_value=1, max_value=3),
)
def test_cache_never_removes_a_tool(
    tmp_path: Path,
    history: list[tuple[str, tuple[str, ...]]],
    picked: list[str],
    prompt: str,
    confidence: float,
    min_support: int,
) -> None:
    """Whatever the cache learned, every tool the LLM selected stays in toolsAllow."""
    cache = KeywordCache(limits=CacheLimits(min_support=min_support, max_terms=40))
    for text, tools in history:
        cache.learn(text, tools)
    candidates = [ToolInfo(name=f"t{i}", description=f"tool number {i}") for i in range(6)]
    llm = ScriptedClassifier(tuple(picked), confidence=confidence)
    resolver = Resolver(make(tmp_path, coreTools=[]), llm=llm, cache=cache)
    res = resolve(resolver, prompt, candidates)
    assert res.tools_allow is not None
    kept = {p for p in picked if p in {c.name for c in candidates}}
    assert kept <= set(res.tools_allow)
    hint = cache.suggest(prompt, [c.name for c in candidates])
    assert set(hint.tools) <= set(res.tools_allow)
    assert res.validation in ("agree", "cache_added", "no_signal")


def test_cache_file_has_no_credentials(tmp_path: Path) -> None:
    """Learning with a configured key never writes the key into the cache file."""
    path = tmp_path / "kc.json"
    secret = "sk-" + "test-0123456789abcdef"
    config = make(tmp_path, keywordCacheFile=str(path), llmApiKey=secret)
    resolver = Resolver(config, llm=ScriptedClassifier(("automations",)))
    resolve(resolver, "water the plants", TOOLS, sessionId="s1")
    resolver.cache.save()
    assert path.exists() and secret not in path.read_text()
    assert os.path.getsize(path) > 0


def test_unwritable_cache_path_never_fails_a_turn(tmp_path: Path) -> None:
    """A cache path that is a directory: reported, turns resolve, the background save only logs."""
    path = tmp_path / "kc.json"
    path.mkdir()
    resolver = Resolver(
        make(tmp_path, keywordCacheFile=str(path)), llm=ScriptedClassifier(("nodes",))
    )
    res = resolve(resolver, "snap the garage camera", TOOLS)
    assert res.tools_allow is not None and "nodes" in res.tools_allow
    assert resolver.cache.corrupt is not None and path.is_dir()


def test_memory_only_cache_keeps_no_backlog() -> None:
    """Without a file the cache learns but keeps no unsaved-event backlog (bounded memory)."""
    cache = KeywordCache()
    teach(cache, "water plants", ("automations",), 50)
    assert cache.learned == 50 and not cache.dirty and cache.save() is False


def test_saved_file_matches_the_shipped_schema(tmp_path: Path) -> None:
    """A written cache file validates against schemas/keyword-cache.v1.json."""
    import jsonschema

    path = tmp_path / "kc.json"
    cache = KeywordCache(path)
    teach(cache, "water the plants tomorrow", ("automations", "message"), 4)
    cache.save()
    schema = json.loads((REPO / "schemas" / "keyword-cache.v1.json").read_text())
    jsonschema.validate(json.loads(path.read_text()), schema)


def test_running_cache_picks_up_another_writer_and_keeps_its_own_events(tmp_path: Path) -> None:
    """A running cache re-reads a file another process rewrote, replaying its unsaved events."""
    path = tmp_path / "kc.json"
    running = KeywordCache(path)
    teach(running, "water plants", ("automations",), 3)  # unsaved
    other = KeywordCache(path)
    teach(other, "camera snapshot", ("nodes",), 3)
    other.save()
    running.maybe_reload(now=100.0)
    hint = running.suggest("plants camera", ["automations", "nodes"])
    assert set(hint.tools) == {"automations", "nodes"} and running.learned == 6
    running.save()
    assert KeywordCache(path).learned == 6  # nothing counted twice
