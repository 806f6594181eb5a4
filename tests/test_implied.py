"""Implied phrases: a catalog's phrases that state a situation needing a tool without its words
("my hands are full" -> the speech tool). A clause holding one keeps the tool as its own pick;
the phrases are data (``implied`` in a catalog layer), an override adds or removes them by tool
name. Prompts are written for these tests, not taken from a case file."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from offline_support import offline_surface

from resolver import _offline as offline_module
from resolver import load_catalog_file
from resolver._data import default_catalog_path


def write(path: Path, implied: dict[str, Any]) -> Path:
    path.write_text(json.dumps({"schemaVersion": 1, "implied": implied}), encoding="utf-8")
    return path


def test_a_situation_keeps_the_tool_it_needs(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """'my hands are full' holds no word of the speech tool; the shipped phrase keeps it beside
    the request's own tools, and an override's empty list (or the switch) takes it away."""
    prompt = "My hands are full with groceries, what did Sam just send me on WhatsApp?"
    kept = offline_surface(prompt)
    assert {"tts", "message"} <= kept
    assert "tts" not in offline_surface(prompt, write(tmp_path / "o.json", {"tts": []}))
    monkeypatch.setattr(offline_module, "IMPLIED", False)
    assert "tts" not in offline_surface(prompt)


def test_a_phrase_alone_is_no_request() -> None:
    """A phrase adds its tool beside the request's picks; a turn that matches nothing else
    (or that the conversation head takes for conversation) stays with the core tools."""
    core = offline_surface("thanks!")
    assert offline_surface("ugh, my hands are full") == core


def test_an_override_adds_phrases_for_any_tool_by_name(tmp_path: Path) -> None:
    """An operator names the tool and its phrases; a later layer's list replaces the shipped
    one (here the scheduler's, with a phrase the shipped list does not hold)."""
    prompt = "my plants are dying again, text Lea that I am sorry"
    assert "automations" not in offline_surface(prompt)
    override = write(tmp_path / "o.json", {"automations": ["plants are dying"]})
    assert "automations" in offline_surface(prompt, override)


def test_shipped_implied_phrases_name_shipped_tools() -> None:
    catalog = load_catalog_file(default_catalog_path())
    assert catalog.implied
    for name, phrases in catalog.implied.items():
        assert name in catalog.tools and phrases
        assert len(set(phrases)) == len(phrases)


def test_the_cli_shows_and_counts_implied_phrases(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """`catalog show --effective` lists the merged phrases (an override's empty list removes
    a tool's); `catalog validate` counts a file's."""
    from resolver.cli import main

    override = write(tmp_path / "o.json", {"tts": [], "web_search": ["no idea what this is"]})
    config = tmp_path / "c.json"
    config.write_text(json.dumps({"catalogOverridesFile": str(override)}), encoding="utf-8")
    assert main(["catalog", "show", "--effective", "--config", str(config)]) == 0
    shown = json.loads(capsys.readouterr().out)["implied"]
    assert shown["web_search"] == ["no idea what this is"]
    assert "tts" not in shown and "automations" in shown
    assert main(["catalog", "validate", str(override)]) == 0
    assert "2 tools with implied phrases" in capsys.readouterr().out
