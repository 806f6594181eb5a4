#!/usr/bin/env python3
"""The same cases across several models/endpoints -> one comparison table.

    python benchmark/model-benchmark.py --file CASES.json --models MODELS.json \
        [--record DIR | --replay DIR] [--md-out OUT.md] [--json-out OUT.json]

Same as `resolver bench models`; the models file format is in docs/benchmark.md.
"""

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from resolver.cli import main

if __name__ == "__main__":
    sys.exit(main(["bench", "models", *sys.argv[1:]]))
