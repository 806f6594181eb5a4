"""The searchable catalog: what the resolver leaves the host's own tool search to find.

    python benchmark/search-catalog.py [--file CASES.json ...] [--sizes 16,32,48,64,96]
        [--md-out benchmark/results/search-catalog.md]

With OpenClaw's Tool Search on, the model's request carries the search controls and the host's
direct tools; `toolsAllow` bounds what `tool_search` can find. A needed tool left out of that
catalog cannot be reached at all, so there the resolver widens its picks with the next
best-scored candidates up to `searchCatalogSize` (`apply_search_catalog`). This script runs the
real offline pipeline on each case file twice per size: without the search control among the
candidates (the plain surface: what the model is sent) and with it (the searchable catalog),
and reports must-include accuracy — every needed tool inside `toolsAllow` — and the mean size
of each. The case files are not changed and nothing is fitted to them; the sizes are the
budgets a user may set.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from resolver import Resolver, ResolverConfig, TurnRequest
from resolver._types import ToolInfo
from resolver.bench.cases import CaseSet, load_case_file
from resolver.bench.harness import command_line

SEARCH = ToolInfo(
    name="tool_search",
    description="Search the tool catalog and return matching tools (OpenClaw Tool Search).",
)
FILES = (
    "benchmark/benchmark-v1-mcp.json",
    "benchmark/mcp/cases-500.json",
    "benchmark/benchmark-v1-curated.json",
    "benchmark/benchmark-v1-compositional.json",
)


def measure(cases: CaseSet, size: int, search: bool) -> tuple[float, float, int]:
    """(must-include accuracy, mean toolsAllow size, cases) of one pass."""
    tools = list(cases.candidates) + ([SEARCH] if search else [])
    config = ResolverConfig(keywordCacheFile="", catalogOverridesFile="", searchCatalogSize=size)
    resolver = Resolver(config)
    resolver.warm(tools)
    hits = kept = 0
    for case in cases.cases:
        res = resolver.resolve_sync(
            TurnRequest(
                prompt=case.prompt,
                messages=case.messages or [],
                tools=tools,
                sessionId=f"bench:{case.id}",
            )
        )
        allow = set(res.tools_allow if res.tools_allow is not None else (t.name for t in tools))
        allow.discard(SEARCH.name)
        kept += len(allow)
        hits += all(t in allow for t in case.must_include)
    n = len(cases.cases)
    return hits / n, kept / n, n


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--file", action="append", help="case file (repeatable)")
    parser.add_argument("--sizes", default="16,32,48,64,96")
    parser.add_argument("--md-out")
    args = parser.parse_args()
    files = args.file or list(FILES)
    sizes = [int(s) for s in args.sizes.split(",")]
    started = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())
    lines = [
        "# The searchable catalog under the host's tool search",
        "",
        f"Command: `{command_line(sys.argv[1:])}`",
        "",
        f"Run {started}. Offline classifier, default config but `searchCatalogSize`; no keyword "
        "cache, no override file. *plain* = the candidates as in the case file (what the model "
        "is sent); *with tool_search* = the same plus OpenClaw's `tool_search` control, so "
        "`toolsAllow` is the catalog Tool Search can find tools in (the control itself is not "
        "counted). Accuracy = every needed tool in `toolsAllow`.",
        "",
        "| case file | tools | cases | plain: accuracy / mean size | "
        + " | ".join(f"with tool_search, size {s}: accuracy / mean size" for s in sizes)
        + " |",
        "| --- | ---: | ---: | ---: | " + " | ".join("---:" for _ in sizes) + " |",
    ]
    for path in files:
        cases = load_case_file(path)
        acc, mean, n = measure(cases, sizes[-1], search=False)
        row = [f"`{path}`", str(len(cases.candidates)), str(n), f"{acc:.3f} / {mean:.2f}"]
        for size in sizes:
            wacc, wmean, _ = measure(cases, size, search=True)
            row.append(f"{wacc:.3f} / {wmean:.2f}")
        lines.append("| " + " | ".join(row) + " |")
        print(lines[-1], flush=True)
    text = "\n".join(lines) + "\n"
    if args.md_out:
        Path(args.md_out).write_text(text, encoding="utf-8")
    else:
        print(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
