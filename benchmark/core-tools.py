"""What the always-on core tools cost and buy, per case set: the same cases under other
`coreTools` lists.

    python benchmark/core-tools.py [--md-out benchmark/results/core-tools.md]

Core tools are in every surface (design invariant 2): they are recall insurance for the needs a
prompt does not say ("who was that contractor I mentioned" needs `memory_search`), and a fixed
cost on every turn. The default list is eight tools; on an MCP-heavy host they are 8 of the
~18 a turn keeps, and the must-include target there is at most 15. This replays each case set
(offline classifier, default catalogs, no keyword cache) under a few lists and reports
must-include accuracy at the mean surface, so an operator can see what a shorter list costs on
their kind of traffic before setting `coreTools`. The lists:

- ``default``: the shipped list;
- ``coding+memory``: read, write, edit, exec, process, memory_search;
- ``coding``: read, write, edit, exec, process — the file and shell tools OpenClaw's own Tool
  Search keeps in every request (with apply_patch, ls, openclaw and sessions_yield; see
  `openclaw-mcp-e2e.md`, "tools seen in the tasks' requests");
- ``none``: no core tools (the classifier's picks only).

Nothing here changes the default. A set's accuracy counts a case only when every tool it
needs is in the surface, so a shorter list loses exactly the turns whose needed core tool the
classifier does not pick by itself.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from resolver import ResolverConfig
from resolver._config import DEFAULT_CORE_TOOLS
from resolver.bench.cases import MCP_SETS
from resolver.bench.harness import command_line
from resolver.bench.runner import must_include_offline

CODING = ("read", "write", "edit", "exec", "process")
LISTS: dict[str, tuple[str, ...]] = {
    "default": tuple(DEFAULT_CORE_TOOLS),
    "coding+memory": (*CODING, "memory_search"),
    "coding": CODING,
    "none": (),
}
SETS = (
    "curated",
    "parallel",
    "compositional",
    "compositional-2",
    "compositional-3",
    "compositional-4",
    "compositional-5",
    "compositional-6",
    "compositional-7",
    *MCP_SETS,
)


def tool_bytes(names: tuple[str, ...]) -> int:
    """The compact-JSON bytes of these default OpenClaw tools as a model receives them."""
    raw = json.loads((REPO.parent / "shared/openclaw/default-tools-2026.9.6.json").read_text())
    tools = raw["tools"] if isinstance(raw, dict) else raw
    wanted = set(names)
    return sum(
        len(json.dumps(t, separators=(",", ":"), ensure_ascii=False).encode())
        for t in tools
        if (t.get("function") or t).get("name") in wanted
    )


def measure(core: tuple[str, ...], path: Path) -> tuple[int, int, float]:
    """(cases with every needed tool in the surface, cases, mean surface)."""
    return must_include_offline(ResolverConfig(keywordCacheFile="", coreTools=list(core)), path)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--md-out")
    args = parser.parse_args()
    shared_bytes = (REPO.parent / "shared/openclaw/default-tools-2026.9.6.json").exists()
    header = "| core list | tools | bytes | " + " | ".join(SETS) + " |"
    lines = [header, "|---|---:|---:|" + "---:|" * len(SETS)]
    for label, core in LISTS.items():
        cells = []
        for name in SETS:
            hits, n, surface = measure(core, REPO / f"benchmark/benchmark-v1-{name}.json")
            cells.append(f"{hits / n:.3f} ({hits}/{n}) @ {surface:.2f}")
        size = f"{tool_bytes(core):,}" if shared_bytes else "-"
        lines.append(f"| {label} | {len(core)} | {size} | " + " | ".join(cells) + " |")
        print(lines[-1], flush=True)
    report = "\n".join(lines)
    if args.md_out:
        lists = "\n".join(
            f"- `{label}`: {', '.join(core) or '(none)'}" for label, core in LISTS.items()
        )
        Path(args.md_out).write_text(
            "# Core tools: what a shorter always-on list costs and saves\n\n"
            f"Command: `{command_line(sys.argv)}`\n\n"
            "Offline classifier, default catalogs, no keyword cache; every cell is must-include "
            "accuracy (cases with every needed tool in the surface) at the mean surface (tools "
            "per turn, core tools included). `bytes`: the core tools' compact JSON as OpenClaw "
            "2026.9.6 sends them.\n\n"
            f"{lists}\n\n{report}\n"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
