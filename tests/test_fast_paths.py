"""Fast paths that must answer exactly as the plain computation they shortcut: the entity
patterns' pre-checks (`_offline._ENTITIES`' fourth field) and the one-pass language guess
(`_lang.latin_language`)."""

from __future__ import annotations

import random
import re

import pytest

from resolver._lang import LATIN, MIN_HITS, latin_language, stopwords
from resolver._offline import _ENTITIES, ENTITY_CHARS

PIECES = [
    "select",
    "SELECT",
    "ſelect",
    "Select",
    "insert",
    "İNSERT",
    "ınsert",
    "INSERT",
    " into ",
    " t ",
    "(",
    ")",
    "a, b",
    " values ",
    "update",
    "UPDATE",
    " set ",
    " = ",
    "delete",
    " from ",
    " where ",
    "create",
    " table ",
    " index ",
    " view ",
    "*",
    "count(",
    "http",
    "://",
    "www.",
    "WWW.",
    "Www.",
    "wWw.",
    "HTTPS",
    "com",
    ".com",
    ".io",
    "md",
    "acme",
    "localhost",
    ":3000",
    "/",
    "#",
    "#sre-oncall",
    "_",
    "orders.created_at",
    "events(",
    "x_y",
    ".",
    "todo.txt",
    "notes/retro.MD",
    "ſh",
    ".ſh",
    "K",
    " ",
    ",",
    "\n",
    "é",
    "字",
    "a",
    "1",
]


def _guarded(text: str) -> list[bool]:
    lower = text[:ENTITY_CHARS].lower()
    return [
        (
            needs.search(text, 0, ENTITY_CHARS) is not None
            if isinstance(needs, re.Pattern)
            else any(n in lower for n in needs)
        )
        and pattern.search(text, 0, ENTITY_CHARS) is not None
        for pattern, _, _, needs in _ENTITIES
    ]


def _plain(text: str) -> list[bool]:
    return [pattern.search(text, 0, ENTITY_CHARS) is not None for pattern, *_ in _ENTITIES]


def test_entity_prechecks_never_skip_a_match() -> None:
    rng = random.Random(20261204)
    texts = [
        "SELECT id FROM users",
        "ſelect * from t",
        "İNSERT INTO t (a) VALUES (1)",
        "ınsert into t values (1)",
        "open https://example.com",
        "WWW.example.com",
        "Www.example.com",
        "HTTPS://EXAMPLE.COM",
        "see stripe.com/pricing",
        "open localhost:3000",
        "staging.acme.io, then",
        "post it in #sre-oncall",
        "orders.created_at",
        "read notes/retro.md",
        "run deploy.ſh",
        "x" * (ENTITY_CHARS - 3) + "https://late.example",
    ]
    texts += ["".join(rng.choice(PIECES) for _ in range(rng.randint(1, 14))) for _ in range(4000)]
    matched = 0
    for text in texts:
        assert _guarded(text) == _plain(text), text
        matched += any(_plain(text))
    assert matched > 1000  # the random texts do exercise the patterns


def _reference(words: list[str], also: dict[str, frozenset[str]] | None = None) -> str:
    """The language guess as first written: one count per language over all the words."""
    lists = stopwords()
    english = lists.get("en", frozenset())
    en_hits = sum(1 for w in words if w in english)
    best, hits = "en", 0
    for lang in LATIN:
        own = lists.get(lang, frozenset())
        more = also.get(lang, frozenset()) if also else frozenset()
        count = sum(1 for w in words if (w in own or w in more) and w not in english)
        if count > hits:
            best, hits = lang, count
    return best if hits >= MIN_HITS and hits > en_hits else "en"


@pytest.mark.parametrize("with_also", [False, True])
def test_one_pass_language_guess_matches_the_reference(with_also: bool) -> None:
    rng = random.Random(7 + with_also)
    lists = stopwords()
    extra = ["remind", "tomorrow", "datei", "fichier", "arquivo", "archivo"]
    pool = [*sorted({w for lang in ("en", *LATIN) for w in lists.get(lang, ())}), *extra]
    also = {lang: frozenset(rng.sample(pool, 40)) for lang in LATIN} if with_also else None
    guesses = set()
    for _ in range(3000):
        words = [rng.choice(pool) for _ in range(rng.randint(0, 12))]
        guess = latin_language(words, also)
        assert guess == _reference(words, also), words
        guesses.add(guess)
    assert guesses == {"en", *LATIN}  # every outcome is exercised
