#!/usr/bin/env python3
"""Cases from telemetry: turns whose actually-used tools are known (shadow turns).

    python benchmark/generate-cases.py TELEMETRY.jsonl [...] --out CASES.json [--include-empty]

Same as `resolver bench generate`; the telemetry fields it reads are in docs/benchmark.md.
"""

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from resolver.cli import main

if __name__ == "__main__":
    sys.exit(main(["bench", "generate", *sys.argv[1:]]))
