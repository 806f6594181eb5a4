"""A picked tool's identifier and the candidate that lists it (resolver/_offline.py,
`PRODUCERS`): a tool that takes a ``chatRef`` is of no use in a turn without the tool whose
description says it lists ``chatRef`` values."""

from __future__ import annotations

import asyncio

import pytest

import resolver._offline as offline
from resolver import Resolver, ResolverConfig, ToolInfo, TurnRequest


def tool(name: str, description: str, *properties: str) -> ToolInfo:
    schema = {"type": "object", "properties": {p: {"type": "string"} for p in properties}}
    return ToolInfo(name=name, description=description, parameters=schema)


SURFACE = [
    tool("chat_ask", "Send a question into an external chat and wait for the answer", "chatRef"),
    tool("chats_list", "List the external chats you can reach, as chatRef values", "query"),
    # a lister that does not say the identifier, and one that is not a lister
    tool("rooms_list", "List meeting rooms and their capacity", "building"),
    tool("chat_export", "Export a chat's history as a file; takes its chatRef", "chatRef"),
    *(
        tool(f"{job}_report", f"{job.capitalize()} a quarterly report", "year")
        for job in ("draft", "print", "archive", "translate", "sign", "file")
    ),
]


def picked(prompt: str) -> set[str]:
    resolver = Resolver(ResolverConfig(catalogOverridesFile=None, coreTools=[]))
    res = asyncio.run(resolver.resolve(TurnRequest(prompt=prompt, tools=SURFACE)))
    return set(res.tools_allow or [])


PROMPT = "ask the question in the external chat and wait for the answer"


def test_a_picked_tool_brings_the_tool_that_lists_its_identifier() -> None:
    surface = picked(PROMPT)
    assert "chat_ask" in surface
    assert "chats_list" in surface
    assert "rooms_list" not in surface


def test_without_producers_the_lister_is_not_picked(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(offline, "PRODUCERS", False)
    surface = picked(PROMPT)
    assert "chat_ask" in surface and "chats_list" not in surface


def test_producers_are_read_from_the_host_text() -> None:
    tools = [(t.name, t.description or "") for t in SURFACE]
    params = ["chatRef", "query", "building", "chatRef"] + ["year"] * 6
    found = offline._producers(tools, params)
    assert found == {0: (1,), 3: (1,)}
    # from the description too; an identifier inside a longer word is not that identifier
    assert offline._producers([("a_get", "takes a chatRef"), ("b_list", "lists chatRef")], [])
    assert not offline._producers([("a_get", "takes a chatRefs"), ("b_list", "lists chatRef")], [])
    assert not offline._producers([("a_get", "takes a chatRef"), ("b_list", "lists chatRefs")], [])


def test_an_identifier_many_listers_say_names_no_producer() -> None:
    listers = [(f"x{k}_list", "lists chatRef values") for k in range(offline.MAX_PRODUCERS + 1)]
    assert not offline._producers([("a_get", "takes a chatRef"), *listers], [])
    assert offline._producers([("a_get", "takes a chatRef"), *listers[:-1]], [])
