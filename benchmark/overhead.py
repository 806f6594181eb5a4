#!/usr/bin/env python3
"""The offline pipeline's per-turn cost (p50/p99), index built once per surface.

    python benchmark/overhead.py --seal ../shared/benchmarks/seal_tools.json \
        --md-out benchmark/results/overhead.md

Same as `resolver bench overhead`.
"""

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from resolver.cli import main

if __name__ == "__main__":
    sys.exit(main(["bench", "overhead", *sys.argv[1:]]))
