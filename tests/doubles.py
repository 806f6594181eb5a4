"""Test doubles shared by test modules: a scripted classifier (the LLM is not under test)."""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Mapping

from resolver import Classification, ClassifierError, ClassifyInput

Answer = tuple[str, ...] | Callable[[ClassifyInput], tuple[str, ...]]


class ScriptedClassifier:
    """Answers from a script (fixed tuple, per-prompt mapping or function), or raises.

    Records every call (`calls`, `prompts`) so a test can see whether the LLM was asked.
    """

    name = "scripted"

    def __init__(
        self,
        answer: Answer | Mapping[str, tuple[str, ...]] = (),
        *,
        confidence: float = 0.9,
        raises: BaseException | None = None,
    ) -> None:
        self.answer, self.confidence, self.raises = answer, confidence, raises
        self.calls = 0
        self.prompts: list[str] = []

    async def classify(self, request: ClassifyInput) -> Classification:
        self.calls += 1
        self.prompts.append(request.prompt)
        await asyncio.sleep(0)  # a scheduling point: concurrent turns interleave here
        if self.raises is not None:
            raise self.raises
        if callable(self.answer):
            picked = self.answer(request)
        elif isinstance(self.answer, Mapping):
            picked = self.answer.get(request.prompt, ())
        else:
            picked = self.answer
        names = {n for n, _ in request.tools}
        return Classification(
            selected=tuple(n for n in dict.fromkeys(picked) if n in names),
            confidence=self.confidence,
            classifier="llm:scripted",
            dropped=tuple(n for n in picked if n not in names),
            reasoning="scripted",
        )


def failing(reason: str = "llm_error_fallback") -> ScriptedClassifier:
    """A classifier that fails every turn with `reason`."""
    return ScriptedClassifier(raises=ClassifierError("injected fault", reason=reason))
