"""Runs the extension's JavaScript unit tests (``extension_unit.test.mjs``) under Node 24."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from .openclaw_env import OpenClawInstall

pytestmark = pytest.mark.e2e

SUITE = Path(__file__).resolve().parent / "extension_unit.test.mjs"


def test_extension_unit_suite_passes(openclaw_install: OpenClawInstall, tmp_path: Path) -> None:
    """index.js against a fake plugin API and the fake sidecar: every node:test case passes."""
    env = {
        "PATH": openclaw_install.env_path(),
        "HOME": str(tmp_path),
        "PYTHON": sys.executable,
        "TMPDIR": os.environ.get("TMPDIR", "/tmp"),
    }
    proc = subprocess.run(
        [str(openclaw_install.node), "--test", "--test-reporter=spec", str(SUITE)],
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert proc.returncode == 0, proc.stdout[-6000:] + proc.stderr[-3000:]
    assert "✖" not in proc.stdout
