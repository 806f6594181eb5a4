"""Fixtures for end-to-end tests with a real OpenClaw.

* ``openclaw_install`` (session): Node 24 + ``openclaw@2026.9.6`` in the e2e cache.
* ``mock_llm``: the loopback OpenAI-compatible mock (``mock_llm.py``), started and stopped here.
* ``openclaw_home``: a scratch HOME whose ``~/.openclaw/openclaw.json`` points at the mock.
* ``make_sidecar``: builds the :class:`~tests.e2e.harness.SidecarSpec` the extension starts.
  It is the fake sidecar today; the real one is ``harness.module_sidecar()`` (or the
  interpreter ``resolver install openclaw`` wrote): swap it here or per test.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from .harness import OpenClawHome, SidecarSpec, fake_sidecar
from .mock_llm import MockLLM
from .openclaw_env import OpenClawInstall, ensure_openclaw


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line(
        "markers",
        "e2e: end-to-end tests against a real OpenClaw install (npm installs Node 24 and "
        "openclaw into .e2e-cache on first use; about 15 s per agent turn)",
    )


@pytest.fixture(scope="session")
def openclaw_install() -> OpenClawInstall:
    """Node 24 and the pinned OpenClaw, installed once into the e2e cache."""
    return ensure_openclaw()


@pytest.fixture
def mock_llm() -> Iterator[MockLLM]:
    """A running loopback mock model server; stopped after the test."""
    with MockLLM() as mock:
        yield mock


@pytest.fixture
def openclaw_home(
    tmp_path: Path, openclaw_install: OpenClawInstall, mock_llm: MockLLM
) -> OpenClawHome:
    """A scratch HOME for one test, wired to ``mock_llm``. Call ``write_config`` first."""
    home = tmp_path / "home"
    home.mkdir()
    return OpenClawHome(install=openclaw_install, home=home, base_url=mock_llm.base_url)


@pytest.fixture
def make_sidecar(tmp_path: Path) -> Callable[..., SidecarSpec]:
    """``make_sidecar(mode="fixed", tools=[...])`` -> a fake sidecar spec for this test."""

    def make(mode: str = "fixed", tools: Any = ("read", "web_search"), **kw: Any) -> SidecarSpec:
        return fake_sidecar(tmp_path / "sidecar", mode=mode, tools=tools, **kw)

    return make
