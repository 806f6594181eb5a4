"""What state eligibility costs per turn: offline resolve latency with and without declarations.

Three configurations over the same prompts and the default 54-tool surface:
  none      no stateRequirements, no state (the stateless baseline)
  declared  every tool declares two requirements, the host passes no state (unchecked)
  checked   every tool declares two requirements, the host passes state (all evaluated;
            half the tools fail and are excluded)

Usage: .venv/bin/python benchmark/state-overhead.py [--turns N]
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from resolver import Resolver, ResolverConfig, TurnRequest
from resolver._surface import default_surface

PROMPTS = (
    "search the web for flight prices and message the results to Anna on telegram",
    "remind me tomorrow at 9 to call mom",
    "use a different voice for the call",
    "read the README and fix the failing test",
    "thanks, that's all",
)


def requirements(names: list[str]) -> dict[str, dict[str, dict[str, object]]]:
    """Two contracts per tool; tools at odd positions require a channel the state lacks."""
    reqs: dict[str, dict[str, dict[str, object]]] = {}
    for i, name in enumerate(names):
        channel = ["discord", "telegram"] if i % 2 == 0 else ["voice"]
        reqs[name] = {
            "channel": {"type": "string", "enum": channel},
            "modelProviderId": {"type": "string", "minLength": 1},
        }
    return reqs


def measure(
    configs: list[tuple[str, Resolver, dict[str, object] | None]], turns: int
) -> dict[str, list[float]]:
    """Per-turn wall time (ms) per config; configs interleaved turn by turn (fair under noise)."""
    tools = default_surface()
    out: dict[str, list[float]] = {label: [] for label, _, _ in configs}
    for i in range(turns):
        for label, resolver, state in configs:
            request = TurnRequest(prompt=PROMPTS[i % len(PROMPTS)], tools=tools, state=state)
            t0 = time.perf_counter()
            resolver.resolve_sync(request)
            out[label].append((time.perf_counter() - t0) * 1000.0)
    return out


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--turns", type=int, default=300)
    args = parser.parse_args()
    names = [t.name for t in default_surface()]
    with tempfile.TemporaryDirectory() as tmp:
        catalog = Path(tmp) / "catalog.json"
        catalog.write_text(
            json.dumps({"schemaVersion": 1, "stateRequirements": requirements(names)})
        )
        plain = Resolver(ResolverConfig(catalogOverridesFile=None, keywordCacheFile=None))
        gated = Resolver(ResolverConfig(catalogOverridesFile=str(catalog), keywordCacheFile=None))
        state = {"channel": "telegram", "modelProviderId": "openai"}
        configs = [("none", plain, None), ("declared", gated, None), ("checked", gated, state)]
        measure(configs, len(PROMPTS))  # warm-up: indexes, validators, late imports
        print(f"turns per config: {args.turns}; surface: {len(names)} tools")
        print(f"{'config':<10} {'p50 ms':>8} {'p95 ms':>8} {'mean ms':>8}")
        for label, samples in measure(configs, args.turns).items():
            ms = sorted(samples)
            p95 = ms[min(len(ms) - 1, int(0.95 * len(ms)))]
            print(f"{label:<10} {ms[len(ms) // 2]:>8.3f} {p95:>8.3f} {statistics.fmean(ms):>8.3f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
