"""The offline pass does bounded work whatever the prompt (`MAX_SEGMENTS`), stops its
per-clause rankings once its turn's budget is spent, and a warmed-up surface serves the turn
even when the turn cuts the surface's descriptions (`Resolver.warm` bounds them the same way).
The hostile surfaces themselves, with their timings, are `resolver.bench.adversarial`'s
"hostile surfaces" family (tests/test_adversarial.py)."""

from __future__ import annotations

import time

import pytest

from resolver import Resolver, ResolverConfig, ToolInfo, TurnRequest
from resolver._limits import MAX_SURFACE_CHARS
from resolver._offline import MAX_SEGMENTS, OfflineClassifier, clauses_of

WORDS = [f"{a}{b}zorp" for a in "bdfgklmnprstvz" for b in "aeiou"]  # 70 words no lexicon has


def clause_surface() -> tuple[Resolver, OfflineClassifier, object]:
    tools = [ToolInfo(name=f"tool_{w}", description=f"handles {w} requests") for w in WORDS]
    resolver = Resolver(ResolverConfig(keywordCacheFile=None, catalogOverridesFile=None))
    prepared = resolver._prepare(tools)
    offline = OfflineClassifier()
    index = offline._index_for(prepared.described, prepared.catalog, prepared.params)
    return resolver, offline, index


def test_a_prompt_of_many_clauses_ranks_its_first_and_last_ones_only() -> None:
    _, offline, index = clause_surface()
    prompt = ", ".join(f"open the {w}" for w in WORDS)
    assert len(clauses_of(prompt)) == len(WORDS) > MAX_SEGMENTS
    lists = offline._segment_lists(index, prompt)  # type: ignore[arg-type]
    assert len(lists) == MAX_SEGMENTS
    firsts = [items[0] for items in lists]
    half = MAX_SEGMENTS // 2
    expected = [f"tool_{w}" for w in WORDS[:half] + WORDS[-(MAX_SEGMENTS - half) :]]
    assert firsts == expected  # the request's opening parts and its closing ones


def test_a_prompt_within_the_bound_ranks_every_clause() -> None:
    _, offline, index = clause_surface()
    prompt = ", ".join(f"open the {w}" for w in WORDS[:MAX_SEGMENTS])
    lists = offline._segment_lists(index, prompt)  # type: ignore[arg-type]
    assert [items[0] for items in lists] == [f"tool_{w}" for w in WORDS[:MAX_SEGMENTS]]


def test_no_clause_is_ranked_after_the_budget_ends() -> None:
    _, offline, index = clause_surface()
    prompt = ", ".join(f"open the {w}" for w in WORDS[:8])
    spent = time.monotonic() - 1.0
    assert offline._segment_lists(index, prompt, stop=spent) == []  # type: ignore[arg-type]
    later = time.monotonic() + 3600.0
    assert len(offline._segment_lists(index, prompt, stop=later)) == 8  # type: ignore[arg-type]


def test_a_warmed_surface_over_the_description_budget_serves_its_turns() -> None:
    """Descriptions that together exceed `MAX_SURFACE_CHARS` are cut on every turn; the
    warm-up cuts them the same way, so the turn finds the warm-up's index, builds none."""
    count = 600
    size = MAX_SURFACE_CHARS // count + 500  # over the budget in total
    tools = [
        ToolInfo(name=f"tool_{i}", description=(f"handles {WORDS[i % 70]} " * size)[:size])
        for i in range(count)
    ]
    resolver = Resolver(ResolverConfig(keywordCacheFile=None, catalogOverridesFile=None))
    resolver.warm(tools)
    assert resolver.offline.index_count() == 1
    resolution = resolver.resolve_sync(
        TurnRequest(prompt=f"open the {WORDS[5]}", tools=tools, sessionId="s")
    )
    assert "description_truncated" in resolution.reason_codes
    assert resolution.source == "offline"
    assert resolver.offline.index_count() == 1  # the warm-up's index, no second build
    assert resolution.tools_allow is not None and "tool_5" in resolution.tools_allow


def test_clause_splitting_reads_each_character_a_bounded_number_of_times(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Lead-ins (comma-ended pieces of fewer than two terms) that follow each other used to be
    tokenized again as one growing text at every comma: the first prompt below (13,600
    characters) read 18 million (a 6,900-character one found by fuzzing took 1.3 s of CPU).
    Their term counts now add up, so each piece is read once."""
    import resolver._offline as offline_module

    read: list[int] = []
    real = offline_module.tokens

    def counting(text: str, **kwargs: object) -> list[str]:
        read.append(len(text))
        return real(text, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(offline_module, "tokens", counting)
    for prompt in ("é" * 200 + "a" * 1_900 + ", and" * 2_300, ", " * 8_000, "x, " * 5_000):
        read.clear()
        clauses_of(prompt)
        assert sum(read) <= 2 * len(prompt), (len(prompt), sum(read))


def test_a_warm_surfaces_turns_do_not_queue_behind_new_surfaces_index_builds() -> None:
    """Eight sessions bring new 6,000-tool surfaces at once beside a session whose 300-tool
    surface is warm: the new indexes are built by the index builders (`INDEX_BUILDERS` threads),
    so the warm session's turns find a free worker and are answered by the classifier. (Built in
    the turns' own workers, the builds held all six of them and those turns waited past their
    deadline: 3 s for the first, against 0.1 s now.)"""
    import asyncio
    import threading

    from resolver._pipeline import INDEX_BUILDERS

    def surface(prefix: str, size: int) -> list[ToolInfo]:
        return [
            ToolInfo(
                name=f"{prefix}__{WORDS[i % 70]}_{i}",
                description=f"{WORDS[(i * 3) % 70]} {WORDS[(i * 7) % 70]} records {i}",
            )
            for i in range(size)
        ]

    resolver = Resolver(
        ResolverConfig(keywordCacheFile=None, catalogOverridesFile=None, llmTimeoutMs=3000)
    )
    warm = surface("warm", 300)
    resolver.warm(warm)
    new = [surface(f"s{k}", 6_000) for k in range(8)]  # built here, not on the event loop
    builders: set[str] = set()

    async def warm_turns() -> list[tuple[str, ...]]:
        codes = []
        for turn in range(6):
            await asyncio.sleep(0.1)
            prompt = f"{WORDS[turn]} records {WORDS[turn + 9]}"
            res = await resolver.resolve(TurnRequest(prompt=prompt, tools=warm, sessionId="w"))
            codes.append(res.reason_codes)
            builders.update(t.name for t in threading.enumerate() if "resolver-index" in t.name)
        return codes

    async def new_turn(k: int) -> None:
        await resolver.resolve(TurnRequest(prompt=f"{WORDS[k]} records", tools=new[k]))

    async def run() -> list[tuple[str, ...]]:
        codes, *_ = await asyncio.gather(warm_turns(), *(new_turn(k) for k in range(8)))
        return codes

    codes = asyncio.run(run())
    assert all("offline_selected" in c and "deadline_exceeded" not in c for c in codes), codes
    assert 1 <= len(builders) <= INDEX_BUILDERS
