"""What the CLI prints never commands the terminal (`resolver.cli._printable`): an escape
sequence in a tool name, a description or a prompt from telemetry is shown, not obeyed; rich's
own styling and ``--json`` output are left as they are."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from resolver.cli import main
from resolver.cli._printable import printable

TITLE = "srv__\x1b]0;pwned\x07title"  # sets the terminal's title
CLIPBOARD = "srv__\x1b]52;c;cm0gLXJmIH4=\x07clip"  # writes the clipboard (OSC 52)
HIDDEN = "srv__\u202ereversed\x9b2J\x00"  # bidi override, C1 CSI "clear screen", NUL


@pytest.mark.parametrize(
    ("text", "shown"),
    [
        (TITLE, "srv__\\u001b]0;pwned\\u0007title"),
        (HIDDEN, "srv__\\u202ereversed\\u009b2J\\u0000"),
        ("\x1b[2J\x1b[H", "\\u001b[2J\\u001b[H"),  # clear screen, cursor home
    ],
)
def test_terminal_commands_are_shown_not_sent(text: str, shown: str) -> None:
    assert printable(text) == shown


def test_text_and_richs_own_styling_pass_unchanged() -> None:
    plain = "line one\n\tline two\r\n┃ table │ 東京 😀"
    styled = "\x1b[1mbold\x1b[0m \x1b[38;5;2mgreen\x1b[0m\x1b[2K\x1b[1A\x1b[?25l\x1b[?25h"
    assert printable(plain) == plain
    assert printable(styled) == styled


def tools_file(tmp_path: Path) -> Path:
    path = tmp_path / "tools.json"
    tools = [{"name": n, "description": "export the ledger as csv"} for n in (TITLE, CLIPBOARD)]
    path.write_text(json.dumps(tools))
    return path


def test_explain_shows_a_hostile_tool_name_as_text(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    stdout, stderr = sys.stdout, sys.stderr
    code = main(["explain", "--tools-file", str(tools_file(tmp_path)), "export the ledger"])
    out = capsys.readouterr().out
    assert code == 0
    assert "srv__\\u001b]0;pwned\\u0007title" in out and "\\u001b]52;c;" in out
    assert "\x1b" not in out and "\x07" not in out
    assert (sys.stdout, sys.stderr) == (stdout, stderr)  # the streams are given back


def test_json_output_stays_json_with_the_exact_names(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    tools = str(tools_file(tmp_path))
    assert main(["resolve", "--json", "--tools-file", tools, "export the ledger"]) == 0
    out = capsys.readouterr().out
    assert "\x1b" not in out
    assert set(json.loads(out)["toolsAllow"]) == {TITLE, CLIPBOARD}


def test_the_installed_command_writes_no_escape_byte(tmp_path: Path) -> None:
    tools = str(tools_file(tmp_path))
    done = subprocess.run(
        [sys.executable, "-m", "resolver", "resolve", "--tools-file", tools, "export the ledger"],
        capture_output=True,
        timeout=120,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    assert b"\x1b" not in done.stdout and b"\x07" not in done.stdout
    assert b"\\u001b]52;c;" in done.stdout
