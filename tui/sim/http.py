"""A tiny HTTP layer for the simulator: one listener per simulated service, a router, JSON responses, accounting.

Each listener is an asyncio server on 127.0.0.1 (ephemeral port); one event loop in one daemon thread serves
them all (stdlib only). A listener can be made to refuse connections (its socket closed, open connections
dropped) and reopened on the same port: that is how the demo injects "Keystone unreachable".
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import re
import socket
import threading
import time
from collections import Counter, deque
from collections.abc import Callable
from dataclasses import dataclass, field
from email.utils import formatdate
from http import HTTPStatus
from typing import Any
from urllib.parse import parse_qs, urlsplit


@dataclass
class Request:
    method: str
    path: str
    query: dict[str, list[str]]
    headers: Headers
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
DROPPED = Response(status=0)  # returned by a fault hook that already dealt with the connection: close it


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


class Headers:
    """Case-insensitive request headers (what handlers read with .get)."""

    def __init__(self, items: list[tuple[str, str]]) -> None:
        self._d = {k.lower(): v for k, v in items}

    def get(self, name: str, default: str | None = None) -> str | None:
        return self._d.get(name.lower(), default)


class _Loop:
    """An asyncio event loop in a daemon thread serves listeners: no thread per connection, so many
    concurrent keep-alive clients do not turn into a GIL convoy. The simulated services share one loop;
    the control API has its own (its handlers start and stop the services' listeners and wait for that)."""

    _lock = threading.Lock()
    _loops: dict[str, asyncio.AbstractEventLoop] = {}

    @classmethod
    def get(cls, name: str = "sim") -> asyncio.AbstractEventLoop:
        with cls._lock:
            loop = cls._loops.get(name)
            if loop is None or loop.is_closed():
                loop = asyncio.new_event_loop()
                threading.Thread(target=loop.run_forever, name=f"stacktop-{name}-http", daemon=True).start()
                cls._loops[name] = loop
            return loop


class Listener:
    """One service's HTTP/1.1 endpoint on 127.0.0.1 (keep-alive, Content-Length bodies)."""

    def __init__(self, name: str, app: Callable[[Request], Response], stats: Stats, loop: str = "sim",
                 clock: Callable[[], float] = time.time) -> None:
        self.name = name
        # fault injection (tui.sim.faults): an async hook run before the app, and the TLS context to serve with
        self.fault: Callable[..., Any] | None = None
        self.ssl: Any = None
        self.loop_name = loop
        self.clock = clock  # the Date header says the sim's time (collectors age heartbeats by it)
        self.app = app
        self.stats = stats
        self.port = 0
        self._server: asyncio.base_events.Server | None = None
        self._writers: set[asyncio.StreamWriter] = set()

    @property
    def base(self) -> str:
        return f"{'https' if self.ssl is not None else 'http'}://127.0.0.1:{self.port}"

    @property
    def refusing(self) -> bool:
        return self._server is None

    def start(self) -> int:
        if self._server is None:
            asyncio.run_coroutine_threadsafe(self._start(), _Loop.get(self.loop_name)).result(10)
        return self.port

    def stop(self) -> None:
        """Close the socket (new connections are refused) and drop open keep-alive connections."""
        if self._server is not None:
            asyncio.run_coroutine_threadsafe(self._stop(), _Loop.get(self.loop_name)).result(10)

    async def _start(self) -> None:
        self._server = await asyncio.start_server(self._client, "127.0.0.1", self.port, reuse_address=True,
                                                  limit=1 << 20, ssl=self.ssl)
        self.port = self._server.sockets[0].getsockname()[1]

    async def _stop(self) -> None:
        server, self._server = self._server, None
        if server is None:
            return
        server.close()
        for w in list(self._writers):
            w.close()
        self._writers.clear()

    async def _client(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        self._writers.add(writer)
        sock = writer.get_extra_info("socket")
        if sock is not None:
            with contextlib.suppress(OSError):
                sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        try:
            while self._server is not None:
                try:
                    head = await reader.readuntil(b"\r\n\r\n")
                except (asyncio.IncompleteReadError, asyncio.LimitOverrunError, ConnectionError):
                    return
                cpu0 = time.thread_time()
                lines = head.decode("latin-1").split("\r\n")
                try:
                    method, target, version = lines[0].split(" ", 2)
                except ValueError:
                    return
                items = [(k.strip(), v.strip()) for k, _, v in (ln.partition(":") for ln in lines[1:] if ln)]
                headers = Headers(items)
                length = int(headers.get("Content-Length") or 0)
                body = await reader.readexactly(length) if length else b""
                parts = urlsplit(target)
                req = Request(method, parts.path, parse_qs(parts.query, keep_blank_values=True), headers,
                              body, self.base, parts.query)
                resp = await self.fault(self, req, target, writer) if self.fault is not None else None
                if resp is DROPPED:  # the fault answered (or not) by itself and dropped the connection
                    return
                try:
                    resp = resp or self.app(req)
                except Exception as exc:  # the sim must answer, not hang the client
                    resp = json_response({"error": {"code": 500, "message": f"simulator error: {exc!r}"}}, 500)
                close = version == "HTTP/1.0" or (headers.get("Connection") or "").lower() == "close"
                out = [f"HTTP/1.1 {resp.status} {_phrase(resp.status)}", f"Content-Type: {resp.content_type}",
                       f"Content-Length: {len(resp.body)}", f"Date: {formatdate(self.clock(), usegmt=True)}",
                       f"Connection: {'close' if close else 'keep-alive'}"]
                out += [f"{k}: {v}" for k, v in resp.headers]
                payload = ("\r\n".join(out) + "\r\n\r\n").encode("latin-1")
                self.stats.record(self.name, method, target, resp.status, len(resp.body), time.thread_time() - cpu0)
                cpu1 = time.thread_time()
                writer.write(payload + resp.body if method != "HEAD" else payload)
                self.stats.add_cpu(self.name, time.thread_time() - cpu1)
                await writer.drain()
                if close:
                    return
        except (ConnectionError, OSError):
            return
        finally:
            self._writers.discard(writer)
            writer.close()


def _phrase(status: int) -> str:
    try:
        return HTTPStatus(status).phrase
    except ValueError:
        return "Unknown"
