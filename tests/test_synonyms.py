"""English synonyms (resolver/_synonyms.py, catalogs/synonyms.json): a request in the user's
words ("find the page", "visit the Acme shop", "dm Anna") reaches a tool described in the API's
words ("Search by title", "navigate", "post a message") when the tool has no catalog keywords,
and leaves the catalogued tools' scores as they were."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import pytest

import resolver._offline as offline
from resolver import Resolver, ResolverConfig, ToolInfo, TurnRequest
from resolver._synonyms import synonyms
from resolver._text import stem, tokens

TOOLS = [
    ToolInfo(name="wiki__post-search", description="Wiki | Search by title"),
    ToolInfo(name="wiki__retrieve-page", description="Wiki | Retrieve a page by its id"),
    ToolInfo(name="wiki__patch-page", description="Wiki | Update page properties"),
    ToolInfo(name="wiki__post-page", description="Wiki | Create a page"),
    ToolInfo(name="web__navigate", description="Navigate the browser to a URL."),
    ToolInfo(name="web__click", description="Click an element on the current page."),
    ToolInfo(name="chat__post_message", description="Post a new message to a channel."),
    ToolInfo(name="chat__list_channels", description="List the channels of the workspace."),
]


def run(prompt: str, tools: list[ToolInfo] = TOOLS, catalog: Path | None = None) -> dict:
    config = ResolverConfig(
        catalogOverridesFile=str(catalog) if catalog else None, keywordCacheFile=None, coreTools=[]
    )
    res = asyncio.run(Resolver(config).resolve(TurnRequest(prompt=prompt, tools=tools)))
    return {c.name: c.score for c in res.candidates}


def leads(scores: dict, name: str) -> bool:
    """`name` scores above every other candidate."""
    return all(scores.get(name, 0.0) > score for other, score in scores.items() if other != name)


def test_the_table_ships_groups_of_interchangeable_words() -> None:
    raw = json.loads((Path(__file__).parents[1] / "catalogs" / "synonyms.json").read_text())
    groups = raw["groups"]
    assert len(groups) >= 50
    seen: set[str] = set()
    for group in groups:
        assert 2 <= len(group) <= 12, group
        for entry in group:
            assert entry == entry.lower() and 1 <= len(entry.split()) <= 3, entry
            assert entry not in seen, f"{entry!r} is in two groups"
            seen.add(entry)
    table = synonyms()
    assert table is not None and stem("search") in table.targets


def test_a_word_and_a_phrase_bring_their_synonyms_and_never_the_texts_own_terms() -> None:
    table = synonyms()
    assert table is not None
    words = tokens("find the quarterly page")
    assert stem("search") in table.expand(
        words, tokens("find the quarterly page", keep_stopwords=True)
    )
    text = "take a screen capture of the dashboard"
    assert stem("screenshot") in table.expand(tokens(text), tokens(text, keep_stopwords=True))
    text = "search and find"  # both in one group: neither is added as the other's synonym
    added = table.expand(tokens(text), tokens(text, keep_stopwords=True))
    assert stem("search") not in added and stem("find") not in added
    assert not table.expand([], [])


@pytest.mark.parametrize(
    ("prompt", "needed"),
    [
        ("find our onboarding notes in the wiki", "wiki__post-search"),
        # no link in it: a link ("example.com") is evidence for the navigate tool by itself
        ("visit the Acme shop and tell me what it sells", "web__navigate"),
        ("dm Anna that we shipped", "chat__post_message"),
    ],
)
def test_a_request_in_the_users_words_reaches_the_tool_in_the_apis_words(
    monkeypatch: pytest.MonkeyPatch, prompt: str, needed: str
) -> None:
    """The word that tells the tool apart is in its name or description only as a synonym
    ("find" / "search", "visit" / "navigate", "dm" / "message"):
    with the table the tool leads, without it nothing sets it above the others."""
    assert leads(run(prompt), needed)
    monkeypatch.setattr(offline, "SYNONYMS", False)
    assert not leads(run(prompt), needed)  # what the table adds


def test_a_synonym_scores_only_the_tools_without_catalog_keywords(tmp_path: Path) -> None:
    """A catalogued tool has a hand-written lexicon for the user's words; a synonym would only
    inflate it against the host's tools."""
    catalog = tmp_path / "catalog.json"
    catalog.write_text(json.dumps({"schemaVersion": 1, "keywords": {"docs_search": ["docs"]}}))
    tools = [
        ToolInfo(name="docs_search", description="Search the documentation."),
        ToolInfo(name="wiki__post-search", description="Wiki | Search by title"),
    ]
    scores = run("find the release notes", tools, catalog)
    assert scores.get("wiki__post-search", 0.0) > 0.0
    assert scores.get("docs_search", 0.0) == 0.0
