"""What the CLI prints is text, never terminal commands.

Tool names and descriptions come from hosts and MCP servers; prompts in telemetry come from
whoever wrote to the agent (a chat channel's other people). Printed raw, an escape sequence in
one of them would reach the operator's terminal: set its title, write its clipboard (OSC 52),
hide or overwrite lines, reverse text (U+202E). `Printable` wraps the CLI's stdout and stderr
(`resolver.cli.main`, every command but ``serve``, whose stdout is the sidecar's frame
protocol) and shows such characters as ``\\uXXXX`` — a valid escape inside a JSON string too,
so ``--json`` output stays JSON. Left alone: line breaks, tabs, carriage returns, and the
styling that ``rich`` itself writes (colour/bold ``ESC [ … m``, and the line and cursor controls
of its progress bar).
"""

from __future__ import annotations

import re
from typing import Any, TextIO

_UNSAFE = re.compile(
    # ESC unless it opens a CSI sequence rich writes: SGR (m), erase line (K), cursor up (A),
    # cursor show/hide (?25h/l); any other C0 control but \t \n \r; DEL and C1; bidi controls
    r"\x1b(?!\[(?:[0-9;]*[mKA]|\?25[hl]))|[\x00-\x08\x0b\x0c\x0e-\x1a\x1c-\x1f\x7f-\x9f]"
    "|[\u200e\u200f\u202a-\u202e\u2066-\u2069]"
)


def printable(text: str) -> str:
    """`text` with every character that could command a terminal shown as ``\\uXXXX``."""
    return _UNSAFE.sub(lambda m: f"\\u{ord(m.group()):04x}", text)


class Printable:
    """A text stream that writes `printable` text to `stream` (everything else delegated)."""

    def __init__(self, stream: TextIO) -> None:
        self.stream = stream

    def write(self, text: str) -> int:
        self.stream.write(printable(text))
        return len(text)

    def __getattr__(self, name: str) -> Any:
        return getattr(self.stream, name)
