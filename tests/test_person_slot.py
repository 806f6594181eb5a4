"""A keyword phrase's person slot (resolver/_offline.py, `PERSON_SLOT`): "text her", "tell
him", "schreib ihm" in a catalog match a prompt that says a name there ("text Omar the gate
code"), or another such pronoun. Without the slot the pronoun is a stop word and "text her" is
the word "text", which a dozen tools' texts share."""

from __future__ import annotations

import asyncio

import pytest

import resolver._offline as offline
import resolver._pipeline as pipeline
from resolver import Resolver, ResolverConfig, TurnRequest
from resolver._surface import default_surface


def extra_tools(prompt: str) -> set[str]:
    """The default surface's answer beyond the core tools, from a new resolver (its index is
    built with the module's switches as they are now), without the tool head, which adds tools
    of its own (tests/test_tool_head.py)."""
    resolver = Resolver(ResolverConfig(catalogOverridesFile=None, offlineToolHead=False))
    res = asyncio.run(resolver.resolve(TurnRequest(prompt=prompt, tools=default_surface())))
    return set(res.tools_allow or []) - set(resolver.config.core_tools)


def test_a_name_fills_the_slot_of_text_her() -> None:
    assert extra_tools("text Omar the gate code") == {"message"}


def test_without_the_slot_the_same_prompt_is_weak_evidence_for_many_tools(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(offline, "PERSON_SLOT", False)
    extra = extra_tools("text Omar the gate code")
    assert "message" in extra and len(extra) > 3


@pytest.mark.parametrize(
    "prompt",
    [
        "book a table for two in Porto on Friday at 8 and text Omar the address",
        "find a quiet cafe near the office, then tell Priya where we meet",
    ],
)
def test_the_second_request_of_a_compositional_prompt_keeps_the_message_tool(
    prompt: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    # the classifier's own pick: without the catalog's companions (a kept conversations_*
    # tool brings `message` too), which would hide what the slot does
    monkeypatch.setattr(pipeline, "apply_companions", lambda state: state)
    assert "message" in extra_tools(prompt)
    monkeypatch.setattr(offline, "PERSON_SLOT", False)
    assert "message" not in extra_tools(prompt)


def test_a_pronoun_fills_the_slot_in_another_language() -> None:
    assert "message" in extra_tools("schreib ihm, dass ich später komme")


def test_what_fills_the_slot() -> None:
    resolver = Resolver(ResolverConfig(catalogOverridesFile=None))
    prepared = resolver._prepare(default_surface())
    index = offline._build_index(prepared.described, prepared.catalog, ("", 0), prepared.params)
    slot = offline.PERSON_TERM

    def words(text: str, lang: str = "en") -> list[str]:
        return offline._with_persons(index, text, lang, ["unchanged"])

    assert slot in words("text Omar the gate code")
    assert slot in words("tell her the gate code")
    # the first word of a sentence is capitalised anyway; a word a tool's text holds is no name
    assert words("Deploy it. Then post it on Telegram") == ["unchanged"]
    # German writes every noun capitalised: only its pronouns fill the slot
    assert words("Schreib etwas über Montagmorgen", "de") == ["unchanged"]
    assert slot in words("Schreib ihm etwas über Montagmorgen", "de")
    # "them" is a group as often as people ("wait for all of them": the agents)
    assert words("wait for all of them") == ["unchanged"]
    # a person named by relation (catalogs/language.json, "persons"), in English
    assert slot in words("text my wife the gate code")
    assert slot in words("tell our landlord the heater broke")
    assert words("text my wifi password to the printer") == ["unchanged"]
    assert words("mi hermana", "es") == ["unchanged"]


def test_a_person_named_by_relation_fills_the_slot(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(pipeline, "apply_companions", lambda state: state)
    prompt = "look up the flight status of BA117 and text my wife when it lands"
    assert "message" in extra_tools(prompt)
    assert "message" in extra_tools("tell my boss the demo moved to 3")


def test_without_the_persons_list_a_relation_is_no_person(monkeypatch: pytest.MonkeyPatch) -> None:
    # the classifier's own picks, without the catalog's companions (the look-up's
    # `conversations_list` brings `message` as its companion)
    monkeypatch.setattr(pipeline, "apply_companions", lambda state: state)
    monkeypatch.setattr(offline, "person_roles", lambda: None)
    assert "message" not in extra_tools(
        "look up the flight status of BA117 and text my wife when it lands"
    )
