#!/usr/bin/env python3
"""Replay a case file through the real resolver pipeline (same as `resolver bench`).

    python benchmark/replay-harness.py --file benchmark/benchmark-v1-curated.json \
        --classifier offline --json-out OUT.json [--md-out OUT.md] [--baseline bm25]
    LLM_API_BASE=... LLM_MODEL=... LLM_API_KEY=... python benchmark/replay-harness.py \
        --file CASES.json --classifier llm --record DIR      # later: --replay DIR

`python benchmark/replay-harness.py gate --control A.json --treatment B.json --margins M.json
--file CASES.json` runs the non-inferiority gate. See docs/benchmark.md.
"""

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from resolver.cli import main

if __name__ == "__main__":
    sys.exit(main(["bench", *sys.argv[1:]]))
