"""Must-include accuracy by prompt language on the curated set, from a harness result file.

Usage: python benchmark/language-breakdown.py [RESULT.json] [--md-out OUT.md]

The language of a multilingual case is its id prefix (``ml-zh-``, ``ml-ja-``, ``ml-ko-``,
``ml-es-``, ...); every other case is English (typos and informal writing are reported apart).
Reads the case file named in the result and the result's failure list — no re-run.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections import Counter
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from resolver.bench.intervals import wilson

NAMES = {
    "zh": "Chinese",
    "ja": "Japanese",
    "ko": "Korean",
    "es": "Spanish",
    "de": "German",
    "fr": "French",
    "pt": "Portuguese",
}


def group(case: dict[str, object]) -> str:
    cid = str(case["id"])
    if cid.startswith("ml-"):
        return NAMES.get(cid.split("-")[1], cid.split("-")[1])
    if case.get("category") == "typos_informal":
        return "English, typos/informal"
    return "English"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("result", nargs="?", default="benchmark/results/curated-offline.json")
    parser.add_argument("--md-out")
    args = parser.parse_args()
    result = json.loads(Path(args.result).read_text())
    cases = json.loads((REPO / result["caseFile"]["path"]).read_text())["cases"]
    failed = {f["id"] for f in result["failures"]}
    shown = args.result
    if Path(args.result).is_absolute() and Path(args.result).is_relative_to(REPO):
        shown = str(Path(args.result).relative_to(REPO))
    total, hits = Counter(), Counter()
    for case in cases:
        g = group(case)
        total[g] += 1
        hits[g] += case["id"] not in failed
    lines = [
        "# Curated set: must-include accuracy by prompt language (offline classifier)",
        "",
        f"Command: `python benchmark/language-breakdown.py {shown}"
        + (f" --md-out {args.md_out}`" if args.md_out else "`"),
        f"Source run: `{result['command']}` ({result['generatedAt']})",
        "",
        "| language | cases | accuracy | 95% CI (Wilson) |",
        "|---|---|---|---|",
    ]
    for g in sorted(total, key=lambda k: (-total[k], k)):
        lo, hi = wilson(hits[g], total[g])
        lines.append(f"| {g} | {total[g]} | {hits[g] / total[g]:.3f} | [{lo:.3f}, {hi:.3f}] |")
    text = "\n".join(lines) + "\n"
    sys.stdout.write(text)
    if args.md_out:
        Path(args.md_out).write_text(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
