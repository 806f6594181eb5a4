"""A turn's tool list within the bounds (`_limits.bound_request`): an ordinary surface passes
untouched (one pass per field, no tool copied); a surface with one bad tool gets that tool
cleaned or cut, every other tool kept as it was, in order, with the reason code."""

from __future__ import annotations

from resolver import ToolInfo, TurnRequest
from resolver._limits import (
    MAX_DESCRIPTION_CHARS,
    MAX_PARAMETERS_CHARS,
    MAX_SURFACE_CHARS,
    MIN_DESCRIPTION_CHARS,
    bound_request,
    description_cap,
)

SURFACE = [
    ToolInfo(name=f"tool_{k}", description=f"Does thing number {k}.", parameters="path mode")
    for k in range(50)
]


def bounded(tools: list[ToolInfo]) -> tuple[list[ToolInfo], tuple[str, ...]]:
    out = bound_request(TurnRequest(prompt="hi", tools=tools))
    assert out.request.tools is not None
    return out.request.tools, out.codes


def test_an_ordinary_surface_is_kept_as_it_is() -> None:
    tools, codes = bounded(SURFACE)
    assert codes == ()
    assert all(a is b for a, b in zip(tools, SURFACE, strict=True))


def test_a_lone_surrogate_is_cleaned_in_that_tool_only() -> None:
    bad = ToolInfo(name="bad\ud800name", description="broken \udfff text")
    tools, codes = bounded([*SURFACE[:3], bad, *SURFACE[3:]])
    assert [t.name for t in tools][:5] == ["tool_0", "tool_1", "tool_2", "bad\ufffdname", "tool_3"]
    assert tools[3].description == "broken \ufffd text"
    assert codes == ()  # cleaned, not cut: nothing the classifier reads was lost
    assert tools[0] is SURFACE[0] and tools[4] is SURFACE[3]


def test_long_parameters_are_cut_with_the_reason() -> None:
    long = ToolInfo(
        name="wide", description="Many options.", parameters="p " * MAX_PARAMETERS_CHARS
    )
    tools, codes = bounded([*SURFACE, long])
    assert len(tools[-1].parameters) == MAX_PARAMETERS_CHARS
    assert tools[-1].description == "Many options."
    assert "description_truncated" in codes
    assert tools[0] is SURFACE[0]


def test_a_long_description_is_cut_to_the_surface_cap() -> None:
    huge = ToolInfo(name="essay", description="word " * (MAX_DESCRIPTION_CHARS // 2))
    tools, codes = bounded([*SURFACE, huge])
    assert len(tools[-1].description) == MAX_DESCRIPTION_CHARS
    assert "description_truncated" in codes


def test_the_cap_shrinks_when_the_whole_surface_is_too_large() -> None:
    n = MAX_SURFACE_CHARS // 1000 + 10
    assert description_cap([1000] * n) == max(MIN_DESCRIPTION_CHARS, MAX_SURFACE_CHARS // n)
    assert description_cap([1000] * 10) == MAX_DESCRIPTION_CHARS
    # lengths above the per-tool cap count at the cap
    assert description_cap([MAX_DESCRIPTION_CHARS * 300, 10]) == MAX_DESCRIPTION_CHARS


def test_the_same_tool_objects_turn_after_turn_get_the_same_answer() -> None:
    """The last surface's answer is reused only for the very same tool objects: a cut tool is
    cut again with its reason code, an equal but new surface is bounded afresh, and a changed
    one gets its own answer."""
    long = ToolInfo(name="long", description="x" * (MAX_DESCRIPTION_CHARS + 50))
    surface = [*SURFACE[:5], long]
    first, first_codes = bounded(surface)
    again, again_codes = bounded(list(surface))  # a new list, the same objects
    assert first_codes == again_codes == ("description_truncated",)
    assert [t.description for t in again] == [t.description for t in first]
    assert len(again[5].description) <= MAX_DESCRIPTION_CHARS
    assert again is not first  # the caller's list is its own
    rebuilt = [ToolInfo(name=t.name, description=t.description) for t in surface]
    fresh, fresh_codes = bounded(rebuilt)  # equal, not the same: bounded afresh
    assert fresh_codes == ("description_truncated",)
    assert [t.description for t in fresh] == [t.description for t in first]
    short = [*surface[:5], ToolInfo(name="long", description="now short")]
    changed, changed_codes = bounded(short)
    assert changed_codes == () and changed[5].description == "now short"
    _, back_codes = bounded(surface)
    assert back_codes == ("description_truncated",)
