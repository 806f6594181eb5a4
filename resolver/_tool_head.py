"""The lexical tool head: which of the default OpenClaw tools a turn needs, from its characters.

The offline classifier matches the prompt's words against each tool's text and the catalogs'
phrases. A request that says what it needs without a word the catalogs hold ("up on a ladder,
what's the wind doing in Galway?" needs speech; "did the Lakers win last night" a web search)
then gets no score for the tool it needs. This head reads the turn the other way: one logistic
regression per tool on the turn's character n-grams (the conversation head's features,
`resolver._ngram_head`), trained on requests labelled with the tools they need
(``benchmark/training/tool-requests.json``: 2,594 requests in eleven languages, written for the
purpose from the tool list alone by six authors who never saw the benchmark cases;
``benchmark/train-tool-ngrams.py``).

It reads the prompt whole and each of its clauses (a multi-part request is several requests),
at most `READ_CHARS` characters a turn, and a tool whose probability reaches the shipped
threshold in any of them is added to the classifier's picks, at most `MAX_ADDED` a turn, most
probable first; in a multi-part request where none reaches it, the most probable tool at
`LOW_BAR` or more. It only adds: it never removes a pick, and a turn taken for conversation, or
whose lexical picks are core tools only, gets nothing from it (`resolver._offline`). It knows
only the tools it was trained on, so it reads a surface only when nearly all of it is those
tools (`MAX_UNKNOWN_SHARE`): on an MCP-heavy host a server's own tools can serve the same need,
and the head, which never saw them, would only add.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Collection, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from ._data import built_once, shipped_table
from ._ngram_head import Positions, Table

FORMAT = "resolver-tool-ngrams/1"
FILE = "tool-ngrams.json"
MAX_ADDED = 2
"""At most this many tools a turn, the most probable first."""
READ_CHARS = 400
"""Characters the head reads a turn (the cost of a turn is its n-grams): the prompt and its
clauses while they fit, else its clauses, then the prompt's start (`ToolHead.parts`)."""
LOW_BAR = 0.05
"""In a multi-part request (two or more parts read, `ToolHead.parts`) where no tool the turn lacks
reaches the threshold, the most probable of them is still added when it reaches this
probability: such a request needs a tool per part, and the lexical picks often cover some parts
only. On the read compositional sets (2-7) this gained 10 of 720 turns at +0.2-0.4 tools a turn,
on the blind eighth and ninth 2 of 240 at +0.3, on the curated set none at +0.15. The threshold
itself at 0.05 gained 13 of the 720 and 2 curated and parallel turns at +0.35-0.55."""
MAX_UNKNOWN_SHARE = 0.25
"""The head reads a surface only when at most this share of its candidates are tools it was
not trained on."""


