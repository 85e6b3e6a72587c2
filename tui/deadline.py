"""Overall deadlines and a body size cap for every HTTP read (issue #22, hostile input).

Why: httpx's and requests' timeouts are per socket operation. A server that trickles its answer (one byte
every 0.5 s) never trips them, so a read could last forever; and a body is read whole into memory before
anything looks at its size. Here every request runs under a deadline that covers connect, headers and body,
and every body is streamed, counted and refused past a cap before it is decoded.

- `scope(seconds)`: the calling thread's deadline (nested scopes keep the earlier one, so the hops of a
  redirect share their first request's deadline).
- httpx (the light OpenStack client, the RabbitMQ management API): `install_httpx(client)` puts a network
  backend under the client's connection pool whose every connect, read and write is given at most the time
  left; `read_httpx(response, ...)` streams the body under the cap.
- any other socket client (pymysql): `guard(seconds)` around the work, `register_abort(fn)` by the client
  before each blocking step; the watchdog calls fn (which shuts the client's socket down) at the deadline.
- requests (openstacksdk / keystoneauth): `guard_requests_session(session, ...)` wraps each adapter's
  `send`: a watchdog shuts the request's sockets down at the deadline (a blocked read then ends at once),
  and the body is read under the cap before requests decodes it.
Failures are SourceErrors with one line: `DeadlineExceeded` (its class name says timeout to
tui.openstack.errors.is_timeout) and `BodyTooLarge`.
"""

from __future__ import annotations

import contextlib
import heapq
import itertools
import socket
import threading
import time
import zlib
from collections.abc import Callable, Iterator
from typing import Any

from tui.errors import SourceError

MB = 1024 * 1024
CHUNK = 64 * 1024
_local = threading.local()


class DeadlineExceeded(SourceError):
    """A request whose answer was not complete within its overall deadline (connect + headers + body)."""

    def __init__(self, url: str, seconds: float, key: str) -> None:
        super().__init__(f"{url} timed out: the answer came too slowly, not complete within {seconds:g}s (the "
                         f"deadline covers connect, headers and body) - is the service overloaded? raise {key} "
                         f"if it is just slow")
        self.url = url


class BodyTooLarge(SourceError):
    """An answer larger than the configured cap: refused before it is decoded."""

    def __init__(self, url: str, cap: int, key: str, announced: int | None = None) -> None:
        size = f"announces {announced / MB:.0f} MB" if announced is not None else "more than that was sent"
        super().__init__(f"{url}: answer refused, larger than the {cap / MB:g} MB cap ({size}; not decoded) - "
                         f"raise {key} if this listing is really that big")
        self.url = url


# ------------------------------------------------------------------------------------------ the deadline
class Scope:
    """The deadline in effect (time.monotonic() clock, None: none) and the bytes read under it."""

    __slots__ = ("deadline", "received")

    def __init__(self, deadline: float | None) -> None:
        self.deadline = deadline
        self.received = 0

    def passed(self) -> bool:
        # a socket timeout clamped to the deadline may end a hair before it
        return self.deadline is not None and self.deadline - time.monotonic() <= 0.05

    @property
    def trickled(self) -> bool:
        """The deadline passed while bytes were coming: an answer too slow, not an absent one."""
        return self.received > 0 and self.passed()


@contextlib.contextmanager
def scope(seconds: float | None) -> Iterator[Scope]:
    """Run the block under a deadline `seconds` from now (None: no new deadline); an outer, earlier deadline
    stands (and keeps counting the bytes)."""
    outer: Scope | None = getattr(_local, "scope", None)
    mine = None if seconds is None else time.monotonic() + max(0.0, float(seconds))
    if outer is not None and outer.deadline is not None and (mine is None or outer.deadline <= mine):
        yield outer
        return
    state = Scope(mine)
    _local.scope = state
    try:
        yield state
    finally:
        _local.scope = outer


def remaining() -> float | None:
    """Seconds left before the calling thread's deadline (None: no deadline; may be <= 0)."""
    state: Scope | None = getattr(_local, "scope", None)
    return None if state is None or state.deadline is None else state.deadline - time.monotonic()


def _count(n: int) -> None:
    state: Scope | None = getattr(_local, "scope", None)
    if state is not None:
        state.received += n


def _clamp(timeout: float | None, error: type[Exception]) -> float | None:
    left = remaining()
    if left is None:
        return timeout
    if left <= 0:
        raise error("overall deadline passed")
    return left if timeout is None else min(timeout, left)


