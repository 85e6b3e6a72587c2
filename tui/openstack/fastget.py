"""Many GETs against one endpoint over a few persistent HTTP/1.1 connections, on asyncio streams.

Why not httpx: httpcore's pool re-checks every pooled connection's socket for each request, which at 32
connections costs more CPU per request than the SDK's own adapter; this client costs a fraction of either.
N workers, each owning one keep-alive connection, pull paths from a shared queue. GET only, Content-Length or
chunked bodies, TLS through an ssl context. No redirect is followed: a 30x is an answer with its Location (the
caller judges it, tui.redirects). Each request has one overall timeout (connect, headers and body); a body
larger than `max_body` is refused unread. Proxies from the environment are not used (the SDK path
honours them). Measured costs: docs/performance.md.
"""

from __future__ import annotations

import asyncio
import ssl
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from urllib.parse import urlsplit

from tui.config import OpenStackConfig
from tui.readonly import check_method


def tls_context(verify: bool | str | None) -> ssl.SSLContext:
    """The context for an https endpoint from a session's `verify`: False skips verification (explicit
    insecure), a path is the CA bundle, anything else the system's CAs."""
    if verify is False:
        ctx = ssl.create_default_context()
        ctx.check_hostname = False
        ctx.verify_mode = ssl.CERT_NONE
        return ctx
    return ssl.create_default_context(cafile=verify if isinstance(verify, str) else None)


@dataclass(frozen=True)
class Answer:
    status: int
    body: bytes
    url: str
    location: str | None = None  # a redirect's Location (never followed here)


class FetchError(Exception):
    """No HTTP answer for one URL (connect failure, timeout, broken connection)."""

    def __init__(self, url: str, reason: str) -> None:
        super().__init__(f"{url}: {reason}")
        self.url = url
        self.reason = reason


class TooLarge(Exception):
    """A body over the cap (what it announced, or None when it grew past the cap while read)."""

    def __init__(self, announced: int | None) -> None:
        super().__init__("body over the cap")
        self.announced = announced


class _Conn:
    def __init__(self, host: str, port: int, tls: ssl.SSLContext | None, max_body: int) -> None:
        self.host, self.port, self.tls = host, port, tls
        self.max_body = max_body
        self.reader: asyncio.StreamReader | None = None
        self.writer: asyncio.StreamWriter | None = None

    async def open(self) -> None:
        self.reader, self.writer = await asyncio.open_connection(
            self.host, self.port, ssl=self.tls, server_hostname=self.host if self.tls else None)

    def close(self) -> None:
        if self.writer is not None:
            self.writer.close()
        self.reader = self.writer = None

    async def get(self, request: bytes) -> tuple[int, bytes, bool, str | None]:
        if self.writer is None:
            await self.open()
        assert self.reader is not None and self.writer is not None
        self.writer.write(request)
        await self.writer.drain()
        head = await self.reader.readuntil(b"\r\n\r\n")
        lines = head.decode("latin-1").split("\r\n")
        status = int(lines[0].split(" ", 2)[1])
        headers: dict[str, str] = {}
        for line in lines[1:]:
            if ":" in line:
                k, _, v = line.partition(":")
                headers[k.strip().lower()] = v.strip()
        if "chunked" in headers.get("transfer-encoding", "").lower():
            parts = []
            total = 0
            while True:
                size = int((await self.reader.readuntil(b"\r\n")).split(b";")[0].strip(), 16)
                if size == 0:
                    await self.reader.readuntil(b"\r\n")
                    break
                total += size
                if total > self.max_body:
                    raise TooLarge(None)
                parts.append(await self.reader.readexactly(size))
                await self.reader.readexactly(2)
            body = b"".join(parts)
        elif "content-length" in headers:
            length = int(headers["content-length"])
            if length > self.max_body:
                raise TooLarge(length)
            body = await self.reader.readexactly(length)
        else:
            parts = []
            total = 0
            while chunk := await self.reader.read(65536):
                total += len(chunk)
                if total > self.max_body:
                    raise TooLarge(None)
                parts.append(chunk)
            return status, b"".join(parts), True, headers.get("location")
        keep = headers.get("connection", "").lower() != "close" and not lines[0].startswith("HTTP/1.0")
        return status, body, not keep, headers.get("location")


