"""Ways of saying a tool's object that hold none of its words: a flight number, the user's own
place ("where I am"), the user's own device ("my iPad", "mon tel"), a day ("domattina",
"tonight", "周五") or an hour said with its word ("alle 9"), a phone number (a message's
recipient), a condition on a fact of the world or a question in Dutch or Polish (the look-up
cues), a phrasal verb whose
particle is a stop word ("look it up", "log into"), and the French "il y a" that is no "and".
Each is shown on the default OpenClaw surface with the rule on and off (prompts written for
these tests, not taken from a case file)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from offline_support import offline_surface

import resolver._offline as offline_module
import resolver._text as text_module
from resolver import load_catalog_file
from resolver._data import default_catalog_path
from resolver._offline import _DAY, _FLIGHT, _MY_DEVICE, _PHONE, _SELF_PLACE, clauses_of
from resolver._text import tokens


@pytest.mark.parametrize(
    "text",
    ["Is KL 1002 on time?", "mit LH2035 nach Hamburg", "vol TP 445 demain", "U2 8721", "6E 204"],
)
def test_flight_numbers_are_read(text: str) -> None:
    assert _FLIGHT.search(text)


@pytest.mark.parametrize(
    "text",
    [
        "Q3 2024 revenue",
        "CA 94107",
        "my PS5",
        "an MP3 at 128 kbps",
        "PR 412",
        "AI 101 course",
        "iOS 17",
        "GTX 1080",
        "COVID 19",
        "#BA 117",
        "A4 paper",
        "CALL MOM AT 10",
        "BACK IN 2025",
    ],
)
def test_quarters_postcodes_products_and_abbreviations_are_not_flights(text: str) -> None:
    assert not _FLIGHT.search(text)


def test_a_flight_number_asks_for_a_web_search(monkeypatch: pytest.MonkeyPatch) -> None:
    """'is KL 1002 still on time?' holds no word of the search tool; its flight number does."""
    prompt = "is KL 1002 still on time?"
    assert "web_search" in offline_surface(prompt)
    without = tuple(row for row in offline_module._ENTITIES if row[0] is not _FLIGHT)
    monkeypatch.setattr(offline_module, "_ENTITIES", without)
    assert "web_search" not in offline_surface(prompt)


@pytest.mark.parametrize(
    "text",
    [
        "the nearest pharmacy to where I am",
        "where am I",
        "where I'm at",
        "Where's my Pixel?",
        "share my current location",
        "wo ich gerade bin",
        "wo ist mein Handy",
        "où je suis",
        "dónde estoy",
        "dove mi trovo",
        "dimmi dove sono adesso",
        "onde eu tô",
        "今いる場所",
        "지금 있는 곳",
        "我现在在哪",
    ],
)
def test_the_users_own_place_is_read(text: str) -> None:
    assert _SELF_PLACE.search(text)


@pytest.mark.parametrize(
    "text",
    [
        "where are the files",
        "where is my package",
        "dove sono le chiavi?",
        "somewhere I am happy",
        "where the meeting is",
    ],
)
def test_a_things_place_is_not_the_users(text: str) -> None:
    assert not _SELF_PLACE.search(text)


@pytest.mark.parametrize(
    ("prompt", "flag"),
    [
        ("how far is the nearest pharmacy from where I am?", "SELF_PLACE"),
        ("wie weit ist es von da, wo ich gerade bin, bis zum Bahnhof?", "SELF_PLACE"),
        ("take a screenshot of my Galaxy and send it to Omar on Signal", "MY_DEVICE"),
    ],
)
def test_the_users_place_and_device_keep_the_device_tool(
    prompt: str, flag: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Every word of "where I am" is a stop word, and "Galaxy" is in no tool's text: the rule
    reads them as "location" and "device", the paired-device tool's words."""
    assert "nodes" in offline_surface(prompt)
    monkeypatch.setattr(offline_module, flag, False)
    assert "nodes" not in offline_surface(prompt)


@pytest.mark.parametrize(
    "text", ["my iPad", "my work MacBook", "mon tel", "mein Handy", "mi móvil", "il mio cellulare"]
)
def test_the_users_own_devices_are_read(text: str) -> None:
    assert _MY_DEVICE.search(text)


@pytest.mark.parametrize("text", ["my macro", "the phone", "a new laptop", "mon télé"])
def test_other_devices_and_words_are_not(text: str) -> None:
    assert not _MY_DEVICE.search(text)


@pytest.mark.parametrize(
    "text",
    [
        "tonight",
        "every Sunday",
        "this weekend",
        "at 9",
        "alle 9",
        "um 7 bitte",
        "kl. 7",
        "domattina",
        "heute Abend",
        "ce soir",
        "pasado mañana",
        "vanavond",
        "jutro",
        "i kväll",
        "周五",
        "两点半",
        "来週",
        "다음 주",
        "토요일",
    ],
)
def test_days_and_hours_said_with_their_word_are_read(text: str) -> None:
    assert _DAY.search(text)


@pytest.mark.parametrize(
    "text",
    [
        "Guten Morgen!",
        "at 95 degrees",
        "at 9%",
        "at 9.5 stars",
        "the 9 of us",
        "someday",
        "Sundaes",
    ],
)
def test_greetings_measures_and_other_words_are_no_day(text: str) -> None:
    assert not _DAY.search(text)


