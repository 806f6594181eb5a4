"""A loopback OpenAI-compatible server for end-to-end tests.

One ``ThreadingHTTPServer`` bound to 127.0.0.1 on a free port serves
``POST /v1/chat/completions`` for two callers:

* the **primary model** (OpenClaw's agent; requests with ``"stream": true``): answered with
  SSE chunks, a usage chunk and ``data: [DONE]``. What it says is chosen by
  :attr:`MockLLM.primary_responder` (default: a short text reply). Every request body is
  logged in :attr:`MockLLM.primary_requests`, so a test sees exactly which ``tools`` were sent.
* the **classifier** (non-stream requests, or any request carrying the header
  ``x-openclaw-caller: tool-resolver``): answered with one chat completion whose message
  content is JSON ``{"tools": [...], "confidence": 0.9, "reasoning": "..."}``. The selection
  comes from :attr:`MockLLM.classifier_responder`; headers and body are logged in
  :attr:`MockLLM.classifier_requests`.

The server is started and stopped by the test that uses it (a context manager).
"""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

CLASSIFIER_CALLER = "tool-resolver"


@dataclass(frozen=True)
class ToolCall:
    """A tool call the mock primary model makes."""

    name: str
    arguments: dict[str, Any]
    id: str = "call_1"


@dataclass(frozen=True)
class PrimaryReply:
    """What the mock primary model answers: text, or tool calls (then text is ignored)."""

    text: str = "OK from the mock model."
    tool_calls: tuple[ToolCall, ...] = ()


@dataclass(frozen=True)
class ClassifierReply:
    """What the mock classifier answers (becomes the JSON message content)."""

    tools: tuple[str, ...]
    confidence: float = 0.9
    reasoning: str = "mock classifier"


@dataclass(frozen=True)
class LoggedRequest:
    """One request the mock received."""

    path: str
    headers: dict[str, str]
    body: dict[str, Any]
    received_at: float
    """Wall-clock time (``time.time()``), comparable with the fake sidecar's log."""
    body_bytes: int = 0
    """Size of the request body as received (bytes on the wire)."""

    @property
    def tool_names(self) -> list[str]:
        """Names of the tools in the request body, in order (empty when there is no ``tools``)."""
        return [t.get("function", t).get("name") for t in self.body.get("tools") or []]

    @property
    def tools_bytes(self) -> int:
        """UTF-8 bytes of the request's ``tools`` as compact JSON, as JS sends it (0 if none)."""
        tools = self.body.get("tools")
        if not tools:
            return 0
        return len(json.dumps(tools, separators=(",", ":"), ensure_ascii=False).encode())


def _default_primary(_: LoggedRequest) -> PrimaryReply:
    return PrimaryReply()


def _default_classifier(_: LoggedRequest) -> ClassifierReply:
    return ClassifierReply(tools=("read",))


@dataclass
class MockLLM:
    """State of a running mock: the responders tests set and the request logs they read."""

    primary_responder: Callable[[LoggedRequest], PrimaryReply] = _default_primary
    classifier_responder: Callable[[LoggedRequest], ClassifierReply] = _default_classifier
    primary_requests: list[LoggedRequest] = field(default_factory=list)
    classifier_requests: list[LoggedRequest] = field(default_factory=list)
    other_requests: list[LoggedRequest] = field(default_factory=list)
    host: str = "127.0.0.1"
    port: int = 0
    _server: ThreadingHTTPServer | None = None
    _thread: threading.Thread | None = None
    _lock: threading.Lock = field(default_factory=threading.Lock)

    @property
    def base_url(self) -> str:
        """OpenAI-style base URL (ends in ``/v1``)."""
        return f"http://{self.host}:{self.port}/v1"

    def start(self) -> MockLLM:
        """Bind 127.0.0.1 on a free port and serve in a daemon thread."""
        handler = _make_handler(self)
        self._server = ThreadingHTTPServer((self.host, 0), handler)
        self._server.daemon_threads = True
        self.port = self._server.server_address[1]
        self._thread = threading.Thread(
            target=self._server.serve_forever, name="mock-llm", daemon=True
        )
        self._thread.start()
        return self

    def stop(self) -> None:
        """Stop serving and close the socket."""
        if self._server is not None:
            self._server.shutdown()
            self._server.server_close()
            self._server = None
        if self._thread is not None:
            self._thread.join(timeout=5)
            self._thread = None

    def __enter__(self) -> MockLLM:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    def record(self, kind: str, req: LoggedRequest) -> None:
        with self._lock:
            {
                "primary": self.primary_requests,
                "classifier": self.classifier_requests,
                "other": self.other_requests,
            }[kind].append(req)


