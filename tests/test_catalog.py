"""Layered catalogs: merge order, bad layers, reload on change."""

from __future__ import annotations

import json
import logging
import os
from pathlib import Path
from typing import Any

import pytest

from resolver import CatalogError, CatalogStore, ResolverConfig, load_catalog_file
from resolver._catalog import (
    MAX_CATALOG_BYTES,
    MAX_COMPANIONS,
    MAX_IMPLIED_PHRASES,
    MAX_LAYER_PHRASES,
)
from resolver._data import default_catalog_path

REPO = Path(__file__).resolve().parent.parent
SHARED_TOOLS = REPO.parent / "shared" / "openclaw" / "default-tools-2026.9.6.json"


def write(path: Path, data: object) -> Path:
    path.write_text(json.dumps(data), encoding="utf-8")
    return path


def test_default_catalog_covers_the_54_openclaw_tools() -> None:
    """The shipped catalog describes every tool of the OpenClaw 2026.9.6 default surface."""
    catalog = load_catalog_file(default_catalog_path())
    assert len(catalog.tools) == 54
    if SHARED_TOOLS.exists():
        names = {t["name"] for t in json.loads(SHARED_TOOLS.read_text())["tools"]}
        assert set(catalog.tools) == names
    assert all(len(d) <= 300 for d in catalog.tools.values())
    assert catalog.skills


def test_example_override_catalog_is_valid() -> None:
    """The shipped example override file validates."""
    example = default_catalog_path().parent / "example-override-catalog.json"
    assert load_catalog_file(example).tools


def test_layers_later_wins_per_key_unset_inherit(tmp_path: Path) -> None:
    """Inline overrides beat defaults, the override file beats inline; other keys inherit."""
    override = write(
        tmp_path / "o.json",
        {"schemaVersion": 1, "tools": {"read": "FILE read"}, "_meta": {"by": "me"}},
    )
    config = ResolverConfig(
        catalogOverridesFile=str(override),
        toolDescriptionOverrides={"read": "INLINE read", "write": "INLINE write"},
    )
    effective = CatalogStore(config).current()
    assert effective.tools["read"] == "FILE read"
    assert effective.origins["read"] == "file"
    assert effective.tools["write"] == "INLINE write"
    default = load_catalog_file(default_catalog_path())
    assert effective.tools["exec"] == default.tools["exec"]


def test_unknown_tool_keys_and_sections_are_tolerated(tmp_path: Path) -> None:
    """A v1 reader loads files with unknown tools and unknown extra sections."""
    path = write(
        tmp_path / "o.json",
        {"schemaVersion": 1, "tools": {"not_a_tool": "x"}, "futureSection": {"a": 1}},
    )
    assert load_catalog_file(path).tools == {"not_a_tool": "x"}


def test_host_description_fills_only_undescribed_tools(tmp_path: Path) -> None:
    """A host description is used for a tool no layer describes, never over a layer."""
    config = ResolverConfig(catalogOverridesFile=str(tmp_path / "none.json"))
    effective = (
        CatalogStore(config)
        .current()
        .with_host_descriptions([("read", "HOST read"), ("my_mcp_tool", "Look up tickets in Jira")])
    )
    assert effective.tools["read"] != "HOST read"
    assert effective.describe("my_mcp_tool") == "Look up tickets in Jira"
    assert effective.origins["my_mcp_tool"] == "host"


@pytest.mark.parametrize(
    ("content", "expected"),
    [
        pytest.param(b"{not json", "invalid JSON at line 1", id="invalid-json"),
        pytest.param(b'{"schemaVersion": 1, "tools": {"read": 5}}', "tools.read", id="wrong-type"),
        pytest.param(
            b'{"schemaVersion": 2, "tools": {}}',
            "schemaVersion 2 is not supported",
            id="unknown-version",
        ),
        pytest.param(
            b'{"tools": {}}', "schemaVersion: required key is missing", id="missing-version"
        ),
        pytest.param(
            b'{"schemaVersion": 1, "tools": {"read": "  "}}',
            "description is empty",
            id="empty-description",
        ),
        pytest.param(b'["a"]', "must be a JSON object", id="not-an-object"),
        pytest.param(
            b'{"schemaVersion": 1, "tools": {"read": "caf\xe9"}}',
            "not UTF-8 (invalid byte 0xe9",
            id="non-utf8",
        ),
    ],
)
def test_bad_catalog_names_file_and_problem(tmp_path: Path, content: bytes, expected: str) -> None:
    """Each kind of bad catalog raises CatalogError naming the file and the problem."""
    path = tmp_path / "bad.json"
    path.write_bytes(content)
    with pytest.raises(CatalogError) as info:
        load_catalog_file(path)
    assert str(path) in str(info.value)
    assert expected in str(info.value)


