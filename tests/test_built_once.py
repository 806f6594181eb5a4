"""Shipped tables every turn reads are built once per process, also when a turn arrives while
the sidecar's warm-up builds them (`resolver._data.built_once`)."""

from __future__ import annotations

import threading
import time

import pytest

from resolver import Resolver, ResolverConfig, TurnRequest
from resolver._data import built_once
from resolver._glossary import glossary
from resolver._ngram_head import ngram_head
from resolver._surface import default_surface
from resolver._text import FirstChars


def test_callers_during_a_build_wait_for_it_instead_of_building_again() -> None:
    builds: list[int] = []
    started = threading.Event()

    @built_once
    def table() -> dict[str, int]:
        builds.append(1)
        started.set()
        time.sleep(0.2)  # a slow build: the other callers arrive while it runs
        return {"built": len(builds)}

    got: list[dict[str, int]] = []
    first = threading.Thread(target=lambda: got.append(table()))
    first.start()
    assert started.wait(30)
    others = [threading.Thread(target=lambda: got.append(table())) for _ in range(6)]
    for t in others:
        t.start()
    for t in [first, *others]:
        t.join(30)
    assert builds == [1]
    assert len(got) == 7 and all(g is got[0] for g in got)


def test_a_build_that_raises_is_tried_again_by_the_next_caller() -> None:
    calls: list[int] = []

    @built_once
    def table() -> int:
        calls.append(1)
        if len(calls) == 1:
            raise OSError("disk hiccup")
        return 7

    with pytest.raises(OSError):
        table()
    assert not table.built()
    assert table() == 7 and table() == 7
    assert len(calls) == 2 and table.built()


def test_the_warm_up_builds_the_glossary_and_the_head_so_the_first_turn_does_not() -> None:
    glossary.cache_clear()
    ngram_head.cache_clear()
    resolver = Resolver(ResolverConfig(catalogOverridesFile=None, keywordCacheFile=None))
    assert not glossary.built() and not ngram_head.built()
    resolver.warm(default_surface())
    assert glossary.built() and ngram_head.built()


def test_after_the_warm_up_a_first_turn_in_any_script_builds_no_first_character_table(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The index, the glossary and the conversation markers build their tables of words by
    first character on first use; the warm-up's probe turns build them, not a user's first
    Chinese, Japanese or Korean turn."""
    builds: list[int] = []
    init = FirstChars.__init__

    def counted(self: FirstChars, words: list[str]) -> None:
        builds.append(len(words))
        init(self, words)

    monkeypatch.setattr(FirstChars, "__init__", counted)
    tools = default_surface()
    resolver = Resolver(ResolverConfig(catalogOverridesFile=None, keywordCacheFile=None))
    resolver.warm(tools)
    assert builds, "the warm-up builds the tables"
    builds.clear()
    for prompt in ("下周三下午三点提醒我开会", "この写真を保存して", "회의록을 요약해 줘"):
        resolution = resolver.resolve_sync(TurnRequest(prompt=prompt, tools=tools))
        assert resolution.source == "offline"
    assert builds == []
