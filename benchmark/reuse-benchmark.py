#!/usr/bin/env python3
"""Decision reuse and the offline fallback chain, measured on the curated cases.

Prints two figures (docs/cache-and-reuse.md explains them):

1. Classifier calls saved by session-scoped exact reuse on a replay with repeated prompts.
   The replay is built from the curated prompts with a fixed seed: SESSIONS sessions of
   TURNS turns each; every turn after a session's first repeats, with probability P_REPEAT,
   one of that session's earlier prompts (a third of repeats re-typed with other case and
   spacing, which normalisation folds), and otherwise draws a curated prompt at random (so the
   same prompt also turns up in other sessions, which must never be reused). Turns of all
   sessions are interleaved on one fake clock; the gap between a session's turns is uniform in
   [GAP_MIN, GAP_MAX] seconds, so some repeats come after the 90 s TTL. The classifier is a
   counting stand-in LLM that answers with the offline classifier's selection at confidence
   0.9 (the answer's content does not change the call count; every call is counted). Every
   reused answer is checked against a fresh resolution of the same turn.

2. Recall of the full chain when the LLM fails on every turn (a classifier that always raises,
   so each turn takes the fallback: keyword cache + offline classifier, full surface without
   signal), on all curated cases with their messages: must-include accuracy with a Wilson 95%
   interval, average recall, mean surface size, sources and reason codes. The keyword cache is
   empty here (a fresh install); a second row measures it learned from telemetry of the other
   half of the cases (2-fold: `usedTools` = the other fold's must_include), never from the
   evaluated fold.
"""

from __future__ import annotations

import argparse
import asyncio
import logging
import math
import random
import sys
import time
from collections import Counter
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

import orjson

from resolver import (
    Classification,
    ClassifierError,
    ClassifyInput,
    Message,
    OfflineClassifier,
    Resolution,
    Resolver,
    ResolverConfig,
    TurnRequest,
)
from resolver._cache import KeywordCache, learn_telemetry
from resolver._surface import default_surface

SEED = 20261129
SESSIONS = 60
TURNS = 10
P_REPEAT = 0.3
GAP_MIN, GAP_MAX = 5.0, 45.0


class FakeClock:
    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        return self.now


class CountingLLM:
    """Stand-in LLM: the offline classifier's selection at confidence 0.9; counts calls."""

    name = "counting-stand-in"

    def __init__(self) -> None:
        self.calls = 0
        self.offline = OfflineClassifier()

    async def classify(self, request: ClassifyInput) -> Classification:
        self.calls += 1
        got = self.offline.classify_sync(request)
        return Classification(selected=got.selected, confidence=0.9, classifier="llm:stand-in")


class AlwaysFails:
    """An LLM that fails every turn."""

    name = "always-fails"

    def __init__(self) -> None:
        self.calls = 0

    async def classify(self, request: ClassifyInput) -> Classification:
        self.calls += 1
        raise ClassifierError("injected: the LLM is down", reason="llm_error_fallback")


def wilson(k: int, n: int, z: float = 1.96) -> tuple[float, float]:
    if n == 0:
        return (0.0, 0.0)
    p = k / n
    centre = (p + z * z / (2 * n)) / (1 + z * z / n)
    half = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / (1 + z * z / n)
    return (centre - half, centre + half)


def load_cases(path: Path) -> list[dict[str, Any]]:
    cases: list[dict[str, Any]] = orjson.loads(path.read_bytes())["cases"]
    return cases


def retype(prompt: str, rng: random.Random) -> str:
    """The same prompt typed differently (case and spacing): equal after normalisation."""
    words = prompt.split()
    return "  ".join(w.upper() if rng.random() < 0.3 else w for w in words) + " "


def build_replay(cases: list[dict[str, Any]]) -> list[tuple[float, str, str, bool]]:
    """(time, session, prompt, is_session_repeat) events, ordered by time."""
    rng = random.Random(SEED)
    prompts = [c["prompt"] for c in cases]
    events: list[tuple[float, str, str, bool]] = []
    for s in range(SESSIONS):
        session = f"session-{s:03d}"
        t = rng.uniform(0, 600)
        asked: list[str] = []
        for _ in range(TURNS):
            if asked and rng.random() < P_REPEAT:
                prompt = rng.choice(asked)
                events.append(
                    (t, session, retype(prompt, rng) if rng.random() < 1 / 3 else prompt, True)
                )
            else:
                prompt = rng.choice(prompts)
                repeat = prompt in asked
                asked.append(prompt)
                events.append((t, session, prompt, repeat))
            t += rng.uniform(GAP_MIN, GAP_MAX)
    events.sort(key=lambda e: (e[0], e[1]))
    return events


