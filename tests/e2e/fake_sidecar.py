"""A stand-in for ``python -m resolver.hosts.openclaw``, to test the JS extension alone.

It speaks the stdio protocol of ``docs/openclaw-protocol.md`` and misbehaves on request.
Selected by environment variables (set by the e2e fixtures):

``FAKE_SIDECAR_MODE``
    ``fixed`` (default)   answer ``resolve`` with ``FAKE_SIDECAR_TOOLS`` (JSON; ``null`` abstains)
    ``hang``              answer ``configure``, then never answer ``resolve`` (keep reading)
    ``hang_start``        read nothing, answer nothing, sleep forever
    ``crash``             exit 3 at start, before reading anything
    ``crash_on_resolve``  answer ``configure``, exit 4 on the first ``resolve``
    ``garbage``           answer every request with a line that is not JSON
    ``bad_result``        answer ``resolve`` with ``FAKE_SIDECAR_TOOLS`` as-is (no checks), so a
                          test can send a malformed ``toolsAllow`` such as ``"read"`` or ``[1]``
    ``error``             answer ``resolve`` with an error frame
    ``configure_error``   answer ``configure`` with an error frame, then ``resolve`` as ``fixed``
    ``exit_after_resolve`` answer ``resolve`` as ``fixed``, then exit 0 at once
    ``wrong_id``          answer ``resolve`` with a frame whose id is the number 5 (breaks the
                          id rule: ids are strings)
``FAKE_SIDECAR_TOOLS``
    JSON value for ``toolsAllow`` (default ``["read", "web_search"]``).
``FAKE_SIDECAR_LOG``
    If set, every request frame received is appended there as one JSON line, plus one
    ``{"event": "start", "pid": ..., "argv": [...]}`` line at start, so tests can check what
    the extension sent (``configure`` first, ``resolve`` params, ``observe_*`` calls).
``FAKE_SIDECAR_DELAY_MS``
    Delay before answering ``resolve`` (default 0).

Requests are handled one at a time, in order. Only the standard library is used.
"""

from __future__ import annotations

import json
import os
import sys
import time
from typing import Any

MODE = os.environ.get("FAKE_SIDECAR_MODE", "fixed")
LOG = os.environ.get("FAKE_SIDECAR_LOG")
TOOLS: Any = json.loads(os.environ.get("FAKE_SIDECAR_TOOLS", '["read", "web_search"]'))
DELAY_S = int(os.environ.get("FAKE_SIDECAR_DELAY_MS", "0")) / 1000


def log(record: dict[str, Any]) -> None:
    if not LOG:
        return
    with open(LOG, "a", encoding="utf-8") as fh:
        fh.write(json.dumps(record) + "\n")


def send(frame: dict[str, Any]) -> None:
    sys.stdout.write(json.dumps(frame) + "\n")
    sys.stdout.flush()


def handle(req: dict[str, Any]) -> None:
    rid, method = req.get("id"), req.get("method")
    if MODE == "garbage":
        sys.stdout.write("this is not a frame\n")
        sys.stdout.flush()
        return
    if method == "configure":
        if MODE == "configure_error":
            send({"id": rid, "error": {"code": "invalid_config", "message": "llmTimeoutMs: bad"}})
        else:
            send({"id": rid, "result": {"ok": True}})
    elif method == "resolve":
        if MODE == "hang":
            return  # never answer; keep reading
        if MODE == "crash_on_resolve":
            print("fake sidecar: crashing on resolve", file=sys.stderr, flush=True)
            os._exit(4)
        if DELAY_S:
            time.sleep(DELAY_S)
        if MODE == "error":
            send({"id": rid, "error": {"code": "internal", "message": "fake failure"}})
        elif MODE == "wrong_id":
            send({"id": 5, "result": {"toolsAllow": TOOLS}})  # breaks the id rule
        elif MODE == "bad_result":
            send({"id": rid, "result": {"toolsAllow": TOOLS, "source": "fake"}})
        else:
            send(
                {
                    "id": rid,
                    "result": {
                        "toolsAllow": TOOLS,
                        "source": "fake",
                        "reasonCodes": ["llm_selected"],
                    },
                }
            )
            if MODE == "exit_after_resolve":
                os._exit(0)
    elif method == "observe_surface":
        send({"id": rid, "result": {"known": len(req.get("params", {}).get("tools") or [])}})
    elif method in ("observe_tool_calls", "refresh"):
        send({"id": rid, "result": {"ok": True}})
    elif method == "clear_reuse":
        send({"id": rid, "result": {"ok": True, "cleared": 1}})
    elif method == "ping":
        send({"id": rid, "result": {"pong": True}})
    else:
        send({"id": rid, "error": {"code": "unknown_method", "message": str(method)}})


def main() -> int:
    log({"event": "start", "pid": os.getpid(), "argv": sys.argv, "mode": MODE})
    if MODE == "crash":
        print("fake sidecar: crashing at start", file=sys.stderr, flush=True)
        return 3
    if MODE == "hang_start":
        while True:
            time.sleep(3600)
    for line in sys.stdin:
        line = line.strip()
        if not line:
            continue
        try:
            req = json.loads(line)
        except json.JSONDecodeError:
            print(f"fake sidecar: bad frame {line[:80]!r}", file=sys.stderr, flush=True)
            continue
        log({"event": "request", "t": time.time(), **req})
        handle(req)
    log({"event": "eof"})
    return 0


if __name__ == "__main__":
    sys.exit(main())
