"""Must-include accuracy by prompt language, from one or more harness result files.

Usage: python benchmark/language-breakdown.py RESULT.json [RESULT.json ...] [--md-out OUT.md]

- Curated set (`benchmark-v1-curated.json`): the language of a multilingual case is its id
  prefix (``ml-zh-``, ``ml-ja-``, ...); every other case is English (typos and informal writing
  reported apart).
- Compositional set (`benchmark-v1-compositional.json`): ``meta.lang`` names each case's
  language (no paired comparison: its cases are written natively, not translated).
- Parallel set (`benchmark-v1-parallel.json`): every source case exists in English, Chinese,
  Japanese, Korean, Spanish and hastily typed English (``meta.lang``), so each language is
  compared with the *same* English prompts: the table adds the discordant pairs (English hit /
  this language missed, and the reverse) — the paired evidence for "as well as English".

Reads the case file named in each result and the result's failure list — no re-run. Several
result files (e.g. lexical and semantic runs) give one section each.
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
    "en": "English",
    "zh": "Chinese",
    "ja": "Japanese",
    "ko": "Korean",
    "es": "Spanish",
    "de": "German",
    "fr": "French",
    "pt": "Portuguese",
    "it": "Italian",
    "typo": "English, typos/informal",
}


def group(case: dict[str, object]) -> str:
    meta = case.get("meta")
    if isinstance(meta, dict) and isinstance(meta.get("lang"), str):
        return NAMES.get(meta["lang"], meta["lang"])
    cid = str(case["id"])
    if cid.startswith("ml-"):
        return NAMES.get(cid.split("-")[1], cid.split("-")[1])
    if case.get("category") == "typos_informal":
        return "English, typos/informal"
    return "English"


def section(path: str) -> list[str]:
    result = json.loads(Path(path).read_text())
    cases = json.loads((REPO / result["caseFile"]["path"]).read_text())["cases"]
    failed = {f["id"] for f in result["failures"]}
    shown = path
    if Path(path).is_absolute() and Path(path).is_relative_to(REPO):
        shown = str(Path(path).relative_to(REPO))
    total, hits = Counter[str](), Counter[str]()
    english_hit: dict[str, bool] = {}
    for case in cases:
        g = group(case)
        total[g] += 1
        hits[g] += case["id"] not in failed
        meta = case.get("meta") or {}
        if meta.get("lang") == "en" and "sourceId" in meta:  # a parallel set's English prompt
            english_hit[meta["sourceId"]] = case["id"] not in failed
    paired = bool(english_hit)
    worse, better = Counter[str](), Counter[str]()
    if paired:
        for case in cases:
            meta = case.get("meta") or {}
            if meta.get("lang") in (None, "en") or meta.get("sourceId") not in english_hit:
                continue
            g, hit = group(case), case["id"] not in failed
            en = english_hit[meta["sourceId"]]
            worse[g] += en and not hit
            better[g] += hit and not en
    metrics = result["metrics"]
    lines = [
        f"## {Path(result['caseFile']['path']).name} — {result_label(result)}",
        "",
        f"Source run: `{result['command']}` ({result['generatedAt']}); result file `{shown}`",
        f"All cases: must-include accuracy {metrics['must_include_accuracy']['value']:.3f}, "
        f"mean surface {metrics['mean_surface']:.2f} of {metrics['mean_candidates']:.0f}",
        "",
    ]
    header = "| language | cases | accuracy | 95% CI (Wilson) |"
    rule = "|---|---|---|---|"
    if paired:
        header += " English hit, this missed | this hit, English missed |"
        rule += "---|---|"
    lines += [header, rule]
    order = sorted(total, key=lambda k: (k != "English", -total[k], k))
    for g in order:
        lo, hi = wilson(hits[g], total[g])
        row = f"| {g} | {total[g]} | {hits[g] / total[g]:.3f} | [{lo:.3f}, {hi:.3f}] |"
        if paired:
            row += " – | – |" if g == "English" else f" {worse[g]} | {better[g]} |"
        lines.append(row)
    return [*lines, ""]


def result_label(result: dict[str, object]) -> str:
    config = result.get("config")
    label = "offline classifier"
    if isinstance(config, dict):
        options = config.get("resolverConfig") or {}
        if isinstance(options, dict) and options.get("offlineSemantic"):
            label += " + semantic extra"
    return label


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("results", nargs="*", default=["benchmark/results/curated-offline.json"])
    parser.add_argument("--md-out")
    args = parser.parse_args()
    command = " ".join(["python benchmark/language-breakdown.py", *args.results])
    if args.md_out:
        command += f" --md-out {args.md_out}"
    lines = ["# Must-include accuracy by prompt language", "", f"Command: `{command}`", ""]
    for path in args.results:
        lines += section(path)
    text = "\n".join(lines)
    sys.stdout.write(text)
    if args.md_out:
        Path(args.md_out).write_text(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
