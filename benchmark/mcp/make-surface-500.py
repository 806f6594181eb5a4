"""Build a 500-tool surface for the overhead benchmark: the real 268-tool MCP surface OpenClaw
sent (surface-openclaw-2026.9.6.json) plus the first 232 Seal-Tools tools (Apache-2.0), and a
case file that replays the MCP cases over it.

    python benchmark/mcp/make-surface-500.py [--seal ../shared/benchmarks/seal_tools.json]
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

HERE = Path(__file__).resolve().parent


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--seal", default=str(HERE.parents[1] / ".." / "shared" / "benchmarks" / "seal_tools.json")
    )
    args = parser.parse_args()
    mcp = json.loads((HERE / "surface-openclaw-2026.9.6.json").read_text())
    seal = json.loads(Path(args.seal).read_text())
    names = {t["name"] for t in mcp["tools"]}
    extra = [t for t in seal["tools"] if t["name"] not in names][: 500 - len(mcp["tools"])]
    tools = mcp["tools"] + [
        {"name": t["name"], "description": t.get("description", "")} for t in extra
    ]
    (HERE / "surface-500.json").write_text(
        json.dumps(
            {
                "about": "The 268-tool OpenClaw MCP surface + 232 Seal-Tools tools "
                "(overhead benchmark).",
                "tools": tools,
            }
        )
    )
    cases = json.loads((HERE.parent / "benchmark-v1-mcp.json").read_text())
    cases.update({"name": "benchmark-v1-mcp-500", "surface": "surface-500.json"})
    (HERE / "cases-500.json").write_text(json.dumps(cases, ensure_ascii=False))
    print(len(tools), "tools")


if __name__ == "__main__":
    main()