# ------------------------------------------------------------------------------------------------- httpx
class _DeadlineStream:
    """An httpcore network stream whose every operation gets at most the time left before the deadline."""

    def __init__(self, inner: Any) -> None:
        self._inner = inner

    def read(self, max_bytes: int, timeout: float | None = None) -> bytes:
        import httpcore

        data = bytes(self._inner.read(max_bytes, _clamp(timeout, httpcore.ReadTimeout)))
        _count(len(data))
        return data

    def write(self, buffer: bytes, timeout: float | None = None) -> None:
        import httpcore

        self._inner.write(buffer, _clamp(timeout, httpcore.WriteTimeout))

    def close(self) -> None:
        self._inner.close()

    def start_tls(self, ssl_context: Any, server_hostname: str | None = None, timeout: float | None = None) -> Any:
        import httpcore

        return _DeadlineStream(self._inner.start_tls(ssl_context, server_hostname,
                                                     _clamp(timeout, httpcore.ConnectTimeout)))

    def get_extra_info(self, info: str) -> Any:
        return self._inner.get_extra_info(info)


class _DeadlineBackend:
    """httpcore's network backend with every connection a _DeadlineStream."""

    def __init__(self, inner: Any) -> None:
        self._inner = inner

    def connect_tcp(self, host: str, port: int, timeout: float | None = None, local_address: str | None = None,
                    socket_options: Any = None) -> Any:
        import httpcore

        return _DeadlineStream(self._inner.connect_tcp(host, port, _clamp(timeout, httpcore.ConnectTimeout),
                                                       local_address, socket_options))

    def connect_unix_socket(self, path: str, timeout: float | None = None, socket_options: Any = None) -> Any:
        import httpcore

        return _DeadlineStream(self._inner.connect_unix_socket(path, _clamp(timeout, httpcore.ConnectTimeout),
                                                               socket_options))

    def sleep(self, seconds: float) -> None:
        self._inner.sleep(seconds)


def install_httpx(client: Any) -> Any:
    """Put the deadline backend under every connection pool of an httpx.Client (its transport and any proxy
    mounts). Raises RuntimeError when httpx's internals moved (a test then fails, not a read that hangs)."""
    transports = [client._transport, *(t for t in getattr(client, "_mounts", {}).values() if t is not None)]
    for transport in transports:
        pool = getattr(transport, "_pool", None)
        if pool is None or not hasattr(pool, "_network_backend"):
            raise RuntimeError("httpx transport without a connection pool backend: tui.deadline needs updating")
        if not isinstance(pool._network_backend, _DeadlineBackend):
            pool._network_backend = _DeadlineBackend(pool._network_backend)
    return client


def read_httpx(response: Any, *, cap: int, key: str) -> bytes:
    """Stream an httpx response's body (opened with stream=True) under the cap; the body is kept on the
    response, so .content / .json() work as after a plain read. A Content-Length over the cap is refused at
    once, a body that grows past it as soon as it does (the connection is then closed, not reused). A gzip or
    deflate body is decoded here, CHUNK bytes at a time, and the cap counts the decoded bytes: a small
    compressed answer that would inflate to gigabytes is refused after cap bytes of it."""
    from tui.httpx_import import import_httpx

    url = str(response.url)
    announced = _length(response.headers.get("Content-Length"))
    if announced is not None and announced > cap:
        raise BodyTooLarge(url, cap, key, announced)
    if hasattr(response, "_content"):  # read already (a response built in memory): nothing left to stream
        if len(response._content) > cap:
            raise BodyTooLarge(url, cap, key)
        return bytes(response._content)
    decoder = BoundedDecoder(response.headers.get("Content-Encoding", ""))
    parts: list[bytes] = []
    size = 0
    try:
        for raw in response.iter_raw(CHUNK):
            for piece in decoder.feed(raw):
                size += len(piece)
                if size > cap:
                    raise BodyTooLarge(url, cap, key)
                parts.append(piece)
    except zlib.error as exc:
        raise import_httpx().DecodingError(f"the {decoder.encoding} body cannot be decoded: {exc}") from None
    body = b"".join(parts)
    response._content = body  # what httpx.Response.read() stores: .content and .json() read it
    return body


class BoundedDecoder:
    """A body's Content-Encoding undone a piece at a time: each `feed` yields pieces of at most CHUNK bytes,
    so the memory held never depends on how far the data inflates. gzip (x-gzip) and deflate (zlib-wrapped,
    else raw, as servers send it) are decoded, layered ones in reverse order of listing; identity and names
    this client never asks for are passed through, as httpx does. zlib.error on a broken stream."""

    def __init__(self, content_encoding: str) -> None:
        names = [n.strip().lower() for n in content_encoding.split(",") if n.strip()]
        self.encoding = ", ".join(names) or "identity"
        self._layers = [_Inflate(n) for n in reversed(names) if n in _INFLATE_WBITS]

    def feed(self, data: bytes) -> Iterator[bytes]:
        pieces: Iterator[bytes] = iter((data,))
        for layer in self._layers:
            pieces = layer.feed_all(pieces)
        for piece in pieces:
            if piece:
                yield piece


