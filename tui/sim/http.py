"""A tiny threaded HTTP layer: one listener per simulated service, a router, JSON responses, accounting.

Each listener is a stdlib ThreadingHTTPServer on 127.0.0.1 (ephemeral port) in a daemon thread. A listener
can be made to refuse connections (its socket closed, open connections dropped) and reopened on the same
port: that is how the demo injects "Keystone unreachable".
"""

from __future__ import annotations

import contextlib
import json
import re
import socket
import threading
import time
from collections import Counter, deque
from collections.abc import Callable
from dataclasses import dataclass, field
from email.message import Message
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import parse_qs, urlsplit


@dataclass
class Request:
    method: str
    path: str
    query: dict[str, list[str]]
    headers: Message
    body: bytes
    base: str  # http://127.0.0.1:PORT of this listener
    raw_query: str = ""

    def q(self, name: str, default: str | None = None) -> str | None:
        values = self.query.get(name)
        return values[0] if values else default

    def json(self) -> Any:
        return json.loads(self.body or b"null")


@dataclass
class Response:
    status: int = 200
    body: bytes = b""
    content_type: str = "application/json"
    headers: list[tuple[str, str]] = field(default_factory=list)


def json_response(obj: Any, status: int = 200, headers: list[tuple[str, str]] | None = None) -> Response:
    return Response(status, json.dumps(obj).encode(), headers=list(headers or []))


def raw_json(body: bytes, status: int = 200, headers: list[tuple[str, str]] | None = None) -> Response:
    return Response(status, body, headers=list(headers or []))


Handler = Callable[..., Response]


class Router:
    """Regex routes: `add("GET", r"/v2.1/servers/(?P<sid>[^/]+)", fn)`; fn(req, **groups) -> Response."""

    def __init__(self) -> None:
        self.routes: list[tuple[str, re.Pattern[str], Handler]] = []

    def add(self, method: str, pattern: str, fn: Handler) -> None:
        self.routes.append((method, re.compile(pattern), fn))

    def __call__(self, req: Request) -> Response:
        path = req.path.rstrip("/") or "/"
        allowed = False
        for method, rx, fn in self.routes:
            m = rx.fullmatch(path)
            if m:
                if method == req.method or (method == "GET" and req.method == "HEAD"):
                    return fn(req, **m.groupdict())
                allowed = True
        if allowed:
            return json_response({"error": {"code": 405, "message": "Method Not Allowed"}}, 405)
        return json_response({"error": {"code": 404, "message": f"The resource could not be found: {path}"}},
                             404)


class Stats:
    """Requests served, bytes, and server CPU (thread time) per service: what the sim itself costs."""

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.requests: Counter[str] = Counter()
        self.bytes: Counter[str] = Counter()
        self.cpu: Counter[str] = Counter()
        self.log: deque[tuple[str, str, str, int, int]] = deque(maxlen=20000)

    def record(self, service: str, method: str, target: str, status: int, size: int, cpu: float) -> None:
        with self.lock:
            self.requests[service] += 1
            self.bytes[service] += size
            self.cpu[service] += cpu
            self.log.append((service, method, target, status, size))

    def add_cpu(self, service: str, cpu: float) -> None:
        with self.lock:
            self.cpu[service] += cpu

    def snapshot(self) -> dict[str, Any]:
        with self.lock:
            return {"requests": dict(self.requests), "bytes": dict(self.bytes),
                    "cpu_s": {k: round(v, 4) for k, v in self.cpu.items()}}

    def matching(self, service: str, path_prefix: str) -> list[tuple[str, str, str, int, int]]:
        with self.lock:
            return [e for e in self.log if e[0] == service and e[2].startswith(path_prefix)]

    def reset(self) -> None:
        with self.lock:
            self.requests.clear()
            self.bytes.clear()
            self.cpu.clear()
            self.log.clear()


class _Server(ThreadingHTTPServer):
    daemon_threads = True
    allow_reuse_address = True

    def __init__(self, addr: tuple[str, int], listener: Listener) -> None:
        self.listener = listener
        super().__init__(addr, _Handler)


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    disable_nagle_algorithm = True  # headers and body are separate writes: avoid 40 ms delayed-ACK stalls
    server: _Server

    def log_message(self, format: str, *args: Any) -> None:
        return None

    def setup(self) -> None:
        super().setup()
        self.server.listener._track(self.connection, True)

    def finish(self) -> None:
        try:
            super().finish()
        finally:
            self.server.listener._track(self.connection, False)

    def _serve(self) -> None:
        listener = self.server.listener
        cpu0 = time.thread_time()
        length = int(self.headers.get("Content-Length") or 0)
        body = self.rfile.read(length) if length else b""
        parts = urlsplit(self.path)
        req = Request(self.command, parts.path, parse_qs(parts.query, keep_blank_values=True), self.headers,
                      body, listener.base, parts.query)
        try:
            resp = listener.app(req)
        except Exception as exc:  # the sim must answer, not hang the client
            resp = json_response({"error": {"code": 500, "message": f"simulator error: {exc!r}"}}, 500)
        self.send_response(resp.status)
        self.send_header("Content-Type", resp.content_type)
        self.send_header("Content-Length", str(len(resp.body)))
        for k, v in resp.headers:
            self.send_header(k, v)
        # accounted before the body goes out: a client that got its answer finds its request counted
        listener.stats.record(listener.name, self.command, self.path, resp.status, len(resp.body),
                              time.thread_time() - cpu0)
        cpu1 = time.thread_time()
        self.end_headers()
        if self.command != "HEAD":
            self.wfile.write(resp.body)
        listener.stats.add_cpu(listener.name, time.thread_time() - cpu1)

    do_GET = do_POST = do_PUT = do_DELETE = do_HEAD = do_PATCH = _serve


class Listener:
    """One service's HTTP endpoint on 127.0.0.1."""

    def __init__(self, name: str, app: Callable[[Request], Response], stats: Stats) -> None:
        self.name = name
        self.app = app
        self.stats = stats
        self.port = 0
        self._server: _Server | None = None
        self._thread: threading.Thread | None = None
        self._conns: set[socket.socket] = set()
        self._lock = threading.Lock()

    @property
    def base(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    @property
    def refusing(self) -> bool:
        return self._server is None

    def start(self) -> int:
        if self._server is not None:
            return self.port
        self._server = _Server(("127.0.0.1", self.port), self)
        self.port = self._server.server_address[1]
        self._thread = threading.Thread(target=self._server.serve_forever, kwargs={"poll_interval": 0.05},
                                        name=f"sim-{self.name}", daemon=True)
        self._thread.start()
        return self.port

    def stop(self) -> None:
        """Close the socket (new connections are refused) and drop open keep-alive connections."""
        server, self._server = self._server, None
        if server is None:
            return
        server.shutdown()
        server.server_close()
        with self._lock:
            conns = list(self._conns)
        for c in conns:
            with contextlib.suppress(OSError):
                c.shutdown(socket.SHUT_RDWR)

    def _track(self, conn: socket.socket, add: bool) -> None:
        with self._lock:
            if add:
                self._conns.add(conn)
            else:
                self._conns.discard(conn)
