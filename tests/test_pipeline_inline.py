"""The offline pass runs on the event loop only for a small, bounded turn on a surface whose
index is built (`INLINE_MAX_TOOLS`, `INLINE_MAX_CHARS`); every other turn goes to a worker
thread, where the deadline cuts it off."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from resolver import Resolver, ResolverConfig, TurnRequest
from resolver._pipeline import INLINE_MAX_CHARS, INLINE_MAX_TOOLS
from resolver._surface import default_surface
from resolver._types import Message, ToolInfo


@pytest.fixture
def hops(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The names of the functions the pipeline sends to a worker thread."""
    sent: list[str] = []
    real = asyncio.to_thread

    async def to_thread(func: Any, /, *args: Any, **kwargs: Any) -> Any:
        sent.append(getattr(func, "__name__", repr(func)))
        return await real(func, *args, **kwargs)

    monkeypatch.setattr(asyncio, "to_thread", to_thread)
    return sent


def resolver() -> Resolver:
    return Resolver(ResolverConfig(catalogOverridesFile=None, keywordCacheFile=None), llm=None)


def test_a_short_turn_on_a_warm_default_surface_runs_inline(hops: list[str]) -> None:
    r, tools = resolver(), default_surface()
    r.warm(tools)
    answer = r.resolve_sync(TurnRequest(prompt="search the web for flights to Lisbon", tools=tools))
    assert answer.tools_allow is not None and "web_search" in answer.tools_allow
    assert "classify_sync" not in hops


def test_the_first_turn_on_a_surface_builds_its_index_in_a_thread(hops: list[str]) -> None:
    r, tools = resolver(), default_surface()
    r.resolve_sync(TurnRequest(prompt="search the web for flights to Lisbon", tools=tools))
    assert hops.count("classify_sync") == 1
    r.resolve_sync(TurnRequest(prompt="search the web for hotels in Porto", tools=tools))
    assert hops.count("classify_sync") == 1  # the second turn: index built, inline


def test_a_long_prompt_or_history_goes_to_a_thread(hops: list[str]) -> None:
    r, tools = resolver(), default_surface()
    r.warm(tools)
    long = "search the web for flights to Lisbon " * (INLINE_MAX_CHARS // 30)
    assert len(long) > INLINE_MAX_CHARS
    r.resolve_sync(TurnRequest(prompt=long, tools=tools))
    assert hops.count("classify_sync") == 1
    history = [Message(role="user", content="x" * INLINE_MAX_CHARS)]
    r.resolve_sync(TurnRequest(prompt="and hotels?", messages=history, tools=tools))
    assert hops.count("classify_sync") == 2


def test_a_large_surface_goes_to_a_thread(hops: list[str]) -> None:
    tools = [ToolInfo(name=f"tool_{k}", description=f"does thing {k}") for k in range(200)]
    assert len(tools) > INLINE_MAX_TOOLS
    r = resolver()
    r.warm(tools)
    r.resolve_sync(TurnRequest(prompt="does thing 7", tools=tools))
    assert hops.count("classify_sync") == 1


def test_a_turn_arriving_during_the_warm_up_waits_for_its_index_instead_of_building_it_again(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The sidecar warms a surface in a worker thread right after `configure`; a first turn
    that arrives meanwhile used to build the same index beside it (twice the CPU, on a slow
    host past the turn's deadline). Now the second caller waits for the first's build."""
    import threading
    import time

    import resolver._offline as offline

    builds: list[float] = []
    real = offline._build_index

    def slow_build(*args: Any, **kwargs: Any) -> Any:
        builds.append(time.perf_counter())
        time.sleep(0.3)
        return real(*args, **kwargs)

    monkeypatch.setattr(offline, "_build_index", slow_build)
    r = Resolver(ResolverConfig(coreTools=[], keywordCacheFile=""), llm=None)
    tools = default_surface()
    warming = threading.Thread(target=r.warm, args=(tools,))
    warming.start()
    while not builds:
        time.sleep(0.005)
    res = r.resolve_sync(TurnRequest(prompt="remind me at 9 to call mom", tools=tools))
    warming.join()
    assert "automations" in (res.tools_allow or [])
    assert len(builds) == 1
