"""Telemetry overhead: what the observer costs on the hook path, and what the writer thread does.

Prints, for the default OpenClaw 2026.9.6 surface (54 tools):
- the hook-path cost of one observer call (snapshot + enqueue), by prompt size;
- the writer thread's cost to redact, size and serialize one event: first surface (uncached
  exact token count), then repeated surfaces (cached), by prompt size;
- end-to-end throughput: N resolved turns written and flushed.

Usage: .venv/bin/python benchmark/telemetry-overhead.py [--turns 2000]
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from resolver import Resolver, ResolverConfig, TurnRequest
from resolver._surface import default_surface
from resolver.telemetry import SurfaceMeter, TelemetryObserver, snapshot
from resolver.telemetry._summary import percentile


def ms(samples: list[float]) -> str:
    p50, p95 = percentile(samples, 50), percentile(samples, 95)
    assert p50 is not None and p95 is not None
    return f"p50 {p50 * 1000:8.3f} ms   p95 {p95 * 1000:8.3f} ms   (n={len(samples)})"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--turns", type=int, default=2000)
    args = parser.parse_args()
    surface = default_surface()
    tmp = Path(tempfile.mkdtemp(prefix="telemetry-bench-"))
    # The key only feeds redaction here; the resolver itself runs offline (no endpoint).
    config = ResolverConfig(
        telemetryFile=str(tmp / "t.jsonl"),
        catalogOverridesFile=None,
        keywordCacheFile=None,
        llmApiKey="sk-" + "bench-0123456789abcdefghijklmnop",
    )
    resolver = Resolver(ResolverConfig(catalogOverridesFile=None, keywordCacheFile=None))
    prompts = {
        "short (40 chars)": "remind me tomorrow at 9 to call mom pls",
        "medium (1.5 kB)": ("search the web for flights to Lisbon and compare prices. " * 27)[
            :1500
        ],
        "long (20 kB)": ("read notes.txt, token=abc123, then summarise it for me. " * 360)[:20000],
    }
    meter = SurfaceMeter()
    t0 = time.perf_counter()
    meter.load()
    load_ms = (time.perf_counter() - t0) * 1000
    observer = TelemetryObserver(config, meter=meter)

    print("== hook path: one observer call (snapshot + enqueue) ==")
    for label, prompt in prompts.items():
        request = TurnRequest(prompt=prompt, tools=surface, sessionId="bench")
        resolution = resolver.resolve_sync(request)
        samples = []
        for _ in range(300):
            t0 = time.perf_counter()
            observer(request, resolution)
            samples.append(time.perf_counter() - t0)
        assert observer.flush(120)
        print(f"{label:18} {ms(samples)}")

    print("\n== writer thread: redact + size + validate + serialize one event ==")
    print(f"tokenizer + schemas load (once per process): {load_ms:.0f} ms")
    cold = SurfaceMeter(counter=meter._counter, known=None)
    request = TurnRequest(prompt=prompts["short (40 chars)"], tools=surface, sessionId="bench")
    snap = snapshot(request, resolver.resolve_sync(request), config, turn=1, now=time.time())
    t0 = time.perf_counter()
    snap.event(cold)
    print(
        f"first event (uncached surfaces):             {(time.perf_counter() - t0) * 1000:.1f} ms"
    )
    for label, prompt in prompts.items():
        request = TurnRequest(prompt=prompt, tools=surface, sessionId="bench")
        snap = snapshot(request, resolver.resolve_sync(request), config, turn=1, now=time.time())
        samples = []
        for _ in range(100):
            t0 = time.perf_counter()
            observer.render(snap)
            samples.append(time.perf_counter() - t0)
        print(f"{label:18} {ms(samples)}  (surfaces cached)")
    observer.close()

    print(f"\n== end to end: {args.turns} turns resolved, written, flushed ==")
    path = tmp / "e2e.jsonl"
    e2e_config = ResolverConfig(
        telemetryFile=str(path), catalogOverridesFile=None, keywordCacheFile=None
    )
    e2e_observer = TelemetryObserver(e2e_config, meter=meter)
    e2e = Resolver(e2e_config, observers=[e2e_observer])
    words = ["search the web", "remind me", "read the file", "send a message", "take a photo"]
    t0 = time.perf_counter()
    for i in range(args.turns):
        e2e.resolve_sync(TurnRequest(prompt=f"{words[i % 5]} #{i}", tools=surface, sessionId="e2e"))
    resolved = time.perf_counter() - t0
    assert e2e_observer.flush(120)
    total = time.perf_counter() - t0
    lines = len(path.read_bytes().splitlines())
    print(
        f"resolved in {resolved:.2f} s, all written after {total:.2f} s: {lines} lines, "
        f"{e2e_observer.writer.lost} lost, {path.stat().st_size / lines:.0f} bytes/line"
    )
    e2e_observer.close()


if __name__ == "__main__":
    main()
