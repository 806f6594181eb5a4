"""The classifier contract shared by the offline and LLM classifiers."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Protocol

from ._catalog import EffectiveCatalog
from ._types import Message, Usage


@dataclass(frozen=True)
class ClassifyInput:
    """What a classifier sees: the turn and the candidates with effective descriptions."""

    prompt: str
    messages: tuple[Message, ...]
    tools: tuple[tuple[str, str], ...]
    """(name, effective description) of every candidate, in a deterministic order."""
    skills: Mapping[str, str]
    catalog: EffectiveCatalog
    timeout_s: float
    """Seconds left for this classifier call."""
    core_tools: frozenset[str] = frozenset()
    """Always-on tools (the pipeline adds them; a classifier need not spend surface on them)."""
    params: tuple[str, ...] = ()
    """The host's parameter words of each candidate, aligned with `tools` (empty: none);
    the offline classifier matches them, the LLM classifier never sees them."""


@dataclass(frozen=True)
class Classification:
    """A classifier's answer (names already restricted to the candidates)."""

    selected: tuple[str, ...]
    confidence: float
    scores: Mapping[str, float] = field(default_factory=dict)
    """Per-candidate scores (higher = more relevant), for the ranked card."""
    reasoning: str = ""
    cutoff: float | None = None
    classifier: str = "offline"
    dropped: tuple[str, ...] = ()
    """Names returned that are not candidates (dropped)."""
    duplicates: int = 0
    usage: Usage | None = None
    latency_ms: float | None = None
    has_signal: bool = True
    """False when the classifier found nothing to go on (no matching terms)."""
    conversation: float | None = None
    """Semantic extra: the conversation head's probability that the turn needs no tool (None
    when the head did not run)."""
    chat: bool = False
    """The head took the turn for conversation: the core tools only (``has_signal`` False)."""


class Classifier(Protocol):
    """Anything that picks tools for a turn. Raise `ClassifierError` on failure."""

    name: str

    async def classify(self, request: ClassifyInput) -> Classification: ...
