"""An append-only JSONL file shared by several processes and threads, written off the hot path.

- `JsonlWriter.submit` never blocks and never raises: it puts a job on a bounded queue and
  returns; when the queue is full the job is dropped and counted (`dropped`).
- One background thread per writer (started on first use, restarted after a fork) renders the
  jobs into lines and appends them.
- Every batch is written under an exclusive ``flock`` on ``<file>.lock`` (a lock file that is
  never rotated), on a descriptor opened with ``O_APPEND``, one ``os.write`` per line (a short
  write is completed before the lock is released). So lines from any number of processes and
  threads never interleave, whatever their length, and rotation (checked under the same lock)
  never loses or splits a line.
- Size-based rotation: when the next line would take the file past ``max_bytes``, ``file`` ->
  ``file.1`` -> ... -> ``file.<backups>`` (the oldest is deleted); ``backups=0`` starts over.
  ``max_bytes=0`` never rotates.
- If the file cannot be written, one warning is logged (naming the file and the error); later
  failures are only counted (`failed`), and writing is retried on the next batch.
- `close()` (also registered with `atexit`) writes what is queued before the process ends.

Locks are advisory and local: use a local filesystem (``flock`` over NFS is not reliable).
"""

from __future__ import annotations

import atexit
import contextlib
import errno
import fcntl
import logging
import os
import queue
import stat
import threading
import time
from collections.abc import Callable
from pathlib import Path

logger = logging.getLogger("resolver")

Job = bytes | Callable[[], bytes]
"""A finished line, or a function the background thread calls to render one."""

_STOP = object()
_BATCH = 256


