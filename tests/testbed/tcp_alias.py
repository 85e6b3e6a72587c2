"""Another address for a real endpoint: a plain TCP relay listening on a loopback IP of its own (127.0.0.2 by
default, an ephemeral port) that forwards bytes, unchanged, to the endpoint. TLS passes through untouched (HTTPS,
and MySQL's in-protocol TLS alike), so a client reaching the relay meets the endpoint's own certificate under an
address that certificate may not name. One thread per connection, daemon threads; close() stops accepting and
shuts every open relay."""

from __future__ import annotations

import contextlib
import select
import socket
import threading


class TcpAlias:
    def __init__(self, target: tuple[str, int], host: str = "127.0.0.2") -> None:
        self.target = target
        self._listener = socket.create_server((host, 0))
        self._socks: list[socket.socket] = []
        self._lock = threading.Lock()
        self._closed = False
        threading.Thread(target=self._accept, daemon=True).start()

    @property
    def host(self) -> str:
        return str(self._listener.getsockname()[0])

    @property
    def port(self) -> int:
        return int(self._listener.getsockname()[1])

    @property
    def address(self) -> str:
        return f"{self.host}:{self.port}"

    def _accept(self) -> None:
        while not self._closed:
            try:
                client, _ = self._listener.accept()
            except OSError:
                return
            try:
                upstream = socket.create_connection(self.target, timeout=30)
            except OSError:
                client.close()
                continue
            upstream.settimeout(None)
            with self._lock:
                self._socks += [client, upstream]
            threading.Thread(target=self._relay, args=(client, upstream), daemon=True).start()

    @staticmethod
    def _relay(a: socket.socket, b: socket.socket) -> None:
        peers = {a: b, b: a}
        try:
            while True:
                ready = select.select(list(peers), [], [], 120)[0]
                if not ready:
                    return
                for s in ready:
                    data = s.recv(65536)
                    if not data:
                        return
                    peers[s].sendall(data)
        except OSError:
            return
        finally:
            for s in (a, b):
                with contextlib.suppress(OSError):
                    s.shutdown(socket.SHUT_RDWR)
                s.close()

    def close(self) -> None:
        self._closed = True
        with contextlib.suppress(OSError):
            self._listener.close()
        with self._lock:
            socks, self._socks = self._socks, []
        for s in socks:
            with contextlib.suppress(OSError):
                s.shutdown(socket.SHUT_RDWR)
            s.close()
