"""Typo matching in the offline classifier: only vocabulary words exactly one edit away."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import pytest

from resolver import Resolution, Resolver, ResolverConfig, ToolInfo, TurnRequest
from resolver._offline import one_edit


def resolution(prompt: str, tools: list[ToolInfo]) -> Resolution:
    """A fresh resolver's (no core tools, no keyword cache) answer for `prompt`."""
    resolver = Resolver(ResolverConfig(coreTools=[], keywordCacheFile=""))
    return asyncio.run(resolver.resolve(TurnRequest(prompt=prompt, tools=tools)))


def allowed(prompt: str, tools: list[ToolInfo]) -> list[str]:
    """The tools a fresh resolver allows for `prompt`."""
    return list(resolution(prompt, tools).tools_allow or [])


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
    assert tool in allowed(prompt, tools)
    monkeypatch.setattr("resolver._offline.SPELLINGS", False)
    assert tool not in allowed(prompt, tools)


@pytest.mark.parametrize(
    ("prompt", "tool", "typo"),
    [
        # a correctly spelt word one edit from a tool word: not a typo of it
        ("the plant in Woodland", "control_plane", "restart the plnae"),
        ("how many sheep are in Wales", "update_sheet", "update the shete"),
        ("find a decent lentil soup", "recent_files", "open my recnet files"),
    ],
)
def test_a_correctly_spelt_english_word_is_not_read_as_a_typo(
    monkeypatch: pytest.MonkeyPatch, prompt: str, tool: str, typo: str
) -> None:
    """'plant', 'sheep' and 'decent' are English words (`english_words`), one edit from the
    tool words 'plane', 'sheet' and 'recent': they do not reach those tools, and do with the
    English word list off. A real typo ('plnae', 'shete', 'recnet') still reaches its tool."""
    monkeypatch.setattr("resolver._offline.RELATED", False)
    monkeypatch.setattr("resolver._offline.SYNONYMS", False)
    tools = [
        ToolInfo(name="control_plane", description="Restart the cluster's control plane."),
        ToolInfo(name="update_sheet", description="Update a sheet of a spreadsheet."),
        ToolInfo(name="recent_files", description="List recent files."),
    ]
    assert tool not in allowed(prompt, tools)
    assert tool in allowed(typo, tools)
    monkeypatch.setattr("resolver._offline.REAL_WORDS", False)
    assert tool in allowed(prompt, tools)


def test_the_english_word_list_is_shipped_and_bounded() -> None:
    """The list is read from the shipped catalog folder, holds common words and no capitalised
    names, and only words as long as typo matching reads."""
    from resolver._data import shipped_table
    from resolver._lang import english_words
    from resolver._offline import MAX_TYPO_LENGTH, MIN_QUERY_TYPO_LENGTH

    words = english_words()
    assert len(words) > 50_000
    assert {"plant", "sheep", "decent", "whether", "shops"} <= words
    assert not {"remnd", "calender", "postgress", "paris", "Paris"} & words
    assert all(MIN_QUERY_TYPO_LENGTH <= len(w) <= MAX_TYPO_LENGTH for w in words)
    # SCOWL's licence asks for its copyright notice in every copy
    meta = (shipped_table("english-words.json") or {}).get("_meta", {})
    assert "Copyright 2000-2011 by Kevin Atkinson" in meta.get("license", "")


def test_a_capitalised_proper_name_is_not_read_as_a_typo(monkeypatch: pytest.MonkeyPatch) -> None:
    """'Paris' written capitalised is a name (`proper_names`), not a mistyped 'pairs': the
    pairing tool scores on 'devices' alone, and more with the names list empty. Written
    lower-case, a name may still be a hasty typo: 'chanel' reaches a channel tool."""
    monkeypatch.setattr("resolver._offline.RELATED", False)
    monkeypatch.setattr("resolver._offline.SYNONYMS", False)
    tools = [
        ToolInfo(name="pair_device", description="Pair devices: exchange their key pairs."),
        ToolInfo(name="list_devices", description="List the devices of a site."),
        ToolInfo(name="channel_post", description="Post a message to a channel."),
    ]

    def pairing(prompt: str) -> float:
        scores = {c.name: c.score for c in resolution(prompt, tools).candidates}
        return scores["pair_device"]

    prompt = "list the devices in the Paris office"
    named = pairing(prompt)
    assert "channel_post" in allowed("drop it in the general chanel", tools)
    monkeypatch.setattr("resolver._offline.proper_names", frozenset)
    assert pairing(prompt) > named > 0.0


def test_the_proper_names_are_shipped_apart_from_the_words() -> None:
    """The names list holds capitalised SCOWL words, lower-cased, none of them also an ordinary
    word, each as long as typo matching reads."""
    from resolver._lang import english_words, proper_names
    from resolver._offline import MAX_TYPO_LENGTH, MIN_QUERY_TYPO_LENGTH

    names = proper_names()
    assert len(names) > 5_000
    assert {"paris", "denver", "chanel"} <= names
    assert not names & english_words()
    assert all(MIN_QUERY_TYPO_LENGTH <= len(w) <= MAX_TYPO_LENGTH and w.islower() for w in names)
