"""Replay a case set through the real pipeline (`resolver.Resolver`).

One `Resolver` serves the whole run, so the catalog is merged and the offline index is built
once per (catalog fingerprint, candidate set). Each case is one turn with its own session id
(``bench:<case id>``), so no decision can be reused across cases.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable
from contextvars import ContextVar
from pathlib import Path

from .._config import ResolverConfig
from .._offline import OfflineClassifier
from .._pipeline import Resolver
from .._types import Resolution, TurnRequest
from .cases import BenchmarkCase, CaseSet, load_case_file
from .metrics import ERROR_CODES, CaseOutcome, score_case

CURRENT_CASE: ContextVar[str | None] = ContextVar("resolver_bench_case", default=None)
"""The id of the case being resolved (read by the recording/replaying classifiers)."""

Progress = Callable[[CaseOutcome], None]


def outcome_of(
    case: BenchmarkCase,
    resolution: Resolution,
    *,
    candidates: tuple[str, ...],
    core: frozenset[str],
    latency_ms: float,
) -> CaseOutcome:
    """Score one resolution (an abstention leaves the host's whole surface in place).

    `core` is the set of always-on tools among the candidates.
    """
    surface = tuple(resolution.tools_allow) if resolution.tools_allow is not None else candidates
    error = next((c for c in resolution.reason_codes if c in ERROR_CODES), None)
    return CaseOutcome(
        id=case.id,
        category=case.category,
        cluster=case.cluster or case.category,
        required=tuple(case.must_include),
        surface=surface,
        candidates=len(candidates),
        score=score_case(case.must_include, surface, core),
        latency_ms=round(latency_ms, 3),
        source=resolution.source,
        reason_codes=tuple(resolution.reason_codes),
        error=error,
        llm_ms=resolution.timings.llm_ms,
    )


async def replay_cases(
    resolver: Resolver,
    cases: CaseSet,
    *,
    concurrency: int = 1,
    progress: Progress | None = None,
    resolutions: dict[str, Resolution] | None = None,
) -> list[CaseOutcome]:
    """Resolve every case (in file order in the result) and score it; `resolutions`, when
    given, receives each case's whole resolution by case id (its scored candidates too)."""
    tools = list(cases.candidates)
    names = tuple(dict.fromkeys(t.name for t in tools))
    core = frozenset(resolver.config.core_tools) & frozenset(names)
    gate = asyncio.Semaphore(max(1, concurrency))
    # the offline index (and the semantic matrix) are built before the first case, as a host's
    # warm-up does: latency figures are per-turn costs
    await asyncio.to_thread(resolver.warm, tools)

    async def one(case: BenchmarkCase) -> CaseOutcome:
        async with gate:
            CURRENT_CASE.set(case.id)
            request = TurnRequest(
                prompt=case.prompt,
                messages=case.messages or [],
                tools=tools,
                sessionId=f"bench:{case.id}",
            )
            start = time.perf_counter()
            resolution = await resolver.resolve(request)
            latency = (time.perf_counter() - start) * 1000.0
            outcome = outcome_of(case, resolution, candidates=names, core=core, latency_ms=latency)
            if resolutions is not None:
                resolutions[case.id] = resolution
            if progress is not None:
                progress(outcome)
            return outcome

    if concurrency <= 1:
        return [await one(case) for case in cases.cases]
    return list(await asyncio.gather(*(one(case) for case in cases.cases)))


def must_include_offline(
    config: ResolverConfig, path: str | Path, offline: OfflineClassifier | None = None
) -> tuple[int, int, float]:
    """Replay a case file with the offline classifier only (no LLM), under `config` and, when
    given, another offline classifier: (cases with every needed tool in the surface, cases,
    mean surface). The benchmark scripts that compare settings side by side use it."""
    cases = load_case_file(path)
    resolver = Resolver(config, llm=None, offline=offline)
    resolver.llm = None
    outcomes = asyncio.run(replay_cases(resolver, cases))
    hits = sum(all(t in o.surface for t in o.required) for o in outcomes)
    return hits, len(outcomes), sum(len(o.surface) for o in outcomes) / len(outcomes)
