"""English synonyms: the word a user types for an action or object, and the words tool names
and descriptions use for the same thing ("find" / "search", "visit" / "navigate", "ticket" /
"issue", "folder" / "directory").

A host's tools (an MCP server's above all) come with no catalog keywords, so a request matches
them only through their own names and descriptions; a user who says "find the page" misses a
tool called ``post-search``. The table (``catalogs/synonyms.json``: groups of interchangeable
English words and short phrases, written from the tool vocabulary of the default and MCP
surfaces, blind to the benchmarks) lets the offline classifier add a prompt word's synonyms to
its query at a fraction of the word's weight (`_offline.SYNONYM_WEIGHT`): evidence, never as
strong as the word itself. A synonym scores only the candidates without catalog keywords (a
catalogued tool's keywords already hold its users' words). Only adds terms.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from functools import cached_property

from ._data import built_once, shipped_table
from ._text import tokens

MAX_GROUP = 12
"""Entries read per group (a longer group is cut: a synonym table is not a topic list)."""
MAX_PHRASE_TERMS = 3
MAX_CUES = 48
"""Cues read per related word (`related`): a bound on the work per entry, above the longest
shipped entry (the everyday supplement made "places" 33 long)."""


@dataclass(frozen=True)
class Synonyms:
    single: Mapping[str, tuple[tuple[str, float], ...]]
    """a one-word entry's term -> (a term of another entry of its groups, its share: one over
    that entry's word count: "pr" brings "pull" and "request" at half each), ..."""
    phrases: Mapping[tuple[str, ...], tuple[tuple[str, float], ...]]
    """a multi-word entry's terms (function words kept: "text to speech") -> the same"""
    longest: int = 1

    @cached_property
    def targets(self) -> frozenset[str]:
        """Every term a synonym can add."""
        return frozenset(
            t for table in (self.single, self.phrases) for v in table.values() for t, _ in v
        )

    def expand(self, words: Sequence[str], every: Sequence[str]) -> dict[str, float]:
        """The synonym terms of a text whose terms are `words` (without function words) and
        `every` (with them), each with its share, in first-seen order, without the text's own
        terms."""
        own = set(words)
        out: dict[str, float] = {}
        found = [self.single.get(term, ()) for term in words]
        if self.phrases:
            for size in range(2, self.longest + 1):
                for i in range(len(every) - size + 1):
                    found.append(self.phrases.get(tuple(every[i : i + size]), ()))
        for pairs in found:
            for term, share in pairs:
                if term not in own and share > out.get(term, 0.0):
                    out[term] = share
        return out


@dataclass
class _Builder:
    """A table being read: an entry's terms -> the terms it brings, with their shares."""

    single: dict[str, dict[str, float]] = field(default_factory=dict)
    phrases: dict[tuple[str, ...], dict[str, float]] = field(default_factory=dict)

    def add(self, entry: tuple[str, ...], brings: Mapping[str, float]) -> None:
        if len(entry) == 1:
            _merge(self.single.setdefault(entry[0], {}), brings)
        else:
            _merge(self.phrases.setdefault(entry, {}), brings)

    def table(self) -> Synonyms:
        return Synonyms(
            single={k: tuple(v.items()) for k, v in self.single.items()},
            phrases={k: tuple(v.items()) for k, v in self.phrases.items()},
            longest=max((len(k) for k in self.phrases), default=1),
        )


def _merge(into: dict[str, float], shares: Mapping[str, float]) -> None:
    for term, share in shares.items():
        into[term] = max(into.get(term, 0.0), share)


def _entries(group: object, limit: int = MAX_GROUP) -> list[tuple[str, ...]]:
    if not isinstance(group, list):
        return []
    out: list[tuple[str, ...]] = []
    for entry in group[:limit]:
        if isinstance(entry, str):
            terms = tuple(tokens(entry, keep_stopwords=True))
            if 0 < len(terms) <= MAX_PHRASE_TERMS and terms not in out:
                out.append(terms)
    return out