_INFLATE_WBITS = {"gzip": zlib.MAX_WBITS | 16, "x-gzip": zlib.MAX_WBITS | 16, "deflate": zlib.MAX_WBITS}


class _Inflate:
    """One gzip or deflate layer: zlib with max_length, so no call returns more than CHUNK bytes."""

    def __init__(self, name: str) -> None:
        self._raw_fallback = name == "deflate"  # "deflate" is zlib-wrapped by the RFC, raw by some servers
        self._obj = zlib.decompressobj(_INFLATE_WBITS[name])

    def feed_all(self, pieces: Iterator[bytes]) -> Iterator[bytes]:
        for piece in pieces:
            yield from self.feed(piece)

    def feed(self, data: bytes) -> Iterator[bytes]:
        while not self._obj.eof:  # data after the end of the stream is ignored, as httpx does
            try:
                out = self._obj.decompress(data, CHUNK)
            except zlib.error:
                if not self._raw_fallback:
                    raise
                self._raw_fallback = False
                self._obj = zlib.decompressobj(-zlib.MAX_WBITS)
                continue
            data = self._obj.unconsumed_tail
            if out:
                self._raw_fallback = False
                yield out
            elif not data:
                return


def _length(value: str | None) -> int | None:
    try:
        return int(value) if value is not None else None
    except ValueError:
        return None


# ---------------------------------------------------------------------------------------------- requests
class _Watchdog:
    """One daemon thread that shuts down the sockets of requests whose deadline passed."""

    def __init__(self) -> None:
        self._cond = threading.Condition()
        self._heap: list[tuple[float, int, list[Any], list[bool]]] = []
        self._ids = itertools.count()
        self._thread: threading.Thread | None = None

    def arm(self, deadline: float, sockets: list[Any], fired: list[bool]) -> tuple[float, int, list[Any], list[bool]]:
        entry = (deadline, next(self._ids), sockets, fired)
        with self._cond:
            heapq.heappush(self._heap, entry)
            if self._thread is None:
                self._thread = threading.Thread(target=self._run, name="stacktop-deadline", daemon=True)
                self._thread.start()
            self._cond.notify()
        return entry

    def disarm(self, entry: tuple[float, int, list[Any], list[bool]]) -> None:
        with self._cond:
            entry[2].clear()  # nothing left to shut down: the heap entry is dropped when it comes due

    def _run(self) -> None:
        while True:
            with self._cond:
                while not self._heap or self._heap[0][0] > time.monotonic():
                    self._cond.wait(None if not self._heap else self._heap[0][0] - time.monotonic())
                _, _, sockets, fired = heapq.heappop(self._heap)
                due = list(sockets)
                if due:
                    fired.append(True)
            for sock in due:
                with contextlib.suppress(OSError):
                    if callable(sock):  # an abort of a client that holds its socket itself (register_abort)
                        sock()
                    else:
                        socket.socket.shutdown(sock, socket.SHUT_RDWR)  # a blocked recv returns at once


_watchdog = _Watchdog()


def _register_socket(sock: Any) -> None:
    sockets: list[Any] | None = getattr(_local, "sockets", None)
    if sockets is not None and sock is not None:
        sockets.append(sock)


def _connection_classes() -> tuple[type, type]:
    """urllib3 connection classes that hand their socket to the running request's watchdog."""
    from urllib3.connection import HTTPConnection, HTTPSConnection

    class DeadlineHTTPConnection(HTTPConnection):
        def request(self, *args: Any, **kwargs: Any) -> None:
            super().request(*args, **kwargs)
            _register_socket(self.sock)

    class DeadlineHTTPSConnection(HTTPSConnection):
        def request(self, *args: Any, **kwargs: Any) -> None:
            super().request(*args, **kwargs)
            _register_socket(self.sock)

    return DeadlineHTTPConnection, DeadlineHTTPSConnection


def _pool_classes() -> dict[str, type]:
    from urllib3.connectionpool import HTTPConnectionPool, HTTPSConnectionPool

    plain, secure = _connection_classes()
    return {"http": type("DeadlineHTTPConnectionPool", (HTTPConnectionPool,), {"ConnectionCls": plain}),
            "https": type("DeadlineHTTPSConnectionPool", (HTTPSConnectionPool,), {"ConnectionCls": secure})}


def _total(timeout: Any, default: float) -> float:
    if isinstance(timeout, (int, float)) and timeout > 0:
        return float(timeout)
    if isinstance(timeout, tuple) and all(isinstance(t, (int, float)) for t in timeout):
        return float(max(timeout))
    return default


