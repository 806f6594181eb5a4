"""The classifier prompt, the answer schema, lenient parsing and the vote rule (no network)."""

from __future__ import annotations

import json
import random
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from resolver import Classification, ClassifierOutputError, Message, ResolverConfig
from resolver._catalog import CatalogStore
from resolver._classify import ClassifyInput
from resolver._llm import combine_votes, parse_lenient, votes_needed
from resolver._llm_prompt import (
    ENUM_LIMIT,
    INSTRUCTIONS,
    PROMPT_CATALOG_CHARS,
    PROMPT_DESCRIPTION_CHARS,
    PROMPT_END_CHARS,
    PROMPT_HEAD_CHARS,
    PROMPT_MAX_SKILLS,
    PROMPT_MIN_DESCRIPTION_CHARS,
    TAIL_MESSAGES,
    answer_schema,
    build_messages,
    share_cap,
    system_prompt,
    turn_prompt,
)


def make_input(
    tools: list[tuple[str, str]] | None = None,
    prompt: str = "remind me at 9",
    messages: list[Message] | None = None,
) -> ClassifyInput:
    catalog = CatalogStore(ResolverConfig(catalogOverridesFile=None)).current()
    if tools is None:
        tools = [(name, catalog.describe(name)) for name in sorted(catalog.tools)]
    return ClassifyInput(
        prompt=prompt,
        messages=tuple(messages or ()),
        tools=tuple(tools),
        skills=catalog.skills,
        catalog=catalog,
        timeout_s=1.0,
        core_tools=frozenset({"read", "exec"}),
    )


def test_prefix_is_stable_across_turns_and_candidate_order() -> None:
    """The system message depends only on the catalog and candidate set, not the turn or order."""
    base = make_input()
    shuffled = list(base.tools)
    random.Random(7).shuffle(shuffled)
    other = make_input(
        tools=shuffled, prompt="something else", messages=[Message(role="user", content="hi")]
    )
    assert system_prompt(base) == system_prompt(other)
    assert build_messages(base)[0] == build_messages(other)[0]


def test_prefix_order_instructions_catalog_skills() -> None:
    """Instructions, then tools sorted by name with descriptions, then always-on, then skills."""
    text = system_prompt(make_input())
    tools_at, core_at, skills_at = (
        text.index("## Tools"),
        text.index("## Always available"),
        text.index("## Skills"),
    )
    assert 0 < tools_at < core_at < skills_at
    lines = [ln for ln in text[tools_at:core_at].splitlines() if ln.startswith("- ")]
    names = [ln[2:].split(":", 1)[0] for ln in lines]
    assert names == sorted(names) and len(names) == 54
    assert "- automations: " in text
    assert "exec, read" in text[core_at:skills_at]
    assert '"type": "object"' not in text and "parameters" not in text


def catalog_lines(text: str) -> list[str]:
    """The ``- name: description`` lines of the tools and skills sections."""
    return [ln for ln in text.splitlines() if ln.startswith("- ")]


def test_the_default_catalog_is_listed_whole() -> None:
    """54 catalog descriptions (about 11,000 characters) are far inside the prompt's budget:
    each is listed as written (one line)."""
    request = make_input()
    text = system_prompt(request)
    for name, description in request.tools:
        assert f"- {name}: {' '.join(description.split())}" in text
    assert sum(len(d) for _, d in request.tools) < PROMPT_CATALOG_CHARS


def test_a_catalog_of_long_descriptions_is_cut_to_the_budget() -> None:
    """72 tools of 1.9 KB (an MCP shortlist) and 500 skills of 2 KB: every tool is listed, by
    name, its description cut so all of them stay within `PROMPT_CATALOG_CHARS` (short ones
    whole), and at most `PROMPT_MAX_SKILLS` skills; the prompt stays byte-identical turn
    after turn."""
    words = "lorem ipsum dolor sit amet " * 80
    tools = [(f"srv__tool_{i:02d}", f"Tool {i}. {words}") for i in range(70)]
    tools += [("short_a", "Reads a file."), ("short_b", "Sends a message.")]
    skills = {f"skill_{i:03d}": f"Skill {i}. {words}" for i in range(500)}
    request = ClassifyInput(
        prompt="anything",
        messages=(),
        tools=tuple(tools),
        skills=skills,
        catalog=make_input().catalog,
        timeout_s=1.0,
    )
    text = system_prompt(request)
    lines = catalog_lines(text)
    tool_lines = [ln for ln in lines if not ln.startswith("- skill_")]
    skill_lines = [ln for ln in lines if ln.startswith("- skill_")]
    assert [ln[2:].split(":", 1)[0] for ln in tool_lines] == sorted(n for n, _ in tools)
    assert len(skill_lines) == PROMPT_MAX_SKILLS
    described = sum(len(ln.split(": ", 1)[1]) for ln in lines)
    assert described <= PROMPT_CATALOG_CHARS
    assert "- short_a: Reads a file." in text and "- short_b: Sends a message." in text
    assert len(text) < PROMPT_CATALOG_CHARS + 8_000  # names, instructions, headings
    assert system_prompt(request) == text


