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
    from resolver.telemetry._surfaces import SurfaceFiles

    config = ResolverConfig(catalog_overrides_file=None)
    surfaces = SurfaceFiles(tmp_path / "t.jsonl")  # what the observer writes beside the file
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
        assert event.surface_id is not None
        surfaces.ensure(event.surface_id, snap.candidates)
        lines.append(event.model_dump(mode="json", by_alias=True))
    telemetry = write_lines(tmp_path / "t.jsonl", lines)
    out = tmp_path / "cases.json"
    assert main(["bench", "generate", str(telemetry), "--out", str(out)]) == 0
    cases = parse_case_file(out.read_bytes(), path=str(out))
    assert [(c.prompt, c.must_include) for c in cases.cases] == [
        ("take a photo with the door camera", ["nodes"])
    ]
    assert cases.cases[0].cluster is not None and "s-1" not in out.read_text()


def test_cases_from_a_custom_surface_replay_against_that_surface(tmp_path: Path) -> None:
    """Telemetry from a host with its own tools (a real sidecar with an MCP-style tool) names
    its surface (surfaceId + a surface file); generate-cases (--input, as the README wrote it)
    writes a case file whose "surface" is that surface, and `resolver bench` replays it."""
    import subprocess
    import sys

    from sidecar_support import Sidecar

    telemetry = tmp_path / "t.jsonl"
    config = {
        "telemetryFile": str(telemetry),
        "shadowSampleRate": 1,
        "surfaceStateFile": "",
        "keywordCacheFile": "",
    }
    tools = [{"name": "jira_search", "description": "Search Jira tickets by text or key"}]
    with Sidecar() as child:
        assert child.call("c", "configure", config=config)["result"]["ok"]
        child.call("o", "observe_surface", tools=tools, ctx={})
        ctx = {"sessionId": "s1", "runId": "run-1"}
        answer = child.call("r", "resolve", event={"prompt": "find the jira ticket"}, ctx=ctx)
        assert answer["result"]["source"] == "shadow"
        calls = [{"name": "jira_search", "ok": True}]
        assert child.call("t", "observe_tool_calls", calls=calls, ctx=ctx)["result"]["ok"]
        assert child.close() == 0
    (line,) = [json.loads(x) for x in telemetry.read_text().splitlines()]
    surface_id = line["surfaceId"]
    assert line["usedTools"] == ["jira_search"] and line["availableTools"] == 55
    stored = json.loads((tmp_path / "t.jsonl.surfaces" / f"{surface_id}.json").read_text())
    assert {"name": "jira_search", "description": tools[0]["description"]} in stored["tools"]
    assert len(line) < 3000  # the line stays small: the surface is not in it

    out = tmp_path / "cases" / "cases.json"
    out.parent.mkdir()
    script = Path(__file__).resolve().parent.parent / "benchmark" / "generate-cases.py"
    proc = subprocess.run(
        [sys.executable, str(script), "--input", str(telemetry), "--out", str(out)],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert proc.returncode == 0, proc.stderr
    assert f"surface {surface_id}" in proc.stdout
    doc = json.loads(out.read_text())
    assert doc["surface"] == "cases.surface.json" and "tools" not in doc
    cases = parse_case_file(out.read_bytes(), path=str(out))
    assert not cases.default_surface and len(cases.candidates) == 55
    assert ("jira_search", tools[0]["description"]) in [
        (t.name, t.description) for t in cases.candidates
    ]
    result = tmp_path / "result.json"
    assert main(["bench", "--file", str(out), "--no-progress", "--json-out", str(result)]) == 0
    replayed = json.loads(result.read_text())
    assert replayed["caseFile"]["candidates"] == 55
    assert replayed["metrics"]["must_include_accuracy"]["value"] == 1.0


def test_a_missing_surface_file_is_an_error_naming_it(tmp_path: Path) -> None:
    """A line naming a surface whose file is gone fails loudly with the path and the fix."""
    telemetry = write_lines(
        tmp_path / "t.jsonl",
        [{"prompt": "find the ticket", "usedTools": ["read"], "surfaceId": "0123456789abcdef"}],
    )
    from resolver.bench.telemetry import cases_from_telemetry

    with pytest.raises(ConfigError, match=r"t\.jsonl\.surfaces/0123456789abcdef\.json is missing"):
        cases_from_telemetry([str(telemetry)], name="x")


def test_generate_accepts_input_and_positional_files(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """`generate --input FILE` works as the positional form does; with neither, the usage."""
    telemetry = write_lines(tmp_path / "t.jsonl", [{"prompt": "hi", "usedTools": ["read"]}])
    for form in (["--input", str(telemetry)], [str(telemetry)]):
        out = tmp_path / "c.json"
        assert main(["bench", "generate", *form, "--out", str(out)]) == 0
        assert json.loads(out.read_text())["cases"][0]["must_include"] == ["read"]
    with pytest.raises(SystemExit):
        main(["bench", "generate", "--out", str(tmp_path / "x.json")])
    assert "usage: resolver bench generate" in capsys.readouterr().err
