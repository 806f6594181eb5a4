"""A street address in a prompt counts as the word "address" (`_offline._ENTITIES`): a map or
place tool takes it ("Starting point address", "The address to geocode") though the user asks
"how long to bike from 77 Massachusetts Ave to ..." or "quanto tempo leva da Rua Augusta, 1500
..." without any of the tool's words. Like a file name, the term scores only the tools without
catalog keywords (an MCP server's)."""

from __future__ import annotations

import asyncio

import pytest

import resolver._offline as offline
from resolver import Resolver, ResolverConfig, ToolInfo, TurnRequest
from resolver._offline import _ADDRESS

TOOLS = [
    ToolInfo(
        name="maps__directions",
        description="Get directions between two points",
        parameters={
            "type": "object",
            "properties": {
                "origin": {"type": "string", "description": "Starting point address"},
                "destination": {"type": "string", "description": "Ending point address"},
            },
        },
    ),
    ToolInfo(name="maps__geocode", description="Convert an address into geographic coordinates"),
    ToolInfo(name="web__screenshot", description="Take a screenshot of the current page"),
    ToolInfo(name="ops__long_running_job", description="Start a long running job"),
    ToolInfo(name="chat__post_message", description="Post a message to a channel"),
    ToolInfo(name="drive__upload", description="Upload files to Google Drive"),
]


def surface(prompt: str) -> set[str]:
    config = ResolverConfig(catalogOverridesFile=None, keywordCacheFile=None, coreTools=[])
    res = asyncio.run(Resolver(config).resolve(TurnRequest(prompt=prompt, tools=TOOLS)))
    return set(res.tools_allow)


@pytest.mark.parametrize(
    "text",
    [
        "77 Massachusetts Ave",
        "233 S Wacker Dr",
        "1600 Amphitheatre Parkway",
        "18 rue Oberkampf",
        "5 bis avenue Foch",
        "Via Torino 61",
        "Piazza del Duomo",
        "Rua Augusta, 1500",
        "Calle de Alcalá",
        "Torstraße 100",
        "渋谷区道玄坂1-2-3",
        "北京市朝阳区建国路88号",
    ],
)
def test_street_addresses_are_found(text: str) -> None:
    assert _ADDRESS.search(f"how long from {text} to the office?") is not None


@pytest.mark.parametrize(
    "text",
    [
        "send it Via Slack, then close the ticket",  # "Via" without a house number
        "upload 3 Google Drive files to the shared folder",
        "이번 분기 영업이익은 원자재값 상승으로 3% 줄었다",  # the Korean particle "으로"
        "version 2 Release Notes are in the wiki",
        "the plaza was crowded",  # a lower-case street word is a noun, not a street
        "Monitoring 2 clusters and Scoring 3 models",  # English "-ring" words
        "查一下12月1-15日的订单",  # a date range
    ],
)
def test_other_text_is_no_address(text: str) -> None:
    assert _ADDRESS.search(text) is None


@pytest.mark.parametrize(
    ("prompt", "tool"),
    [
        (
            "Any idea how I get from 77 Massachusetts Ave to 300 Technology Square?",
            "maps__directions",
        ),
        ("Wie lange läuft man von der Torstraße 100 bis zum Park Inn?", "maps__directions"),
        ("what is at 18 Rue Oberkampf, Paris?", "maps__geocode"),
    ],
    ids=["en", "de", "fr-street"],
)
def test_an_address_brings_the_tools_that_take_one(
    monkeypatch: pytest.MonkeyPatch, prompt: str, tool: str
) -> None:
    assert tool in surface(prompt)
    # the address is what found it
    monkeypatch.setattr(
        offline, "_ENTITIES", tuple(e for e in offline._ENTITIES if e[0] is not _ADDRESS)
    )
    assert tool not in surface(prompt)


def test_an_address_scores_no_catalogued_tool() -> None:
    """On the default OpenClaw surface (every tool catalogued) an address changes nothing."""
    config = ResolverConfig(catalogOverridesFile=None, keywordCacheFile=None)
    prompt = "what's the weather like at 77 Massachusetts Ave tomorrow?"
    with_address = asyncio.run(Resolver(config).resolve(TurnRequest(prompt=prompt)))
    plain = asyncio.run(
        Resolver(config).resolve(TurnRequest(prompt=prompt.replace("77 Massachusetts Ave", "MIT")))
    )
    assert with_address.tools_allow == plain.tools_allow