async def get_many(base_url: str, paths: Sequence[str], headers: Mapping[str, str], *, concurrency: int = 32,
                   timeout: float = 20.0, tls: ssl.SSLContext | None = None,
                   max_body: int = OpenStackConfig().max_body_bytes,
                   max_body_key: str = "[openstack] max_body_mb") -> list[Answer | FetchError]:
    """GET base_url + path for every path; answers in the order of `paths`. Each request: one overall
    `timeout`, a body of at most `max_body` bytes (beyond: a FetchError whose reason names max_body_key)."""
    parts = urlsplit(base_url)
    host = parts.hostname or "localhost"
    secure = parts.scheme == "https"
    port = parts.port or (443 if secure else 80)
    if secure and tls is None:
        tls = ssl.create_default_context()
    prefix = parts.path.rstrip("/")
    hostport = parts.netloc.rsplit("@", 1)[-1]
    extra = "".join(f"{k}: {v}\r\n" for k, v in headers.items())
    results: list[Answer | FetchError | None] = [None] * len(paths)
    queue: asyncio.Queue[int] = asyncio.Queue()
    for i in range(len(paths)):
        queue.put_nowait(i)

    async def worker() -> None:
        conn = _Conn(host, port, tls if secure else None, max_body)
        try:
            while True:
                try:
                    i = queue.get_nowait()
                except asyncio.QueueEmpty:
                    return
                path = f"{prefix}/{paths[i].lstrip('/')}"
                url = f"{parts.scheme}://{hostport}{path}"
                check_method("GET", url)  # the read-only guard sees every request, this path too
                request = f"GET {path} HTTP/1.1\r\nHost: {hostport}\r\n{extra}\r\n".encode()
                for attempt in (1, 2):  # a kept-alive connection the server closed: retry once, fresh
                    reused = conn.writer is not None
                    try:
                        status, body, close, location = await asyncio.wait_for(conn.get(request), timeout)
                        results[i] = Answer(status, body, url, location)
                        if close:
                            conn.close()
                        break
                    except TooLarge as exc:
                        conn.close()
                        size = f"announces {exc.announced / 1048576:.0f} MB" if exc.announced is not None \
                            else "more than that was sent"
                        results[i] = FetchError(url, f"answer refused, larger than the {max_body / 1048576:g} MB "
                                                f"cap ({size}; not decoded) - raise {max_body_key} if it is "
                                                "really that big")
                        break
                    except TimeoutError:  # before OSError: TimeoutError is one
                        conn.close()
                        results[i] = FetchError(url, f"timed out after {timeout:g} s")
                        break
                    except (ConnectionError, asyncio.IncompleteReadError, OSError) as exc:
                        conn.close()
                        if not (reused and attempt == 1):
                            results[i] = FetchError(url, _reason(exc))
                            break
                    except (ValueError, IndexError, asyncio.LimitOverrunError) as exc:
                        conn.close()
                        results[i] = FetchError(url, f"malformed HTTP answer ({exc})")
                        break
        finally:
            conn.close()

    await asyncio.gather(*(worker() for _ in range(max(1, min(concurrency, len(paths))))))
    return [r if r is not None else FetchError(base_url, "not fetched") for r in results]


def _reason(exc: BaseException) -> str:
    if isinstance(exc, ConnectionRefusedError):
        return "connection refused"
    if isinstance(exc, asyncio.IncompleteReadError):
        return "connection closed mid-answer"
    return f"{type(exc).__name__}: {exc}".splitlines()[0]