def reuse_figure(cases: list[dict[str, Any]]) -> None:
    tools = default_surface()
    events = build_replay(cases)
    clock = FakeClock()
    llm = CountingLLM()
    config = ResolverConfig(
        catalogOverridesFile=None, keywordCacheFile=None, llmApiBase="http://127.0.0.1:9/v1"
    )
    resolver = Resolver(config, llm=llm, clock=clock)
    fresh = Resolver(
        ResolverConfig(
            catalogOverridesFile=None,
            keywordCacheFile=None,
            llmApiBase="http://127.0.0.1:9/v1",
            reuse={"enabled": False},
        ),
        llm=CountingLLM(),
    )
    codes: Counter[str] = Counter()
    repeats = cross_session = mismatches = 0
    seen_by_session: dict[str, set[str]] = {}
    seen_anywhere: set[str] = set()

    async def replay() -> None:
        nonlocal repeats, cross_session, mismatches
        for t, session, prompt, is_repeat in events:
            clock.now = t
            res = await resolver.resolve(TurnRequest(prompt=prompt, tools=tools, sessionId=session))
            code = next(
                c for c in res.reason_codes if c.startswith("reuse_") or c == "route_reused"
            )
            codes[code] += 1
            key = " ".join(prompt.casefold().split())
            mine = seen_by_session.setdefault(session, set())
            repeats += is_repeat
            cross_session += key in seen_anywhere and key not in mine
            mine.add(key)
            seen_anywhere.add(key)
            if res.source == "reuse":
                again = await fresh.resolve(TurnRequest(prompt=prompt, tools=tools))
                mismatches += again.llm_tools != res.llm_tools

    asyncio.run(replay())
    turns = len(events)
    saved = turns - llm.calls
    print("## 1. Classifier calls saved by decision reuse (replay with repeated prompts)")
    print()
    print(
        f"replay: {SESSIONS} sessions x {TURNS} turns = {turns} turns from "
        f"{len(cases)} curated prompts (seed {SEED}, P(repeat)={P_REPEAT}, "
        f"gap {GAP_MIN:.0f}-{GAP_MAX:.0f} s, TTL {config.reuse.ttl_seconds:.0f} s)"
    )
    print(f"same-session repeats of an earlier prompt:     {repeats}")
    print(f"turns whose prompt was first seen in another session: {cross_session}")
    print()
    print("| | classifier calls | saved |")
    print("| --- | ---: | ---: |")
    print(f"| reuse off | {turns} | 0 |")
    print(f"| reuse on (default) | {llm.calls} | {saved} ({saved / turns:.1%} of turns) |")
    print()
    print("reuse reason codes: " + ", ".join(f"{k} {v}" for k, v in sorted(codes.items())))
    print(
        f"repeats served from reuse: {codes['route_reused']} of {repeats} "
        f"(the rest: older than the TTL)"
    )
    print(
        "cross-session reuse: 0 by construction of the key; reused classifier decisions that "
        f"differ from a fresh classification of the same turn: {mismatches}"
    )
    print(
        "(a difference means the re-typed prompt classifies differently from its first typing, "
        "e.g. 'WHATSAPP' vs 'WhatsApp' split into words; reuse serves the first typing's "
        "decision, as exact normalized matching intends)"
    )
    print()


