"""A stand-in for an OpenAI-compatible chat-completions endpoint on loopback, with the faults hosted ones
have: rate limits (429 with ``Retry-After``), server errors, a body that is not JSON, a model reply that
is not the rubric's answer, and stalls. Its "model" answers a judge packet by rules of the packet's own
text (``answer_for``), so the same packet always gets the same answer, and it keeps a bill of the tokens
of every completion it sent.

Used by the judge tests and by ``scripts/judge_faults.py``; a development tool, not part of the package.
Faults fall on first tries by a seeded hash of the request, so a run is the same every time; a retry
of a request is answered.
"""

from __future__ import annotations

import hashlib
import json
import threading
import time
from collections import Counter
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any


@dataclass(frozen=True)
class Faults:
    """Shares of first tries that meet each fault, and how long a stall lasts."""

    rate_limit: float = 0.0  # 429 with Retry-After
    server_error: float = 0.0  # 500
    garbled: float = 0.0  # 200 whose body is not JSON (a proxy's error page)
    prose: float = 0.0  # a completion whose content is not the rubric's answer (billed)
    stall: float = 0.0  # the answer comes after ``stall_seconds``
    stall_seconds: float = 20.0
    retry_after: str = "1"
    seed: str = "faults"

    def pick(self, key: str) -> str | None:
        """The fault a first try with this key meets, if any."""
        roll = int(hashlib.sha256(f"{self.seed}:{key}".encode()).hexdigest()[:8], 16) / 0xFFFFFFFF
        for name in ("rate_limit", "server_error", "garbled", "prose", "stall"):
            share = getattr(self, name)
            if roll < share:
                return name
            roll -= share
        return None


def answer_for(packet: dict[str, Any]) -> dict[str, str]:
    """What the stand-in model answers about a judge packet: a fix whose message says "typo", "docs" or
    "refactor" is no bug fix; a defect marked on a line that holds "TODO" is not reviewable; a clean change
    whose message says "tweak" is no plausible pull request, and one with a later commit is "unsure"."""
    if packet.get("kind") == "bug":
        fix = str(packet.get("fix", {}).get("message", "")).lower()
        lines = " ".join(str(d.get("text", "")) for d in packet.get("defect_lines", []))
        no_fix = any(word in fix for word in ("typo", "docs", "refactor"))
        return {
            "fix_is_bugfix": "no" if no_fix else "yes",
            "defect_in_change": "introduced",
            "lines_right": "yes",
            "reviewable": "no" if "TODO" in lines else "yes",
            "reason": "stand-in",
        }
    message = str(packet.get("message", "")).lower()
    return {
        "plausible_pr": "no" if "tweak" in message else "yes",
        "later_fixed": "unsure" if packet.get("later") else "no",
        "real_defect": "no",
        "reason": "stand-in",
    }


@dataclass
class Endpoint:
    """The running stand-in: its URL, its faults, and what it saw and billed."""

    url: str
    faults: Faults
    respond: Callable[[dict[str, Any]], dict[str, str]] = answer_for
    status: int | None = None  # every request answered with this status instead (e.g. 401, 503)
    requests: int = 0
    inflight: int = 0
    most_inflight: int = 0  # requests answered at the same time, at most
    seen: Counter[str] = field(default_factory=Counter)  # request key -> times asked
    met: Counter[str] = field(default_factory=Counter)  # fault -> times
    billed_input: int = 0
    billed_output: int = 0
    packets: list[dict[str, Any]] = field(default_factory=list)
    lock: threading.Lock = field(default_factory=threading.Lock)


def _reply(handler: BaseHTTPRequestHandler, status: int, body: bytes, headers: dict[str, str] | None = None) -> None:
    handler.send_response(status)
    handler.send_header("Content-Type", "application/json")
    handler.send_header("Content-Length", str(len(body)))
    for name, value in (headers or {}).items():
        handler.send_header(name, value)
    handler.end_headers()
    try:
        handler.wfile.write(body)
    except (BrokenPipeError, ConnectionResetError):  # the client hung up (it timed out): billed all the same
        pass


@contextmanager
def serve(faults: Faults = Faults(), respond: Callable[[dict[str, Any]], dict[str, str]] = answer_for) -> Iterator[Endpoint]:
    """Run the stand-in on loopback for the length of the ``with``."""
    server = ThreadingHTTPServer(("127.0.0.1", 0), BaseHTTPRequestHandler)
    server.daemon_threads = True
    state = Endpoint(url=f"http://127.0.0.1:{server.server_address[1]}/v1", faults=faults, respond=respond)

    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def do_POST(self) -> None:  # noqa: N802 (the name http.server calls)
            with state.lock:
                state.inflight += 1
                state.most_inflight = max(state.most_inflight, state.inflight)
            try:
                self._answer()
            finally:
                with state.lock:
                    state.inflight -= 1

        def _answer(self) -> None:
            raw = self.rfile.read(int(self.headers.get("Content-Length", "0")))
            key = hashlib.sha256(raw).hexdigest()
            with state.lock:
                state.requests += 1
                state.seen[key] += 1
                first = state.seen[key] == 1
                forced = state.status
            if forced is not None:
                _reply(self, forced, json.dumps({"error": {"message": f"forced {forced}"}}).encode())
                return
            fault = state.faults.pick(key) if first else None
            if fault:
                with state.lock:
                    state.met[fault] += 1
            if fault == "rate_limit":
                body = json.dumps({"error": {"message": "Rate limit reached", "type": "rate_limit"}}).encode()
                _reply(self, 429, body, {"Retry-After": state.faults.retry_after})
                return
            if fault == "server_error":
                _reply(self, 500, json.dumps({"error": {"message": "The server had an error"}}).encode())
                return
            if fault == "garbled":
                _reply(self, 200, b"<html><body>502 Bad Gateway</body></html>")
                return
            if fault == "stall":
                time.sleep(state.faults.stall_seconds)
            request = json.loads(raw)
            packet = json.loads(request["messages"][-1]["content"])
            content = "I think this looks fine." if fault == "prose" else json.dumps(state.respond(packet))
            usage = {"prompt_tokens": len(raw) // 4, "completion_tokens": max(1, len(content) // 4)}
            usage["total_tokens"] = usage["prompt_tokens"] + usage["completion_tokens"]
            completion = {
                "id": "chatcmpl-" + key[:12],
                "object": "chat.completion",
                "created": 0,
                "model": request.get("model", "stand-in"),
                "choices": [{"index": 0, "finish_reason": "stop", "message": {"role": "assistant", "content": content}}],
                "usage": usage,
            }
            with state.lock:
                state.billed_input += usage["prompt_tokens"]
                state.billed_output += usage["completion_tokens"]
                state.packets.append(packet)
            _reply(self, 200, json.dumps(completion).encode())

        def log_message(self, format: str, *args: object) -> None:
            pass

    server.RequestHandlerClass = Handler
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield state
    finally:
        server.shutdown()
        server.server_close()
