"""Companions: a catalog's tools kept beside a kept tool (host tools that overlap for one act,
or a step the host's description names), and a time of day read as a request to schedule."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import pytest
from doubles import ScriptedClassifier
from offline_support import offline_surface

from resolver import (
    Resolution,
    Resolver,
    ResolverConfig,
    ToolInfo,
    TurnRequest,
    load_catalog_file,
)
from resolver import _offline as offline_module
from resolver._data import default_catalog_path

NAMES = (
    "read",
    "message",
    "conversations_send",
    "conversations_list",
    "intent",
    "automations",
    "web_search",
    "github__create_pull_request",
    "github__get_file_contents",
    "github__list_commits",
)
TOOLS = [ToolInfo(name=n, description=f"the {n} tool") for n in NAMES]


def resolve(
    picked: tuple[str, ...],
    *,
    tools: list[ToolInfo] = TOOLS,
    override: Path | None = None,
    core: tuple[str, ...] = ("read",),
    **config: Any,
) -> Resolution:
    settings = ResolverConfig(
        catalogOverridesFile=str(override) if override else None,
        coreTools=list(core),
        llmRecallFloor=False,
        **config,
    )
    resolver = Resolver(settings, llm=ScriptedClassifier(picked))
    return asyncio.run(resolver.resolve(TurnRequest(prompt="post it", tools=tools)))


def signals(res: Resolution, name: str) -> tuple[str, ...]:
    return next(c.signals for c in res.candidates if c.name == name)


def write(path: Path, companions: dict[str, list[str]]) -> Path:
    path.write_text(json.dumps({"schemaVersion": 1, "companions": companions}), encoding="utf-8")
    return path


def test_a_narrow_sender_brings_the_general_one() -> None:
    """The default catalog: a turn the classifier reads as `conversations_send` keeps
    `message` too, marked as a companion, with its reason code."""
    res = resolve(("conversations_send",))
    assert set(res.tools_allow or []) == {"conversations_send", "message", "read"}
    assert signals(res, "message") == ("companion",)
    assert "companion_added" in res.reason_codes


def test_nothing_is_added_when_no_kept_tool_has_companions() -> None:
    res = resolve(("web_search",))
    assert set(res.tools_allow or []) == {"web_search", "read"}
    assert "companion_added" not in res.reason_codes


def test_a_companion_that_is_not_a_candidate_is_not_added() -> None:
    """Only narrows what the host offers: no `message` on a surface without it."""
    tools = [t for t in TOOLS if t.name != "message"]
    res = resolve(("conversations_send",), tools=tools)
    assert set(res.tools_allow or []) == {"conversations_send", "read"}
    assert "companion_added" not in res.reason_codes


def test_an_override_declares_companions_for_mcp_tools_and_removes_defaults(
    tmp_path: Path,
) -> None:
    """An operator's override file adds companions by name and an empty list removes a
    shipped one; the other shipped companions stay in force."""
    override = write(
        tmp_path / "over.json",
        {"github__create_pull_request": ["github__get_file_contents"], "intent": []},
    )
    res = resolve(
        ("github__create_pull_request", "intent", "conversations_turn"), override=override
    )
    kept = set(res.tools_allow or [])
    assert "github__get_file_contents" in kept
    assert "automations" not in kept  # the default intent -> automations was removed
    assert signals(res, "github__get_file_contents") == ("companion",)
    shipped = resolve(("intent",))
    assert "automations" in set(shipped.tools_allow or [])


def test_one_hop_and_not_for_core_tools(tmp_path: Path) -> None:
    """A companion's own companions are not followed, and a core tool brings none."""
    override = write(
        tmp_path / "over.json",
        {
            "github__list_commits": ["github__create_pull_request"],
            "github__create_pull_request": ["github__get_file_contents"],
            "read": ["web_search"],
        },
    )
    res = resolve(("github__list_commits",), override=override)
    assert set(res.tools_allow or []) == {
        "github__list_commits",
        "github__create_pull_request",
        "read",
    }


def test_a_turn_with_no_pick_gets_no_companions() -> None:
    """A turn the classifier keeps nothing for (as a conversation turn) stays core-only."""
    res = resolve(())
    assert set(res.tools_allow or []) == {"read"}


def test_shipped_companions_name_shipped_tools() -> None:
    """Every shipped companion pair names two tools the default catalog describes."""
    catalog = load_catalog_file(default_catalog_path())
    assert catalog.companions
    for name, others in catalog.companions.items():
        assert name in catalog.tools and others
        assert all(other in catalog.tools and other != name for other in others)


# ------------------------------------------------------------- a time of day: schedule


@pytest.mark.parametrize(
    "text",
    [
        "at 10:30",
        "at 5:40, then",
        "Friday at noon",
        "tous les jours à 20h",
        "vers 7h15",
        "um 18 Uhr",
        "a las 7 de la mañana",
        "às 9 da manhã",
        "3pm",
        "10:30 am",
        "午後3時に",
        "오후 3시에",
        "下午3点",
        "3点半",
    ],
)
def test_times_of_day_are_read(text: str) -> None:
    assert offline_module._CLOCK.search(text)


@pytest.mark.parametrize(
    "text",
    [
        "3 hours",
        "3時間",
        "3시간",
        "in the last 48h",
        "a 16:9 ratio",
        "version 1.10",
        "2026-12-04 10:30:15",
        "flight LH 2035",
        "count as 3 people",
        "alle 3 Dateien",
        "给我3点建议",
        "port 8080",
    ],
)
def test_durations_ratios_and_numbers_are_not(text: str) -> None:
    assert not offline_module._CLOCK.search(text)


def test_a_time_of_day_keeps_the_scheduler_beside_a_strong_first_step(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """'remind me at 16:45' after a strongly worded first step: the reminder's own words are
    shared with the event-triggered reminder tool (its companion turned off here), and the time
    of day is what says a scheduler is wanted."""
    prompt = "search the web for the Arsenal score and remind me at 21:00 to message Tom"
    no_companion = write(tmp_path / "over.json", {"intent": []})
    assert "automations" in offline_surface(prompt, no_companion)
    monkeypatch.setattr(offline_module, "CLOCK_TIME", False)
    assert "automations" not in offline_surface(prompt, no_companion)
    assert "automations" in offline_surface(prompt)  # the companion of `intent`


def test_the_cli_shows_and_counts_companions(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """`catalog show --effective` lists the merged companions (an override's empty list
    removes a shipped pair); `catalog validate` counts a file's."""
    from resolver.cli import main

    override = write(
        tmp_path / "o.json", {"intent": [], "github__list_commits": ["github__get_file_contents"]}
    )
    config = tmp_path / "c.json"
    config.write_text(json.dumps({"catalogOverridesFile": str(override)}), encoding="utf-8")
    assert main(["catalog", "show", "--effective", "--config", str(config)]) == 0
    shown = json.loads(capsys.readouterr().out)["companions"]
    assert shown["github__list_commits"] == ["github__get_file_contents"]
    assert "intent" not in shown and shown["conversations_send"] == ["message"]
    assert main(["catalog", "validate", str(override)]) == 0
    assert "2 tools with companions" in capsys.readouterr().out
