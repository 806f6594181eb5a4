"""Shared fixtures: isolated HOME, a fake clock, small surfaces."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from resolver import ResolverConfig, ToolInfo
from resolver._surface import default_surface
from resolver.testing import LLMServer

REPO = Path(__file__).resolve().parent.parent


@pytest.fixture(autouse=True)
def _isolated_home(
    tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch
) -> Iterator[Path]:
    """Every test gets its own HOME (no real ~/.openclaw, and the keyword cache's default
    state directory inside it) and no OPENAI_API_KEY or LLM_* variables."""
    home = tmp_path_factory.mktemp("home")
    monkeypatch.setenv("HOME", str(home))
    for name in ("OPENAI_API_KEY", "XDG_STATE_HOME", "LLM_API_BASE", "LLM_MODEL", "LLM_API_KEY"):
        monkeypatch.delenv(name, raising=False)
    yield home


@pytest.fixture
def surface() -> list[ToolInfo]:
    """The default OpenClaw 2026.9.6 surface (54 tools)."""
    return default_surface()


@pytest.fixture
def offline_config(tmp_path: Path) -> ResolverConfig:
    """A config with no endpoint and an override file path inside tmp_path."""
    return ResolverConfig(catalogOverridesFile=str(tmp_path / "resolver-catalog.json"))


class FakeClock:
    """A manually advanced monotonic clock."""

    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now

    def advance(self, seconds: float) -> None:
        self.now += seconds


@pytest.fixture
def clock() -> FakeClock:
    return FakeClock()


@pytest.fixture
def llm_server() -> Iterator[LLMServer]:
    """A real chat-completions server on 127.0.0.1 (tests/llm_server.py), stopped after."""
    with LLMServer() as server:
        yield server
