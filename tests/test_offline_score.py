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


def check(texts: list[list[str]], words: dict[str, float]) -> bool:
    """`_score` is the definition bit for bit, and it reports as touched exactly the tools
    with a score. True when some tool matched more description terms than it may count."""
    tools = [ToolInfo(name=f"tool_{k:02d}", description=" ".join(t)) for k, t in enumerate(texts)]
    index = index_of(tools)
    query = stem_query(index, words)
    touched: set[int] = set()
    scores = OfflineClassifier._score(index, query, touched)
    assert scores == plain_scores(index, query)
    assert touched == {i for i, value in enumerate(scores) if value > 0}
    parts = [sum(1 for t in query if i in dict(index.postings[t][1])) for i in range(len(tools))]
    return max(parts, default=0) > DESCRIPTION_TERMS


PROPERTY = settings(
    max_examples=100,
    deadline=None,
    derandomize=True,  # the same examples every run: the counts below do not vary
    suppress_health_check=[HealthCheck.too_slow],
)
WEIGHTS = st.sampled_from([0.35, 1.0, 1.7])


@PROPERTY
@given(
    st.lists(st.lists(st.sampled_from(WORDS), min_size=1, max_size=8), min_size=2, max_size=30),
    st.dictionaries(st.sampled_from(WORDS), WEIGHTS, max_size=3),
)
def test_short_queries_score_as_the_definition(
    texts: list[list[str]], words: dict[str, float]
) -> None:
    check(texts, words)


OVER: list[bool] = []


@PROPERTY
@given(
    # few words, long descriptions and long queries: tools often match more description
    # terms than they may count
    st.lists(st.lists(st.sampled_from(WORDS[:9]), min_size=5, max_size=8), min_size=2, max_size=30),
    st.dictionaries(st.sampled_from(WORDS[:9]), WEIGHTS, min_size=6, max_size=9),
)
def test_long_queries_score_as_the_definition(
    texts: list[list[str]], words: dict[str, float]
) -> None:
    OVER.append(check(texts, words))


def test_the_long_queries_overflow_the_description_terms() -> None:
    """Not vacuous: in many long-query examples a tool matches more description terms than
    it may count."""
    OVER.clear()
    test_long_queries_score_as_the_definition()
    assert sum(OVER) >= 30


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