def offline_chain_figure(cases: list[dict[str, Any]]) -> None:
    tools = default_surface()

    def evaluate(subset: list[dict[str, Any]], cache: KeywordCache | None) -> dict[str, Any]:
        llm = AlwaysFails()
        resolver = Resolver(
            ResolverConfig(
                catalogOverridesFile=None, keywordCacheFile=None, llmApiBase="http://127.0.0.1:9/v1"
            ),
            llm=llm,
            cache=cache,
        )
        hits = 0
        recall_sum = 0.0
        size = 0
        sources: Counter[str] = Counter()
        reasons: Counter[str] = Counter()
        cats: dict[str, list[int]] = {}

        async def run() -> list[Resolution]:
            out = []
            for case in subset:
                messages = [Message.model_validate(m) for m in case.get("messages", [])]
                request = TurnRequest(prompt=case["prompt"], tools=tools, messages=messages)
                out.append(await resolver.resolve(request))
            return out

        started = time.perf_counter()
        results = asyncio.run(run())
        elapsed = time.perf_counter() - started
        for case, res in zip(subset, results, strict=True):
            allow = set(res.tools_allow or [])
            need = set(case["must_include"])
            ok = need <= allow
            hits += ok
            recall_sum += len(need & allow) / len(need) if need else 1.0
            size += len(allow)
            sources[res.source] += 1
            reasons.update(c for c in res.reason_codes if c.endswith(("_fallback", "_surface")))
            if "cache_added" in res.reason_codes:
                reasons["cache_added"] += 1
            cats.setdefault(case["category"], [0, 0])
            cats[case["category"]][0] += ok
            cats[case["category"]][1] += 1
        n = len(subset)
        return {
            "n": n,
            "hits": hits,
            "recall": recall_sum / n,
            "size": size / n,
            "sources": sources,
            "reasons": reasons,
            "cats": cats,
            "calls": llm.calls,
            "ms": elapsed * 1000 / n,
        }

    print("## 2. Recall of the full chain when the LLM fails on every turn (offline path alone)")
    print()
    base = evaluate(cases, None)
    lo, hi = wilson(base["hits"], base["n"])
    rng = random.Random(SEED)
    order = list(range(len(cases)))
    rng.shuffle(order)
    folds = [sorted(order[0::2]), sorted(order[1::2])]
    cv_hits = cv_n = 0
    cv_recall = cv_size = 0.0
    cv_reasons: Counter[str] = Counter()
    for k in (0, 1):
        learn_from = [cases[i] for i in folds[1 - k]]
        cache = KeywordCache()
        lines = [
            orjson.dumps(
                {"source": "keyword", "promptExcerpt": c["prompt"], "usedTools": c["must_include"]}
            )
            for c in learn_from
        ]
        learn_telemetry(cache, lines, min_confidence=0.7)
        got = evaluate([cases[i] for i in folds[k]], cache)
        cv_hits += got["hits"]
        cv_n += got["n"]
        cv_recall += got["recall"] * got["n"]
        cv_size += got["size"] * got["n"]
        cv_reasons.update(got["reasons"])
    clo, chi = wilson(cv_hits, cv_n)
    print(
        f"cases: {base['n']} curated (benchmark/benchmark-v1-curated.json), "
        "54-tool default surface;"
    )
    print(f"the LLM was called and failed on {base['calls']} of {base['n']} turns")
    print()
    print("| keyword cache | must-include accuracy | Wilson 95% | avg recall | mean surface |")
    print("| --- | ---: | ---: | ---: | ---: |")
    print(
        f"| empty (fresh install) | {base['hits']}/{base['n']} = {base['hits'] / base['n']:.1%} "
        f"| {lo:.1%}–{hi:.1%} | {base['recall']:.3f} | {base['size']:.1f} of 54 |"
    )
    print(
        f"| learned from the other fold's telemetry (2-fold) | {cv_hits}/{cv_n} = "
        f"{cv_hits / cv_n:.1%} | {clo:.1%}–{chi:.1%} | {cv_recall / cv_n:.3f} | "
        f"{cv_size / cv_n:.1f} of 54 |"
    )
    print()
    print(
        "sources (empty cache): "
        + ", ".join(f"{k} {v}" for k, v in sorted(base["sources"].items()))
    )
    print(
        "reason codes (empty cache): "
        + ", ".join(f"{k} {v}" for k, v in sorted(base["reasons"].items()))
    )
    print(
        "reason codes (2-fold cache): "
        + ", ".join(f"{k} {v}" for k, v in sorted(cv_reasons.items()))
    )
    print(f"mean time per turn (empty cache, this machine): {base['ms']:.2f} ms")
    print()
    print("per category, empty cache (must-include hits / cases):")
    for cat, (ok, total) in sorted(base["cats"].items()):
        print(f"  {cat:20s} {ok:3d}/{total:<3d} {ok / total:6.1%}")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--cases", default=str(REPO / "benchmark" / "benchmark-v1-curated.json"), help="case file"
    )
    args = parser.parse_args()
    logging.getLogger("resolver").setLevel(logging.ERROR)  # one warning per injected fault
    cases = load_cases(Path(args.cases))
    print("# Decision reuse and the offline fallback chain")
    print()
    print("command: " + " ".join(["python", "benchmark/reuse-benchmark.py", *sys.argv[1:]]))
    print()
    reuse_figure(cases)
    offline_chain_figure(cases)
    return 0


if __name__ == "__main__":
    sys.exit(main())
