"""Conversation or task? Which clauses of a prompt are conversation, so they need no tool.

A clause made of a conversation marker — thanks, greetings, farewells, acknowledgements,
laughter, compliments, small talk, "explain ...", "translate '...'", "write a haiku ..." (the
catalog's ``conversation`` section, any language) — and at most `CONVERSATION_LEFT` other words
is conversation; the offline classifier matches only the other clauses (`task_text`). Quoted
text is payload: it neither makes a clause a task nor splits it. A marker that takes a topic
("thanks for ...", "write a haiku about ...", "explain ...", the catalog's ``topical`` list)
makes its clause conversation whatever its length, when the caller finds no task in the rest
(`task_text`'s ``plain``: no value a tool would act on, weak evidence only).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from functools import cached_property

from ._data import built_once
from ._lang import stopwords
from ._text import STOPWORDS, FirstChars, find_word, fold, has_cjk, tokens

CONVERSATION_LEFT = 1
"""A clause with a conversation marker stays conversation with at most this many other words."""
CJK_CHARS_PER_WORD = 4
"""How many CJK characters count as one word of what is left of a clause."""


@dataclass(frozen=True)
class Markers:
    """Conversation markers, ready to match: Latin ones as term sequences (stop words kept),
    CJK ones as folded strings."""

    latin: Mapping[str, tuple[tuple[str, ...], ...]]
    """first term -> marker term sequences starting with it"""
    cjk: tuple[str, ...]

    @cached_property
    def cjk_first(self) -> FirstChars:
        return FirstChars(self.cjk)

    @classmethod
    def of(cls, phrases: Sequence[str]) -> Markers | None:
        if not phrases:
            return None
        latin: dict[str, list[tuple[str, ...]]] = {}
        cjk: list[str] = []
        for phrase in phrases:
            if has_cjk(phrase):
                folded = fold(phrase).replace(" ", "")
                if len(folded) >= 2:
                    cjk.append(folded)
                continue
            # all its words, function words too, in order; a word or two may come between
            # ("write a haiku" in "write me a haiku")
            terms = tuple(tokens(phrase, keep_stopwords=True))
            if terms:
                latin.setdefault(terms[0], []).append(terms)
        return cls({k: tuple(v) for k, v in latin.items()}, tuple(dict.fromkeys(cjk)))


_CLAUSE_SPLIT = re.compile(
    # a full stop before a letter or digit, and a comma between digits, end no clause:
    # "35.6586", "todo.txt", "v2.4.1" and "1,200" are one word each
    r"(?:[!?;。！？；，、\n…~〜]|\.(?!\w)|(?<!\d),|,(?!\d))+|\s[-–—]+\s|(?<!\s)\s++(?:but|then|also)\s+",
    re.IGNORECASE,
)
_QUOTED = re.compile(
    r"(?<![A-Za-z0-9])['‘](?:[^'’\n]|(?<=[A-Za-z])['’](?=[A-Za-z])){1,400}['’](?![A-Za-z0-9])"
    r"|[\"“][^\"”\n]{1,400}[\"”]|「[^」]{1,400}」|『[^』]{1,400}』|«[^»]{1,400}»"
)
"""Quoted text: what to translate, send or explain — payload, not the request."""
_HIDDEN = re.compile("\x00(\\d+)\x00")


def conversational(markers: Markers | None, clause: str) -> bool:
    """Whether a clause is conversation, not a task: it has a conversation marker ("thanks
    for ...", "good night", "explain ...", "translate '...'") and, once the marker, quoted text
    and function words are set aside, at most `CONVERSATION_LEFT` words (CJK: about three
    characters a word) remain."""
    if markers is None:
        return False
    terms = tokens(clause, keep_stopwords=True)
    covered = [False] * len(terms)
    found = False
    for _, spots in _latin_markers(markers, terms):
        found = True
        for j in spots:
            covered[j] = True
    folded = fold(clause).replace(" ", "")
    cjk_left = folded
    for k in markers.cjk_first.candidates(cjk_left) if markers.cjk and has_cjk(folded) else ():
        cjk_marker = markers.cjk[k]
        if cjk_marker in cjk_left:
            found = True
            cjk_left = cjk_left.replace(cjk_marker, " ")
    if not found:
        return False
    function = _function_words()
    left = [
        t
        for j, t in enumerate(terms)
        if not covered[j]
        and not has_cjk(t)
        and t not in STOPWORDS
        and t not in function
        and not t.isdigit()
        and len(t) > 1
    ]
    cjk_chars = sum(1 for ch in cjk_left if has_cjk(ch))
    return len(left) + cjk_chars / CJK_CHARS_PER_WORD <= CONVERSATION_LEFT


def has_marker(markers: Markers | None, clause: str, terms: Sequence[str] | None = None) -> bool:
    """Whether `clause` holds one of `markers`: a Latin one's words in order (a word or two may
    come between), a CJK one as written (a Korean one at the start of a word). `terms`: the
    clause's `tokens` with stop words kept, when the caller has them already."""
    return markers is not None and next(markers_in(markers, clause, terms), None) is not None


