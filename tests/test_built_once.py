"""Shipped tables every turn reads are built once per process, also when a turn arrives while
the sidecar's warm-up builds them (`resolver._data.built_once`)."""

from __future__ import annotations

import threading
import time

import pytest

from resolver import Resolver, ResolverConfig
from resolver._data import built_once
from resolver._glossary import glossary
from resolver._ngram_head import ngram_head
from resolver._surface import default_surface


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
