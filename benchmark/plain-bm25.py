"""Plain BM25 variants on Seal-Tools beside the shipped ``bm25`` baseline, at matched k.

    python benchmark/plain-bm25.py [--seal ../shared/benchmarks/seal_tools.json]
                                   [--surface 13.26] [--md-out benchmark/results/plain-bm25.md]

Issue #15 reported that "a plain BM25 that only splits identifiers at underscores and stops
common words scores 0.825 must-include on Seal-Tools at k = 13". The shipped ``bm25`` baseline
(`resolver.bench.baseline`, the resolver's own tokenizer with Snowball stemming) scores about
0.70 at the resolver's mean surface, so a reviewer would ask which one is the strongest simple
baseline. This replays the plain recipe and its neighbours, each at k matched to `--surface`
(the resolver's mean surface on Seal-Tools, `seal-vs-baselines.md`) and at fixed k, and prints
the smallest k at which each reaches the issue's 0.825 and the resolver's figure:

- ``plain``: lower-case, split at every non-alphanumeric character (``get_weather_info`` ->
  get, weather, info), the English stop words of `catalogs/language.json` dropped, no stemming;
- ``plain+stem``: the same words Snowball-stemmed (the resolver's stemmer);
- ``plain, k1 1.5``: ``plain`` with the bm25s library's default k1;
- ``plain, name x3``: the name's words repeated three times (the resolver's name weight);
- ``shipped bm25``: the baseline of `--baseline bm25` (`_text.tokens`: also camelCase splitting,
  accent folding, CJK bigrams);
- with ``--dense``: ``shipped rrf`` (the shipped ``rrf`` baseline: shipped bm25 fused with the
  multilingual-e5-small dense ranker) and ``plain, name x3 + dense rrf`` (the same fusion over
  the plain variant), so the strongest fusion is measured too (needs the ``semantic`` extra).

Tools are one document each, name plus description (Seal-Tools tools have nothing else); the
query is the prompt. Must-include counts a case when every tool it needs is in the top k.
"""

from __future__ import annotations

import argparse
import json
import re
import sys
from collections.abc import Callable
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from resolver._text import stem
from resolver.bench.baseline import BM25Ranker, DenseRanker, RRFRanker, matched_ks

Tokenizer = Callable[[str], list[str]]
TARGETS = (0.825, 0.885)
MAX_K = 60


def english_stopwords() -> frozenset[str]:
    data = json.loads((REPO / "catalogs/language.json").read_text(encoding="utf-8"))
    return frozenset(w.lower() for w in data["stopwords"]["en"])


def plain_tokenizer(stop: frozenset[str], *, stemmed: bool) -> Tokenizer:
    def tokenize(text: str) -> list[str]:
        words = [w for w in re.findall(r"[a-z0-9]+", text.lower()) if w not in stop]
        return [stem(w) for w in words] if stemmed else words

    return tokenize


