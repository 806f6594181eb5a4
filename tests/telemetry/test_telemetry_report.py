"""The HTML report: self-contained, and rendered by a real headless Chromium."""

from __future__ import annotations

import os
import re
import shutil
import struct
import subprocess
from pathlib import Path

import pytest
from telemetry_fixtures import write_telemetry

from resolver import ToolInfo
from resolver.cli import main

CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")
needs_chromium = pytest.mark.skipif(
    CHROMIUM is None and not os.environ.get("CI"),
    reason="chromium is not installed (CI installs it with apt-get; there this test must run)",
)


@pytest.fixture
def telemetry_file(tmp_path: Path, surface: list[ToolInfo]) -> Path:
    """A telemetry file written by 24 real turns of several kinds."""
    return write_telemetry(tmp_path, surface)


def render(page: Path, tmp_path: Path) -> tuple[str, Path]:
    """Open `page` in headless Chromium: the DOM after its scripts ran, and a screenshot."""
    assert CHROMIUM is not None, "chromium must be installed in CI (.ci/run installs it)"
    png = tmp_path / f"{page.stem}.png"
    proc = subprocess.run(
        [
            CHROMIUM,
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--disable-background-networking",
            "--disable-component-update",
            "--disable-sync",
            "--no-first-run",
            f"--user-data-dir={tmp_path / 'chromium-profile'}",
            f"--screenshot={png}",
            "--window-size=1200,2000",
            "--dump-dom",
            page.as_uri(),
        ],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert proc.returncode == 0, proc.stderr[-2000:]
    return proc.stdout, png


def png_size(path: Path) -> tuple[int, int]:
    header = path.read_bytes()[:24]
    assert header[:8] == b"\x89PNG\r\n\x1a\n"
    width, height = struct.unpack(">II", header[16:24])
    return width, height


def test_report_is_self_contained(telemetry_file: Path, tmp_path: Path) -> None:
    """The page loads nothing from anywhere: no src/href to other resources, no prompt text."""
    out = tmp_path / "report.html"
    assert main(["telemetry", "report", str(telemetry_file), "--html", str(out)]) == 0
    page = out.read_text()
    assert not re.search(r"""(?:src|href)\s*=""", page)
    assert "@import" not in page and "url(" not in page
    assert "remind me tomorrow" not in page  # excerpts never reach the report
    assert page.count("<svg data-chart=") == 5


@needs_chromium
def test_report_renders_its_charts_in_headless_chromium(
    telemetry_file: Path, tmp_path: Path
) -> None:
    """Chromium runs the page's check: five charts with marks, no error; the screenshot is real."""
    out = tmp_path / "report.html"
    assert main(["telemetry", "report", str(telemetry_file), "--html", str(out)]) == 0
    dom, png = render(out, tmp_path)
    assert '<html lang="en" data-rendered="ok" data-charts="5"' in dom
    assert 'id="render-error"></span>' in dom  # the error marker stayed empty
    for chart in ("surface", "latency", "sources", "tools", "saved"):
        svg = re.search(rf'<svg data-chart="{chart}".*?</svg>', dom, re.DOTALL)
        assert svg is not None and 'class="mark"' in svg.group(0), chart
    assert png_size(png) == (1200, 2000)
    assert png.stat().st_size > 40_000  # a blank 1200x2000 page compresses to a few kB


@needs_chromium
def test_the_page_check_catches_a_broken_chart(telemetry_file: Path, tmp_path: Path) -> None:
    """Control: a chart without marks makes the page report an error (the check has teeth)."""
    out = tmp_path / "broken.html"
    assert main(["telemetry", "report", str(telemetry_file), "--html", str(out)]) == 0
    page = out.read_text()
    start = page.index('<svg data-chart="latency"')
    end = page.index("</svg>", start)
    out.write_text(page[:start] + page[start:end].replace('class="mark"', "") + page[end:])
    dom, _ = render(out, tmp_path)
    assert 'data-rendered="error"' in dom
    assert "empty or collapsed: latency" in dom
