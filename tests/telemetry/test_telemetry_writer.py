"""The JSONL writer: concurrent processes and threads, rotation, failures, back-pressure."""

from __future__ import annotations

import json
import logging
import subprocess
import sys
import threading
from pathlib import Path

import pytest

from resolver.telemetry import JsonlWriter, with_rotated

# One writer process: waits at a barrier (stdin), then 2 threads append 100 lines each, of
# varying length (some longer than PIPE_BUF = 4096 bytes), then closes the writer.
CHILD = r"""
import json, sys, threading
from resolver.telemetry import JsonlWriter

path, proc, max_bytes = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
writer = JsonlWriter(path, max_bytes=max_bytes, backups=1000)
print("ready", flush=True)
sys.stdin.read(2)

def work(thread):
    for seq in range(100):
        pad = "x" * ((proc * 977 + thread * 131 + seq * 389) % 6000)
        line = json.dumps({"proc": proc, "thread": thread, "seq": seq, "pad": pad})
        assert writer.submit(line.encode())

threads = [threading.Thread(target=work, args=(t,)) for t in range(2)]
for t in threads:
    t.start()
for t in threads:
    t.join()
writer.close(timeout=60)
print(json.dumps({"written": writer.written, "lost": writer.lost}), flush=True)
"""


def test_concurrent_processes_and_threads_never_interleave_or_lose_lines(tmp_path: Path) -> None:
    """4 processes x 2 threads x 100 lines into one rotating file: every line parses, none lost."""
    path = tmp_path / "telemetry.jsonl"
    max_bytes = 40_000
    procs = [
        subprocess.Popen(
            [sys.executable, "-c", CHILD, str(path), str(i), str(max_bytes)],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            text=True,
        )
        for i in range(4)
    ]
    for proc in procs:  # barrier: every child is ready before any starts writing
        assert proc.stdout is not None and proc.stdout.readline().strip() == "ready"
    for proc in procs:
        assert proc.stdin is not None
        proc.stdin.write("go")
        proc.stdin.close()
    reports = []
    for proc in procs:
        assert proc.stdout is not None
        out = proc.stdout.read()
        assert proc.wait(timeout=120) == 0
        reports.append(json.loads(out.strip().splitlines()[-1]))
    assert all(r == {"written": 200, "lost": 0} for r in reports)

    files = with_rotated(path)
    assert len(files) > 5, "the test must force rotation"
    seen = []
    for file in files:
        assert file.stat().st_size <= max_bytes
        for raw in file.read_bytes().splitlines():
            record = json.loads(raw)  # every line is whole JSON: no interleaving
            seen.append((record["proc"], record["thread"], record["seq"]))
    assert len(seen) == 800
    assert set(seen) == {(p, t, s) for p in range(4) for t in range(2) for s in range(100)}


def test_rotation_keeps_at_most_backups_files(tmp_path: Path) -> None:
    """Past maxBytes the file rotates; only `backups` old files are kept, newest lines last."""
    path = tmp_path / "t.jsonl"
    writer = JsonlWriter(path, max_bytes=10_000, backups=2)
    for i in range(200):
        writer.submit(json.dumps({"i": i, "pad": "y" * 980}).encode())
    writer.close()
    files = with_rotated(path)
    assert [f.name for f in files] == ["t.jsonl.2", "t.jsonl.1", "t.jsonl"]
    assert all(f.stat().st_size <= 10_000 for f in files)
    numbers = [json.loads(raw)["i"] for f in files for raw in f.read_bytes().splitlines()]
    assert numbers == sorted(numbers) and numbers[-1] == 199
    assert writer.written == 200 and writer.lost == 0


def test_max_bytes_zero_never_rotates(tmp_path: Path) -> None:
    """maxBytes 0 means one ever-growing file."""
    path = tmp_path / "t.jsonl"
    writer = JsonlWriter(path, max_bytes=0, backups=2)
    for i in range(50):
        writer.submit(json.dumps({"i": i, "pad": "z" * 500}).encode())
    writer.close()
    assert with_rotated(path) == [path] and len(path.read_bytes().splitlines()) == 50


def test_unwritable_path_warns_once_and_counts(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    """A file that cannot be written: one warning naming it; every lost line is counted."""
    blocker = tmp_path / "not-a-dir"
    blocker.write_text("a regular file")
    writer = JsonlWriter(blocker / "t.jsonl")
    with caplog.at_level(logging.WARNING, logger="resolver"):
        for i in range(3):
            assert writer.submit(b'{"i": %d}' % i)
            assert writer.flush()
        writer.close()
    warnings = [r for r in caplog.records if "cannot write telemetry" in r.getMessage()]
    assert len(warnings) == 1 and str(blocker / "t.jsonl") in warnings[0].getMessage()
    assert writer.failed == 3 and writer.written == 0


def test_full_queue_drops_and_counts_without_blocking(tmp_path: Path) -> None:
    """With the writer thread busy and the queue full, submit returns False at once."""
    picked, release = threading.Event(), threading.Event()

    def slow() -> bytes:
        picked.set()
        release.wait(30)
        return b'{"slow": true}'

    writer = JsonlWriter(tmp_path / "t.jsonl", queue_size=1)
    assert writer.submit(slow)
    assert picked.wait(30)  # the thread holds `slow`; the queue is empty again
    assert writer.submit(b'{"queued": true}')
    assert not writer.submit(b'{"dropped": true}')
    assert writer.dropped == 1
    release.set()
    writer.close()
    lines = (tmp_path / "t.jsonl").read_bytes().splitlines()
    assert [json.loads(x) for x in lines] == [{"slow": True}, {"queued": True}]


def test_a_job_that_fails_to_render_is_counted_not_raised(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    """A rendering bug loses that line only, is logged once, and the writer keeps going."""

    def broken() -> bytes:
        raise ValueError("bug")

    writer = JsonlWriter(tmp_path / "t.jsonl")
    with caplog.at_level(logging.WARNING, logger="resolver"):
        writer.submit(broken)
        writer.submit(b'{"ok": 1}')
        writer.submit(broken)
        writer.close()
    assert writer.failed == 2 and (tmp_path / "t.jsonl").read_bytes() == b'{"ok": 1}\n'
    assert sum("could not be rendered" in r.getMessage() for r in caplog.records) == 1


def test_files_are_private_to_the_user(tmp_path: Path) -> None:
    """The telemetry file and its lock are created 0600 (they may hold prompt excerpts)."""
    writer = JsonlWriter(tmp_path / "t.jsonl")
    writer.submit(b"{}")
    writer.close()
    assert (tmp_path / "t.jsonl").stat().st_mode & 0o777 == 0o600
    assert (tmp_path / "t.jsonl.lock").stat().st_mode & 0o777 == 0o600
