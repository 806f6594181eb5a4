"""Product words (resolver/_synonyms.py `products`, catalogs/products.json): an MCP server is
named after its product, and its tools' texts often do not say what the product is about
(``postgres__query``: "Run a read-only SQL query" never says "table"). A tool without catalog
keywords whose name holds a product's name is indexed with the words users say for that
product, weakly, and only the words its server's tools do not already use."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import pytest

import resolver._offline as offline
import resolver._synonyms as synonyms_module
from resolver import Resolution, Resolver, ResolverConfig, ToolInfo, TurnRequest
from resolver._surface import default_surface
from resolver._synonyms import products, products_in
from resolver._text import stem, tokens

TOOLS = [
    ToolInfo(name="postgres__query", description="Run a read-only SQL query"),
    ToolInfo(name="dashboard__render", description="Render a dashboard with charts"),
    ToolInfo(name="sheets__append", description="Append values to a spreadsheet"),
    ToolInfo(name="playwright__browser_click", description="Click an element on the page"),
    ToolInfo(name="playwright__browser_navigate", description="Navigate to a URL"),
    ToolInfo(name="mail__send", description="Send an email"),
]


def resolve(prompt: str, tools: list[ToolInfo], core: list[str] | None = None) -> Resolution:
    config = ResolverConfig(catalogOverridesFile=None, keywordCacheFile=None, coreTools=core or [])
    return asyncio.run(Resolver(config).resolve(TurnRequest(prompt=prompt, tools=tools)))


def scores(prompt: str, tools: list[ToolInfo] = TOOLS, core: list[str] | None = None) -> dict:
    return {c.name: c.score for c in resolve(prompt, tools, core).candidates}


def test_the_table_ships_products_with_their_words() -> None:
    raw = json.loads((Path(__file__).parents[1] / "catalogs" / "products.json").read_text())
    assert len(raw["products"]) >= 100
    for entry in raw["products"]:
        names = {entry["name"], *entry["aliases"]}
        assert 1 <= len(entry["means"]) <= synonyms_module.MAX_PRODUCT_WORDS, entry
        assert not names & set(entry["means"]), entry
    table = products()
    assert stem("table") in table[tuple(tokens("postgres"))]


def test_a_server_named_after_a_product_is_found_by_its_words(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    prompt = "how many rows are in the orders table?"
    with_products = scores(prompt)
    assert max(with_products, key=with_products.get) == "postgres__query"
    monkeypatch.setattr(offline, "PRODUCTS", False)
    assert scores(prompt).get("postgres__query", 0.0) < with_products["postgres__query"]


def test_a_product_word_counts_less_than_the_tools_own_word() -> None:
    own = scores("run this sql")["postgres__query"]
    implied = scores("check this table")["postgres__query"]
    assert 0.0 < implied < own


def test_a_word_one_sibling_says_is_not_spread_over_the_server(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """'click' is a Playwright word and browser_click says it: navigate does not get it; a
    Playwright word no Playwright tool says ('headless') reaches every one of them."""
    words = products()[tuple(tokens("playwright"))]
    assert stem("click") in words and stem("headless") in words
    click, headless = scores("click it"), scores("headless please")
    monkeypatch.setattr(offline, "PRODUCTS", False)
    assert click["playwright__browser_click"] > 0.0
    assert click.get("playwright__browser_navigate", 0.0) == scores("click it").get(
        "playwright__browser_navigate", 0.0
    )
    before = scores("headless please").get("playwright__browser_navigate", 0.0)
    assert headless["playwright__browser_navigate"] > before


def test_catalogued_tools_are_unchanged(monkeypatch: pytest.MonkeyPatch) -> None:
    """The default surface's tools have catalog keywords: product words never touch them."""
    tools = default_surface()
    prompt = "post the table of rows to the slack channel"
    with_products = scores(prompt, tools)
    monkeypatch.setattr(offline, "PRODUCTS", False)
    assert scores(prompt, tools) == with_products


def test_product_names_match_as_runs_of_name_terms() -> None:
    table = {("googl", "map"): ("rout",), ("slack",): ("channel",)}
    assert products_in(table, tokens("google-maps__maps_directions")) == ["rout"]
    assert products_in(table, tokens("maps__google_search")) == []
    assert products_in(table, tokens("slack__post_channel")) == []  # the name says it