def test_a_day_keeps_the_scheduler(monkeypatch: pytest.MonkeyPatch) -> None:
    """ "domattina" (tomorrow morning) and "alle 8" are in no tool's text, nor is any Italian day
    word in the glossary: the request's reminder stood on "ricordami" alone, below the
    update and the chat group's tools."""
    prompt = (
        "Aggiorna OpenClaw. Domattina alle 8 ricordami di verificare che il gruppo Telegram del"
        " club funzioni ancora"
    )
    assert "automations" in offline_surface(prompt)
    monkeypatch.setattr(offline_module, "DAY_WORDS", False)
    assert "automations" not in offline_surface(prompt)


@pytest.mark.parametrize(
    "prompt",
    ["Warum heißt der Donnerstag eigentlich Donnerstag?", "happy friday!!", "see you on Sunday!"],
)
def test_a_day_alone_is_no_request(prompt: str) -> None:
    """A day is said in conversation too: it counts only beside the request's other terms."""
    assert "automations" not in offline_surface(prompt)


@pytest.mark.parametrize(
    "text",
    ["+1 512 555 0199", "+49 171 4402918", "+15551234567", "(415) 555-0142", "415-555-0142"],
)
def test_phone_numbers_are_read(text: str) -> None:
    assert _PHONE.search(text)


@pytest.mark.parametrize(
    "text", ["2024-05-01", "up +20%", "+3 points", "call 555-0142", "v1.2.3", "10-12-2024"]
)
def test_dates_sums_and_versions_are_no_phone_numbers(text: str) -> None:
    assert not _PHONE.search(text)


def test_a_phone_number_keeps_the_message_tool(monkeypatch: pytest.MonkeyPatch) -> None:
    """ "heads up to +49 ...": no word of the message tool but the number it sends to."""
    prompt = "heads up to +49 171 4402918: the meeting moved to Thursday"
    assert "message" in offline_surface(prompt)
    without = tuple(row for row in offline_module._ENTITIES if row[0] is not _PHONE)
    monkeypatch.setattr(offline_module, "_ENTITIES", without)
    assert "message" not in offline_surface(prompt)


@pytest.mark.parametrize(
    "prompt",
    [
        "if it's going to rain in Oslo tomorrow, tell Marco we're moving the picnic indoors",
        "Is de bakker op de hoek vandaag open? Stuur Sanne dan een berichtje",
        "Czy apteka na rogu jest dziś otwarta? Napisz do Ani",
    ],
)
def test_a_condition_on_the_world_and_dutch_and_polish_questions_look_it_up(
    prompt: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A condition to be checked ("if it's going to rain tomorrow") and a Dutch or Polish
    question about today are the catalog's look-up cues (``lookup``); without the look-up
    list the search tool is not kept."""
    assert "web_search" in offline_surface(prompt)
    monkeypatch.setattr(offline_module, "LOOKUP", False)
    assert "web_search" not in offline_surface(prompt)


def test_another_languages_cue_that_is_an_english_word_is_left_out(tmp_path: Path) -> None:
    """The cue lists are not per language: a Dutch "open" ("is de winkel open?") read in an
    English prompt made "are there open issues …" a question about the world. The shipped
    current cues hold no such word (the English ones say "open now", "still open"); an
    override that adds it back shows what it did."""
    prompt = "are there open issues on the tracker that mention the login bug?"
    assert "web_search" not in offline_surface(prompt)
    shipped = load_catalog_file(default_catalog_path()).lookup
    assert shipped is not None and shipped.current is not None
    assert "open" not in shipped.current
    override = tmp_path / "o.json"
    override.write_text(
        json.dumps({"schemaVersion": 1, "lookup": {"current": [*shipped.current, "open"]}}),
        encoding="utf-8",
    )
    assert "web_search" in offline_surface(prompt, override)


@pytest.mark.parametrize(
    ("text", "joined"),
    [
        ("look up the deadline", "lookup"),
        ("look it up", "lookup"),
        ("Log into Canvas", "login"),
        ("sign in to the portal", "login"),
        ("set up the printer", "setup"),
    ],
)
def test_a_phrasal_verb_is_also_its_one_word(text: str, joined: str) -> None:
    assert joined in tokens(text)


@pytest.mark.parametrize("text", ["look at the screen", "up and in", "log the error in a file"])
def test_a_particle_after_another_word_joins_nothing(text: str) -> None:
    assert not {"lookup", "login", "setup"} & set(tokens(text))


def test_look_up_asks_for_a_web_search(monkeypatch: pytest.MonkeyPatch) -> None:
    """Without the joined word, "look up" is the word "look", which many tools' texts share."""
    prompt = "look up the visa rules for Chile and text them to Ana"
    assert "web_search" in offline_surface(prompt)
    monkeypatch.setattr(text_module, "PHRASAL", False)
    assert "web_search" not in offline_surface(prompt)
    text_module._analysed_memo.cache_clear()


@pytest.mark.parametrize(
    ("prompt", "clauses"),
    [
        (
            "regarde s'il y a une grève demain ; si oui, préviens Paul",
            ["regarde s'il y a une grève demain ", "si oui", "préviens Paul"],
        ),
        ("Il y a un bug, on y va", ["Il y a un bug", "on y va"]),
        ("busca vuelos y mándalos a Ana", ["busca vuelos", "mándalos a Ana"]),
    ],
)
def test_the_french_y_is_no_and(prompt: str, clauses: list[str]) -> None:
    """Spanish "y" joins two requests; the French "y" of "il y a" does not (split there, the
    question and its subject fell into two clauses)."""
    assert clauses_of(prompt) == clauses
