"""Text normalisation and tokenisation for the offline classifier and the keyword cache.

- identifiers are split: ``sessions_spawn`` -> sessions, spawn; ``getWeatherInfo`` -> get,
  weather, info; ``DNASequence`` -> dna, sequence; a camel-case word also counts whole
  (``WhatsApp`` -> whatsapp, whats, app), the way keyword lists and users write brands;
- Latin words are lower-cased, accents folded (``recuérdame`` -> recuerdame) and stemmed with
  the English Snowball stemmer (``reminders`` -> remind, ``scheduling`` -> schedul);
- CJK runs (Chinese, Japanese kana/kanji, Korean hangul) become overlapping character
  bigrams (and the single characters of runs of one), which match without a dictionary.
"""

from __future__ import annotations

import re
import threading
import unicodedata
from collections.abc import Sequence
from functools import lru_cache
from typing import Any

MAX_WORD_CHARS = 48
"""Latin-script words longer than this are not index or query terms."""

_CAMEL = re.compile(r"(?<=[a-z0-9])(?=[A-Z])|(?<=[A-Z])(?=[A-Z][a-z])")
_WORD = re.compile(
    r"[a-z0-9]+|[\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff\uac00-\ud7af\u1100-\u11ff]+"
)
_CJK = re.compile(
    r"[\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff\uac00-\ud7af\u1100-\u11ff]"
)

STOPWORDS = frozenset(
    [
        "a",
        "an",
        "the",
        "and",
        "or",
        "but",
        "if",
        "then",
        "else",
        "of",
        "to",
        "in",
        "on",
        "at",
        "by",
        "for",
        "with",
        "from",
        "into",
        "onto",
        "about",
        "as",
        "is",
        "are",
        "was",
        "were",
        "be",
        "been",
        "being",
        "am",
        "do",
        "does",
        "did",
        "doing",
        "have",
        "has",
        "had",
        "having",
        "i",
        "me",
        "my",
        "mine",
        "we",
        "us",
        "our",
        "you",
        "your",
        "he",
        "him",
        "his",
        "she",
        "her",
        "it",
        "its",
        "they",
        "them",
        "their",
        "this",
        "that",
        "these",
        "those",
        "there",
        "here",
        "what",
        "which",
        "who",
        "whom",
        "whose",
        "when",
        "where",
        "why",
        "how",
        "all",
        "any",
        "both",
        "each",
        "few",
        "more",
        "most",
        "other",
        "some",
        "such",
        "no",
        "nor",
        "not",
        "only",
        "own",
        "same",
        "so",
        "than",
        "too",
        "very",
        "can",
        "could",
        "will",
        "would",
        "shall",
        "should",
        "may",
        "might",
        "must",
        "just",
        "also",
        "please",
        "pls",
        "thanks",
        "thank",
        "hi",
        "hello",
        "hey",
        "ok",
        "okay",
        "yes",
        "yeah",
        "let",
        "lets",
        "let's",
        "want",
        "need",
        "like",
        "get",
        "got",
        "make",
        # a light verb like "get" and "make": "how long would it take", "take a look" ask for
        # nothing; "take a screenshot" says what it takes
        "take",
        "takes",
        "taking",
        "took",
        "taken",
        "use",
        "using",
        "one",
        "two",
        "up",
        "out",
        "over",
        "again",
        "still",
        "now",
        "then",
        "something",
        "anything",
        "thing",
        "things",
        "some",
        "way",
        "really",
        "y",
        "el",
        "la",
        "los",
        "las",
        "un",
        "una",
        "de",
        "del",
        "en",
        "por",
        "para",
        "con",
        "que",
        "es",
        "se",
        "lo",
        "al",
        "como",
        "mas",
        "le",
        "su",
        "sus",
        # what an English contraction leaves once its apostrophe splits it ("would've",
        # "you're", "we'll", "don't", "isn't"): no topic, and not a tool's word
        *("ve", "re", "ll", "don", "doesn", "didn", "isn", "aren", "wasn", "weren"),
        *("hasn", "haven", "hadn", "wouldn", "couldn", "shouldn", "mustn", "needn", "ain"),
    ]
)


@lru_cache(maxsize=4096)
def _fold_char(ch: str) -> str:
    if ord(ch) < 0x0370:  # Latin (incl. extended) and Greek-free ranges: strip accents
        return "".join(c for c in unicodedata.normalize("NFD", ch) if not unicodedata.combining(c))
    return ch


def fold(text: str) -> str:
    """NFKC, lower-case, and strip accents from Latin letters only.

    Hangul syllables and kana with voicing marks stay composed (a plain NFKD would split 서울
    into jamo and turn で into て).
    """
    if text.isascii():  # NFKC and accent folding leave ASCII as it is
        return text.lower()
    return "".join(_fold_char(ch) for ch in unicodedata.normalize("NFKC", text).lower())


_STEMMERS = threading.local()


