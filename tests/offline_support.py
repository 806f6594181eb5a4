"""Real offline indexes from small random surfaces, for the property tests of the offline
classifier. A plain module (not a conftest): tests import it by name."""

from __future__ import annotations

import asyncio
from collections.abc import Mapping
from pathlib import Path

import resolver._text as text_module
from resolver import Resolver, ResolverConfig, ToolInfo, TurnRequest
from resolver._offline import _Index
from resolver._surface import default_surface

WORDS = [
    "send", "email", "search", "flight", "weather", "file", "read", "write", "calendar",
    "event", "price", "stock", "image", "resize", "translate", "note", "task", "remind",
    "map", "route", "music", "play", "invoice", "contact",
]  # fmt: skip
"""Everyday tool words; a test samples few of them so that tools share words and tie."""


def index_of(tools: list[ToolInfo]) -> _Index:
    """The offline index the resolver builds for `tools` (defaults, no override file)."""
    resolver = Resolver(ResolverConfig(catalogOverridesFile=None, keywordCacheFile=None))
    prepared = resolver._prepare(tools)
    return resolver.offline._index_for(prepared.described, prepared.catalog, prepared.params)


def stem_query(index: _Index, words: Mapping[str, float]) -> dict[str, float]:
    """A query of each word's stem as the index holds it, at the word's weight."""
    query = {}
    for word, weight in words.items():
        for term in index.weights:
            if term == word[: len(term)] and len(term) >= 3:
                query[term] = weight
    return query


def offline_surface(
    prompt: str, override: Path | None = None, *, tool_head: bool = False
) -> set[str]:
    """The default OpenClaw surface's answer from a new resolver without an LLM (with
    `override` as the catalog override file; the tokenizer's memo cleared, so a rule a test
    switched off is not read from an earlier analysis). The lexical rules are tested without
    the tool head (on by default, tests/test_tool_head.py): it adds tools of its own, so a rule
    switched off could still see its tool added."""
    text_module._analysed_memo.cache_clear()
    config = ResolverConfig(
        catalogOverridesFile=str(override) if override else None,
        llmRecallFloor=False,
        offlineToolHead=tool_head,
    )
    resolver = Resolver(config, llm=None)
    request = TurnRequest(prompt=prompt, tools=default_surface())
    return set(asyncio.run(resolver.resolve(request)).tools_allow or [])
