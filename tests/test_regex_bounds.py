"""Every regular expression of the package runs in about linear time on long runs of one
character or pair: a pattern that can start a match at each position of a run and scan to the
run's end before failing is quadratic, and Python's `re` holds the GIL for the whole call, so
one such prompt stalled the sidecar's event loop past every deadline (10,000 tabs: 27 s for
one turn, `_offline._SEGMENT_SPLIT`). Each search and findall gets a bound of 0.5 s of CPU for
5,000 characters: the quadratic ones took 1-10 s there (and the code-fence pattern 0.2 s at
6,000 characters), the linear ones take milliseconds."""

from __future__ import annotations

import importlib
import itertools
import pkgutil
import re
import time

import resolver

UNITS = (
    "a", "A", "aA", "1", "_", "a_", "-", "a-", ".", "a.", "/", " ", "a ", "\t", "\n", "é", "字",
    "#a", ":", "a:", ", ", ",", "!", ". ", ".a", " .", " -", "- ", " and", "and ", " y", "。",
    "，", "\n ", "a. ", "a, ", "a and ", "a - ", "..", "!?", "(", "a(", "'", '"', "<", "=",
    "select ", "http://", "www.", "x.y_z", "my ", "my  wife", "my wife ", "1:", "1h", "1 ", "às 1",
    "AB 1", "where ", "wo ich ", "my a ", "dove sono ",
)  # fmt: skip
TAILS = ("", "!", "é", "字", " ", "'", ")")
PREFIXES = ("", "```")  # an opening code fence (the LLM answer's `_llm._FENCE`)
SIZE = 5_000
BOUND_S = 0.5


def _patterns() -> dict[str, re.Pattern[str]]:
    found: dict[str, re.Pattern[str]] = {}

    def visit(name: str, value: object, depth: int = 0) -> None:
        if isinstance(value, re.Pattern) and isinstance(value.pattern, str):
            found[name] = value
        elif isinstance(value, tuple) and depth < 2:
            for i, item in enumerate(value):
                visit(f"{name}[{i}]", item, depth + 1)

    for info in pkgutil.walk_packages(resolver.__path__, "resolver."):
        if info.name.endswith("__main__"):
            continue
        module = importlib.import_module(info.name)
        for key, value in vars(module).items():
            visit(f"{info.name}.{key}", value)
    # patterns built from data on first use
    from resolver._lang import person_roles

    visit("resolver._lang.person_roles()", person_roles())
    return found


def test_every_pattern_is_about_linear_on_long_runs() -> None:
    patterns = _patterns()
    assert len(patterns) > 40  # the walk does find the package's patterns
    slow: list[str] = []
    for name, pattern in patterns.items():
        for prefix, unit, tail in itertools.product(PREFIXES, UNITS, TAILS):
            text = prefix + unit * (SIZE // len(unit)) + tail
            started = time.process_time()
            pattern.search(text)
            pattern.findall(text)
            spent = time.process_time() - started
            if spent > BOUND_S:
                shape = f"{prefix!r} + {unit!r} * {SIZE // len(unit)} + {tail!r}"
                slow.append(f"{name} on {shape}: {spent:.2f} s")
                break
    assert not slow, slow
