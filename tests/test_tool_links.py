"""A link in a tool's own text (resolver/_offline.py, `TOOL_LINKS_AS_URL`): an example URL in a
parameter's description is indexed as the word "url", so the pieces of a prompt's link
("https", "example", "com") do not make that tool outrank the one that opens URLs."""

from __future__ import annotations

import asyncio

import pytest

import resolver._offline as offline
from resolver import Resolver, ResolverConfig, ToolInfo, TurnRequest

TOOLS = [
    ToolInfo(name="web__navigate", description="Navigate to a URL"),
    ToolInfo(
        name="web__drop",
        description="Drop data onto an element of the page",
        parameters={
            "type": "object",
            "properties": {
                "data": {
                    "type": "object",
                    "description": 'Data to drop, e.g. {"text/uri-list": "https://example.com"}',
                }
            },
        },
    ),
    ToolInfo(name="web__click", description="Click an element of the page"),
]
PROMPT = "open https://shop.example.com/checkout"


def ranking() -> list[str]:
    config = ResolverConfig(catalogOverridesFile=None, keywordCacheFile=None, coreTools=[])
    res = asyncio.run(Resolver(config).resolve(TurnRequest(prompt=PROMPT, tools=TOOLS)))
    scores = {c.name: c.score for c in res.candidates}
    return sorted(scores, key=lambda name: (-scores[name], name))


def test_the_tool_that_takes_a_url_leads() -> None:
    assert ranking()[0] == "web__navigate"


def test_indexed_as_written_the_example_links_pieces_win(monkeypatch: pytest.MonkeyPatch) -> None:
    """What the rule changes: "https", "example" and "com" match the drop tool's example."""
    monkeypatch.setattr(offline, "TOOL_LINKS_AS_URL", False)
    assert ranking()[0] == "web__drop"


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("Navigate to a URL", "Navigate to a URL"),
        ("see https://example.com/a?b=1 for more", "see  url  for more"),
        ('{"uri": "http://x.org"}', '{"uri": " url "}'),
        ("docs at www.example.org.", "docs at  url "),
    ],
)
def test_links_become_the_word_url(text: str, expected: str) -> None:
    assert offline._links_as_url(text) == expected
