"""Typo matching in the offline classifier: only vocabulary words exactly one edit away."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import pytest

from resolver import Resolver, ResolverConfig, ToolInfo, TurnRequest
from resolver._offline import one_edit


@pytest.mark.parametrize(
    ("a", "b"),
    [
        ("remnd", "remind"),
        ("remind", "remnd"),
        ("dentsit", "dentist"),
        ("serch", "search"),
        ("wether", "whether"),
        ("calender", "calendar"),
    ],
)
def test_one_edit_accepts_an_insertion_deletion_substitution_or_swap(a: str, b: str) -> None:
    assert one_edit(a, b)


@pytest.mark.parametrize(
    ("a", "b"), [("remnd", "rendu"), ("remind", "remind"), ("abcd", "badc"), ("form", "from1x")]
)
def test_one_edit_rejects_two_edits_and_identity(a: str, b: str) -> None:
    assert not one_edit(a, b)


def test_a_typo_is_not_matched_to_a_word_two_edits_away(tmp_path: Path) -> None:
    """'remnd' is one edit from 'remind' and two from the French 'rendu' (both in the index)."""
    catalog = tmp_path / "catalog.json"
    catalog.write_text(
        json.dumps(
            {"schemaVersion": 1, "keywords": {"notes": ["compte rendu"], "alarm": ["remind"]}}
        )
    )
    resolver = Resolver(ResolverConfig(catalogOverridesFile=str(catalog), coreTools=[]))
    tools = [
        ToolInfo(name="notes", description="Meeting notes."),
        ToolInfo(name="alarm", description="Alarms."),
    ]
    res = asyncio.run(resolver.resolve(TurnRequest(prompt="remnd me at 5pm", tools=tools)))
    assert res.tools_allow == ["alarm"]


@pytest.mark.parametrize(
    ("prompt", "tool"),
    [
        ("count the rows of every table in postgress", "postgres_query"),
        ("which deplyments failed?", "list_deployments"),
    ],
)
def test_a_typo_is_matched_as_written_not_only_by_its_stem(
    monkeypatch: pytest.MonkeyPatch, prompt: str, tool: str
) -> None:
    """'postgress' is one edit from 'postgres' as written, three from its stem 'postgr'; the
    typo still reaches the tool, and does not without matching the words as written. (The
    related words and the product words are off: "rows" implies "sql", and a Postgres tool is
    indexed with "rows" and "table"; either would reach the tool without the typo.)"""
    monkeypatch.setattr("resolver._offline.RELATED", False)
    monkeypatch.setattr("resolver._offline.PRODUCTS", False)
    tools = [
        ToolInfo(name="postgres_query", description="Run a read-only SQL query on Postgres."),
        ToolInfo(name="list_deployments", description="List Kubernetes deployments."),
        ToolInfo(name="send_message", description="Send a chat message."),
    ]

    def allowed() -> list[str]:
        resolver = Resolver(ResolverConfig(coreTools=[], keywordCacheFile=""))
        res = asyncio.run(resolver.resolve(TurnRequest(prompt=prompt, tools=tools)))
        return list(res.tools_allow or [])

    assert tool in allowed()
    monkeypatch.setattr("resolver._offline.SPELLINGS", False)
    assert tool not in allowed()
