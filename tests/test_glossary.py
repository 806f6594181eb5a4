"""Cross-language glosses (resolver/_glossary.py, catalogs/glossary.json): a prompt in another
language reaches tools that are described only in English (an MCP server's, with no catalog
keywords), without changing English prompts."""

from __future__ import annotations

import asyncio
import json
import time
from pathlib import Path

import pytest
from offline_support import index_of

import resolver._offline as offline
from resolver import Resolver, ResolverConfig, ToolInfo, TurnRequest
from resolver._glossary import MAX_GLOSSED_CHARS, gloss, glossary

TOOLS = [
    ToolInfo(name="files__create_directory", description="Create a new directory on disk."),
    ToolInfo(name="files__move_file", description="Move or rename files and directories."),
    ToolInfo(name="code__list_branches", description="List the branches of a repository."),
    ToolInfo(name="code__create_issue", description="Open an issue in a repository."),
    ToolInfo(name="chat__post_message", description="Post a message to a channel."),
    ToolInfo(name="maps__geocode", description="Convert an address into coordinates."),
]


def test_the_glossary_ships_every_language() -> None:
    table = glossary()
    assert table is not None
    assert {"es", "fr", "de", "pt", "it", "nl"} <= set(table.latin)
    assert len(table.cjk) > 500


def test_a_gloss_follows_its_word_and_english_is_left_alone() -> None:
    glossed = gloss("crea una carpeta llamada informes")
    words = glossed.split()
    assert words[words.index("crea") + 1] == "create"
    assert "folder" in words or "directory" in words
    assert gloss("send the red report to the team") == "send the red report to the team"
    assert gloss("") == ""
    cjk = gloss("在仓库里创建一个新分支")
    assert "repository" in cjk and "create" in cjk and "branch" in cjk


def test_a_word_the_candidates_already_have_is_not_glossed() -> None:
    assert gloss("crea una carpeta", known=lambda word: word == "carpeta").split() == [
        "crea",
        "create",
        "una",
        "carpeta",
    ]


def test_glossing_is_bounded() -> None:
    text = "crea una carpeta " * 20_000
    started = time.process_time()
    glossed = gloss(text)
    assert time.process_time() - started < 5.0  # generous: about 10 ms on a quiet core
    assert glossed.endswith(text[MAX_GLOSSED_CHARS:])
    assert glossed.count("create") <= MAX_GLOSSED_CHARS // len("crea una carpeta ") + 1


def resolve(prompt: str) -> set[str]:
    config = ResolverConfig(coreTools=[], catalogOverridesFile=None, keywordCacheFile=None)
    res = asyncio.run(Resolver(config).resolve(TurnRequest(prompt=prompt, tools=TOOLS)))
    return set(res.tools_allow or [])


@pytest.mark.parametrize(
    ("prompt", "needed"),
    [
        ("crea una carpeta nueva llamada informes", "files__create_directory"),
        ("enviar mensagem para o canal da equipe", "chat__post_message"),
        ("verschiebe die Datei in den Archivordner", "files__move_file"),
        ("在仓库里新建一个问题", "code__create_issue"),
        ("crea una cartella nuova per i rapporti", "files__create_directory"),
        ("stuur een bericht naar het kanaal van het team", "chat__post_message"),
        ("elenca tutti i rami", "code__list_branches"),
        # everyday words (`_meta.supplementEveryday`)
        ("Hausnummer 12 in der Lindenallee, bitte", "maps__geocode"),
        ("anuncia el lanzamiento al equipo", "chat__post_message"),
    ],
)
def test_a_prompt_in_another_language_reaches_an_english_only_tool(
    prompt: str, needed: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    assert needed in resolve(prompt)
    monkeypatch.setattr(offline, "GLOSSARY", False)
    assert needed not in resolve(prompt)  # what the glossary adds: no shared word without it


def test_a_korean_gloss_word_inside_a_longer_word_is_not_glossed() -> None:
    """'디스코드' (Discord) holds '코드' (code) but is not that word; '코드를' (code + particle)
    is."""
    assert "code" not in gloss("디스코드 채널에 공지해줘").split()
    assert "code" in gloss("이 코드를 검토해줘").split()


def test_a_word_only_the_catalogued_tools_know_is_still_glossed_for_the_others(
    tmp_path: Path,
) -> None:
    """On a surface that mixes catalogued tools with an MCP server's, "página" in a catalogued
    tool's keywords does not keep the server's "page" tools from the gloss."""
    catalog = tmp_path / "catalog.json"
    catalog.write_text(json.dumps({"schemaVersion": 1, "keywords": {"web_view": ["página web"]}}))
    tools = [
        ToolInfo(name="web_view", description="Show a web site."),
        ToolInfo(name="wiki__retrieve-page", description="Wiki | Retrieve a page by its id"),
        ToolInfo(name="wiki__post-search", description="Wiki | Search by title"),
    ]
    config = ResolverConfig(catalogOverridesFile=str(catalog), keywordCacheFile=None, coreTools=[])
    prompt = "muéstrame la página de bienvenida de la wiki"
    res = asyncio.run(Resolver(config).resolve(TurnRequest(prompt=prompt, tools=tools)))
    scores = {c.name: c.score for c in res.candidates}
    assert scores["wiki__retrieve-page"] > scores["wiki__post-search"]
    assert scores["web_view"] > 0.0  # the catalogued tool keeps its own match


def test_only_an_mcp_servers_tools_make_a_surface_mixed() -> None:
    """A host control without keywords (Tool Search's ``tool_search``) beside the default tools
    leaves the glossing as it was; a server's tools (``<server>__<tool>``) change it."""
    catalogued = ToolInfo(name="web_fetch", description="Fetch a URL and return its text.")
    control = ToolInfo(name="tool_search", description="Search the tool catalog.")
    server = ToolInfo(name="wiki__retrieve-page", description="Wiki | Retrieve a page")
    assert index_of([catalogued, control]).bare_vocab is None
    vocabulary = index_of([catalogued, control, server]).bare_vocab
    assert vocabulary is not None and "page" in vocabulary and "fetch" not in vocabulary