@dataclass(frozen=True, eq=False)
class ToolHead:
    """p(tool | text) = sigmoid(bias[tool] + w[tool] · tfidf(text)), one regression per tool."""

    tools: tuple[str, ...]
    rows: dict[str, int]
    """n-gram -> its row of `weights` and `idf`."""
    idf: Any
    """numpy float32 (n-grams): each n-gram's idf."""
    weights: Any
    """numpy float32 (n-grams x tools); weights below the training script's floor are 0."""
    biases: Any
    """numpy float32 (tools)."""
    threshold: float
    max_n: int
    _known: frozenset[str] = field(init=False, repr=False, compare=False)
    _table: Table = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "_known", frozenset(self.tools))  # once, not per turn
        object.__setattr__(self, "_table", Table(self.rows))

    def logits(self, text: str) -> Any:
        """Each tool's log-odds for `text` (numpy); None when no n-gram of it is known."""
        z = self._logits([text])
        return None if z is None else z[0]

    def _logits(self, parts: Sequence[str], whole: str | None = None) -> Any:
        """Each tool's log-odds for each of `parts` that has a known n-gram (numpy, parts x
        tools); None when none has one. The n-grams of `whole` (the prompt the parts are from;
        the first part without it) are found once, and a part that is a stretch of it (a
        clause) is counted from them; all parts go through numpy together."""
        if not parts:
            return None
        positions = Positions(self._table, self.max_n, parts[0] if whole is None else whole)
        counted = [positions.counts(part) for part in parts]
        counted = [(at, tf) for at, tf in counted if len(at)]
        if not counted:
            return None
        at = np.concatenate([at for at, _ in counted])
        tf = np.concatenate([tf for _, tf in counted]).astype(np.float32)
        sizes = [len(rows) for rows, _ in counted]
        starts = np.cumsum([0, *sizes[:-1]])
        # tf-idf (sublinear tf), unit length per part: `resolver._ngram_head.features`
        values = (1.0 + np.log(tf)) * self.idf[at]
        values /= np.repeat(np.sqrt(np.add.reduceat(values * values, starts)), sizes)
        return np.add.reduceat(self.weights[at] * values[:, None], starts, axis=0) + self.biases

    @staticmethod
    def parts(text: str, clauses: Sequence[str]) -> list[str]:
        """What the head reads of a prompt, at most `READ_CHARS` characters in all: the prompt
        whole and each of its clauses when there are two or more and they fit (a multi-part
        request is several requests), else its clauses while they fit, else its start."""
        clauses = [c for c in clauses if c.strip()]
        if len(clauses) < 2:
            return [text[:READ_CHARS]]
        if len(text) + sum(map(len, clauses)) <= READ_CHARS:
            return [text, *clauses]
        out: list[str] = []
        left = READ_CHARS
        for clause in clauses:
            if len(clause) > left:
                break
            out.append(clause)
            left -= len(clause)
        return out or [text[:READ_CHARS]]

    def picks(
        self, parts: Sequence[str], allowed: Collection[str], whole: str | None = None
    ) -> list[str]:
        """The tools in `allowed` whose probability reaches the threshold in any of `parts`
        (`parts(whole, ...)`), most probable first, at most `MAX_ADDED`; when there are none and
        `parts` are two or more, the most probable tool in `allowed` if it reaches `LOW_BAR`."""
        z = self._logits(parts, whole)
        if z is None:
            return []
        best = z.max(axis=0)
        bar = math.log(self.threshold / (1.0 - self.threshold))
        # the allowed tools, most probable first (ties to the earlier tool)
        ranked = [i for i in np.argsort(-best, kind="stable") if self.tools[i] in allowed]
        out = [self.tools[i] for i in itertools.takewhile(lambda i: best[i] >= bar, ranked)]
        if out or len(parts) < 2 or not ranked:
            return out[:MAX_ADDED]
        low = math.log(LOW_BAR / (1.0 - LOW_BAR))
        return [self.tools[ranked[0]]] if best[ranked[0]] >= low else []

    def reads(self, names: Collection[str]) -> bool:
        """Whether a surface of these candidate names is one the head may read
        (`MAX_UNKNOWN_SHARE`)."""
        if not names:
            return False
        known = self._known
        unknown = sum(1 for n in names if n not in known)
        return unknown <= MAX_UNKNOWN_SHARE * len(names)


def parse(data: object) -> ToolHead | None:
    """A `ToolHead` from the shipped file's JSON object; None when it is not one."""
    if not isinstance(data, dict) or data.get("format") != FORMAT:
        return None
    try:
        tools = tuple(str(t) for t in data["tools"])
        biases = np.array([float(b) for b in data["biases"]], dtype=np.float32)
        table = data["ngrams"]
        weights = np.zeros((len(table), len(tools)), dtype=np.float32)
        idf = np.zeros(len(table), dtype=np.float32)
        rows: dict[str, int] = {}
        for r, (gram, row) in enumerate(table.items()):
            idf[r] = float(row[0])
            rows[str(gram)] = r
            for k in range(1, len(row) - 1, 2):
                tool = int(row[k])
                if not 0 <= tool < len(tools):
                    return None
                weights[r, tool] = float(row[k + 1])
        head = ToolHead(
            tools=tools,
            rows=rows,
            idf=idf,
            weights=weights,
            biases=biases,
            threshold=float(data["threshold"]),
            max_n=int(data.get("maxN", 5)),
        )
    except (KeyError, TypeError, ValueError, AttributeError, IndexError, OverflowError):
        return None
    if not (
        0.0 < head.threshold < 1.0
        and 1 <= head.max_n <= 8
        and rows
        and tools
        and len(biases) == len(tools)
        and bool(np.isfinite(weights).all() and np.isfinite(biases).all())
        and bool((idf > 0.0).all())
    ):
        return None
    return head


@built_once
def tool_head() -> ToolHead | None:
    """The shipped head (``catalogs/tool-ngrams.json``); None when it is missing or malformed
    (the classifier then works without one)."""
    return parse(shipped_table(FILE))