class JsonlWriter:
    """Appends lines to `path` from a background thread; see the module docstring."""

    def __init__(
        self,
        path: str | Path,
        *,
        max_bytes: int = 10_000_000,
        backups: int = 3,
        queue_size: int = 1024,
        warmup: Callable[[], object] | None = None,
        close_timeout: float = 10.0,
    ) -> None:
        self.path = Path(path).expanduser()
        self.warmup = warmup
        """Called once on the background thread before the first line (e.g. load a tokenizer)."""
        self.close_timeout = close_timeout
        """How long `close()` (and so interpreter exit) waits for queued lines by default."""
        self.lock_path = self.path.with_name(self.path.name + ".lock")
        self.max_bytes = max_bytes
        self.backups = backups
        self.queue_size = queue_size
        self._guard = threading.Lock()
        self._done = threading.Condition()
        self._reset()

    def _reset(self) -> None:
        """Fresh per-process state (also after a fork: the thread did not survive it)."""
        self._pid = os.getpid()
        self._queue: queue.Queue[object] = queue.Queue(maxsize=self.queue_size)
        self._thread: threading.Thread | None = None
        self._fd: int | None = None
        self._lock_fd: int | None = None
        self._submitted = 0
        self._processed = 0
        self._closed = False
        self._warned = False
        self._render_warned = False
        self.dropped = 0
        """Jobs dropped because the queue was full."""
        self.failed = 0
        """Lines that could not be rendered or written."""
        self.written = 0
        """Lines appended by this process."""

    # ------------------------------------------------------------------ caller side

    def submit(self, job: Job) -> bool:
        """Queue one line (or a job rendering one). Never blocks, never raises."""
        try:
            with self._guard:
                if self._pid != os.getpid():
                    self._reset()
                if self._closed:
                    self.dropped += 1
                    return False
                if self._thread is None:
                    self._start_locked()
                try:
                    self._queue.put_nowait(job)
                except queue.Full:
                    self.dropped += 1
                    return False
                self._submitted += 1
                return True
        except Exception:  # a writer fault must never reach the hook
            self.dropped += 1
            return False

    @property
    def lost(self) -> int:
        """Lines this process lost so far: dropped (queue full) + failed (not writable)."""
        return self.dropped + self.failed

    def start(self) -> None:
        """Start the background thread now (it also starts on the first `submit`)."""
        with self._guard:
            if self._pid != os.getpid():
                self._reset()
            if self._thread is None and not self._closed:
                self._start_locked()

    def flush(self, timeout: float = 10.0) -> bool:
        """Wait until every job submitted so far is written (or failed). False on timeout."""
        target = self._submitted
        deadline = time.monotonic() + timeout
        with self._done:
            while self._processed < target and self._pid == os.getpid():
                remaining = deadline - time.monotonic()
                if remaining <= 0 or self._thread is None or not self._thread.is_alive():
                    return self._processed >= target
                self._done.wait(remaining)
        return True

    def close(self, timeout: float | None = None) -> None:
        """Write what is queued (waiting at most `timeout` s), then stop the thread."""
        if self._pid != os.getpid():
            return
        timeout = self.close_timeout if timeout is None else timeout
        with self._guard:
            if self._closed:
                return
            self._closed = True
            thread = self._thread
        if thread is not None and thread.is_alive():
            with contextlib.suppress(queue.Full):
                self._queue.put(_STOP, timeout=timeout)
            thread.join(timeout)
            if thread.is_alive():
                logger.warning(
                    "resolver: telemetry: %d line(s) not written to %s within %.0f s",
                    self._submitted - self._processed,
                    self.path,
                    timeout,
                )
        self._close_fds()

    def _start_locked(self) -> None:
        self._thread = threading.Thread(
            target=self._run, name=f"resolver-telemetry:{self.path.name}", daemon=True
        )
        self._thread.start()
        atexit.register(self.close)

    # ------------------------------------------------------------------ background thread

    def _run(self) -> None:
        if self.warmup is not None:
            try:
                self.warmup()
            except Exception:
                logger.warning("resolver: telemetry warm-up failed", exc_info=True)
        while True:
            item = self._queue.get()
            batch = [item]
            while len(batch) < _BATCH:
                try:
                    batch.append(self._queue.get_nowait())
                except queue.Empty:
                    break
            stop = any(job is _STOP for job in batch)
            jobs = [job for job in batch if job is not _STOP]
            lines = [line for line in (self._render(job) for job in jobs) if line is not None]
            if lines:
                self._append(lines)
            with self._done:
                self._processed += len(jobs)
                self._done.notify_all()
            if stop:
                return

    def _render(self, job: object) -> bytes | None:
        try:
            line = job() if callable(job) else job
            assert isinstance(line, bytes)
        except Exception:
            self.failed += 1
            if not self._render_warned:  # a bug would repeat on every turn: say it once
                self._render_warned = True
                logger.warning(
                    "resolver: a telemetry event could not be rendered; further failures are "
                    "counted, not logged",
                    exc_info=True,
                )
            return None
        return line if line.endswith(b"\n") else line + b"\n"

    def _append(self, lines: list[bytes]) -> None:
        index = 0
        try:
            lock_fd = self._lock()
            fcntl.flock(lock_fd, fcntl.LOCK_EX)
            try:
                fd = self._open()
                size = os.fstat(fd).st_size
                for index, line in enumerate(lines):  # noqa: B007 - index is read on failure
                    if self.max_bytes and size > 0 and size + len(line) > self.max_bytes:
                        fd = self._rotate()
                        size = 0
                    _write_all(fd, line)
                    size += len(line)
                    self.written += 1
                index = len(lines)
            finally:
                fcntl.flock(lock_fd, fcntl.LOCK_UN)
        except OSError as exc:
            self.failed += len(lines) - index
            self._close_fds()
            if not self._warned:
                self._warned = True
                logger.warning(
                    "resolver: cannot write telemetry to %s (%s); turns are unaffected, "
                    "further failures are counted, not logged",
                    self.path,
                    exc.strerror or exc,
                )

    def _lock(self) -> int:
        if self._lock_fd is None:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            self._lock_fd = _open_private(self.lock_path, os.O_RDWR)
        return self._lock_fd

    def _open(self) -> int:
        """The append descriptor of the current file (reopened when someone rotated it)."""
        if self._fd is not None:
            try:
                same = os.stat(self.path).st_ino == os.fstat(self._fd).st_ino
            except FileNotFoundError:
                same = False
            if same:
                return self._fd
            os.close(self._fd)
            self._fd = None
        self._fd = _open_private(self.path, os.O_WRONLY | os.O_APPEND)
        return self._fd

    def _rotate(self) -> int:
        """file -> file.1 -> ... -> file.<backups> (called with the lock held)."""
        if self._fd is not None:
            os.close(self._fd)
            self._fd = None
        if self.backups > 0:
            for i in range(self.backups - 1, 0, -1):
                older = self._backup(i)
                if older.exists():
                    os.replace(older, self._backup(i + 1))
            os.replace(self.path, self._backup(1))
        else:
            with contextlib.suppress(FileNotFoundError):
                os.unlink(self.path)
        return self._open()

    def _backup(self, i: int) -> Path:
        return self.path.with_name(f"{self.path.name}.{i}")

    def _close_fds(self) -> None:
        for name in ("_fd", "_lock_fd"):
            fd = getattr(self, name)
            if fd is not None:
                with contextlib.suppress(OSError):
                    os.close(fd)
                setattr(self, name, None)


def _open_private(path: Path, flags: int) -> int:
    """Open (creating it 0600) a file only this user may read: never through a symbolic link
    (another user's link could point it anywhere), only a regular file, and an existing file
    with group or other permissions is narrowed to 0600 (telemetry holds prompt excerpts)."""
    try:
        fd = os.open(path, flags | os.O_CREAT | os.O_CLOEXEC | os.O_NOFOLLOW | os.O_NONBLOCK, 0o600)
    except OSError as exc:
        if exc.errno == errno.ELOOP:
            raise OSError(
                errno.ELOOP, "a symbolic link; name the real file (links are not followed)"
            ) from None
        raise
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode):
            raise OSError(errno.EINVAL, "not a regular file")
        if st.st_mode & 0o077:
            os.fchmod(fd, 0o600)
    except BaseException:
        os.close(fd)
        raise
    return fd


def _write_all(fd: int, data: bytes) -> None:
    """One os.write for the line; finish a (rare) short write before the lock is released."""
    view = memoryview(data)
    while view:
        try:
            n = os.write(fd, view)
        except InterruptedError:  # pragma: no cover - retried by Python since PEP 475
            continue
        if n == 0:
            raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))
        view = view[n:]
