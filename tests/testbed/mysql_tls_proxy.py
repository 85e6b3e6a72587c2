"""A TLS-terminating proxy in front of a real MariaDB node, serving a certificate of its own (the TLS profile's
expired one): a Galera endpoint with an expired certificate without a second MariaDB.

MySQL negotiates TLS inside its own protocol, so a plain TLS terminator (HAProxy `ssl crt`) cannot stand in
front of the node; this one speaks the few packets before the switch: it relays the node's greeting (which
offers CLIENT_SSL), and when the client answers with an SSL request it forwards that request to the node,
switches to TLS on both sides (its own certificate towards the client; verified against the test CA towards the
node), then relays bytes both ways. A client that accepts the certificate therefore reads the node itself
through it. One thread per connection, all daemon threads; listens on 127.0.0.1, an ephemeral port.
"""

from __future__ import annotations

import contextlib
import select
import socket
import ssl
import struct
import threading
from pathlib import Path

CLIENT_SSL = 0x800
SSL_REQUEST_LEN = 32  # capability flags, max packet, charset, 23 bytes of filler


def _read_packet(sock: socket.socket) -> bytes:
    """One MySQL packet, header included (b"" at EOF)."""
    header = _read_exact(sock, 4)
    if len(header) < 4:
        return b""
    length = header[0] | header[1] << 8 | header[2] << 16
    return header + _read_exact(sock, length)


def _read_exact(sock: socket.socket, n: int) -> bytes:
    buf = b""
    while len(buf) < n:
        chunk = sock.recv(n - len(buf))
        if not chunk:
            break
        buf += chunk
    return buf


def _is_ssl_request(packet: bytes) -> bool:
    payload = packet[4:]
    return len(payload) == SSL_REQUEST_LEN and bool(struct.unpack("<I", payload[:4])[0] & CLIENT_SSL)


def _relay(a: socket.socket, b: socket.socket) -> None:
    """Bytes both ways until either side closes (TLS sockets: their buffered records first)."""
    peers = {a: b, b: a}
    while True:
        ready = [s for s in peers if isinstance(s, ssl.SSLSocket) and s.pending()]
        if not ready:
            ready = select.select(list(peers), [], [], 60)[0]
            if not ready:
                return
        for s in ready:
            data = _recv_ready(s)
            if data is None:
                continue  # TLS records without application data (e.g. TLS 1.3 session tickets)
            if not data:
                return
            peers[s].sendall(data)


def _recv_ready(s: socket.socket) -> bytes | None:
    """What a readable socket holds, without blocking: None when a TLS socket read only records of the protocol
    itself (a blocking read would then wait for the peer's next data, while that peer waits for our relay)."""
    s.setblocking(False)
    try:
        return s.recv(65536)
    except (ssl.SSLWantReadError, BlockingIOError):
        return None
    finally:
        s.setblocking(True)


class MySQLTlsProxy:
    """proxy = MySQLTlsProxy(("127.0.0.1", 3341), cert, key, upstream_ca); proxy.address; proxy.close()."""

    def __init__(self, upstream: tuple[str, int], cert: Path, key: Path, upstream_ca: Path) -> None:
        self.upstream = upstream
        self._server_ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
        self._server_ctx.load_cert_chain(str(cert), str(key))
        self._client_ctx = ssl.create_default_context(cafile=str(upstream_ca))
        self._listener = socket.create_server(("127.0.0.1", 0))
        self._closed = False
        self._socks: set[socket.socket] = set()
        self._lock = threading.Lock()
        threading.Thread(target=self._accept, daemon=True, name="mysql-tls-proxy").start()

    @property
    def address(self) -> str:
        return f"127.0.0.1:{self._listener.getsockname()[1]}"

    def close(self) -> None:
        self._closed = True
        with contextlib.suppress(OSError):
            self._listener.close()
        with self._lock:
            socks, self._socks = list(self._socks), set()
        for s in socks:
            with contextlib.suppress(OSError):
                s.close()

    def _accept(self) -> None:
        while not self._closed:
            try:
                sock, _ = self._listener.accept()
            except OSError:
                return
            threading.Thread(target=self._serve, args=(sock,), daemon=True).start()

    def _track(self, *socks: socket.socket) -> None:
        with self._lock:
            self._socks.update(socks)

    def _serve(self, client: socket.socket) -> None:
        node: socket.socket | None = None
        try:
            node = socket.create_connection(self.upstream, timeout=10)
            self._track(client, node)
            client.sendall(_read_packet(node))  # the greeting, as the node sent it
            first = _read_packet(client)
            if not first:
                return
            node.sendall(first)
            if _is_ssl_request(first):
                node = self._client_ctx.wrap_socket(node, server_hostname=self.upstream[0])
                client = self._server_ctx.wrap_socket(client, server_side=True)  # the client checks our certificate
                self._track(client, node)
            node.settimeout(None)
            _relay(client, node)
        except (OSError, ValueError):
            return  # a client that refused the certificate, or a closed proxy
        finally:
            for s in (client, node):
                if s is not None:
                    with contextlib.suppress(OSError):
                        s.close()
