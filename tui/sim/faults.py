"""Fault injection for the simulated cloud: what breaks, per service, until cleared.

    faults = Faults(demo)                   # hooks every listener of a running Demo
    faults.set("nova", "hang")              # keystone nova neutron cinder placement rabbitmq (or listener names)
    faults.clear("nova"); faults.clear()    # one service / everything

HTTP faults (FAULTS):
- refused       the listener closes its socket: connections are refused;
- hang          the request is read and never answered (until the fault is cleared: then the connection drops);
- 401 403 500   an error answer in the service's own JSON error shape;
- malformed     200, JSON content type, a body that is not JSON;
- truncated     200, the real answer cut in half (a complete HTTP message whose JSON stops mid-way);
- cut           200, Content-Length of the real answer but the connection closes half-way through the body;
- content_type  200 text/html (a proxy's or a login page), not the API;
- shape         200, valid JSON of the wrong shape (`{"unexpected": true}`: no list where a listing needs one);
- trickle       the real answer (status line, headers, body) sent one byte every TRICKLE_INTERVAL_S (0.5 s): a
                read timeout per socket operation never fires, only an overall deadline ends it;
- huge          200 JSON, a body of HUGE_BYTES (50 MB) streamed chunked without a Content-Length: only a body
                size cap that counts bytes as they come refuses it before it is all in memory;
- redirect      307 to the same URL (marked `stacktop-hop=1`), whose answer then trickles: a redirect must
                not escape the deadline;
- tls           the endpoint serves a self-signed certificate nobody trusts (needs a certificate pair served
                first, `tests.testbed.faults.TlsKit.serve`: the endpoint is https with a certificate the client
                trusts; the fault swaps in an untrusted one, clearing it swaps the trusted one back).

Galera faults go through the collector's connector seam: `FaultyGaleraConnector(demo.galera_connector, f)` and
`f.set_node(address, kind)` with kinds GALERA_FAULTS (pymysql's real error numbers).

This module stays in the package because bench/soak.py injects these faults into a simulator child process;
the TLS certificates (TlsKit: made with `cryptography`, which stacktop does not depend on), the misbehaving AMQP
endpoints and the MySQL wire endpoint serve only the tests and live in tests/testbed.

Every faulted request is still recorded in the demo's Stats (method, path), so read-only proofs see them.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import ssl
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Protocol

from tui.sim.http import DROPPED, Listener, Request, Response

FAULTS = ("refused", "hang", "401", "403", "500", "malformed", "truncated", "cut", "content_type", "shape", "tls",
          "trickle", "huge", "redirect")
TRICKLE_INTERVAL_S = 0.5
HUGE_BYTES = 50 * 1024 * 1024
HOP_MARK = "stacktop-hop=1"
SERVICES = {"keystone": "identity", "nova": "compute", "neutron": "network", "cinder": "volume",
            "placement": "placement", "rabbitmq": "rabbitmq", "glance": "image"}
GALERA_FAULTS = ("refused", "hang", "auth", "denied", "not_ready", "lost", "malformed")
HANG_MAX_S = 600.0


def listener_name(service: str) -> str:
    return SERVICES.get(service, service)


def _error_body(listener: str, status: int) -> bytes:
    title = {401: "Unauthorized", 403: "Forbidden", 500: "Internal Server Error"}[status]
    message = {401: "The request you have made requires authentication.",
               403: "Policy doesn't allow this operation to be performed.",
               500: "An unexpected error prevented the server from fulfilling your request."}[status]
    if listener == "rabbitmq":
        body: Any = {"error": title.lower().replace(" ", "_"), "reason": message}
    elif listener == "placement":
        body = {"errors": [{"status": status, "title": title, "detail": message}]}
    elif listener == "network":
        body = {"NeutronError": {"type": title.replace(" ", ""), "message": message, "detail": ""}}
    elif listener == "identity":
        body = {"error": {"code": status, "title": title, "message": message}}
    else:  # nova, cinder
        key = {401: "unauthorized", 403: "forbidden", 500: "computeFault"}[status]
        body = {key: {"code": status, "message": message}}
    return json.dumps(body).encode()


class TlsPair(Protocol):
    """The two server certificates the `tls` fault swaps between (tests.testbed.faults.TlsKit)."""

    trusted: ssl.SSLContext
    untrusted: ssl.SSLContext


@dataclass
class _Active:
    kind: str
    since: float


class Faults:
    """The faults in force on one Demo's listeners (thread-safe: tests set them from their own thread)."""

    def __init__(self, demo: Any) -> None:
        self.demo = demo
        self._lock = threading.Lock()
        self._active: dict[str, _Active] = {}
        self.tls: dict[str, TlsPair] = {}  # listener -> its certificates, once served over https
        self.trickling = 0  # connections being answered by `trickle` / `redirect` now (the client has not left)
        for listener in demo.listeners.values():
            listener.fault = self._hook

    def active(self, service: str) -> str | None:
        with self._lock:
            a = self._active.get(listener_name(service))
        return a.kind if a else None

    def set(self, service: str, kind: str) -> None:
        name = listener_name(service)
        if kind not in FAULTS:
            raise ValueError(f"unknown fault {kind!r}: one of {', '.join(FAULTS)}")
        if name not in self.demo.listeners:
            raise ValueError(f"unknown service {service!r}: one of {', '.join(SERVICES)}")
        self.clear(service)
        listener: Listener = self.demo.listeners[name]
        if kind == "tls":
            kit = self.tls.get(name)
            if kit is None:
                raise ValueError(f"{service}: serve it over https first (TlsKit.serve) (the endpoint must be https)")
            restart_listener(listener, kit.untrusted)
        with self._lock:
            self._active[name] = _Active(kind, time.monotonic())
        if kind == "refused":
            listener.stop()

    def clear(self, service: str | None = None) -> None:
        names = [listener_name(service)] if service else list(self.demo.listeners)
        for name in names:
            with self._lock:
                active = self._active.pop(name, None)
            if active is None:
                continue
            listener: Listener = self.demo.listeners[name]
            if active.kind == "refused":
                listener.start()
            elif active.kind == "tls":
                restart_listener(listener, self.tls[name].trusted)

    # -- the listener hook (runs on the simulator's event loop)
    async def _hook(self, listener: Listener, req: Request, target: str, writer: asyncio.StreamWriter) -> Any:
        with self._lock:
            active = self._active.get(listener.name)
        if active is None or active.kind in ("refused", "tls"):
            return None
        kind = active.kind
        if kind == "hang":
            listener.stats.record(listener.name, req.method, target, 0, 0, 0.0)
            deadline = time.monotonic() + HANG_MAX_S
            while self.active(listener.name) == "hang" and not listener.refusing and time.monotonic() < deadline:
                await asyncio.sleep(0.05)
            return DROPPED
        if kind == "redirect" and HOP_MARK not in target:
            location = f"{listener.base}{target}{'&' if '?' in target else '?'}{HOP_MARK}"
            return Response(307, b"", headers=[("Location", location)])
        if kind in ("trickle", "redirect"):
            await self._trickle(listener, req, target, writer)
            return DROPPED
        if kind == "huge":
            await self._huge(listener, req, target, writer)
            return DROPPED
        if kind in ("401", "403", "500"):
            status = int(kind)
            return Response(status, _error_body(listener.name, status))
        if kind == "malformed":
            return Response(200, b'{"oops": [1, 2,, <html>')
        if kind == "shape":
            return Response(200, b'{"unexpected": true}')
        if kind == "content_type":
            return Response(200, b"<html><head><title>Sign in</title></head><body>proxy login</body></html>",
                            content_type="text/html; charset=utf-8")
        real = listener.app(req)
        body = real.body if len(real.body) > 1 else b'{"x": 1}'
        half = body[: max(1, len(body) // 2)]
        if kind == "truncated":
            return Response(200, half, headers=[h for h in real.headers if h[0].lower() != "content-length"])
        # cut: promise the whole body, send half, drop the connection
        listener.stats.record(listener.name, req.method, target, 200, len(half), 0.0)
        head = (f"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: {len(body)}\r\n"
                f"Connection: keep-alive\r\n\r\n").encode("latin-1")
        with contextlib.suppress(ConnectionError, OSError):
            writer.write(head + half)
            await writer.drain()
        return DROPPED


    async def _trickle(self, listener: Listener, req: Request, target: str, writer: asyncio.StreamWriter) -> None:
        """The real answer, one byte every TRICKLE_INTERVAL_S, until sent, the client leaves or the fault ends."""
        real = listener.app(req)
        kind = self.active(listener.name)
        listener.stats.record(listener.name, req.method, target, real.status, len(real.body), 0.0)
        head = [f"HTTP/1.1 {real.status} OK", f"Content-Type: {real.content_type}",
                f"Content-Length: {len(real.body)}", "Connection: close"]
        head += [f"{k}: {v}" for k, v in real.headers]
        payload = ("\r\n".join(head) + "\r\n\r\n").encode("latin-1") + real.body
        with self._lock:
            self.trickling += 1
        try:
            with contextlib.suppress(ConnectionError, OSError):
                for i in range(len(payload)):
                    if self.active(listener.name) != kind or listener.refusing or writer.is_closing():
                        return
                    writer.write(payload[i:i + 1])
                    await writer.drain()
                    await asyncio.sleep(TRICKLE_INTERVAL_S)
        finally:
            with self._lock:
                self.trickling -= 1

    async def _huge(self, listener: Listener, req: Request, target: str, writer: asyncio.StreamWriter) -> None:
        """HUGE_BYTES of JSON whitespace then an object, chunked, no Content-Length; ends when the client leaves."""
        listener.stats.record(listener.name, req.method, target, 200, HUGE_BYTES, 0.0)
        chunk = b" " * 65536
        frame = b"%x\r\n%s\r\n" % (len(chunk), chunk)
        with contextlib.suppress(ConnectionError, OSError):
            writer.write(b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\n"
                         b"Connection: close\r\n\r\n")
            for _ in range(HUGE_BYTES // len(chunk)):
                if self.active(listener.name) != "huge" or listener.refusing or writer.is_closing():
                    return
                writer.write(frame)
                await writer.drain()
            tail = b"{}"
            writer.write(b"%x\r\n%s\r\n0\r\n\r\n" % (len(tail), tail))
            await writer.drain()


def restart_listener(listener: Listener, ctx: ssl.SSLContext | None) -> None:
    """Serve on the same port with another TLS context (open connections are dropped)."""
    listener.stop()
    listener.ssl = ctx
    listener.start()


# ------------------------------------------------------------------------------------------------- Galera
class FaultyGaleraConnector:
    """Wraps a Galera connector (the collector's seam); per node address, a fault from GALERA_FAULTS."""

    def __init__(self, inner: Callable[..., Any]) -> None:
        self.inner = inner
        self._lock = threading.Lock()
        self._node: dict[str, str] = {}

    def set_node(self, address: str, kind: str) -> None:
        if kind not in GALERA_FAULTS:
            raise ValueError(f"unknown Galera fault {kind!r}: one of {', '.join(GALERA_FAULTS)}")
        with self._lock:
            self._node[address] = kind

    def clear(self, address: str | None = None) -> None:
        with self._lock:
            if address is None:
                self._node.clear()
            else:
                self._node.pop(address, None)

    def fault(self, address: str) -> str | None:
        with self._lock:
            return self._node.get(address)

    def _raise(self, address: str, kind: str, timeout: float, when: str) -> None:
        import pymysql.err as err

        host = address.rsplit(":", 1)[0]
        if kind == "refused":
            if when == "connect":
                raise err.OperationalError(2003, f"Can't connect to MySQL server on '{host}' ([Errno 111] "
                                                 "Connection refused)")
            raise err.OperationalError(2013, "Lost connection to MySQL server during query")
        if kind == "hang":
            end = time.monotonic() + timeout
            while time.monotonic() < end and self.fault(address) == "hang":
                time.sleep(0.02)
            raise err.OperationalError(2013, f"Lost connection to MySQL server during query (timed out after "
                                             f"{timeout:g}s)")
        if kind == "auth":
            raise err.OperationalError(1045, "Access denied for user 'monitor'@'127.0.0.1' (using password: YES)")
        if kind == "denied":
            raise err.OperationalError(1227, "Access denied; you need (at least one of) the PROCESS privilege(s) "
                                             "for this operation")
        if kind == "not_ready":
            raise err.OperationalError(1047, "WSREP has not yet prepared node for application use")
        raise err.OperationalError(2013, "Lost connection to MySQL server during query")

    def __call__(self, address: str, user: str, password: str | None, timeout: float = 5.0) -> Any:
        kind = self.fault(address)
        if kind in ("refused", "hang", "auth"):
            self._raise(address, kind, timeout, "connect")
        return _FaultyConnection(self, address, self.inner(address, user, password, timeout), timeout)


class _FaultyConnection:
    def __init__(self, owner: FaultyGaleraConnector, address: str, inner: Any, timeout: float) -> None:
        self.owner, self.address, self.inner, self.timeout = owner, address, inner, timeout

    def query(self, sql: str) -> list[tuple[Any, ...]]:
        kind = self.owner.fault(self.address)
        if kind is None:
            return list(self.inner.query(sql))
        if kind == "malformed":
            return [("wsrep_cluster_size",), (None, None, None), (b"\xff\xfe", 3.5), "not a row"]  # type: ignore[list-item]
        self.owner._raise(self.address, kind, self.timeout, "query")
        raise AssertionError("unreachable")

    def close(self) -> None:
        self.inner.close()
