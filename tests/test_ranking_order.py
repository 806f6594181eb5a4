"""Rankings are ordered best score first, ties to the smaller name (or index) — however they
are computed. The offline classifier ranks the whole prompt from the tools in name order with
one stable sort, picks each clause's best from the tools near its best score, and finds a
prompt's keyword phrases from each phrase's rarest word; the card lists the best not-selected
tools without a sort key per tool. These tests hold each to the
plain full sort, on random surfaces where ties are common."""

from __future__ import annotations

from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st
from offline_support import WORDS

from resolver import Resolver, ResolverConfig, ToolInfo, TurnRequest
from resolver._classify import ClassifyInput
from resolver._conversation import task_text
from resolver._offline import (
    SEGMENT_PICKS,
    SEGMENT_RELATIVE_CUTOFF,
    OfflineClassifier,
    _close,
    _Index,
    _phrases_in,
    clauses_of,
)
from resolver._pipeline import MAX_OTHER_CARDS
from resolver._text import tokens

surfaces = st.lists(
    st.lists(st.sampled_from(WORDS), min_size=1, max_size=5), min_size=2, max_size=40
)
prompts = st.lists(
    st.lists(st.sampled_from(WORDS), min_size=1, max_size=4), min_size=1, max_size=4
).map(lambda parts: ", then ".join(" ".join(p) for p in parts))

FAST = settings(
    max_examples=80,
    deadline=None,
    derandomize=True,
    suppress_health_check=[HealthCheck.too_slow],
)


def tools_of(texts: list[list[str]]) -> list[ToolInfo]:
    # names that do not sort like their positions: index ties and name ties differ
    return [
        ToolInfo(name=f"{t[-1]}_{(k * 7) % 41:02d}", description=" ".join(t))
        for k, t in enumerate(texts)
    ]


def resolver_for(tools: list[ToolInfo]) -> Resolver:
    config = ResolverConfig(catalogOverridesFile=None, keywordCacheFile=None, coreTools=[])
    return Resolver(config, llm=None)


def classify_input(resolver: Resolver, tools: list[ToolInfo], prompt: str) -> ClassifyInput:
    prepared = resolver._prepare(tools)
    return ClassifyInput(
        prompt=prompt,
        messages=(),
        tools=prepared.described,
        skills={},
        catalog=prepared.catalog,
        timeout_s=5.0,
        params=prepared.params,
    )


@FAST
@given(surfaces, prompts)
def test_the_whole_prompt_ranking_is_score_then_name(texts: list[list[str]], prompt: str) -> None:
    tools = tools_of(texts)
    request = classify_input(resolver_for(tools), tools, prompt)
    offline = OfflineClassifier()
    # a prompt the classifier reads whole (no part of it taken for conversation: "translate")
    index = offline._index(request)
    assume(
        task_text(index.markers, prompt, index.topical, offline._asks_nothing(index, request))
        == prompt
    )
    raw = offline.score(request)
    expected = sorted((n for n, v in raw.items() if v > 0), key=lambda n: (-raw[n], n))
    assert list(offline.classify_sync(request).scores) == expected


@FAST
@given(surfaces, prompts)
def test_each_clause_keeps_its_best_near_its_top(texts: list[list[str]], prompt: str) -> None:
    tools = tools_of(texts)
    resolver = resolver_for(tools)
    prepared = resolver._prepare(tools)
    offline = OfflineClassifier()
    index = offline._index_for(prepared.described, prepared.catalog, prepared.params)
    lists = offline._segment_lists(index, prompt)
    clauses = clauses_of(prompt)
    if len(clauses) < 2:
        assert lists == []
        return
    expected = []
    for clause in clauses:
        scores = offline._score(index, offline._query(index, clause))
        order = sorted(range(len(scores)), key=lambda i: -scores[i])  # stable: ties by index
        best = scores[order[0]]
        if best > 0:
            top = [i for i in order[:SEGMENT_PICKS] if scores[i] >= best * SEGMENT_RELATIVE_CUTOFF]
            expected.append([index.names[i] for i in top])
    assert lists == expected


