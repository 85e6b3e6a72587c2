"""A small MySQL-protocol endpoint for one simulated Galera node, so the real pymysql client (and its TLS) can be
tested against the simulator: MySQL negotiates TLS inside its own protocol (the server's handshake offers
CLIENT_SSL, the client answers with an SSL request, then both switch the socket to TLS), so a plain TLS
socket cannot stand in for a node.

What it speaks (protocol 4.1, enough for pymysql): the handshake (offering TLS with the certificate currently
chosen: a TlsKit's trusted one, its self-signed one, or none), any login (mysql_native_password, not checked),
COM_QUERY: SHOW statements answered by `answer(sql)` as (name, value) rows, any other statement (pymysql's
SET NAMES) with OK; COM_PING; COM_QUIT. One thread per connection; nothing is written anywhere.
"""

from __future__ import annotations

import contextlib
import socket
import ssl
import struct
import threading
from collections.abc import Callable
from typing import Any

CLIENT_LONG_PASSWORD = 0x1
CLIENT_LONG_FLAG = 0x4
CLIENT_PROTOCOL_41 = 0x200
CLIENT_SSL = 0x800
CLIENT_TRANSACTIONS = 0x2000
CLIENT_SECURE_CONNECTION = 0x8000
CLIENT_PLUGIN_AUTH = 0x80000
BASE_CAPABILITIES = (CLIENT_LONG_PASSWORD | CLIENT_LONG_FLAG | CLIENT_PROTOCOL_41 | CLIENT_TRANSACTIONS
                     | CLIENT_SECURE_CONNECTION | CLIENT_PLUGIN_AUTH)
UTF8MB4_GENERAL_CI = 45
SERVER_STATUS_AUTOCOMMIT = 0x2
VAR_STRING = 0xFD
COM_QUIT, COM_QUERY, COM_PING = 0x01, 0x03, 0x0E

Answer = Callable[[str], list[tuple[Any, ...]]]


def _lenenc_int(n: int) -> bytes:
    if n < 251:
        return bytes([n])
    if n < 1 << 16:
        return b"\xfc" + struct.pack("<H", n)
    if n < 1 << 24:
        return b"\xfd" + struct.pack("<I", n)[:3]
    return b"\xfe" + struct.pack("<Q", n)


def _lenenc_str(b: bytes) -> bytes:
    return _lenenc_int(len(b)) + b


OK = b"\x00\x00\x00" + struct.pack("<HH", SERVER_STATUS_AUTOCOMMIT, 0)
EOF = b"\xfe" + struct.pack("<HH", 0, SERVER_STATUS_AUTOCOMMIT)


def _err(code: int, message: str) -> bytes:
    return b"\xff" + struct.pack("<H", code) + b"#HY000" + message.encode()


def _column(name: str) -> bytes:
    n = name.encode()
    return (_lenenc_str(b"def") + _lenenc_str(b"") * 3 + _lenenc_str(n) * 2 + b"\x0c"
            + struct.pack("<HIBHB", UTF8MB4_GENERAL_CI, 1024, VAR_STRING, 0, 0) + b"\x00\x00")


class _Packets:
    """Packet framing (3-byte length, 1-byte sequence id) over a socket that may be swapped for its TLS wrap."""

    def __init__(self, sock: socket.socket) -> None:
        self.sock = sock
        self.seq = 0

    def _read_exact(self, n: int) -> bytes:
        out = b""
        while len(out) < n:
            chunk = self.sock.recv(n - len(out))
            if not chunk:
                raise ConnectionError("client closed")
            out += chunk
        return out

    def read(self) -> bytes:
        head = self._read_exact(4)
        length = head[0] | head[1] << 8 | head[2] << 16
        self.seq = (head[3] + 1) & 0xFF
        return self._read_exact(length)

    def write(self, payload: bytes) -> None:
        self.sock.sendall(struct.pack("<I", len(payload))[:3] + bytes([self.seq]) + payload)
        self.seq = (self.seq + 1) & 0xFF


