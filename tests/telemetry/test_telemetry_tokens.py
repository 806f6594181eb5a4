"""Token accounting: surface sizes in wire bytes and exact o200k_base tokens."""

from __future__ import annotations

import json
from pathlib import Path

import bpe_openai
import pytest

from resolver.telemetry import SurfaceMeter

REPO = Path(__file__).resolve().parents[2]
TOOLS = json.loads((REPO / "catalogs" / "openclaw-2026.9.6-tools.json").read_text())["tools"]
BY_NAME = {t["name"]: t for t in TOOLS}
SESSIONS = [n for n in BY_NAME if n.startswith("sessions_")]


def wire(names: list[str]) -> str:
    """The tools array as an independent serializer (stdlib json) writes it."""
    array = [{"type": "function", "function": BY_NAME[n]} for n in names]
    return json.dumps(array, ensure_ascii=False, separators=(",", ":"))


@pytest.mark.parametrize(
    ("names", "wire_bytes"),
    [
        pytest.param(list(BY_NAME), 104_829, id="all-54"),
        pytest.param(["read"], 724, id="read"),
        pytest.param(["web_search", "web_fetch", "read"], 2_441, id="web+read"),
        pytest.param([*SESSIONS, "read"], 15_441, id="sessions+read"),
    ],
)
def test_bytes_match_the_sizes_measured_on_the_wire(names: list[str], wire_bytes: int) -> None:
    """Surface bytes equal the tools-JSON bytes OpenClaw 2026.9.6 actually sent (OPENCLAW.md)."""
    size = SurfaceMeter().measure([(n, "ignored: the shipped schema wins") for n in names])
    assert size.bytes == wire_bytes
    assert size.tools == len(names) and size.unknown_schemas == 0 and size.basis == "schemas"


def test_tokens_are_exact_o200k_counts_of_the_array() -> None:
    """Token counts equal o200k_base over the array as another serializer writes it."""
    encoding = bpe_openai.get_encoding("o200k_base")
    meter = SurfaceMeter()
    for names in (list(BY_NAME), ["read"], [*SESSIONS, "read"]):
        expected = len(encoding.encode(wire(names)))
        assert meter.measure([(n, "") for n in names]).tokens == expected
    assert meter.unit == "tokens:o200k_base"


def test_unknown_tools_are_sized_by_name_and_description_and_labelled() -> None:
    """A tool without a shipped schema counts its name and host description only, labelled."""
    meter = SurfaceMeter()
    only = meter.measure([("get_weather", "Current weather for a city")])
    expected = '[{"type":"function","function":{"name":"get_weather",' + (
        '"description":"Current weather for a city"}}]'
    )
    assert only.bytes == len(expected.encode()) and only.basis == "nameDescription"
    mixed = meter.measure([("read", ""), ("get_weather", "Current weather for a city")])
    assert mixed.basis == "mixed" and mixed.unknown_schemas == 1


def test_without_a_tokenizer_the_unit_is_bytes() -> None:
    """No exact tokenizer: tokens are None and the unit says bytes (no estimate)."""
    meter = SurfaceMeter(use_tokenizer=False)
    size = meter.measure([("read", "")])
    assert meter.unit == "bytes" and size.tokens is None and size.bytes == 724


def test_empty_surface_costs_nothing() -> None:
    """An empty surface sends no tools key: 0 bytes, 0 tokens."""
    size = SurfaceMeter().measure([])
    assert (size.tools, size.bytes, size.tokens, size.basis) == (0, 0, 0, "empty")
