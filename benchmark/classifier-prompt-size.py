"""Print the LLM classifier's prompt size in tokens for the 54-tool default catalog.

Counts with o200k_base (the GPT-4o/GPT-5 family encoding) from the `bpe-openai` package, in
the ``tokens`` extra (``pip install -e '.[tokens]'``). The request is built exactly as the
classifier sends it (`resolver._llm_prompt`), for the default OpenClaw 2026.9.6 surface, the
shipped catalog with no overrides and the default core tools. Fewer tokens is better; the
stable prefix (system message) is what provider prompt caching can serve from cache.

Usage: python benchmark/classifier-prompt-size.py [--out FILE]
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import bpe_openai

from resolver import Message, ResolverConfig
from resolver._catalog import CatalogStore
from resolver._classify import ClassifyInput
from resolver._llm_prompt import answer_schema, system_prompt, turn_prompt
from resolver._surface import default_surface

COMMAND = ".venv/bin/python benchmark/classifier-prompt-size.py --out " + (
    "benchmark/results/classifier-prompt-size.md"
)
PROMPT = "remind me tomorrow at 9 to call mom"
HISTORY = [
    Message(role="user", content="take a screenshot of example.com"),
    Message(
        role="assistant",
        content="Here is the screenshot of example.com.",
        tool_calls=[{"id": "c1", "function": {"name": "browser", "arguments": "{}"}}],
    ),
    Message(role="tool", tool_call_id="c1", content="<png bytes>"),
    Message(role="user", content="great, and the pricing page?"),
    Message(role="assistant", content="The pricing page lists three plans."),
]
CHAT_FRAMING = 3 * 2 + 3
"""Chat-format overhead per request: ~3 tokens per message + 3 to prime the reply
(OpenAI's published counting recipe); an estimate, reported separately."""


def build(messages: list[Message]) -> ClassifyInput:
    config = ResolverConfig(catalogOverridesFile=None, keywordCacheFile=None)
    catalog = CatalogStore(config).current()
    tools = default_surface()
    return ClassifyInput(
        prompt=PROMPT,
        messages=tuple(messages),
        tools=tuple((t.name, catalog.describe(t.name)) for t in tools),
        skills=catalog.skills,
        catalog=catalog,
        timeout_s=4.0,
        core_tools=frozenset(config.core_tools),
    )


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", metavar="FILE", help="also write the report to FILE")
    args = parser.parse_args()
    enc = bpe_openai.get_encoding("o200k_base")

    def count(text: str) -> int:
        return len(enc.encode(text))

    bare, followup = build([]), build(HISTORY)
    prefix = system_prompt(bare)
    schema = json.dumps(answer_schema([name for name, _ in bare.tools]), separators=(",", ":"))
    rows = [
        ("system prefix: instructions + 54 tools + core list + skills", count(prefix)),
        (f"turn, no history: {PROMPT!r}", count(turn_prompt(bare))),
        ("turn with a 4-message tail (follow-up)", count(turn_prompt(followup))),
        ("answer schema (response_format, 54-name enum)", count(schema)),
        ("chat framing (estimate: 2 messages)", CHAT_FRAMING),
    ]
    total = rows[0][1] + rows[1][1] + rows[3][1] + rows[4][1]
    lines = [
        "# Classifier prompt size, 54-tool default catalog",
        "",
        f"Command: `{COMMAND}`",
        "",
        "Counted with o200k_base from the `bpe-openai` package (the `tokens` extra); the",
        "request is built by `resolver._llm_prompt` exactly as the classifier sends it",
        "(default OpenClaw 2026.9.6 surface, shipped catalog, default core tools).",
        "",
        "| part | tokens |",
        "|---|---:|",
        *(f"| {label} | {tokens:,} |" for label, tokens in rows),
        f"| **total input, first turn (prefix + turn + schema + framing)** | **{total:,}** |",
        "",
        f"System prefix: {len(prefix):,} characters, {len(prefix.encode()):,} bytes; "
        f"it is byte-identical across turns with the same catalog and candidates, so "
        f"providers with prompt caching (OpenAI: prefixes of 1,024+ tokens) can serve it "
        f"from cache. For scale: the 54 tools' JSON schemas the primary model receives are "
        f"104,829 bytes (about 26k tokens, DESIGN §1); the classifier never sees them.",
    ]
    report = "\n".join(lines) + "\n"
    sys.stdout.write(report)
    if args.out:
        Path(args.out).parent.mkdir(parents=True, exist_ok=True)
        Path(args.out).write_text(report)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