def _bad_lists(section: str, tool: str, limit: int, entry: str) -> list[Any]:
    """A per-tool list that is not a list, one entry too long, and one with an empty entry."""
    return [
        pytest.param(section, {tool: entry}, f"{section}.{tool}", id=f"{section}-not-list"),
        pytest.param(
            section,
            {tool: [f"{entry} {i}" for i in range(limit + 1)]},
            f"{section}.{tool}",
            id=f"{section}-too-many",
        ),
        pytest.param(section, {tool: [""]}, f"{section}.{tool}.0", id=f"{section}-empty-entry"),
    ]


@pytest.mark.parametrize(
    ("section", "value", "expected"),
    [
        *_bad_lists("companions", "intent", MAX_COMPANIONS, "automations"),
        *_bad_lists("implied", "tts", MAX_IMPLIED_PHRASES, "while driving"),
    ],
)
def test_bad_per_tool_lists_name_the_field(
    tmp_path: Path, section: str, value: dict[str, Any], expected: str
) -> None:
    """A per-tool list section (companions, implied phrases) that is not a list, is too long or
    holds an empty entry is refused naming the file and `<section>.<tool>[.<index>]`."""
    path = tmp_path / "bad.json"
    path.write_text(json.dumps({"schemaVersion": 1, section: value}), encoding="utf-8")
    with pytest.raises(CatalogError) as info:
        load_catalog_file(path)
    assert str(path) in str(info.value) and expected in str(info.value)


def test_huge_catalog_is_refused_without_reading_it_all(tmp_path: Path) -> None:
    """A file over the size limit is refused with the limit in the message."""
    path = tmp_path / "huge.json"
    with path.open("wb") as handle:
        handle.write(b'{"schemaVersion": 1, "tools": {"a": "')
        handle.write(b"x" * (MAX_CATALOG_BYTES + 10))
        handle.write(b'"}}')
    with pytest.raises(CatalogError, match="over the 5,242,880-byte limit"):
        load_catalog_file(path)


def _phrases(count: int, tag: str) -> list[str]:
    return [f"{tag} {i}" for i in range(count)]


