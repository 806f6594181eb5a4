"""Token accounting: surface sizes in wire bytes and exact o200k_base tokens."""

from __future__ import annotations

import json
from pathlib import Path

import bpe_openai
import pytest

from resolver.telemetry import SurfaceMeter
from resolver.telemetry._tokens import pieces

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


def test_token_pieces_add_up_to_the_whole_count() -> None:
    """The tokenizer is fed pieces (`pieces`); their counts add up to the whole text's exactly,
    on tool JSON and on text with runs of spaces, line breaks, digits, CJK and emoji."""
    encoding = bpe_openai.get_encoding("o200k_base")
    mixed = 'Ünïcödé  words\n  and 123 456 — 東京の天気 😀 x  y \t z, {"a": 1} ' * 400
    for text in (wire(list(BY_NAME)) * 2, mixed):
        whole = len(encoding.encode(text, disallowed_special=()))
        parts = pieces(text, 5_000)
        assert len(parts) > 3 and "".join(parts) == text
        assert max(map(len, parts)) <= 5_000
        assert sum(len(encoding.encode(p, disallowed_special=())) for p in parts) == whole


def test_a_surface_of_megabytes_is_counted() -> None:
    """A 1,300-tool MCP surface of 2.6 MB: more than the tokenizer takes in one call (1,000,000
    characters, 200,000 tokens). It is counted, not dropped with its telemetry line."""
    tools = [
        (f"srv__tool_{i}", f"Tool number {i}. " + "lorem ipsum dolor " * 110) for i in range(1300)
    ]
    size = SurfaceMeter().measure(tools)
    assert size.bytes > 2_500_000
    assert size.tokens is not None and size.tokens > 200_000
