"""Hostile servers on loopback (port 0) for the quit and snapshot deadline tests: a MySQL node that announces
a 16 MB greeting and trickles it, a MySQL node that trickles a 90-byte greeting, and a Keystone that accepts
connections and never answers. Each serves every connection in a daemon thread until stopped."""

from __future__ import annotations

import contextlib
import socket
import struct
import threading
from collections.abc import Callable, Iterator
from pathlib import Path

TRICKLE_S = 0.5


def greeting(length: int) -> bytes:
    """A MySQL packet header (3-byte little-endian length, sequence 0) and a protocol-10 greeting, padded or cut
    to `length` bytes of payload (a 16 MB announcement is never sent whole: the trickle outlives any test)."""
    payload = b"\x0a5.7.99-hostile\x00" + struct.pack("<I", 7) + b"abcdefgh\x00" + b"\xff\xf7" + b"\x21"
    payload += b"\x02\x00\xff\x81\x15" + b"\x00" * 10 + b"ijklmnopqrst\x00" + b"mysql_native_password\x00"
    payload = (payload + b"\x00" * length)[:length]
    return struct.pack("<I", length)[:3] + b"\x00" + payload


class Server:
    """A listening socket on 127.0.0.1 whose every accepted connection is handed to `serve(conn, stop)`."""

    def __init__(self, serve: Callable[[socket.socket, threading.Event], None]) -> None:
        self._serve = serve
        self._stop = threading.Event()
        self._sock = socket.create_server(("127.0.0.1", 0))
        self._sock.settimeout(0.2)
        self.port = self._sock.getsockname()[1]
        self._conns: list[socket.socket] = []
        threading.Thread(target=self._accept, daemon=True).start()

    @property
    def address(self) -> str:
        return f"127.0.0.1:{self.port}"

    def _accept(self) -> None:
        while not self._stop.is_set():
            try:
                conn, _ = self._sock.accept()
            except TimeoutError:
                continue
            except OSError:
                return
            self._conns.append(conn)
            threading.Thread(target=self._serve, args=(conn, self._stop), daemon=True).start()

    def stop(self) -> None:
        self._stop.set()
        for sock in (self._sock, *self._conns):
            with contextlib.suppress(OSError):
                sock.close()


def trickle(data: bytes) -> Callable[[socket.socket, threading.Event], None]:
    """Send data one byte every TRICKLE_S (no per-read timeout ever fires), then hold the connection open."""

    def serve(conn: socket.socket, stop: threading.Event) -> None:
        with contextlib.suppress(OSError):
            for byte in data:
                if stop.wait(TRICKLE_S):
                    return
                conn.sendall(bytes([byte]))
            stop.wait()

    return serve


def silent(conn: socket.socket, stop: threading.Event) -> None:
    """Accept, read what comes, never answer."""
    conn.settimeout(0.2)
    while not stop.is_set():
        try:
            if not conn.recv(65536):
                stop.wait()
        except TimeoutError:
            continue
        except OSError:
            return


@contextlib.contextmanager
def hostile_sources(tmp_path: Path, *, timeout: float = 2.0, deadline: float = 30.0, keystone: bool = True
                    ) -> Iterator[Path]:
    """The hostile servers and a stacktop config reading them (Galera: the 16 MB trickle and the 90-byte
    trickle as two nodes; OpenStack, unless keystone=False: the silent Keystone), with `timeout` per source;
    yields the config path."""
    huge = Server(trickle(greeting(0xFFFFFF)))
    small = Server(trickle(greeting(86)))  # 4-byte header + 86 bytes: a 90-byte greeting
    silent_keystone = Server(silent)
    try:
        clouds = tmp_path / "clouds.yaml"
        clouds.write_text("clouds:\n  hostile:\n    auth:\n"
                          f"      auth_url: http://127.0.0.1:{silent_keystone.port}/v3\n"
                          "      username: monitor\n      password: not-a-secret\n      project_name: admin\n"
                          "      user_domain_name: Default\n      project_domain_name: Default\n"
                          "    region_name: RegionOne\n    interface: public\n    identity_api_version: 3\n")
        config = tmp_path / "stacktop.toml"
        openstack = f'[openstack]\ncloud = "hostile"\nclouds_file = "{clouds}"\ntimeout = {timeout}\ninterval = 1\n\n'
        config.write_text(
            (openstack if keystone else "") +
            f'[galera]\nnodes = ["{huge.address}", "{small.address}"]\nuser = "monitor"\n'
            f"timeout = {timeout}\ninterval = 1\n\n"
            f'[recorder]\ndir = "{tmp_path / "journal"}"\n\n'
            f"[snapshot]\ndeadline = {deadline}\n")
        config.chmod(0o600)
        yield config
    finally:
        for server in (huge, small, silent_keystone):
            server.stop()
