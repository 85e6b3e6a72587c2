"""Services-source fixtures on the real OpenStack test cloud (timers lowered: report_interval=5,
service_down_time=20, agent_down_time=20; tests/testbed/openstack.py).

`poller` drives a ServicesCollector the way the runner does (collect, then the rules with `now`) every
POLL_S and keeps the timeline, so tests wait on what stacktop reports, with a deadline. `keystone_proxy` is
a TCP forwarder to the real Keystone that a test can close (connections refused) and reopen on the same
port, with a clouds.yaml whose auth_url goes through it: Keystone "goes down" for this test only, not for the
other tests sharing the cloud.
"""

from __future__ import annotations

import contextlib
import socket
import threading
from collections.abc import AsyncIterator, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
import yaml

from tests.testbed.openstack import OpenStackCloud
from tests.testbed.poller import Poll, Poller
from tui.collectors.services import ServicesCollector
from tui.config import OpenStackConfig, Thresholds
from tui.models.services import ServicesSnapshot

POLL_S = 2.0
TEST_THRESHOLDS = Thresholds(service_down_time=20, agent_down_time=20, volume_service_down_time=20,
                             fleet_down_fraction=0.5)


def os_config(clouds_yaml: Path, cloud: str, timeout: float = 15.0) -> OpenStackConfig:
    return OpenStackConfig(cloud=cloud, clouds_file=str(clouds_yaml), interval=POLL_S, timeout=timeout)


def make_collector(cfg: OpenStackConfig, thresholds: Thresholds = TEST_THRESHOLDS) -> ServicesCollector:
    """A collector with its own client (not the process-wide shared one): tests must not share tokens."""
    from tui.openstack import connect

    return ServicesCollector(cfg, thresholds, client_factory=lambda: connect(cfg), interval=POLL_S)


def describe(poll: Poll[ServicesSnapshot]) -> str:
    rows = [(r.binary, r.host, r.state, r.age_at_read_s) for s in poll.snapshot.sections for r in s.rows]
    return f"findings {[(f.kind, f.subject) for f in poll.findings]}, rows {rows}"


def services_poller(collector: ServicesCollector) -> Poller[ServicesSnapshot]:
    return Poller(collector, POLL_S, describe)


@pytest.fixture
async def poller(openstack_cloud: OpenStackCloud) -> AsyncIterator[Poller]:
    collector = make_collector(os_config(openstack_cloud.clouds_yaml, openstack_cloud.cloud))
    try:
        yield services_poller(collector)
    finally:
        await collector.aclose()


# ------------------------------------------------------------------------------------------ Keystone proxy
class TcpProxy:
    """127.0.0.1:<port> -> target. close(): listener and every open connection closed (clients get
    "connection refused"); open(): listening again on the same port."""

    def __init__(self, target: tuple[str, int]) -> None:
        self.target = target
        with socket.socket() as s:
            s.bind(("127.0.0.1", 0))
            self.port = s.getsockname()[1]
        self._listener: socket.socket | None = None
        self._socks: set[socket.socket] = set()
        self._lock = threading.Lock()

    def open(self) -> None:
        ls = socket.socket()
        ls.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        ls.bind(("127.0.0.1", self.port))
        ls.listen(64)
        self._listener = ls
        threading.Thread(target=self._accept, args=(ls,), daemon=True).start()

    def close(self) -> None:
        ls, self._listener = self._listener, None
        if ls is not None:
            with contextlib.suppress(OSError):
                ls.shutdown(socket.SHUT_RDWR)
            ls.close()
        with self._lock:
            socks, self._socks = self._socks, set()
        for s in socks:
            with contextlib.suppress(OSError):
                s.shutdown(socket.SHUT_RDWR)
            s.close()

    def _accept(self, ls: socket.socket) -> None:
        while True:
            try:
                client, _ = ls.accept()
            except OSError:
                return
            try:
                upstream = socket.create_connection(self.target, timeout=5)
            except OSError:
                client.close()
                continue
            with self._lock:
                self._socks.update((client, upstream))
            for a, b in ((client, upstream), (upstream, client)):
                threading.Thread(target=self._pump, args=(a, b), daemon=True).start()

    @staticmethod
    def _pump(src: socket.socket, dst: socket.socket) -> None:
        try:
            while data := src.recv(65536):
                dst.sendall(data)
        except OSError:
            pass
        finally:
            with contextlib.suppress(OSError):
                dst.shutdown(socket.SHUT_WR)


def rewrite_clouds_yaml(src: Path, dst: Path, cloud: str, **auth: Any) -> Path:
    data = yaml.safe_load(src.read_text())
    data["clouds"][cloud]["auth"].update(auth)
    dst.write_text(yaml.safe_dump(data))
    dst.chmod(0o600)
    return dst


@dataclass
class KeystoneProxy:
    proxy: TcpProxy
    clouds_yaml: Path
    cloud: str
    auth_url: str


@pytest.fixture
def keystone_proxy(openstack_cloud: OpenStackCloud, tmp_path: Path) -> Iterator[KeystoneProxy]:
    data = yaml.safe_load(openstack_cloud.clouds_yaml.read_text())
    real = data["clouds"][openstack_cloud.cloud]["auth"]["auth_url"]  # http://127.0.0.1:5000/v3
    hostport = real.split("://", 1)[1].split("/", 1)[0]
    host, _, port = hostport.rpartition(":")
    proxy = TcpProxy((host, int(port)))
    proxy.open()
    auth_url = real.replace(hostport, f"127.0.0.1:{proxy.port}")
    yaml_path = rewrite_clouds_yaml(openstack_cloud.clouds_yaml, tmp_path / "clouds.yaml", openstack_cloud.cloud,
                                    auth_url=auth_url)
    try:
        yield KeystoneProxy(proxy, yaml_path, openstack_cloud.cloud, auth_url)
    finally:
        proxy.close()