@built_once
def synonyms() -> Synonyms | None:
    """The shipped table, or None when it is missing or unreadable."""
    raw = shipped_table("synonyms.json")
    groups = raw.get("groups") if raw is not None else None
    if not isinstance(groups, list):
        return None
    built = _Builder()
    for group in groups:
        entries = _entries(group)
        # what each entry brings as another's synonym: its content words, a multi-word entry's
        # sharing its weight
        brings = [{t: 1.0 / len(c) for t in c} for c in (tokens(" ".join(e)) for e in entries)]
        for k, entry in enumerate(entries):
            others: dict[str, float] = {}
            for j, shares in enumerate(brings):
                if j != k:
                    _merge(others, {t: v for t, v in shares.items() if t not in entry})
            if others:
                built.add(entry, others)
    return built.table()


@built_once
def related() -> Synonyms | None:
    """The shipped related-words table (``catalogs/related.json``), or None when it is missing
    or unreadable: a cue a request says ("rows", "pod", "lat/lng") and the word tool texts use
    for what it implies ("sql", "kubernetes", "coordinates"). Directional: a cue brings its
    target, a target brings no cue (a request that says "sql" is not about "rows")."""
    raw = shipped_table("related.json")
    entries = raw.get("related") if raw is not None else None
    if not isinstance(entries, list):
        return None
    built = _Builder()
    for entry in entries:
        if not isinstance(entry, dict) or not isinstance(entry.get("target"), str):
            continue
        brings = tokens(entry["target"])
        if len(brings) != 1:
            continue  # a target is one word
        for cue in _entries(entry.get("cues"), MAX_CUES):
            if brings[0] not in cue:
                built.add(cue, {brings[0]: 1.0})
    return built.table() if built.single or built.phrases else None


MAX_PRODUCT_WORDS = 12
"""Concept words read per product (`products`)."""
MAX_PRODUCT_NAME_TERMS = 3


@built_once
def products() -> Mapping[tuple[str, ...], tuple[str, ...]]:
    """The shipped product table (``catalogs/products.json``): a product's name or alias, as
    terms ("postgres", "google maps") -> the terms of the words a user says for what it holds
    or does without naming it ("database", "sql", "table", "rows"). Empty when the file is
    missing or unreadable. A tool whose name holds a product's name (an MCP server is named
    after its product: ``postgres__query``) is indexed with those words too
    (`_offline.PRODUCT_WEIGHT`)."""
    raw = shipped_table("products.json")
    entries = raw.get("products") if raw is not None else None
    if not isinstance(entries, list):
        return {}
    out: dict[tuple[str, ...], dict[str, None]] = {}
    for entry in entries:
        if not isinstance(entry, dict):
            continue
        aliases = entry.get("aliases")
        names = [entry.get("name"), *(aliases if isinstance(aliases, list) else ())]
        means = entry.get("means")
        words: dict[str, None] = {}
        for word in means[:MAX_PRODUCT_WORDS] if isinstance(means, list) else ():
            if isinstance(word, str):
                words.update(dict.fromkeys(tokens(word)))
        keys = [tuple(tokens(n.replace("-", " "))) for n in names if isinstance(n, str)]
        named = {term for key in keys for term in key}  # a product's words are not its names
        for key in keys:
            if 0 < len(key) <= MAX_PRODUCT_NAME_TERMS:
                own = out.setdefault(key, {})
                own.update((w, None) for w in words if w not in named)
    return {key: tuple(words) for key, words in out.items() if words}


def products_in(
    table: Mapping[tuple[str, ...], tuple[str, ...]], terms: Sequence[str]
) -> list[str]:
    """The concept terms of every product whose name is a run of `terms` (a server's name's
    terms), in first-seen order. The longest name wins: a run inside a longer product's name
    is not a product of its own ("google maps" is not Google's search)."""
    found: dict[str, None] = {}
    i = 0
    while i < len(terms):
        for size in range(min(MAX_PRODUCT_NAME_TERMS, len(terms) - i), 0, -1):
            words = table.get(tuple(terms[i : i + size]))
            if words is not None:
                found.update(dict.fromkeys(words))
                i += size
                break
        else:
            i += 1
    return [t for t in found if t not in terms]