@pytest.mark.parametrize(
    ("lengths", "budget", "cap"),
    [
        ([100, 200, 300], 1000, 300),  # everything fits: nothing is cut
        ([100, 600, 600], 1000, 450),  # the short one whole, the long ones share the rest
        ([600] * 10, 1000, 100),
        ([600] * 20, 1000, PROMPT_MIN_DESCRIPTION_CHARS),  # never below the floor
        ([], 1000, PROMPT_MIN_DESCRIPTION_CHARS),
    ],
)
def test_share_cap(lengths: list[int], budget: int, cap: int) -> None:
    got = share_cap(lengths, budget, PROMPT_MIN_DESCRIPTION_CHARS)
    assert got == cap
    if cap > PROMPT_MIN_DESCRIPTION_CHARS and lengths:
        assert sum(min(n, got) for n in lengths) <= budget
        assert got <= max(lengths) <= PROMPT_DESCRIPTION_CHARS


def test_turn_is_last_with_compact_tail() -> None:
    """The user message holds the last messages (clipped, calls named, tool results left out)."""
    history = [Message(role="user", content=f"message {i} " + "x" * 500) for i in range(10)]
    history.append(
        Message(
            role="assistant",
            content="opening it",
            tool_calls=[{"id": "1", "function": {"name": "browser", "arguments": "{}"}}],
        )
    )
    history.append(Message(role="tool", tool_call_id="1", content="SECRET TOOL OUTPUT"))
    text = turn_prompt(make_input(prompt="and the next one?", messages=history))
    assert text.endswith("## User's next message\nand the next one?")
    lines = [ln for ln in text.splitlines() if ln.startswith(("user:", "assistant:"))]
    assert len(lines) == TAIL_MESSAGES
    assert lines[-1] == "assistant: opening it [called: browser]"
    assert all(len(ln) < 320 for ln in lines)
    assert "SECRET TOOL OUTPUT" not in text


def test_long_prompt_keeps_head_and_end() -> None:
    """A very long prompt keeps its beginning and its end."""
    prompt = "START " + "word " * 5000 + " END"
    text = turn_prompt(make_input(prompt=prompt))
    assert "START" in text and text.endswith("END") and "[…]" in text
    assert len(text) < PROMPT_HEAD_CHARS + PROMPT_END_CHARS + 200


@pytest.mark.parametrize(
    ("count", "length", "enum"),
    [(54, 8, True), (ENUM_LIMIT, 8, True), (ENUM_LIMIT + 1, 8, False), (200, 90, False)],
    ids=["default", "at-limit", "over-limit", "over-char-limit"],
)
def test_enum_within_provider_limits(count: int, length: int, enum: bool) -> None:
    """Names are an enum up to ENUM_LIMIT candidates (and 15,000 characters), else strings."""
    names = [f"t{i:0{length - 1}d}" for i in range(count)]
    items = answer_schema(names)["properties"]["tools"]["items"]
    assert ("enum" in items) is enum
    assert items["type"] == "string"


@pytest.mark.parametrize("limits", [True, False])
def test_the_answer_names_the_parts_before_the_tools(limits: bool) -> None:
    """The reasoning comes first in the schema and in the instructions' example: a model that
    writes in the schema's order (a grammar, structured outputs) names the turn's parts before
    it picks their tools. The bounds stay on the same fields."""
    schema = answer_schema(["web_search", "message"], limits=limits)
    assert list(schema["properties"]) == ["reasoning", "tools", "confidence"]
    assert schema["required"] == ["reasoning", "tools", "confidence"]
    assert ("maxLength" in schema["properties"]["reasoning"]) is limits
    example = INSTRUCTIONS[INSTRUCTIONS.index("Answer with JSON only") :]
    assert example.index('"reasoning"') < example.index('"tools"') < example.index('"confidence"')


