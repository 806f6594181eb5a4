"""Test doubles that ship with the package: a real chat-completions server on 127.0.0.1
(stdlib `http.server` in a thread), for tests, the adversarial benchmark and anyone testing a
resolver setup without a paid endpoint.

Each request to ``POST /v1/chat/completions`` is answered by the next scripted `Reply`
(or by `default` when the script is empty); every request is recorded with its headers and
parsed JSON body, so tests can check what arrived on the wire. A reply may hang until the
server stops (``hang=True``): that is how the deadline tests make the endpoint never answer.

The project's tests use it through the ``llm_server`` fixture (tests/conftest.py)::

    def test_x(llm_server: LLMServer) -> None:
        llm_server.script(completion({"tools": ["browser"], "confidence": 0.9, "reasoning": "."}))
        config = ResolverConfig(llmApiBase=llm_server.base_url, llmApiKey="sk-test")
"""

from __future__ import annotations

import json
import socket
import threading
import time
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

FAKE_KEY = "sk-" + "test-loopback-not-a-real-key"
"""The only key tests use; the cassette filter test checks it never lands on disk."""


@dataclass(frozen=True)
class Reply:
    """One scripted answer: a status and a body, optionally delayed or never sent."""

    status: int = 200
    body: bytes = b"{}"
    content_type: str = "application/json"
    hang: bool = False
    """Never answer (until the server stops)."""
    delay_s: float = 0.0


@dataclass(frozen=True)
class Recorded:
    """One request as it arrived."""

    path: str
    headers: dict[str, str]
    body: dict[str, Any]


Responder = Callable[[Recorded], Reply]


def completion(
    answer: dict[str, Any] | str | None,
    *,
    finish_reason: str = "stop",
    refusal: str | None = None,
    prompt_tokens: int = 1200,
    cached_tokens: int = 1024,
    completion_tokens: int = 40,
    choices: bool = True,
) -> Reply:
    """A 200 chat-completion whose message content is `answer` (JSON-encoded if a dict)."""
    content = json.dumps(answer) if isinstance(answer, dict) else answer
    message: dict[str, Any] = {"role": "assistant", "content": content, "refusal": refusal}
    body = {
        "id": "chatcmpl-loopback",
        "object": "chat.completion",
        "created": 1_780_000_000,
        "model": "gpt-5.4-mini",
        "choices": (
            [{"index": 0, "message": message, "finish_reason": finish_reason}] if choices else []
        ),
        "usage": {
            "prompt_tokens": prompt_tokens,
            "completion_tokens": completion_tokens,
            "total_tokens": prompt_tokens + completion_tokens,
            "prompt_tokens_details": {"cached_tokens": cached_tokens},
        },
    }
    return Reply(body=json.dumps(body).encode())


def error(status: int, message: str, *, code: str | None = None) -> Reply:
    """An OpenAI-shaped error body with `status`."""
    body = {"error": {"message": message, "type": "invalid_request_error", "code": code}}
    return Reply(status=status, body=json.dumps(body).encode())


class LLMServer:
    """A loopback chat-completions server; `start()`/`stop()` (or use it as a context)."""

    def __init__(self) -> None:
        self.requests: list[Recorded] = []
        self.default: Reply | Responder = error(500, "no reply scripted")
        self._script: deque[Reply | Responder] = deque()
        self._stopping = threading.Event()
        self._lock = threading.Lock()
        self._httpd: ThreadingHTTPServer | None = None
        self._thread: threading.Thread | None = None
        self.received = threading.Event()
        """Set when a request has arrived (observable state to wait on, never a sleep)."""

    @property
    def base_url(self) -> str:
        assert self._httpd is not None, "server not started"
        port = self._httpd.server_address[1]
        return f"http://127.0.0.1:{port}/v1"

    def script(self, *replies: Reply | Responder) -> None:
        """Queue replies for the next requests, in order."""
        with self._lock:
            self._script.extend(replies)

    def _next(self, recorded: Recorded) -> Reply:
        with self._lock:
            self.requests.append(recorded)
            item = self._script.popleft() if self._script else self.default
        self.received.set()
        return item(recorded) if callable(item) else item

    def start(self) -> LLMServer:
        server = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"
            disable_nagle_algorithm = True

            def log_message(self, format: str, *args: Any) -> None:
                pass

            def do_POST(self) -> None:
                length = int(self.headers.get("content-length") or 0)
                raw = self.rfile.read(length)
                try:
                    body = json.loads(raw or b"{}")
                except ValueError:
                    body = {"_raw": raw.decode("utf-8", "replace")}
                headers = {k.lower(): v for k, v in self.headers.items()}
                reply = server._next(Recorded(self.path, headers, body))
                if not self.path.endswith("/chat/completions"):
                    reply = error(404, f"unknown path {self.path}")
                if reply.hang:
                    server._stopping.wait()
                    return
                if reply.delay_s:
                    server._stopping.wait(reply.delay_s)
                self.send_response(reply.status)
                self.send_header("content-type", reply.content_type)
                self.send_header("content-length", str(len(reply.body)))
                self.end_headers()
                self.wfile.write(reply.body)

        self._httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self._httpd.daemon_threads = True
        self._thread = threading.Thread(target=self._httpd.serve_forever, args=(0.05,), daemon=True)
        self._thread.start()
        return self

    def stop(self) -> None:
        self._stopping.set()
        if self._httpd is not None:
            self._httpd.shutdown()
            self._httpd.server_close()
        if self._thread is not None:
            self._thread.join(timeout=5)

    def __enter__(self) -> LLMServer:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()


def refused_base_url() -> str:
    """A loopback URL where nothing listens (connection refused)."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    return f"http://127.0.0.1:{port}/v1"


@dataclass
class Stopwatch:
    """Measures one call (for "answered within the deadline" assertions)."""

    started: float = field(default_factory=time.monotonic)

    def elapsed(self) -> float:
        return time.monotonic() - self.started
