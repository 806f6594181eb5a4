"""`finalize`: the ranked candidate cards (fast path for large surfaces)."""

from __future__ import annotations

from dataclasses import replace

from hypothesis import given, settings
from hypothesis import strategies as st

from resolver import Candidate, Exclusion, Timings
from resolver._catalog import merge_layers
from resolver._pipeline import TurnState, finalize
from resolver._types import TurnRequest

NAMES = tuple(f"t{i}" for i in range(12))


@settings(max_examples=120, deadline=None)
@given(
    scores=st.lists(st.sampled_from([0.0, 0.0, 0.5, 1.0, 2.5, -1.0]), min_size=12, max_size=12),
    chosen=st.sets(st.sampled_from(NAMES)),
    excluded=st.sets(st.sampled_from(NAMES), max_size=3),
    wanted_excluded=st.booleans(),
    use_blank=st.booleans(),
)
def test_ranking_matches_the_full_sort(
    scores: list[float],
    chosen: set[str],
    excluded: set[str],
    wanted_excluded: bool,
    use_blank: bool,
) -> None:
    """Cards rank wanted first, then by score, then host order, with or without blank cards."""
    chosen -= excluded
    state = TurnState(
        request=TurnRequest(prompt="p"),
        catalog=merge_layers([]),
        candidates=NAMES,
        scores=dict(zip(NAMES, scores, strict=True)),
    ).add(chosen, "classifier")
    exclusions = tuple(Exclusion(tool=n, field="f", why="unmet") for n in sorted(excluded))
    signals = dict(state.signals)
    if wanted_excluded:
        signals.update({n: ("classifier",) for n in excluded})
    state = replace(state, excluded=frozenset(excluded), exclusions=exclusions, signals=signals)
    blank = {n: Candidate(n, 0.0, False) for n in NAMES} if use_blank else None
    result = finalize(state, core_tools=(), timings=Timings(), classifier="offline", blank=blank)
    order = {n: i for i, n in enumerate(NAMES)}

    def wanted(n: str) -> bool:
        return n in chosen or (n in excluded and wanted_excluded)

    expected = sorted(NAMES, key=lambda n: (0 if wanted(n) else 1, -state.scores[n], order[n]))
    assert [c.name for c in result.candidates] == expected
    assert result.tools_allow == [n for n in expected if n in chosen]
    assert result.below_cutoff == len(NAMES) - len(chosen) - len(excluded)
    for c in result.candidates:
        assert c.selected == (c.name in chosen)
        assert c.score == state.scores[c.name]
        assert (c.excluded is not None) == (c.name in excluded)
        if c.name in excluded:
            assert c.signals[-1] == "state"


def test_prepared_surface_follows_changed_tools() -> None:
    """The memoized surface is reused for the same tools and rebuilt when they change."""
    from resolver import Resolver, ResolverConfig, ToolInfo

    resolver = Resolver(ResolverConfig(catalog_overrides_file=None), llm=None)
    tools = [ToolInfo(name="zz_lookup", description="Look up the weather forecast")]
    first = resolver.resolve_sync(TurnRequest(prompt="weather forecast", tools=tools))
    again = resolver.resolve_sync(TurnRequest(prompt="weather forecast", tools=tools))
    assert first.tools_allow == again.tools_allow == ["zz_lookup"]
    renamed = [ToolInfo(name="zz_lookup", description="Send a postcard by mail")]
    changed = resolver.resolve_sync(TurnRequest(prompt="weather forecast", tools=renamed))
    assert changed.tools_allow == []
    back = resolver.resolve_sync(TurnRequest(prompt="weather forecast", tools=list(tools)))
    assert back.tools_allow == ["zz_lookup"]