@settings(max_examples=50)
@given(st.lists(st.from_regex(r"[a-z_]{1,20}", fullmatch=True), min_size=1, max_size=60))
def test_schema_enum_is_the_sorted_candidate_set(names: list[str]) -> None:
    """Property: within the limit the enum is exactly the sorted candidates; schema is strict."""
    names = list(dict.fromkeys(names))
    schema = answer_schema(names)
    assert schema["properties"]["tools"]["items"]["enum"] == sorted(names)
    assert schema["additionalProperties"] is False
    assert set(schema["required"]) == set(schema["properties"])


@pytest.mark.parametrize(
    "content",
    [
        '{"tools": ["a"], "confidence": 0.5, "reasoning": "r"}',
        '```json\n{"tools": ["a"], "confidence": 0.5, "reasoning": "r"}\n```',
        'Here is the answer:\n{"tools": ["a"], "confidence": 0.5, "reasoning": "r"}\nHope it helps',
        '```\n{"tools": ["a"], "confidence": 0.5, "reasoning": "r"}```',
    ],
    ids=["plain", "fenced-json", "surrounding-text", "bare-fence"],
)
def test_lenient_parse(content: str) -> None:
    """Code fences and leading/trailing text around the JSON object are tolerated."""
    assert parse_lenient(content)["tools"] == ["a"]


def test_lenient_parse_rejects_prose() -> None:
    """Text without a JSON object is invalid output."""
    with pytest.raises(ClassifierOutputError):
        parse_lenient("You need the browser tool {maybe}.")


@settings(max_examples=60)
@given(
    st.dictionaries(
        st.text(max_size=8), st.integers(-(2**53), 2**53) | st.text(max_size=8), max_size=4
    ),
    st.text(alphabet=st.characters(blacklist_characters="{}`"), max_size=30),
    st.text(alphabet=st.characters(blacklist_characters="{}`"), max_size=30),
)
def test_lenient_parse_finds_object_amid_text(obj: dict[str, Any], before: str, after: str) -> None:
    """Property: any JSON object with brace-free text around it parses back to itself."""
    assert parse_lenient(before + json.dumps(obj) + after) == obj


def _vote(*selections: tuple[str, ...]) -> Classification:
    answers = [Classification(selected=s, confidence=0.5) for s in selections]
    return combine_votes(answers, "voted", 1.0)


def test_votes_needed_is_a_third_rounded_up() -> None:
    """1-3 answers: one vote; 4-6: two; 7-9: three."""
    assert [votes_needed(m) for m in range(1, 10)] == [1, 1, 1, 2, 2, 2, 3, 3, 3]


names_st = st.sampled_from(["a", "b", "c", "d", "e", "f"])


@settings(max_examples=50)
@given(st.lists(st.lists(names_st, max_size=4, unique=True).map(tuple), min_size=1, max_size=9))
def test_vote_invariants(selections: list[tuple[str, ...]]) -> None:
    """Property: the vote keeps a subset of the union, every unanimous tool, scores = shares."""
    result = _vote(*selections)
    union = {n for s in selections for n in s}
    assert set(result.selected) <= union
    unanimous = set.intersection(*(set(s) for s in selections))
    assert unanimous <= set(result.selected)
    for name in union:
        share = sum(name in s for s in selections) / len(selections)
        assert result.scores[name] == pytest.approx(share)
        assert (name in result.selected) == (
            sum(name in s for s in selections) >= votes_needed(len(selections))
        )


def test_single_sample_vote_is_the_sample() -> None:
    """n=1 voting returns the sample's own selection."""
    assert _vote(("b", "a")).selected == ("b", "a")


def test_prompt_size_benchmark_prints_the_table(tmp_path: Path) -> None:
    """benchmark/classifier-prompt-size.py prints (and writes) the o200k_base token table."""
    out = tmp_path / "size.md"
    script = Path(__file__).resolve().parent.parent / "benchmark" / "classifier-prompt-size.py"
    done = subprocess.run(
        [sys.executable, str(script), "--out", str(out)],
        capture_output=True,
        text=True,
        check=True,
        timeout=60,
    )
    assert "| system prefix" in done.stdout and "o200k_base" in done.stdout
    assert out.read_text() == done.stdout
