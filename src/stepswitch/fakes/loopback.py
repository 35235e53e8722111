"""A small HTTP server on 127.0.0.1 that answers with scripted replies and injects faults.

Tests, `ssw demo` and the benchmarks talk to it through the real HTTP client and codecs.
Each reply goes out in one write with TCP_NODELAY, so Nagle/delayed-ACK stalls do not
swamp what is measured.
"""

from __future__ import annotations

import json
import socket
import struct
import threading
from collections.abc import Callable
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any


@dataclass(frozen=True)
class Reply:
    status: int = 200
    body: Any = b""  # bytes, str, or a JSON-able object
    headers: dict[str, str] = field(default_factory=dict)
    delay_s: float = 0.0  # wait before answering (a slow provider)
    reset: bool = False  # drop the connection with a TCP reset instead of answering
    truncate_to: int | None = None  # announce the full length, send only this many bytes
    sse: list[str] | None = None  # send these `data:` payloads as a text/event-stream
    sse_gap_s: float = 0.0  # wait between stream events

    def payload(self) -> bytes:
        if isinstance(self.body, bytes):
            return self.body
        if isinstance(self.body, str):
            return self.body.encode()
        return json.dumps(self.body).encode()


@dataclass(frozen=True)
class RecordedRequest:
    method: str
    path: str
    headers: dict[str, str]
    body: bytes

    def json(self) -> Any:
        return json.loads(self.body)


Responder = Callable[[RecordedRequest], Reply]


class ReplyQueue:
    """Answers requests with the given replies in order; the last one repeats."""

    def __init__(self, replies: list[Reply]) -> None:
        if not replies:
            raise ValueError("a ReplyQueue needs at least one reply")
        self._replies = list(replies)
        self._lock = threading.Lock()

    def __call__(self, request: RecordedRequest) -> Reply:
        with self._lock:
            return self._replies.pop(0) if len(self._replies) > 1 else self._replies[0]


class _Handler(BaseHTTPRequestHandler):
    server: _Server
    protocol_version = "HTTP/1.1"

    def log_message(self, format: str, *args: Any) -> None:  # keep test output quiet
        return

    def setup(self) -> None:
        super().setup()
        self.connection.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)

    def _handle(self) -> None:
        length = int(self.headers.get("Content-Length") or 0)
        body = self.rfile.read(length) if length else b""
        recorded = RecordedRequest(
            self.command, self.path, {k.lower(): v for k, v in self.headers.items()}, body
        )
        self.server.recorded.append(recorded)
        reply = self.server.responder(recorded)
        if reply.delay_s and self.server.stopping.wait(reply.delay_s):
            return
        if reply.reset:
            # SO_LINGER 0 makes close() send RST: the client sees a connection reset.
            self.connection.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
            self.close_connection = True
            return
        if reply.sse is not None:
            self._send_stream(reply)
            return
        payload = reply.payload()
        sent = payload if reply.truncate_to is None else payload[: reply.truncate_to]
        head = [f"HTTP/1.1 {reply.status} {_reason(reply.status)}"]
        headers = {"Content-Type": "application/json", **reply.headers}
        headers["Content-Length"] = str(len(payload))
        head += [f"{k}: {v}" for k, v in headers.items()]
        self.wfile.write(("\r\n".join(head) + "\r\n\r\n").encode() + sent)
        self.wfile.flush()
        if reply.truncate_to is not None:
            self.close_connection = True

    def _send_stream(self, reply: Reply) -> None:
        head = [f"HTTP/1.1 {reply.status} {_reason(reply.status)}"]
        headers = {"Content-Type": "text/event-stream", **reply.headers, "Connection": "close"}
        head += [f"{k}: {v}" for k, v in headers.items()]
        self.wfile.write(("\r\n".join(head) + "\r\n\r\n").encode())
        for event in reply.sse or []:
            if reply.sse_gap_s and self.server.stopping.wait(reply.sse_gap_s):
                return
            self.wfile.write(
                f"{event}\n\n".encode()
                if event.startswith(("data:", "event:"))
                else f"data: {event}\n\n".encode()
            )
            self.wfile.flush()
        self.close_connection = True

    do_POST = _handle
    do_GET = _handle


def _reason(status: int) -> str:
    from http import HTTPStatus

    try:
        return HTTPStatus(status).phrase
    except ValueError:
        return "Status"


class _Server(ThreadingHTTPServer):
    daemon_threads = True
    allow_reuse_address = True

    def __init__(self, responder: Responder) -> None:
        super().__init__(("127.0.0.1", 0), _Handler)
        self.responder = responder
        self.recorded: list[RecordedRequest] = []
        self.stopping = threading.Event()


class LoopbackServer:
    """`with LoopbackServer(responder) as server:` then point a client at `server.base_url`."""

    def __init__(self, responder: Responder, path_prefix: str = "/v1/") -> None:
        self._server = _Server(responder)
        self._thread = threading.Thread(
            target=self._server.serve_forever, kwargs={"poll_interval": 0.02}, daemon=True
        )
        self.base_url = f"http://127.0.0.1:{self._server.server_address[1]}{path_prefix}"

    @property
    def requests(self) -> list[RecordedRequest]:
        return self._server.recorded

    def start(self) -> LoopbackServer:
        self._thread.start()
        return self

    def stop(self) -> None:
        self._server.stopping.set()
        self._server.shutdown()
        self._server.server_close()

    def __enter__(self) -> LoopbackServer:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()
