"""`_text.tokens`: one analysis of a text serves its terms, its terms with stop words (a
query's language guess) and its words as written (typo matching); short texts keep theirs
in a small cache, so each caller must get a list of its own."""

from __future__ import annotations

from resolver._text import _MEMO_CHARS, tokens

TEXT = "Please remind me to call the plumber on Tuesday, and book a table for two"


def test_every_collects_the_terms_with_stopwords_in_the_same_pass() -> None:
    every: list[str] = []
    written: dict[str, str] = {}
    terms = tokens(TEXT, words=written, every=every)
    assert every == tokens(TEXT, keep_stopwords=True)
    assert "the" in every and "the" not in terms
    assert terms == [t for t in every if t in terms]  # same order, stop words left out
    assert written["plumber"] == "plumber" and "the" not in written


def test_each_call_gets_its_own_list() -> None:
    first = tokens(TEXT)
    first.append("mutated")
    first[0] = "changed"
    again = tokens(TEXT)
    assert "mutated" not in again and again[0] != "changed"
    kept = tokens(TEXT, keep_stopwords=True)
    kept.clear()
    assert tokens(TEXT, keep_stopwords=True)


def test_a_long_text_is_analysed_like_a_short_one() -> None:
    filler = " lorem" * (_MEMO_CHARS // 6 + 10)
    long = TEXT + filler
    assert len(long) > _MEMO_CHARS
    assert tokens(long)[: len(tokens(TEXT))] == tokens(TEXT)
    written: dict[str, str] = {}
    tokens(long, words=written)
    assert written["remind"] == tokens("remind")[0]


def test_first_chars_proposes_every_word_the_text_holds_in_order() -> None:
    from resolver._text import FirstChars

    words = ["天气", "发送", "天空", "슬랙", "메시지", "", "日程"]
    finder = FirstChars(words)
    text = "帮我查一下明天的天气然后发送到슬랙"
    picked = [words[k] for k in finder.candidates(text)]
    assert [w for w in words if w and w in text] == [w for w in picked if w in text]
    assert picked == ["天气", "发送", "天空", "슬랙"]  # "天空" shares a first character
    assert finder.candidates("hello") == []


def test_what_a_contraction_leaves_is_no_term() -> None:
    """'would've', 'you're', 'we'll', 'don't', 'isn't' leave no 've', 're', 'll', 'don' or 'isn'
    (a tool text with "'ve" or "re-run" matched "totally would've forgotten"); the words beside
    them stay."""
    terms = tokens("totally would've forgotten, you're great, we'll see, don't, isn't, didn't")
    assert terms == ["total", "forgotten", "great", "see"]
    assert tokens("re-run the failed deploy") == ["run", "fail", "deploy"]
