"""Which language a prompt is written in, and that language's function words.

The offline classifier reads prompts in English, Spanish, French, German, Portuguese, Italian,
Dutch, Chinese, Japanese and Korean. Function words ("der", "que", "pour", "você", "della",
"het") carry no topic; in a prompt
of that language they must not match an English tool word ("dir" is German for "you", not a
directory) nor be read as an English typo ("tal" is not "tail"). The lists are data
(``catalogs/language.json``, written from general knowledge of the languages, blind to the
benchmarks), read once on first use.

`latin_language` tells the Latin-script languages apart by their function words and the
letters only one of them writes (`letter_hits`: "Schönen Feierabend dir!" has one German
function word, "dir", and a word with "ö"): a prompt is English unless at least `MIN_HITS` of
its words are of one other language and more of them are of that language than English ones.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Mapping
from typing import Any

import orjson

from ._data import built_once, data_dir, shipped_table
from ._text import fold, stem

LATIN = ("es", "fr", "de", "pt", "it", "nl", "pl", "sv")
MIN_HITS = 2


@built_once
def _language_file() -> dict[str, Any]:
    """``catalogs/language.json``, read once (its function words and its letters)."""
    raw = orjson.loads((data_dir("catalogs") / "language.json").read_bytes())
    return raw if isinstance(raw, dict) else {}


@built_once
def stopwords() -> dict[str, frozenset[str]]:
    """Per language: its function words, folded and stemmed as `_text.tokens` makes terms."""
    out: dict[str, frozenset[str]] = {}
    for lang, words in _language_file().get("stopwords", {}).items():
        if isinstance(words, list):
            out[lang] = frozenset(stem(fold(w)) for w in words if isinstance(w, str) and w)
    return out


@built_once
def person_roles() -> re.Pattern[str] | None:
    """A possessive and a person noun of ``catalogs/language.json``'s ``persons`` ("my wife",
    "our landlord"): a person the request names by relation, which fills a keyword phrase's
    person slot as a pronoun does. ``None`` when the file lists none. One alternation of plain
    words (linear in the text)."""
    section = _language_file().get("persons", {})
    owners: list[str] = []
    nouns: list[str] = []
    for entry in section.values() if isinstance(section, dict) else ():
        if isinstance(entry, dict):
            owners += [w for w in entry.get("possessives", ()) if isinstance(w, str) and w]
            nouns += [w for w in entry.get("nouns", ()) if isinstance(w, str) and w]
    if not owners or not nouns:
        return None

    def alternation(words: list[str]) -> str:
        return "|".join(re.escape(w) for w in sorted(set(words), key=lambda w: (-len(w), w)))

    return re.compile(
        rf"(?<![\w'’])(?:{alternation(owners)})[ \t]{{1,3}}(?:{alternation(nouns)})(?![\w'’-])",
        re.IGNORECASE,
    )


@built_once
def _word_lists() -> tuple[frozenset[str], frozenset[str]]:
    """``catalogs/english-words.json``'s two lists (empty when it is missing or unreadable)."""
    raw = shipped_table("english-words.json") or {}

    def listed(key: str) -> frozenset[str]:
        words = raw.get(key)
        return (
            frozenset(w for w in words if isinstance(w, str))
            if isinstance(words, list)
            else frozenset()
        )

    return listed("words"), listed("names")


def english_words() -> frozenset[str]:
    """Correctly spelt English words (``catalogs/english-words.json``: SCOWL's American list,
    lower-case words of 5-24 letters), which typo matching leaves alone ("plant" is not a
    mistyped "plan"); empty when the file is missing or unreadable (every unknown word may then
    be a typo, as before)."""
    return _word_lists()[0]


def proper_names() -> frozenset[str]:
    """English proper names, lower-cased (the same file's ``names``: SCOWL's capitalised words
    that are not also lower-case words, "paris", "denver"). Typo matching leaves such a word
    alone where the prompt writes it capitalised ("Paris" is not a mistyped "pair"); written
    lower-case it may still be a typo ("chanel" for "channel"). Empty when the file is missing
    or unreadable."""
    return _word_lists()[1]