def markers_in(
    markers: Markers, clause: str, terms: Sequence[str] | None = None
) -> Iterator[str | tuple[str, ...]]:
    """The `markers` `clause` holds (as `has_marker` finds them): each CJK one as its folded
    string, each Latin one as its term sequence."""
    if markers.cjk and has_cjk(clause):
        folded = fold(clause)
        joined = folded.replace(" ", "")  # CJK markers are kept without spaces (`Markers.of`)
        # `in` first: a marker that is nowhere in the text costs no word search
        for m in map(markers.cjk.__getitem__, markers.cjk_first.candidates(joined)):
            if m in joined and (find_word(folded, m) >= 0 or find_word(joined, m) >= 0):
                yield m
    if markers.latin:
        if terms is None:
            terms = tokens(clause, keep_stopwords=True)
        for marker, _ in _latin_markers(markers, terms):
            yield marker


def without_markers(markers: Markers, clause: str) -> tuple[str, frozenset[str]]:
    """What `clause` says besides `markers`: its text without the CJK markers it holds, and
    the terms of the Latin ones (for the caller to leave out of its terms): the topic of
    "explain the difference between TCP and UDP" is "TCP and UDP", not "difference"."""
    terms = tokens(clause, keep_stopwords=True)
    said = {t for marker, _ in _latin_markers(markers, terms) for t in marker}
    text = clause
    if markers.cjk and has_cjk(clause):
        text = fold(clause)
        for k in markers.cjk_first.candidates(text.replace(" ", "")):
            text = text.replace(markers.cjk[k], " ")
    return text, frozenset(said)


def _latin_markers(
    markers: Markers, terms: Sequence[str]
) -> Iterator[tuple[tuple[str, ...], list[int]]]:
    """Each Latin marker found in `terms`, with the positions of its words (`_in_order`)."""
    have = set(terms)  # a marker with a word the clause lacks is not looked for in order
    for i, term in enumerate(terms):
        for marker in markers.latin.get(term, ()):
            if len(marker) > 1 and not have.issuperset(marker[1:]):
                continue
            spots = _in_order(terms, i, marker)
            if spots:
                yield marker, spots


def _in_order(terms: Sequence[str], start: int, marker: Sequence[str]) -> list[int]:
    """Positions of `marker`'s words in `terms` from `start`, in order, each at most two
    words after the previous one ([] when they are not there). No content word may come
    between two function words of a marker: "write me a short haiku" holds "write a haiku" and
    "explain recursion like I'm five" holds "explain like I'm five", but "what address is at
    ..." does not hold "what is" (a question about one address, not a request to define
    something)."""
    spots = [start]
    at = start
    for word in marker[1:]:
        nxt = next((j for j in range(at + 1, min(len(terms), at + 3)) if terms[j] == word), -1)
        if nxt < 0 or (
            nxt > at + 1
            and _is_function(word)
            and _is_function(terms[at])
            and not _is_function(terms[at + 1])
        ):
            return []
        spots.append(nxt)
        at = nxt
    return spots


def _is_function(term: str) -> bool:
    return term in STOPWORDS or term in _function_words()


@built_once
def _function_words() -> frozenset[str]:
    """Every language's function words (for counting what a conversational clause holds)."""
    return frozenset().union(*stopwords().values())


def task_text(
    markers: Markers | None,
    prompt: str,
    topical: Markers | None = None,
    plain: Callable[[str], bool] | None = None,
) -> str:
    """The prompt without its conversational clauses ("thanks! now remind me at 9" -> "now
    remind me at 9"); '' when every clause is conversation. Quoted text is set aside while the
    clauses are judged ("translate 'I'm late, sorry' to French" is one clause, conversation)
    and kept in the clauses that stay.

    `topical`: markers that take a topic. A clause with one of them is conversation also when it
    holds more words, if ``plain(clause)`` (quoted text left out) says the rest asks for no
    tool: "write me a haiku about a cat ignoring its owner", "thanks for the reminder earlier"."""
    if markers is None:
        return prompt
    quoted: list[str] = []

    def hide(match: re.Match[str]) -> str:
        quoted.append(match.group(0))
        return f"\x00{len(quoted) - 1}\x00"

    masked = _QUOTED.sub(hide, prompt)  # quoted text is payload: it neither makes a clause
    clauses = [c for c in _CLAUSE_SPLIT.split(masked) if c and c.strip()]  # a task nor splits it
    if not clauses:
        return prompt

    def chat(clause: str) -> bool:
        if conversational(markers, clause):
            return True
        if topical is None or plain is None or not has_marker(topical, clause):
            return False
        return plain(_HIDDEN.sub(" ", clause))  # quoted text is payload here too

    kept = [c for c in clauses if not chat(c)]
    if len(kept) == len(clauses):
        return prompt
    text = " . ".join(c.strip() for c in kept)
    return _HIDDEN.sub(lambda m: quoted[int(m.group(1))], text)
