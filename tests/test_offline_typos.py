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