@settings(
    max_examples=25,
    deadline=None,
    derandomize=True,
    suppress_health_check=[HealthCheck.too_slow],
)
@given(st.lists(st.integers(1, 8), min_size=MAX_OTHER_CARDS + 30, max_size=120))
def test_the_card_lists_the_best_others_by_score_then_name(strengths: list[int]) -> None:
    """Many more scored tools than the card shows, with tied scores: the not-selected part of
    the card is the best `MAX_OTHER_CARDS` by score, ties to the smaller name."""
    # every tool matches "archive" (a description word), some more strongly (repeats in the
    # name); one tool matches the prompt by name and is the one kept
    tools = [
        ToolInfo(name=f"{'archive_' * s}t{(k * 13) % 97:02d}", description="archive records")
        for k, s in enumerate(strengths)
    ]
    tools.append(ToolInfo(name="zeta_archive_records_now", description="archive records now"))
    resolver = resolver_for(tools)
    resolution = resolver.resolve_sync(TurnRequest(prompt="archive records now", tools=tools))
    kept = [c for c in resolution.candidates if c.selected]
    others = [c for c in resolution.candidates if not c.selected]
    assert kept and len(others) == MAX_OTHER_CARDS
    scores = resolver.offline.score(classify_input(resolver, tools, "archive records now"))
    shown = {c.name for c in kept}
    expected = sorted(
        (n for n, v in scores.items() if v > 0 and n not in shown),
        key=lambda n: (-round(scores[n], 4), n),
    )[:MAX_OTHER_CARDS]
    assert [c.name for c in others] == expected


def phrases_by_every_word(index: _Index, words: list[str]) -> list[str]:
    """The plain look-up: every phrase each prompt word is in, tried once, in prompt order
    then the phrases' own order."""
    every = sorted((p for found in index.phrases.values() for p in found), key=lambda p: p[2])
    by_word: dict[str, list[tuple[str, tuple[str, ...]]]] = {}
    for phrase, parts, _ in every:
        for part in parts:
            by_word.setdefault(part, []).append((phrase, parts))
    positions: dict[str, list[int]] = {}
    for i, word in enumerate(words):
        if word in by_word:
            positions.setdefault(word, []).append(i)
    found: list[str] = []
    tried: set[str] = set()
    for word in positions:
        for phrase, parts in by_word[word]:
            if phrase not in tried:
                tried.add(phrase)
                if all(p in positions for p in parts) and _close(parts, positions):
                    found.append(phrase)
    return found


@FAST
@given(
    st.lists(st.lists(st.sampled_from(WORDS[:8]), min_size=2, max_size=4), min_size=2, max_size=30),
    st.lists(st.sampled_from(WORDS[:8]), min_size=6, max_size=14),
)
def test_phrases_are_found_from_their_rarest_word_in_the_same_order(
    names: list[list[str]], prompt: list[str]
) -> None:
    """Multi-word names are phrases; each is looked at only from its rarest word, and the
    phrases found come in the order the plain look-up finds them (query order matters: it
    is the order scores are summed in)."""
    tools = [
        ToolInfo(name="_".join(parts) + f"_{k}", description="") for k, parts in enumerate(names)
    ]
    resolver = resolver_for(tools)
    prepared = resolver._prepare(tools)
    index = resolver.offline._index_for(prepared.described, prepared.catalog, prepared.params)
    words = [t for word in prompt for t in tokens(word)]
    found = _phrases_in(index, words)
    assert found == phrases_by_every_word(index, words)
    FOUND.append(len(found))


FOUND: list[int] = []


def test_the_random_prompts_find_several_phrases() -> None:
    FOUND.clear()
    test_phrases_are_found_from_their_rarest_word_in_the_same_order()  # derandomized
    assert sum(n >= 2 for n in FOUND) >= 15
