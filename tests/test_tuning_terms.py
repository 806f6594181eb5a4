"""The deterministic description proposal: distinctive user terms of missed prompts."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from resolver._text import tokens
from resolver.tuning import distinctive_terms
from resolver.tuning._propose import proposed_description

WORDS = ["paid", "euros", "expense", "log", "lunch", "taxi", "ledger", "record", "the", "flight"]


def test_terms_are_frequent_in_misses_absent_from_the_text_and_rarer_elsewhere() -> None:
    """Words in >= min_support missed prompts, not in the description or name, and not as
    common in the other prompts; the most distinctive first."""
    missed = ["I paid 40 euros, log it", "paid 12 euros for lunch", "taxi 25 euros, paid", "log it"]
    others = ["log the flight status", "is my flight late"]
    terms = distinctive_terms(
        "ledger_post", "Record a transaction in the ledger.", missed, others, min_support=2
    )
    assert terms == ["euros", "paid"]  # 'log' is as common in the other prompts


@settings(max_examples=60, deadline=None)
@given(
    missed=st.lists(
        st.lists(st.sampled_from(WORDS), min_size=1, max_size=6).map(" ".join),
        min_size=1,
        max_size=6,
    ),
    others=st.lists(
        st.lists(st.sampled_from(WORDS), min_size=1, max_size=6).map(" ".join), max_size=6
    ),
    support=st.integers(min_value=1, max_value=3),
)
def test_terms_are_deterministic_and_never_repeat_the_description(
    missed: list[str], others: list[str], support: int
) -> None:
    """The same evidence in any order gives the same terms; none is already in the text."""
    description = "Record a transaction in the accounting ledger."
    terms = distinctive_terms("ledger_post", description, missed, others, min_support=support)
    again = distinctive_terms(
        "ledger_post", description, missed[::-1], others[::-1], min_support=support
    )
    assert terms == again and len(terms) <= 8
    known = set(tokens(description)) | set(tokens("ledger_post"))
    assert not any(set(tokens(t)) & known for t in terms)
    if terms:
        proposed = proposed_description(description, "ledger_post", terms)
        assert proposed.startswith(description) and proposed.endswith(".")