def guard_requests_session(session: Any, *, cap: int, key: str, timeout_key: str, default_timeout: float) -> Any:
    """Every adapter of a requests.Session: the request runs under a deadline (its `timeout`, else
    default_timeout), enforced by the watchdog, and its body is read under the cap. Idempotent."""
    if getattr(session, "_stacktop_deadlines", False):
        return session
    pools = _pool_classes()
    send = session.send

    def send_in_scope(request: Any, **kwargs: Any) -> Any:
        # the hops of a redirect (requests' resolve_redirects calls send again) share this deadline
        with scope(_total(kwargs.get("timeout"), default_timeout)):
            return send(request, **kwargs)

    session.send = send_in_scope
    for adapter in session.adapters.values():
        manager = getattr(adapter, "poolmanager", None)
        if manager is not None:
            manager.pool_classes_by_scheme = pools
        adapter.send = _capped_send(adapter.send, cap=cap, key=key, timeout_key=timeout_key,
                                    default_timeout=default_timeout)
    session._stacktop_deadlines = True
    return session


def _capped_send(send: Any, *, cap: int, key: str, timeout_key: str, default_timeout: float) -> Any:
    def capped_send(request: Any, stream: bool = False, timeout: Any = None, **kwargs: Any) -> Any:
        seconds = _total(timeout, default_timeout)
        with scope(seconds) as state:
            assert state.deadline is not None
            outer = getattr(_local, "sockets", None)
            sockets: list[Any] = []
            fired: list[bool] = []
            _local.sockets = sockets
            entry = _watchdog.arm(state.deadline, sockets, fired)
            resp = None
            try:
                resp = send(request, stream=True, timeout=timeout, **kwargs)
                announced = _length(resp.headers.get("Content-Length"))
                if announced is not None and announced > cap:
                    resp.close()
                    raise BodyTooLarge(request.url, cap, key, announced)
                if not stream:
                    parts: list[bytes] = []
                    size = 0
                    for chunk in _requests_body(resp):
                        size += len(chunk)
                        if size > cap:
                            resp.close()
                            raise BodyTooLarge(request.url, cap, key)
                        parts.append(chunk)
                    resp._content = b"".join(parts)  # what requests' Response.content stores
                    resp._content_consumed = True
                return resp
            except SourceError:
                raise
            except Exception:
                if not (fired or state.passed()):
                    raise
                if resp is None:  # no answer at all within the deadline: a timeout as requests words it
                    import requests

                    raise requests.exceptions.ReadTimeout(f"no answer within {seconds:g}s") from None
                raise DeadlineExceeded(request.url, seconds, timeout_key) from None
            finally:
                _watchdog.disarm(entry)
                _local.sockets = outer

    return capped_send


def _requests_body(resp: Any) -> Iterator[bytes]:
    """A requests response's body, decoded here a piece at a time (BoundedDecoder) from the raw stream, so the
    cap counts decoded bytes whatever urllib3 version is installed; a broken body raises requests' exceptions,
    as its iter_content does."""
    import requests
    from urllib3.exceptions import DecodeError, ProtocolError, ReadTimeoutError
    from urllib3.exceptions import SSLError as Urllib3SSLError

    decoder = BoundedDecoder(resp.headers.get("Content-Encoding", ""))
    try:
        for raw in resp.raw.stream(CHUNK, decode_content=False):
            yield from decoder.feed(raw)
    except ProtocolError as exc:
        raise requests.exceptions.ChunkedEncodingError(exc) from None
    except (DecodeError, zlib.error) as exc:
        raise requests.exceptions.ContentDecodingError(exc) from None
    except ReadTimeoutError as exc:
        raise requests.exceptions.ConnectionError(exc) from None
    except Urllib3SSLError as exc:
        raise requests.exceptions.SSLError(exc) from None


# --------------------------------------------------------------------------------------- other clients
def register_abort(abort: Callable[[], None]) -> None:
    """Under guard(): call abort() when the deadline passes (it should shut the client's socket down, so that
    a blocked read ends at once; an OSError from it is ignored). Outside a guard: nothing."""
    _register_socket(abort)


@contextlib.contextmanager
def guard(seconds: float) -> Iterator[list[bool]]:
    """Run the block under a deadline `seconds` from now, enforced by the watchdog on every abort registered
    meanwhile in this thread (register_abort). Yields a list that is non-empty once the watchdog fired: the
    error the block then sees (a lost connection) is really the deadline."""
    outer = getattr(_local, "sockets", None)
    aborts: list[Any] = []
    fired: list[bool] = []
    _local.sockets = aborts
    entry = _watchdog.arm(time.monotonic() + max(0.0, float(seconds)), aborts, fired)
    try:
        yield fired
    finally:
        _watchdog.disarm(entry)
        _local.sockets = outer
