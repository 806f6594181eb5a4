"""`OfflineClassifier._score` keeps a tool's first description part apart and makes a list
only from its second (most tools a common word touches match nothing else). These tests hold
it to the plain definition — per tool, the name and keyword parts in query order, then the sum
of its `DESCRIPTION_TERMS` strongest description parts — bit for bit, on real indexes built
from random surfaces, with queries short and long."""

from __future__ import annotations

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from offline_support import WORDS, index_of, stem_query

from resolver import ToolInfo
from resolver._offline import _NO_POSTINGS, DESCRIPTION_TERMS, OfflineClassifier, _Index


def plain_scores(index: _Index, query: dict[str, float]) -> list[float]:
    scores = [0.0] * len(index.names)
    parts: dict[int, list[float]] = {}
    for term, qweight in query.items():
        plain, desc = index.postings.get(term, _NO_POSTINGS)
        for i, w in plain:
            scores[i] += qweight * w
        for i, wd in desc:
            parts.setdefault(i, []).append(qweight * wd)
    for i, mine in parts.items():
        if len(mine) > DESCRIPTION_TERMS:
            mine = sorted(mine, reverse=True)[:DESCRIPTION_TERMS]
        scores[i] += sum(mine)
    return scores  # (no deprecated tools in these surfaces)


SHORT: list[bool] = []


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    # few words, long descriptions and queries: tools often match more description terms
    # than they may count
    st.lists(st.lists(st.sampled_from(WORDS[:9]), min_size=1, max_size=8), min_size=2, max_size=30),
    st.dictionaries(st.sampled_from(WORDS[:9]), st.sampled_from([0.35, 1.0, 1.7]), max_size=9),
)
def test_scores_are_the_definition(texts: list[list[str]], words: dict[str, float]) -> None:
    tools = [ToolInfo(name=f"tool_{k:02d}", description=" ".join(t)) for k, t in enumerate(texts)]
    index = index_of(tools)
    query = stem_query(index, words)
    touched: set[int] = set()
    scores = OfflineClassifier._score(index, query, touched)
    assert scores == plain_scores(index, query)
    # the tools it says the query matched are exactly those with a score
    assert touched == {i for i, value in enumerate(scores) if value > 0}
    SHORT.append(sum(1 for t in query if index.postings[t][1]) <= DESCRIPTION_TERMS)
    parts = [sum(1 for t in query if i in dict(index.postings[t][1])) for i in range(len(tools))]
    OVER.append(max(parts, default=0) > DESCRIPTION_TERMS)


OVER: list[bool] = []


def test_the_random_queries_are_short_and_long() -> None:
    """Not vacuous: short and long queries, and tools with more description matches than
    they may count, are common."""
    test_scores_are_the_definition()
    assert 20 <= sum(SHORT) <= len(SHORT) - 20
    assert sum(OVER) >= 20


def test_a_deprecated_tools_successor_is_touched_through_it() -> None:
    """The query names only the deprecated tool's words; its successor takes its score, so it
    is among the tools the query touched."""
    tools = [
        ToolInfo(name="read_file", description="DEPRECATED: use read_text_file instead"),
        ToolInfo(name="read_text_file", description="Open a document"),
        ToolInfo(name="send_email", description="Send a message"),
    ]
    index = index_of(tools)
    query = {term: 1.0 for term in index.weights if term == "deprec"}
    assert query and index.successors == ((0, 1),)
    touched: set[int] = set()
    scores = OfflineClassifier._score(index, query, touched)
    assert scores[1] > scores[0] > 0.0 == scores[2]
    assert touched == {0, 1}