def latin_language(
    words: list[str],
    also: Mapping[str, frozenset[str]] | None = None,
    hints: Mapping[str, int] | None = None,
) -> str:
    """``en``, or the Latin-script language most of the prompt's function words belong to.

    `words` are the prompt's terms with stop words kept (`tokens(text, keep_stopwords=True)`).
    `also`: per language, more of its words that tell it apart (the glossary's, for a short
    prompt with too few function words), counted like its function words. `hints`: per
    language, more words of it found otherwise (`letter_hits` of the text as written).

    One pass over the words (it runs for the prompt and for each of its clauses): a word counts
    for English, or for each other language it is a function word of (`_owners`).
    """
    english, owners = _owners()
    en_hits = 0
    counts = dict.fromkeys(LATIN, 0)
    for w in words:
        if w in english:
            en_hits += 1
            continue
        langs = owners.get(w)
        if langs is not None:
            for lang in langs:
                counts[lang] += 1
        if also:
            for lang in LATIN:
                if (langs is None or lang not in langs) and w in also.get(lang, ()):
                    counts[lang] += 1
    if hints:
        for lang, count in hints.items():
            if lang in counts:
                counts[lang] += count
    best, hits = "en", 0
    for lang in LATIN:  # the first of the languages with the most hits
        if counts[lang] > hits:
            best, hits = lang, counts[lang]
    if hits >= MIN_HITS and hits > en_hits:
        return best
    return "en"


@built_once
def _owners() -> tuple[frozenset[str], dict[str, tuple[str, ...]]]:
    """English's function words, and each other Latin-script language's function word that is
    not English's -> the languages it belongs to (in `LATIN` order)."""
    lists = stopwords()
    english = lists.get("en", frozenset())
    owners: dict[str, list[str]] = {}
    for lang in LATIN:
        for w in lists.get(lang, frozenset()):
            if w not in english:
                owners.setdefault(w, []).append(lang)
    return english, {w: tuple(langs) for w, langs in owners.items()}


_WORD_OR_MARK = re.compile(r"[^\W\d_]+|[¿¡]")
"""A run of letters, or Spanish's opening question or exclamation mark (one linear scan: a
pattern that looked for a non-ASCII letter inside a word backtracked over every start of a
long ASCII run, 0.5 s for 4,000 letters)."""
MAX_HINT_CHARS = 4000
"""Letters are looked for in the first this many characters (bounded work)."""


def letter_hits(text: str) -> dict[str, int]:
    """Per language: how many words of `text` (as written, not folded) hold a letter that
    language writes and few others among `LATIN` do (``catalogs/language.json``, ``letters``):
    "ñ" for Spanish, "ã" for Portuguese, "œ" for French, "ł" for Polish, "ö" for German and
    Swedish (a letter two languages list counts for both). Empty for ASCII text."""
    head = text[:MAX_HINT_CHARS]
    if head.isascii():
        return {}
    owner = _letters()
    if not owner:
        return {}
    out: dict[str, int] = {}
    for word in _WORD_OR_MARK.findall(unicodedata.normalize("NFC", head).lower()):
        if word.isascii():
            continue
        for lang in {lang for c in word if c in owner for lang in owner[c]}:
            out[lang] = out.get(lang, 0) + 1
    return out


@built_once
def _letters() -> dict[str, tuple[str, ...]]:
    """letter -> the languages that write it, among those that list it (``catalogs/language.json``,
    ``letters``): "ö" for German and Swedish, whose function words then tell them apart."""
    letters = _language_file().get("letters", {})
    out: dict[str, tuple[str, ...]] = {}
    if isinstance(letters, dict):
        for lang, chars in letters.items():
            if lang in LATIN and isinstance(chars, str):
                for c in dict.fromkeys(chars.lower()):
                    out[c] = (*out.get(c, ()), lang)
    return out