def test_a_layer_over_the_phrase_bound_is_refused_and_the_last_good_stays(
    tmp_path: Path,
) -> None:
    """Keywords, implied phrases, look-up cues and conversation markers together are bounded
    per layer (each is tokenized at every new surface's index build); the error names the
    count, its largest section and the fix, and the last good layer stays in force."""
    per_tool = 400
    tools = MAX_LAYER_PHRASES // per_tool  # at the bound exactly: loads
    at_bound: dict[str, Any] = {
        "schemaVersion": 1,
        "tools": {"read": "at the bound"},
        "keywords": {f"tool_{t}": _phrases(per_tool, f"kw{t}") for t in range(tools - 2)},
        "implied": {"tts": _phrases(per_tool, "hands full")},
        "lookup": {"ask": _phrases(per_tool // 2, "ask"), "current": _phrases(per_tool // 2, "n")},
    }
    path = write(tmp_path / "o.json", at_bound)
    assert sum(len(v) for v in at_bound["keywords"].values()) + 2 * per_tool == MAX_LAYER_PHRASES
    store = CatalogStore(ResolverConfig(catalogOverridesFile=str(path)))
    assert store.current().tools["read"] == "at the bound" and store.error is None
    over = {**at_bound, "tools": {"read": "over"}}
    over["conversation"] = {"social": ["hi there"]}  # one phrase more, in another section
    write(path, over)
    os.utime(path, ns=(1, 4_000_000_000_000_000_000))
    assert store.current().tools["read"] == "at the bound"  # the last good layer
    error = store.error or ""
    assert f"{MAX_LAYER_PHRASES + 1:,} phrases" in error and str(path) in error
    assert "keywords 29,200" in error and "conversation 1" in error
    assert "starting with 'keywords'" in error
    with pytest.raises(CatalogError) as raised:
        load_catalog_file(path)
    assert raised.value.location == "keywords"


def test_keywords_cut_per_tool_do_not_count_toward_the_phrase_bound(tmp_path: Path) -> None:
    """The bound counts what the layer keeps: keywords past a tool's own bound are cut (with a
    warning), not counted."""
    from resolver._limits import MAX_KEYWORDS_PER_TOOL

    tools = MAX_LAYER_PHRASES // MAX_KEYWORDS_PER_TOOL
    layer = {
        "schemaVersion": 1,
        "tools": {},
        "keywords": {f"t{t}": _phrases(2 * MAX_KEYWORDS_PER_TOOL, "k") for t in range(tools)},
    }
    loaded = load_catalog_file(write(tmp_path / "o.json", layer))
    assert sum(len(v) for v in loaded.keywords.values()) == tools * MAX_KEYWORDS_PER_TOOL


def test_missing_override_file_is_fine(tmp_path: Path) -> None:
    """No override file: defaults + inline, no error."""
    store = CatalogStore(ResolverConfig(catalogOverridesFile=str(tmp_path / "absent.json")))
    assert store.current().tools["read"]
    assert store.error is None


def test_override_file_reloads_on_change(tmp_path: Path) -> None:
    """Editing the override file takes effect on the next turn, without a restart."""
    path = write(tmp_path / "o.json", {"schemaVersion": 1, "tools": {"read": "first"}})
    store = CatalogStore(ResolverConfig(catalogOverridesFile=str(path)))
    assert store.current().tools["read"] == "first"
    write(path, {"schemaVersion": 1, "tools": {"read": "second edit"}})
    os.utime(path, ns=(1, 2_000_000_000_000_000_000))
    assert store.current().tools["read"] == "second edit"


def test_invalid_edit_keeps_last_good_catalog(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    """A broken edit is reported (file + problem) and the last good layer stays in force."""
    path = write(tmp_path / "o.json", {"schemaVersion": 1, "tools": {"read": "good"}})
    store = CatalogStore(ResolverConfig(catalogOverridesFile=str(path)))
    assert store.current().tools["read"] == "good"
    path.write_text('{"schemaVersion": 1, "tools": {"read": ', encoding="utf-8")
    os.utime(path, ns=(1, 3_000_000_000_000_000_000))
    with caplog.at_level(logging.ERROR, logger="resolver"):
        assert store.current().tools["read"] == "good"
    assert store.error is not None and str(path) in store.error
    assert any("last good catalog stays" in r.message for r in caplog.records)


def test_invalid_override_file_at_start_falls_back_to_defaults(tmp_path: Path) -> None:
    """An invalid file at start-up leaves defaults + inline in force and reports the error."""
    path = tmp_path / "o.json"
    path.write_bytes(b"\xff\xfe garbage")
    store = CatalogStore(
        ResolverConfig(catalogOverridesFile=str(path), toolDescriptionOverrides={"read": "inline"})
    )
    assert store.current().tools["read"] == "inline"
    assert store.error and "not UTF-8" in store.error


def test_activation_logs_override_counts(tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    """On activation one line names how many overrides are active and from where."""
    path = write(
        tmp_path / "o.json", {"schemaVersion": 1, "tools": {"read": "r"}, "skills": {"x": "y"}}
    )
    config = ResolverConfig(catalogOverridesFile=str(path), toolDescriptionOverrides={"write": "w"})
    with caplog.at_level(logging.INFO, logger="resolver"):
        CatalogStore(config).current()
    lines = [r.message for r in caplog.records if "catalog active" in r.message]
    assert len(lines) == 1
    assert "2 tool and 1 skill overrides" in lines[0] and str(path) in lines[0]
