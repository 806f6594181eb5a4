"""The resolver's prepared-surface cache follows the tools the host passes."""

from __future__ import annotations

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