def _english() -> Any:
    """This thread's English stemmer: a Snowball stemmer keeps per-word state, so one shared
    instance garbles words stemmed at once on two threads (the sidecar warms the offline
    index in a worker thread while a turn runs)."""
    stemmer = getattr(_STEMMERS, "english", None)
    if stemmer is None:
        import snowballstemmer  # late: loaded on the first stemmed word, not at import

        stemmer = _STEMMERS.english = snowballstemmer.stemmer("english")
    return stemmer


ABBREVIATIONS: dict[str, str] = {
    "info": "inform",
    "infos": "inform",
    "stat": "statist",
    "stats": "statist",
    "temp": "temperatur",
    "temps": "temperatur",
    "doc": "document",
    "docs": "document",
    "config": "configur",
    "conf": "configur",
    "cfg": "configur",
    "calc": "calcul",
    "spec": "specif",
    "specs": "specif",
    "desc": "descript",
    "num": "number",
    "nums": "number",
    "img": "imag",
    "imgs": "imag",
    "pic": "pictur",
    "pics": "pictur",
    "auth": "authent",
    "analysi": "analyz",
    "analyt": "analyz",
    "msg": "messag",
    "msgs": "messag",
    "repo": "repositori",
    "repos": "repositori",
    "env": "environ",
    "dir": "directori",
    "dirs": "directori",
    "db": "databas",
    "applic": "app",
    "avg": "averag",
    "qty": "quantiti",
    "addr": "address",
    "sched": "schedul",
    "pref": "prefer",
    "prefs": "prefer",
    "org": "organ",
    "admin": "administr",
    "mgmt": "manag",
    "mgr": "manag",
    "dept": "depart",
    "govt": "govern",
    "vid": "video",
    "vids": "video",
    "sync": "synchron",
    "recs": "recommend",
}
"""Abbreviations and word families the stemmer leaves apart, mapped to one stem (as they are
used in tool names and by users: get_employee_info / "employee information", analyze_data /
"data analysis")."""


@lru_cache(maxsize=131072)
def stem(word: str) -> str:
    """English Snowball (Porter2) stem of a lower-case ASCII word (abbreviations mapped to the
    full word's stem, `ABBREVIATIONS`); other words unchanged."""
    if not word.isascii() or word.isdigit():
        return word
    if len(word) <= 3:
        return ABBREVIATIONS.get(word, word)
    stemmed: str = _english().stemWord(word)
    return ABBREVIATIONS.get(stemmed, stemmed)


def split_identifier(name: str) -> str:
    """``sessions_spawn``/``getWeatherInfo``/``web-fetch`` -> space-separated words."""
    spaced = re.sub(r"[_\-./:]+", " ", name)
    return _CAMEL.sub(" ", spaced)


def has_cjk(text: str) -> bool:
    """True when the text has a Chinese, Japanese or Korean character."""
    return _CJK.search(text) is not None


_HANGUL = re.compile("[\u1100-\u11ff\u3130-\u318f\uac00-\ud7a3]")


def find_word(text: str, word: str) -> int:
    """Where the CJK `word` occurs in `text`, -1 when it does not. Chinese and Japanese are
    written without spaces: anywhere. Korean separates its words with spaces and puts particles
    and endings after them ("슬랙으로"): a Korean word starts a word of the text, never sits
    inside one — "코드" (code) is not in "디스코드" (Discord)."""
    start = text.find(word)
    if start <= 0 or not _HANGUL.match(word):
        return start
    while start > 0 and _HANGUL.match(text[start - 1]):
        start = text.find(word, start + 1)
    return start


class FirstChars:
    """Words to look for in texts, grouped by their first character: a text tries only the
    words whose first character it holds (a catalog has thousands of CJK keyword words; a
    clause holds a few dozen characters). The words keep their order."""

    def __init__(self, words: Sequence[str]):
        self.words = tuple(words)
        by_first: dict[str, list[int]] = {}
        for k, word in enumerate(self.words):
            if word:
                by_first.setdefault(word[0], []).append(k)
        self._by_first = {c: tuple(v) for c, v in by_first.items()}

    def candidates(self, text: str) -> list[int]:
        """The positions (in `words`) of the words whose first character is in `text`, in
        order: a superset of the words `text` contains."""
        hits = [k for c in self._by_first.keys() & set(text) for k in self._by_first[c]]
        hits.sort()
        return hits


def cjk_words(phrase: str) -> list[str]:
    """The whitespace-separated words of a keyword phrase that contain CJK characters (2+
    characters, folded): matched whole against a prompt, where a bigram alone is ambiguous."""
    return [w for w in fold(phrase).split() if len(w) >= 2 and has_cjk(w)]


def _cjk_grams(run: str) -> list[str]:
    if len(run) == 1:
        return [run]
    return [run[i : i + 2] for i in range(len(run) - 1)]


_CAMEL_WORD = re.compile(r"(?<![A-Za-z0-9])[A-Za-z][a-z0-9]*[a-z0-9][A-Z][A-Za-z0-9]*")
"""A word with a lower-to-upper case change inside (WhatsApp, iPhone, getWeatherInfo)."""


def _with_joined(text: str) -> str:
    """Each camel-case word preceded by its whole lower-cased form: "WhatsApp" is the word
    "whatsapp" (as users and keyword lists write it) as well as "whats" + "app"."""
    if _CAMEL_WORD.search(text) is None:
        return text
    return _CAMEL_WORD.sub(lambda m: f"{m.group(0).lower()} {m.group(0)}", text)


