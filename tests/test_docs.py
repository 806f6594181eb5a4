"""The README and docs say what the code and the committed results say."""

from __future__ import annotations

import re
from pathlib import Path

from resolver._config import ResolverConfig
from resolver.hosts.openclaw._sidecar import SURFACE_REFRESH_KEYED_S, SURFACE_REFRESH_S

REPO = Path(__file__).resolve().parent.parent
README = (REPO / "README.md").read_text()


def _section(text: str, heading: str) -> str:
    start = text.index(f"\n## {heading}\n")
    end = text.find("\n## ", start + 1)
    return text[start : end if end > 0 else None]


def test_cache_and_reuse_quotes_the_committed_llm_fails_result() -> None:
    """docs/cache-and-reuse.md gives the LLM-always-fails accuracy of reuse-benchmark.txt."""
    result = (REPO / "benchmark" / "results" / "reuse-benchmark.txt").read_text()
    empty = re.search(r"empty \(fresh install\) \| (\d+)/(\d+) = ([\d.]+)%", result)
    learned = re.search(r"learned from the other fold.*? \| (\d+)/(\d+) = ([\d.]+)%", result)
    assert empty and learned
    doc = (REPO / "docs" / "cache-and-reuse.md").read_text()
    hits, cases, rate = empty.groups()
    assert f"{hits}/{cases} = {rate} %" in doc and f"keeps {rate} %" in doc
    hits, cases, rate = learned.groups()
    assert f"{hits}/{cases} = {rate} %" in doc
    assert "87.3" not in doc


def test_readme_describes_the_surface_refresh_the_sidecar_does() -> None:
    """The OpenClaw section names the age rule the code has, not a per-session abstain."""
    section = _section(README, "OpenClaw")
    assert SURFACE_REFRESH_S == 600 and "ten minutes old abstains" in section
    assert SURFACE_REFRESH_KEYED_S == 3600 and "an hour old abstains" in section
    assert "first turn after the config changes" in section
    assert "first turn of every new session" not in section
    assert "`/resolver refresh`" in section


def test_readme_says_how_long_the_tests_take_and_how_to_run_the_fast_part() -> None:
    """The set-up section gives the suite's duration and the command without the e2e tests."""
    section = _section(README, "Set up")
    assert re.search(r"about \*\*\d+ minutes on 2 cores\*\*", section), section[:600]
    assert '.venv/bin/python -m pytest -m "not e2e"' in section


def test_readme_config_table_gives_the_changed_defaults() -> None:
    """logDecisions and keywordCacheFile show the model's defaults."""
    table = _section(README, "Configuration")
    assert ResolverConfig().log_decisions is True
    assert "| `logDecisions` | `true` |" in table
    assert "| `keywordCacheFile` | `$XDG_STATE_HOME/openclaw-tool-resolver/keyword-cache.json`" in (
        table
    )
