"""The resolver's prepared-surface cache follows the tools the host passes."""

from __future__ import annotations

import os
import time
from pathlib import Path

from resolver import Resolver, ResolverConfig, ToolInfo, TurnRequest


def test_prepared_surface_follows_changed_tools() -> None:
    """The memoized surface is reused for the same tools and rebuilt when they change."""
    resolver = Resolver(ResolverConfig(catalog_overrides_file=None), llm=None)
    tools = [ToolInfo(name="zz_lookup", description="Look up the weather forecast")]
    first = resolver.resolve_sync(TurnRequest(prompt="weather forecast", tools=tools))
    again = resolver.resolve_sync(TurnRequest(prompt="weather forecast", tools=tools))
    assert first.tools_allow == again.tools_allow == ["zz_lookup"]
    renamed = [ToolInfo(name="zz_lookup", description="Send a postcard by mail")]
    changed = resolver.resolve_sync(TurnRequest(prompt="weather forecast", tools=renamed))
    assert changed.tools_allow == []
    back = resolver.resolve_sync(TurnRequest(prompt="weather forecast", tools=list(tools)))
    assert back.tools_allow == ["zz_lookup"]


def test_the_same_tools_with_a_changed_catalog_are_described_afresh(tmp_path: Path) -> None:
    """The prepared surface is reused for the very same tool objects only while the catalog is
    the same: an override file edited between turns describes the same tools anew."""
    overrides = tmp_path / "overrides.json"
    overrides.write_text('{"schemaVersion": 1, "tools": {}}')
    resolver = Resolver(ResolverConfig(catalog_overrides_file=str(overrides)), llm=None)
    tools = [ToolInfo(name="zz_lookup", description="Look up something")]
    assert (
        resolver.resolve_sync(TurnRequest(prompt="weather forecast", tools=tools)).tools_allow == []
    )
    overrides.write_text(
        '{"schemaVersion": 1, "tools": {"zz_lookup": "Weather forecast for a city"}}'
    )
    later = time.time() + 5
    os.utime(overrides, (later, later))
    answer = resolver.resolve_sync(TurnRequest(prompt="weather forecast", tools=tools))
    assert answer.tools_allow == ["zz_lookup"]
