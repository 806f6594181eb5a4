"""Helpers for the benchmark tests: a small travel-assistant case file and a scripted LLM."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from resolver import Classification, ClassifierHTTPError, ClassifyInput

TOOLS = [
    ("get_weather", "Current weather and forecast for a city: temperature, rain, wind."),
    ("send_email", "Send an email message to a recipient with a subject and body."),
    ("book_flight", "Book a flight ticket between two airports on a date."),
    ("convert_currency", "Convert an amount of money from one currency to another."),
    ("translate_text", "Translate text from one language into another language."),
    ("play_music", "Play a song, album or playlist on the speaker."),
    ("set_alarm", "Set an alarm clock to ring at a given time."),
    ("find_restaurant", "Find restaurants nearby by cuisine, price and rating."),
]

CASES = [
    ("c01", "Will it rain in Paris tomorrow? what's the weather", ["get_weather"]),
    ("c02", "email Bob the report with subject Q3", ["send_email"]),
    ("c03", "book me a flight from Boston to Denver on Friday", ["book_flight"]),
    ("c04", "convert 100 dollars to euros", ["convert_currency"]),
    ("c05", "translate this sentence into German", ["translate_text"]),
    ("c06", "play some jazz music", ["play_music"]),
    ("c07", "set an alarm for 6:30", ["set_alarm"]),
    ("c08", "find a cheap sushi restaurant nearby", ["find_restaurant"]),
    ("c09", "what's the temperature and wind in Oslo", ["get_weather"]),
    ("c10", "send an email to Alice saying thanks", ["send_email"]),
    ("c11", "I need a flight ticket to Rome", ["book_flight"]),
    ("c12", "play my workout playlist and set an alarm for 7", ["play_music", "set_alarm"]),
]


def write_case_file(path: Path, *, clusters: bool = True) -> Path:
    """A case file over TOOLS; each case is its own cluster when `clusters`."""
    doc: dict[str, Any] = {
        "name": "travel-assistant",
        "source": "written for the tests",
        "license": "Apache-2.0",
        "tools": [{"name": n, "description": d} for n, d in TOOLS],
        "cases": [
            {
                "id": cid,
                "prompt": prompt,
                "must_include": need,
                "category": "multi" if len(need) > 1 else "single",
                **({"cluster": cid} if clusters else {}),
            }
            for cid, prompt, need in CASES
        ],
    }
    path.write_text(json.dumps(doc))
    return path


class ScriptedLLM:
    """A classifier double: picks tools whose first name part is a word of the prompt.

    Prompts containing "FAIL" raise an HTTP error whose message carries `secret`.
    """

    name = "llm:scripted"

    def __init__(self, secret: str = "") -> None:
        self.secret = secret
        self.calls = 0

    async def classify(self, request: ClassifyInput) -> Classification:
        self.calls += 1
        if "FAIL" in request.prompt:
            raise ClassifierHTTPError(
                f"401 invalid key {self.secret}", status_code=401, reason="llm_auth_fallback"
            )
        words = set(request.prompt.lower().replace("?", " ").split())
        chosen = tuple(
            name for name, _ in request.tools if any(part in words for part in name.split("_"))
        )
        return Classification(
            selected=chosen,
            confidence=0.9,
            scores=dict.fromkeys(chosen, 0.9),
            reasoning="scripted",
            classifier="llm:scripted",
            latency_ms=42.0,
        )