PHRASAL = True
_PHRASAL = {
    ("look", "up"): "lookup",
    ("log", "in"): "login",
    ("log", "into"): "login",
    ("log", "on"): "login",
    ("sign", "in"): "login",
    ("sign", "into"): "login",
    ("sign", "up"): "signup",
    ("set", "up"): "setup",
}
"""English phrasal verbs whose particle is a stop word, and the one word they are: "look up"
(or "look it up") is also the term "lookup", "log in", "log into",
"sign in" also "login", "set up" also "setup". Without it the particle is dropped and "look up
the deadline" is the word "look", which a dozen tools' texts share ("look at the screen"); the
keyword "look up" of a search tool and the word "login" of a browser tool would never meet the
request that says them."""
_PHRASAL_GAP = frozenset({"it", "them", "this", "that", "these", "those"})
"""Words that may stand between a phrasal verb and its particle ("look it up")."""

_Analysis = tuple[tuple[str, ...], tuple[str, ...], tuple[tuple[str, str, bool], ...]]
_MEMO_CHARS = 2_000
"""Texts up to this long keep their analysis in a small cache (`_analysed_memo`): a turn
tokenizes the same prompt and clauses several times (conversation, clauses, look-up, query)."""


def tokens(
    text: str,
    *,
    keep_stopwords: bool = False,
    words: dict[str, str] | None = None,
    every: list[str] | None = None,
) -> list[str]:
    """Index terms of a text: stemmed Latin words and CJK bigrams, in order. `words`, when
    given, also records each Latin term's word as written (word -> term; an index builds both
    in one pass); `every`, when given, gets the terms with stopwords kept (the same pass serves
    a query and its language guess)."""
    terms, kept, written = _analysed_memo(text) if len(text) <= _MEMO_CHARS else _analysed(text)
    if words is not None:
        for word, term, stop in written:
            if keep_stopwords or not stop:
                words.setdefault(word, term)
    if every is not None:
        every.extend(kept)
    return list(kept if keep_stopwords else terms)


def _analysed(text: str) -> _Analysis:
    """One pass over `text`: its terms without stop words, its terms with them, and each Latin
    word as written with its term and whether it is a stop word."""
    terms: list[str] = []
    kept: list[str] = []
    written: dict[str, tuple[str, bool]] = {}
    for match in _WORD.finditer(fold(split_identifier(_with_joined(text)))):
        word = match.group(0)
        if _CJK.match(word):
            grams = _cjk_grams(word)
            terms.extend(grams)
            kept.extend(grams)
            continue
        if len(word) > MAX_WORD_CHARS:
            continue  # a hash, a base64 blob, minified code: never a useful term
        term = stem(word)
        stop = word in STOPWORDS or len(word) == 1
        if PHRASAL and stop and kept:
            verb = kept[-2] if kept[-1] in _PHRASAL_GAP and len(kept) > 1 else kept[-1]
            joined = _PHRASAL.get((verb, word))
            if joined is not None:
                terms.append(joined)
        kept.append(term)
        if not stop:
            terms.append(term)
        written.setdefault(word, (term, stop))
    return tuple(terms), tuple(kept), tuple((w, t, stop) for w, (t, stop) in written.items())


_analysed_memo = lru_cache(maxsize=512)(_analysed)


def normalize_prompt(prompt: str) -> str:
    """The exact-match key of a prompt: NFKC, case-folded, whitespace collapsed."""
    return " ".join(unicodedata.normalize("NFKC", prompt).casefold().split())


def schema_text(schema: Any, limit: int = 1500) -> str:
    """The words of a tool's parameter schema, for matching: property names, enum values and
    short property descriptions, in schema order, at most `limit` characters ("subCommand:
    history pause restart resume status undo"). Not a schema renderer: the LLM classifier is
    never shown parameters."""
    parts: list[str] = []
    size = 0

    def add(text: str) -> bool:
        nonlocal size
        if size >= limit:
            return False
        parts.append(text)
        size += len(text) + 1
        return True

    def walk(node: Any, depth: int) -> None:
        if depth > 6 or size >= limit or not isinstance(node, dict):
            return
        props = node.get("properties")
        if isinstance(props, dict):
            for name, sub in list(props.items())[:64]:
                if not isinstance(name, str) or not add(name):
                    return
                if isinstance(sub, dict):
                    desc = sub.get("description")
                    if isinstance(desc, str) and desc:
                        add(desc[:160])
                    enum = sub.get("enum")
                    if isinstance(enum, list):
                        add(" ".join(str(v) for v in enum[:32] if isinstance(v, str | int)))
                    walk(sub, depth + 1)
        for key in ("items", "anyOf", "oneOf", "allOf"):
            sub = node.get(key)
            for item in sub if isinstance(sub, list) else [sub]:
                walk(item, depth + 1)

    if isinstance(schema, str):
        return schema[:limit]
    walk(schema, 0)
    return " ".join(parts)[:limit]