def _sse(payload: dict[str, Any] | str) -> bytes:
    data = payload if isinstance(payload, str) else json.dumps(payload)
    return f"data: {data}\n\n".encode()


def _primary_chunks(model: str, reply: PrimaryReply) -> list[bytes]:
    created = int(time.time())
    base = {
        "id": "chatcmpl-mock",
        "object": "chat.completion.chunk",
        "created": created,
        "model": model,
    }

    def chunk(delta: dict[str, Any], finish: str | None = None) -> bytes:
        return _sse({**base, "choices": [{"index": 0, "delta": delta, "finish_reason": finish}]})

    out = [chunk({"role": "assistant", "content": ""})]
    if reply.tool_calls:
        for i, call in enumerate(reply.tool_calls):
            out.append(
                chunk(
                    {
                        "tool_calls": [
                            {
                                "index": i,
                                "id": call.id,
                                "type": "function",
                                "function": {
                                    "name": call.name,
                                    "arguments": json.dumps(call.arguments),
                                },
                            }
                        ]
                    }
                )
            )
        out.append(chunk({}, "tool_calls"))
    else:
        out.append(chunk({"content": reply.text}))
        out.append(chunk({}, "stop"))
    out.append(
        _sse(
            {
                **base,
                "choices": [],
                "usage": {"prompt_tokens": 100, "completion_tokens": 10, "total_tokens": 110},
            }
        )
    )
    out.append(_sse("[DONE]"))
    return out


def _classifier_completion(model: str, reply: ClassifierReply) -> dict[str, Any]:
    content = json.dumps(
        {"tools": list(reply.tools), "confidence": reply.confidence, "reasoning": reply.reasoning}
    )
    return {
        "id": "chatcmpl-mock-classifier",
        "object": "chat.completion",
        "created": int(time.time()),
        "model": model,
        "choices": [
            {
                "index": 0,
                "finish_reason": "stop",
                "message": {"role": "assistant", "content": content},
            }
        ],
        "usage": {"prompt_tokens": 50, "completion_tokens": 20, "total_tokens": 70},
    }


def _make_handler(mock: MockLLM) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def log_message(self, format: str, *args: Any) -> None:
            pass  # keep pytest output clean

        def _reply_json(self, status: int, payload: dict[str, Any]) -> None:
            body = json.dumps(payload).encode()
            self.send_response(status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def do_GET(self) -> None:
            if self.path.rstrip("/").endswith("/models"):
                self._reply_json(
                    200, {"object": "list", "data": [{"id": "mock-model", "object": "model"}]}
                )
                return
            self._reply_json(404, {"error": {"message": "not found"}})

        def do_POST(self) -> None:
            length = int(self.headers.get("Content-Length") or 0)
            raw = self.rfile.read(length) if length else b""
            try:
                body = json.loads(raw or b"{}")
            except json.JSONDecodeError:
                body = {"_unparsed": raw.decode("utf-8", "replace")}
            req = LoggedRequest(
                path=self.path,
                headers={k.lower(): v for k, v in self.headers.items()},
                body=body,
                received_at=time.time(),
                body_bytes=len(raw),
            )
            if not self.path.rstrip("/").endswith("/chat/completions"):
                mock.record("other", req)
                self._reply_json(404, {"error": {"message": f"no route {self.path}"}})
                return
            model = str(body.get("model") or "mock-model")
            is_classifier = req.headers.get(
                "x-openclaw-caller"
            ) == CLASSIFIER_CALLER or not body.get("stream")
            if is_classifier:
                mock.record("classifier", req)
                self._reply_json(200, _classifier_completion(model, mock.classifier_responder(req)))
                return
            mock.record("primary", req)
            chunks = _primary_chunks(model, mock.primary_responder(req))
            self.send_response(200)
            self.send_header("Content-Type", "text/event-stream")
            self.send_header("Cache-Control", "no-cache")
            self.send_header("Connection", "close")
            self.end_headers()
            for c in chunks:
                self.wfile.write(c)
                self.wfile.flush()
            self.close_connection = True

    return Handler
