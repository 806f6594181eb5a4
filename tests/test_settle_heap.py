"""`settle_heap` freezes what is alive; a cycle frozen alive and dead since is reclaimed by the
next call (a long-lived sidecar settles after every warm-up)."""

from __future__ import annotations

import gc
import weakref

from resolver import settle_heap


class Node:
    def __init__(self) -> None:
        self.me = self  # a reference cycle: only the cyclic collector frees it


def test_a_frozen_cycle_that_died_is_reclaimed_by_the_next_settle() -> None:
    try:
        node = Node()
        alive = weakref.ref(node)
        assert settle_heap() > 0 and gc.get_freeze_count() > 0
        del node
        gc.collect()
        assert alive() is not None  # frozen: an ordinary full collection does not see it
        settle_heap()
        assert alive() is None
    finally:
        gc.unfreeze()
