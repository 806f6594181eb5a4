"""resolver.bench.telemetry: cases from telemetry lines with known used tools."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from resolver import ConfigError
from resolver.bench.cases import parse_case_file
from resolver.cli import main


def write_lines(path: Path, lines: list[object]) -> Path:
    path.write_text("\n".join(x if isinstance(x, str) else json.dumps(x) for x in lines) + "\n")
    return path


def test_generate_cases_from_telemetry(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """Usable lines become cases (hit/miss by toolsAllow, hashed session cluster); others skip."""
    telemetry = write_lines(
        tmp_path / "t.jsonl",
        [
            {
                "promptExcerpt": "search the web for llamas",
                "usedTools": ["web_search"],
                "toolsAllow": ["read", "web_search"],
                "sessionId": "sess-secret-1",
            },
            {
                "prompt": "take a photo with the door cam",
                "usedTools": ["nodes"],
                "toolsAllow": ["read"],
                "sessionId": "sess-secret-1",
            },
            {"prompt": "Search the web  for llamas", "usedTools": ["web_search"]},
            {"prompt": "hello there", "usedTools": []},
            {"prompt": "no used tools recorded"},
            {"usedTools": ["read"]},
            "not json",
        ],
    )
    out = tmp_path / "cases.json"
    assert main(["bench", "generate", str(telemetry), "--out", str(out)]) == 0
    assert "wrote 2 case(s)" in capsys.readouterr().out
    text = out.read_text()
    assert "sess-secret-1" not in text
    cases = parse_case_file(text.encode(), path=str(out))
    assert cases.default_surface
    by_prompt = {c.prompt: c for c in cases.cases}
    assert by_prompt["search the web for llamas"].category == "hit"
    assert by_prompt["take a photo with the door cam"].category == "miss"
    assert by_prompt["take a photo with the door cam"].must_include == ["nodes"]
    clusters = {c.cluster for c in cases.cases}
    assert len(clusters) == 1 and next(iter(clusters)).startswith("s-")


def test_include_empty_and_host_surface(tmp_path: Path) -> None:
    """--include-empty keeps no-tool turns; listed available tools become the file's tools."""
    telemetry = write_lines(
        tmp_path / "t.jsonl",
        [
            {"prompt": "hi", "usedTools": [], "availableTools": ["read", "my_tool"]},
            {
                "prompt": "run my tool",
                "usedTools": ["my_tool"],
                "availableTools": ["read", "my_tool"],
            },
        ],
    )
    out = tmp_path / "cases.json"
    assert main(["bench", "generate", str(telemetry), "--out", str(out), "--include-empty"]) == 0
    cases = parse_case_file(out.read_bytes(), path=str(out))
    assert [t.name for t in cases.candidates] == ["read", "my_tool"]
    assert sorted(len(c.must_include) for c in cases.cases) == [0, 1]


def test_no_usable_line_is_an_error(tmp_path: Path) -> None:
    """Telemetry without prompts or used tools explains what is needed."""
    from resolver.bench.telemetry import cases_from_telemetry

    telemetry = write_lines(tmp_path / "t.jsonl", [{"toolsAllow": ["read"]}])
    with pytest.raises(ConfigError, match="usedTools"):
        cases_from_telemetry([str(telemetry)], name="x")


def test_cases_from_real_telemetry_events(tmp_path: Path) -> None:
    """Lines written from the telemetry event model (shadow turns with usedTools) become cases."""
    from resolver import Resolver, ResolverConfig, TurnRequest
    from resolver._surface import default_surface
    from resolver.telemetry import SurfaceMeter, snapshot

    config = ResolverConfig(catalog_overrides_file=None)
    resolver = Resolver(config, llm=None)
    lines = []
    for turn, (prompt, used) in enumerate(
        [("take a photo with the door camera", ["nodes"]), ("search the web for llamas", [])], 1
    ):
        request = TurnRequest(prompt=prompt, tools=default_surface(), sessionId="s-1")
        resolution = resolver.resolve_sync(request)
        snap = snapshot(
            request, resolution, config, turn=turn, now=1_700_000_000.0, used_tools=used
        )
        event = snap.event(SurfaceMeter())
        lines.append(event.model_dump(mode="json", by_alias=True))
    telemetry = write_lines(tmp_path / "t.jsonl", lines)
    out = tmp_path / "cases.json"
    assert main(["bench", "generate", str(telemetry), "--out", str(out)]) == 0
    cases = parse_case_file(out.read_bytes(), path=str(out))
    assert [(c.prompt, c.must_include) for c in cases.cases] == [
        ("take a photo with the door camera", ["nodes"])
    ]
    assert cases.cases[0].cluster is not None and "s-1" not in out.read_text()
