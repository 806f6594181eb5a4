"""The public namespace and the packaged data."""

from __future__ import annotations

import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

import resolver

REPO = Path(__file__).resolve().parent.parent


def test_all_is_sorted_and_complete() -> None:
    """`__all__` is sorted (constants, classes, functions) and lists every public name."""

    def isort_key(name: str) -> tuple[int, str]:
        return (0 if name.isupper() else 1 if name[0].isupper() else 2, name)

    assert resolver.__all__ == sorted(resolver.__all__, key=isort_key)
    subpackages = {"hosts", "cli", "telemetry", "bench", "tuning", "testing"}
    public = {n for n in dir(resolver) if not n.startswith("_") and n not in subpackages}
    assert public == set(resolver.__all__)


def test_import_does_no_io() -> None:
    """Importing resolver does not configure logging."""
    code = "import logging, resolver; print(len(logging.getLogger().handlers))"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "0"


@pytest.mark.slow
def test_wheel_carries_catalogs_and_schemas(tmp_path: Path) -> None:
    """A built wheel contains the default catalog and the schemas."""
    proc = subprocess.run(
        [sys.executable, "-m", "pip", "wheel", "--no-deps", "-q", "-w", str(tmp_path), str(REPO)],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert proc.returncode == 0, proc.stderr
    wheel = next(tmp_path.glob("*.whl"))
    names = zipfile.ZipFile(wheel).namelist()
    assert "resolver/_data/catalogs/default-catalog.json" in names
    assert "resolver/_data/schemas/catalog.v1.json" in names
    assert "resolver/_data/benchmark/benchmark-v1-curated.json" in names  # tune propose default
    assert "resolver/_data/benchmark/margins-default.json" in names
    assert "resolver/_data/schemas/telemetry-event.v1.json" in names
    assert "resolver/_data/catalogs/openclaw-2026.9.6-tools.json" in names
