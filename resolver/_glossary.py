"""Cross-language glosses: a prompt's words in another language, followed by their English.

Tool descriptions are mostly English, and a host's tools (MCP servers above all) come with no
catalog keywords in other languages. The glossary (``catalogs/glossary.json``: per language,
word -> English words, written from the vocabulary of tool descriptions, blind to the
benchmarks) lets the offline classifier read "crea una incidencia en el repositorio" as "crea
create una incidencia issue en el repositorio repository": each glossed word keeps its place,
so the gloss stays in its clause. Latin-script glosses apply only to a prompt written in that
language (`_lang.latin_language`); Chinese and Japanese glosses wherever their word occurs,
Korean ones at the start of a word (`_text.find_word`). Only adds words: a prompt's own words
are untouched.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass
from functools import cached_property

from ._data import built_once, shipped_table
from ._lang import LATIN, latin_language, letter_hits
from ._text import FirstChars, find_word, fold, has_cjk, tokens

MAX_GLOSSED_CHARS = 4000
"""Only the first this many characters of a prompt are glossed (bounded work per turn)."""
MAX_KEY_WORDS = 3
_WORD = re.compile(r"[^\W\d_][\w'-]*", re.UNICODE)
_CJK_LANGS = ("zh", "ja", "ko")


@dataclass(frozen=True)
class Glossary:
    latin: dict[str, dict[tuple[str, ...], str]]
    """language -> folded word sequence -> the English gloss (space-joined)"""
    cjk: tuple[tuple[str, str], ...]
    """(folded CJK word, English gloss), longest words first"""
    latin_terms: dict[str, frozenset[str]]
    """language -> its one-word glossary words as terms (`_text.tokens`): they tell the
    language apart (`_lang.latin_language`)"""

    @cached_property
    def cjk_first(self) -> FirstChars:
        return FirstChars([word for word, _ in self.cjk])


@built_once
def glossary() -> Glossary | None:
    """The shipped glossary, or None when it is missing or unreadable."""
    raw = shipped_table("glossary.json")
    langs = raw.get("languages") if raw is not None else None
    if not isinstance(langs, dict):
        return None
    latin: dict[str, dict[tuple[str, ...], str]] = {}
    cjk: dict[str, str] = {}
    for lang, entries in langs.items():
        if not isinstance(entries, dict):
            continue
        for word, english in entries.items():
            if not isinstance(word, str) or not isinstance(english, list):
                continue
            gloss = " ".join(dict.fromkeys(e for e in english if isinstance(e, str) and e))
            if not gloss:
                continue
            folded = fold(word).strip()
            if lang in _CJK_LANGS and has_cjk(folded):
                folded = folded.replace(" ", "")
                if len(folded) >= 2 and folded not in cjk:
                    cjk[folded] = gloss
            elif lang in LATIN:
                key = tuple(folded.split())
                if key and len(key) <= MAX_KEY_WORDS and len(folded) >= 3:
                    latin.setdefault(lang, {}).setdefault(key, gloss)
    ordered = tuple(sorted(cjk.items(), key=lambda kv: (-len(kv[0]), kv[0])))
    terms = {
        lang: frozenset(t for (word,) in (k for k in keys if len(k) == 1) for t in tokens(word))
        for lang, keys in latin.items()
    }
    return Glossary(latin=latin, cjk=ordered, latin_terms=terms)


def gloss(text: str, known: Callable[[str], bool] | None = None) -> str:
    """`text` with the English of its other-language words inserted after them. A word the
    candidates' own text already has (``known``: the classifier's vocabulary, a catalog's
    keywords in that language) is left alone: its match needs no help, and a second, English
    match would only inflate its tool against the others."""
    table = glossary()
    if table is None or not text:
        return text
    head, tail = text[:MAX_GLOSSED_CHARS], text[MAX_GLOSSED_CHARS:]
    inserts: list[tuple[int, str]] = []
    # a short prompt may have too few function words to tell its language: its glossary
    # words count too
    lang = latin_language(
        tokens(head, keep_stopwords=True), also=table.latin_terms, hints=letter_hits(head)
    )
    entries = table.latin.get(lang) if lang != "en" else None
    if entries:
        words = [(m.end(), fold(m.group())) for m in _WORD.finditer(head)]
        i = 0
        while i < len(words):
            for size in range(min(MAX_KEY_WORDS, len(words) - i), 0, -1):
                key = tuple(w for _, w in words[i : i + size])
                english = entries.get(key)
                if english is not None:
                    if known is None or not known(" ".join(key)):
                        inserts.append((words[i + size - 1][0], english))
                    i += size
                    break
            else:
                i += 1
    if table.cjk and has_cjk(head):
        folded = fold(head)
        if len(folded) == len(head):  # positions line up (NFKC kept every character)
            taken = [False] * len(folded)
            for k in table.cjk_first.candidates(folded):
                word, english = table.cjk[k]
                start = find_word(folded, word)
                if start < 0 or any(taken[start : start + len(word)]):
                    continue
                for k in range(start, start + len(word)):
                    taken[k] = True
                if known is None or not known(word):
                    inserts.append((start + len(word), english))
    if not inserts:
        return text
    out: list[str] = []
    last = 0
    for pos, english in sorted(inserts):
        out.append(head[last:pos])
        out.append(f" {english} ")
        last = pos
    out.append(head[last:])
    return "".join(out) + tail