class MySQLWire:
    """One listening endpoint on 127.0.0.1 (`address`). certificate: an ssl server context to offer TLS with
    (switch it at any time with `use`: new connections get the new one), or None to offer no TLS. `logins`
    counts the logins accepted over TLS and in plaintext."""

    def __init__(self, answer: Answer, certificate: ssl.SSLContext | None = None) -> None:
        self.answer = answer
        self.certificate = certificate
        self._server = socket.create_server(("127.0.0.1", 0))
        self.port = int(self._server.getsockname()[1])
        self._conns: set[socket.socket] = set()
        self._lock = threading.Lock()
        self._closed = False
        self.logins = {"tls": 0, "plain": 0}  # logins accepted, by how the login travelled
        self._thread = threading.Thread(target=self._accept, name=f"mysql-wire-{self.port}", daemon=True)
        self._thread.start()

    @property
    def address(self) -> str:
        return f"127.0.0.1:{self.port}"

    def use(self, certificate: ssl.SSLContext | None) -> None:
        """Offer this certificate (or no TLS) from now on, and drop the open connections (clients reconnect)."""
        self.certificate = certificate
        self.drop_connections()

    def drop_connections(self) -> None:
        with self._lock:
            conns, self._conns = list(self._conns), set()
        for c in conns:
            with contextlib.suppress(OSError):
                c.shutdown(socket.SHUT_RDWR)
            with contextlib.suppress(OSError):
                c.close()

    def close(self) -> None:
        self._closed = True
        with contextlib.suppress(OSError):
            self._server.close()
        self.drop_connections()

    def _accept(self) -> None:
        while not self._closed:
            try:
                sock, _ = self._server.accept()
            except OSError:
                return
            with self._lock:
                self._conns.add(sock)
            threading.Thread(target=self._serve, args=(sock,), daemon=True).start()

    def _serve(self, sock: socket.socket) -> None:
        sock.settimeout(10)
        try:
            self._session(sock)
        except (OSError, ConnectionError, ValueError, struct.error):
            pass  # the client went away, refused our certificate, or spoke garbage: just end
        finally:
            with self._lock:
                self._conns.discard(sock)
            with contextlib.suppress(OSError):
                sock.close()

    def _session(self, sock: socket.socket) -> None:
        cert = self.certificate
        caps = BASE_CAPABILITIES | (CLIENT_SSL if cert is not None else 0)
        salt = b"stacktopsimulatedsal"  # 20 bytes, no NUL (not checked anyway)
        p = _Packets(sock)
        p.write(b"\x0a" + b"10.11.0-MariaDB-stacktop-sim\x00" + struct.pack("<I", self.port) + salt[:8] + b"\x00"
                + struct.pack("<H", caps & 0xFFFF) + bytes([UTF8MB4_GENERAL_CI])
                + struct.pack("<H", SERVER_STATUS_AUTOCOMMIT) + struct.pack("<H", caps >> 16) + bytes([21])
                + b"\x00" * 10 + salt[8:] + b"\x00" + b"mysql_native_password\x00")
        response = p.read()
        client_caps = struct.unpack("<I", response[:4])[0]
        if cert is not None and client_caps & CLIENT_SSL and len(response) == 32:  # an SSL request
            tls = cert.wrap_socket(sock, server_side=True)
            with self._lock:
                self._conns.discard(sock)
                self._conns.add(tls)
            p.sock = tls
            p.read()  # the login, now over TLS
            self.logins["tls"] += 1
        else:
            self.logins["plain"] += 1
        p.write(OK)
        while True:
            packet = p.read()
            command = packet[0] if packet else None
            if command == COM_QUIT:
                return
            if command == COM_PING:
                p.write(OK)
            elif command == COM_QUERY:
                self._query(p, packet[1:].decode("utf-8", "replace"))
            else:
                p.write(_err(1047, "Unknown command"))

    def _query(self, p: _Packets, sql: str) -> None:
        if not sql.lstrip().upper().startswith("SHOW"):
            p.write(OK)  # SET NAMES from the client library
            return
        try:
            rows = self.answer(sql)
        except Exception as exc:  # the simulated node's own failure: an SQL error on the wire
            code, message = (exc.args[0], str(exc.args[1])) if len(exc.args) >= 2 and isinstance(exc.args[0], int) \
                else (1105, str(exc))
            p.write(_err(code, message))
            return
        p.write(_lenenc_int(2))
        p.write(_column("Variable_name"))
        p.write(_column("Value"))
        p.write(EOF)
        for row in rows:
            p.write(b"".join(b"\xfb" if v is None else _lenenc_str(str(v).encode()) for v in row[:2]))
        p.write(EOF)
