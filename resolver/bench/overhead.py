"""The offline pipeline's per-turn cost on a surface, with the index built once.

One `Resolver` (defaults, no override file, no LLM) resolves the case file's prompts in turn;
the warm-up (building the offline index for the surface — and with `semantic`, embedding every
tool — as a host's warm-up does, then the first turn) is timed separately. Then, as the
OpenClaw sidecar does after a warm-up, the heap is frozen (`settle_heap`; `settle=False`
leaves it live, as in a host's process that does not call it), and `turns` turns are timed one
by one (`time.perf_counter`). Reported: p50, p99,
mean and max wall time per turn, p50 and p99 CPU time per turn, and the warm-up.
"""

from __future__ import annotations

import asyncio
import itertools
import os
import platform
import time
from dataclasses import asdict, dataclass
from typing import Any

from .._config import ResolverConfig
from .._pipeline import Resolver, settle_heap
from .._types import TurnRequest
from .cases import load_case_file
from .intervals import percentile
from .report import md_table


@dataclass(frozen=True)
class Overhead:
    """Per-turn timings of the offline pipeline on one surface."""

    case_file: str
    tools: int
    turns: int
    warmup_ms: float
    p50_ms: float
    p99_ms: float
    mean_ms: float
    max_ms: float
    cpu_p50_ms: float
    """CPU time of the process per turn (unaffected by other processes on the machine)."""
    cpu_p99_ms: float
    semantic: bool = False
    """Timed with offlineSemantic on (the packaged embedding model)."""
    settled: bool = True
    """The heap was frozen after the warm-up (`settle_heap`), as the sidecar does."""

    def as_dict(self) -> dict[str, Any]:
        return asdict(self)


def measure(path: str, *, turns: int, semantic: bool = False, settle: bool = True) -> Overhead:
    """Time `turns` offline turns over the case file's surface (prompts cycled in order)."""
    cases = load_case_file(path)
    tools = list(cases.candidates)
    config = ResolverConfig(
        catalog_overrides_file=None, keyword_cache_file=None, offline_semantic=semantic
    )
    resolver = Resolver(config, llm=None)
    resolver.llm = None

    async def go() -> tuple[float, list[float], list[float]]:
        first = cases.cases[0]
        start = time.perf_counter()
        resolver.warm(tools)
        await resolver.resolve(TurnRequest(prompt=first.prompt, tools=tools))
        warmup = (time.perf_counter() - start) * 1000.0
        if settle:
            settle_heap()
        samples: list[float] = []
        cpu: list[float] = []
        for case in itertools.islice(itertools.cycle(cases.cases), turns):
            request = TurnRequest(prompt=case.prompt, messages=case.messages or [], tools=tools)
            start, start_cpu = time.perf_counter(), time.process_time()
            await resolver.resolve(request)
            cpu.append((time.process_time() - start_cpu) * 1000.0)
            samples.append((time.perf_counter() - start) * 1000.0)
        return warmup, samples, cpu

    warmup, samples, cpu = asyncio.run(go())
    return Overhead(
        case_file=path,
        tools=len(tools),
        turns=len(samples),
        warmup_ms=round(warmup, 2),
        p50_ms=round(percentile(samples, 50), 3),
        p99_ms=round(percentile(samples, 99), 3),
        mean_ms=round(sum(samples) / len(samples), 3) if samples else 0.0,
        max_ms=round(max(samples, default=0.0), 3),
        cpu_p50_ms=round(percentile(cpu, 50), 3),
        cpu_p99_ms=round(percentile(cpu, 99), 3),
        semantic=semantic,
        settled=settle,
    )


def overhead_markdown(results: list[Overhead], *, command: str) -> str:
    """The overhead report."""
    rows = [
        [
            r.case_file
            + (" + semantic" if r.semantic else "")
            + ("" if r.settled else ", live heap"),
            str(r.tools),
            str(r.turns),
            f"{r.p50_ms:.2f}",
            f"{r.p99_ms:.2f}",
            f"{r.mean_ms:.2f}",
            f"{r.max_ms:.2f}",
            f"{r.cpu_p50_ms:.2f}",
            f"{r.cpu_p99_ms:.2f}",
            f"{r.warmup_ms:.1f}",
        ]
        for r in results
    ]
    load = os.getloadavg()[0] if hasattr(os, "getloadavg") else float("nan")
    return "\n".join(
        [
            "# Offline pipeline overhead per turn",
            "",
            f"Command: `{command}`",
            "",
            f"- Python {platform.python_version()} on {platform.machine()}, "
            f"{os.cpu_count()} CPUs, 1-minute load average at the end {load:.2f} "
            "(the machine is shared: wall time per turn includes waiting for a CPU; the CPU "
            "columns are this process's CPU time per turn)",
            "- One resolver per surface; the warm-up builds the offline index (and, + semantic, "
            'embeds every tool) once; then, unless a row says "live heap", the heap is frozen '
            "as the OpenClaw sidecar does after a warm-up (`settle_heap`: a full garbage "
            "collection no longer walks the modules, catalog and index); then "
            "each timed turn runs the whole pipeline (catalog, offline classifier, continuity, "
            "core tools, guards, ranked candidates).",
            "",
            md_table(
                [
                    "case file",
                    "tools",
                    "turns",
                    "p50 ms",
                    "p99 ms",
                    "mean ms",
                    "max ms",
                    "CPU p50 ms",
                    "CPU p99 ms",
                    "warm-up ms",
                ],
                rows,
            ),
            "",
        ]
    )