def gold_ranks(rank: Callable[[str], list[int]], names: list[str], cases: list[dict]) -> list[int]:
    """Per case: the worst rank (1-based) among the tools it needs."""
    place = {name: i for i, name in enumerate(names)}
    worst = []
    for case in cases:
        order = rank(case["prompt"])
        position = {tool: r for r, tool in enumerate(order[: MAX_K * 4], start=1)}
        need = [place[t] for t in case["must_include"] if t in place]
        worst.append(max((position.get(t, 10**9) for t in need), default=0))
    return worst


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seal", default=str(REPO.parent / "shared/benchmarks/seal_tools.json"))
    parser.add_argument(
        "--surface",
        type=float,
        default=None,
        help="mean surface to match (default: the resolver's, from "
        "benchmark/results/seal-vs-baselines.json)",
    )
    parser.add_argument(
        "--dense",
        action="store_true",
        help="also the dense ranker's fusions (the semantic extra's model)",
    )
    parser.add_argument("--md-out")
    args = parser.parse_args()
    seal_path = Path(args.seal)
    if not seal_path.is_file():
        print(f"plain-bm25: {seal_path} not found; pass --seal PATH", file=sys.stderr)
        return 2
    data = json.loads(seal_path.read_text(encoding="utf-8"))
    tools, cases = data["tools"], data["cases"]
    names = [t["name"] for t in tools]
    surface = args.surface
    resolver_figure = None
    if surface is None:
        shipped = json.loads((REPO / "benchmark/results/seal-vs-baselines.json").read_text())
        surface = float(shipped["metrics"]["mean_surface"])
        resolver_figure = float(shipped["metrics"]["must_include_accuracy"]["value"])
    ks = matched_ks(surface, len(cases), fixed=0, cap=len(tools))

    stop = english_stopwords()
    plain = plain_tokenizer(stop, stemmed=False)
    stemmed = plain_tokenizer(stop, stemmed=True)
    docs = [f"{t['name']} {t['description']}" for t in tools]
    name3 = [f"{t['name']} {t['name']} {t['name']} {t['description']}" for t in tools]
    variants: dict[str, Callable[[str], list[int]]] = {
        "plain": BM25Ranker.over_texts(docs, tokenize=plain).rank,
        "plain+stem": BM25Ranker.over_texts(docs, tokenize=stemmed).rank,
        "plain, k1 1.5": BM25Ranker.over_texts(docs, tokenize=plain, k1=1.5).rank,
        "plain, name x3": BM25Ranker.over_texts(name3, tokenize=plain).rank,
        "shipped bm25": BM25Ranker([(t["name"], t["description"]) for t in tools]).rank,
    }
    if args.dense:
        pairs = [(t["name"], t["description"]) for t in tools]
        dense = DenseRanker(pairs)
        variants["shipped rrf"] = RRFRanker([BM25Ranker(pairs), dense]).rank
        strongest = BM25Ranker.over_texts(name3, tokenize=plain)
        variants["plain, name x3 + dense rrf"] = RRFRanker([strongest, dense]).rank
    fixed = (10, 13, 15, 20, 30)
    header = (
        f"| variant | matched k (mean {surface:.2f}) | "
        + " | ".join(f"k = {k}" for k in fixed)
        + " | "
        + " | ".join(f"smallest k for {t:.3f}" for t in TARGETS)
        + " |"
    )
    lines = [header, "|---|---:|" + "---:|" * (len(fixed) + len(TARGETS))]
    for label, rank in variants.items():
        worst = gold_ranks(rank, names, cases)
        n = len(cases)

        def at(k: int, worst: list[int] = worst, n: int = n) -> float:
            return sum(1 for w in worst if w <= k) / n

        matched = sum(1 for w, k in zip(worst, ks, strict=True) if w <= k) / n
        reach = []
        for target in TARGETS:
            k = next((k for k in range(1, MAX_K + 1) if at(k) >= target), None)
            reach.append(str(k) if k is not None else f"> {MAX_K}")
        lines.append(
            f"| {label} | {matched:.3f} | "
            + " | ".join(f"{at(k):.3f}" for k in fixed)
            + " | "
            + " | ".join(reach)
            + " |"
        )
        print(lines[-1], flush=True)
    flags = (" --dense" if args.dense else "") + (f" --md-out {args.md_out}" if args.md_out else "")
    out = [
        "# Plain BM25 on Seal-Tools, beside the shipped baseline",
        "",
        f"Command: `python benchmark/plain-bm25.py{flags}`",
        "",
        f"- Case file: `{seal_path.name}`, {len(cases)} cases, {len(tools)} tools "
        "(name + description each).",
        "- Must-include accuracy; matched k spreads k over the cases so the mean is "
        f"{surface:.2f}, "
        "the resolver's mean surface in `seal-vs-baselines.md`"
        + (f" (where the resolver scores {resolver_figure:.3f})" if resolver_figure else "")
        + ".",
        "- Variants: see the script's docstring. Stop words: the English list of "
        "`catalogs/language.json`.",
        "",
        *lines,
        "",
    ]
    if args.md_out:
        Path(args.md_out).write_text("\n".join(out), encoding="utf-8")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
