"""Hostile and oversized input, tried for real: every family of issue #14, one table.

    python benchmark/adversarial.py [--family NAME ...] [--md-out FILE] [--json-out FILE]

Families, cases and what "passed" means: `resolver/bench/adversarial.py`. Exit status 1 when
any case failed.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from resolver.bench.adversarial import (
    CLI_START_ALLOWANCE_S,
    DEADLINE_MS,
    FAMILIES,
    run_families,
    table,
)
from resolver.bench.harness import command_line


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--family", action="append", choices=list(FAMILIES), help="run only these")
    parser.add_argument("--md-out", metavar="FILE")
    parser.add_argument("--json-out", metavar="FILE")
    args = parser.parse_args()
    # The learned keyword cache defaults to the user's state directory: hostile turns must not
    # teach the real one (in-process turns and the CLI children alike).
    os.environ["XDG_STATE_HOME"] = tempfile.mkdtemp(prefix="resolver-adversarial-state-")
    started = time.time()
    trials = run_families(args.family)
    rows = table(trials)
    header = (
        "| family | cases | passed | failed | worst latency (ms) | its deadline (ms) "
        "| secret bytes found |"
    )
    lines = [header, "|---|---:|---:|---:|---:|---:|---:|"]
    for r in rows:
        worst = "-" if r["worst_ms"] is None else f"{r['worst_ms']:,.1f}"
        deadline = "-" if r["deadline_ms"] is None else f"{r['deadline_ms']:,.0f}"
        lines.append(
            f"| {r['family']} | {r['cases']} | {r['passed']} | {r['failed']} | {worst} | "
            f"{deadline} | {r['secret_bytes']} |"
        )
    total = len(trials)
    failed = [t for t in trials if not t.passed]
    leaked = sum(t.secret_bytes for t in trials)
    lines.append(f"| **all** | {total} | {total - len(failed)} | {len(failed)} | | | {leaked} |")
    print("\n".join(lines))
    for t in failed:
        print(f"FAILED {t.family}: {t.case} ({t.detail})")
    if args.md_out:
        load = os.getloadavg()[0]
        md = [
            "# Adversarial benchmark",
            "",
            f"Command: `{command_line(sys.argv)}`",
            "",
            f"- Generated {time.strftime('%Y-%m-%dT%H:%M:%SZ', time.gmtime(started))} on "
            f"{platform.machine()}, {os.cpu_count()} cores, "
            f"Python {platform.python_version()}; "
            f"run took {time.time() - started:.0f} s "
            f"(1-minute load average at the end {load:.2f}).",
            f"- Deadline of a turn: llmTimeoutMs {DEADLINE_MS} ms + 1,000 ms backstop grace; a CLI "
            f"run also gets {CLI_START_ALLOWANCE_S:.0f} s for starting the interpreter. "
            '"Worst latency" is the case closest to its own deadline.',
            "- Secret bytes found: characters of the planted secrets found in any artifact "
            "(cache, telemetry, stdout, stderr, frames) within a shared run of 6+ characters.",
            "",
            *lines,
            "",
            "## Cases",
            "",
            "| family | case | result | latency (ms) | detail |",
            "|---|---|---|---:|---|",
        ]
        for t in trials:
            ms = "" if t.latency_ms is None else f"{t.latency_ms:,.1f}"
            detail = t.detail.replace("|", "/")[:140]
            result = "pass" if t.passed else "**FAIL**"
            md.append(f"| {t.family} | {t.case.replace('|', '/')} | {result} | {ms} | {detail} |")
        Path(args.md_out).write_text("\n".join(md) + "\n")
    if args.json_out:
        Path(args.json_out).write_text(
            json.dumps({"rows": rows, "trials": [t.__dict__ for t in trials]}, indent=1)
        )
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