def test_a_malformed_table_is_read_as_far_as_it_is_well_formed(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    table = {
        "products": [
            "not an entry",
            {"name": 7, "means": ["x"]},
            {"name": "pg", "aliases": "postgres", "means": "table"},
            {"name": "postgres", "aliases": ["psql", 3], "means": ["table", 4, "postgres", "rows"]},
            {"name": "alpha beta gamma delta", "means": ["too", "long"]},
        ]
    }
    monkeypatch.setattr(synonyms_module, "shipped_table", lambda name: table)
    products.cache_clear()
    try:
        loaded = products()
        assert loaded[tuple(tokens("postgres"))] == (stem("table"), stem("rows"))
        assert loaded[tuple(tokens("psql"))] == (stem("table"), stem("rows"))
        assert tuple(tokens("alpha beta gamma delta")) not in loaded
    finally:
        products.cache_clear()


def test_no_table_no_product_words(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(synonyms_module, "shipped_table", lambda name: None)
    products.cache_clear()
    try:
        assert products() == {}
        assert scores("check this table").get("postgres__query", 0.0) == 0.0
    finally:
        products.cache_clear()


def test_the_longest_product_name_wins() -> None:
    """ "google maps" is a product of its own: the run "google" inside it does not bring the
    words of Google's search."""
    table = {("googl",): ("web",), ("googl", "map"): ("rout",), ("slack",): ("channel",)}
    assert products_in(table, tokens("google-maps")) == ["rout"]
    assert products_in(table, tokens("google")) == ["web"]
    assert products_in(table, tokens("google-maps-slack")) == ["rout", "channel"]


def test_a_tools_own_name_names_no_product() -> None:
    """An MCP server is named after its product; its tools are named after what they do:
    ``maps__distance_matrix`` is not the Matrix chat network."""
    matrix = ToolInfo(name="maps__distance_matrix", description="Travel time between places")
    tools = [*TOOLS, matrix]
    assert stem("room") in products()[tuple(tokens("matrix"))]
    found = scores("post an encrypted message to the room", tools)
    assert found.get("maps__distance_matrix", 0.0) == 0.0


DATABASES = [
    ToolInfo(name="postgres__query", description="Run a read-only SQL query"),
    ToolInfo(name="wiki__query_database", description="Query a database of pages with filters"),
    ToolInfo(name="wiki__retrieve_database", description="Retrieve a database's properties"),
    ToolInfo(name="wiki__create_database", description="Create a database under a page"),
    ToolInfo(name="wiki__search", description="Search pages and databases by title"),
    ToolInfo(name="wiki__append_blocks", description="Append blocks to a page"),
    ToolInfo(name="shop__track_parcel", description="Track a parcel by its tracking number"),
    ToolInfo(name="maps__directions", description="Directions between two places"),
    ToolInfo(name="chat__post_message", description="Post a message to a channel"),
]


def picks(prompt: str, tools: list[ToolInfo]) -> tuple[str, ...]:
    return tuple(resolve(prompt, tools).tools_allow or ())


@pytest.mark.parametrize(
    "prompt",
    [
        "what was our average basket last month? the numbers are in the store's database",
        "which customers registered twice? check the accounts DB",
    ],
)
def test_a_word_for_what_a_product_holds_brings_its_server(
    prompt: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """ "database" is a name word of the wiki's database tools and only a product word of
    ``postgres__query``: the wiki's tools outscore it, yet the prompt may mean either, so the
    server whose product the word names (and whose own text lacks it) keeps its best tool."""
    assert "postgres__query" in picks(prompt, DATABASES)
    monkeypatch.setattr(offline, "KIND_PICKS", 0)
    assert "postgres__query" not in picks(prompt, DATABASES)


def test_only_the_words_a_server_lacks_name_its_kind() -> None:
    """A product word one of the server's tools already says is scored as it is; the words
    that fill its missing vocabulary are the ones that can bring its best tool, and only for
    an MCP server's tools (a tool without a server is named after what it does)."""
    names = ["pg__query", "pg__list_schemas", "sqlite_query"]
    tf = [{"sql": 1.0, "queri": 3.0}, {"list": 3.0, "schema": 3.0}, {"sqlite": 3.0}]
    desc: list[dict[str, float]] = [{}, {}, {}]
    implied = [(0, ["sql", "tabl", "schema"]), (1, ["sql", "tabl", "schema"]), (2, ["tabl"])]
    kinds = offline._add_product_words(names, tf, desc, implied)
    assert kinds == {"tabl": (0, 1)}
    assert "tabl" in tf[2]  # still indexed with the word, just not a kind pick
