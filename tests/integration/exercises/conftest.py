"""Exercise fixtures on the real OpenStack test cloud (report_interval=5, service_down_time=20).

`client`: a stacktop OpenStackClient of its own (not the process-wide shared one). `log_sources`: every
service log of the test bed as `[[recorder.log_sources]]` would name it (nova-api through a `command`, the
others as paths), so the request trace reads the very files the seed's `docker logs ... | grep` would.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from tests.testbed.openstack import OpenStackCloud
from tui.config import LogSource, OpenStackConfig
from tui.openstack import connect

SERVICE_OF_LOG = {
    "keystone": "keystone", "keystone-access": "keystone", "placement": "placement",
    "placement-access": "placement", "glance-api": "glance", "glance-api-access": "glance",
    "nova-api-access": "nova-api", "nova-scheduler": "nova-scheduler", "nova-conductor": "nova-conductor",
    "nova-compute-01": "nova-compute", "nova-compute-02": "nova-compute", "neutron-server": "neutron",
    "neutron-server-access": "neutron", "neutron-rpc-server": "neutron", "cinder-api": "cinder",
    "cinder-api-access": "cinder", "cinder-scheduler": "cinder", "cinder-volume": "cinder",
}


def os_config(cloud: OpenStackCloud, interval: float = 1.0) -> OpenStackConfig:
    return OpenStackConfig(cloud=cloud.cloud, clouds_file=str(cloud.clouds_yaml), interval=interval, timeout=20)


@pytest.fixture(scope="module")
def conn(openstack_cloud: OpenStackCloud) -> Iterator[Any]:
    c = openstack_cloud.connect()
    yield c
    c.close()


@pytest.fixture(scope="module")
def client(openstack_cloud: OpenStackCloud) -> Iterator[Any]:
    c = connect(os_config(openstack_cloud))
    c.compute_microversion()  # token and discovery now, not inside a timed poll
    yield c
    c.close()


@pytest.fixture(scope="module")
def log_sources(openstack_cloud: OpenStackCloud) -> tuple[LogSource, ...]:
    logs = openstack_cloud.root / "logs"
    sources = [LogSource("nova-api", command=f"tail -n 200000 {logs / 'nova-api.log'}", timeout=20)]
    for stem, service in SERVICE_OF_LOG.items():
        path = logs / f"{stem}.log"
        if path.exists():
            sources.append(LogSource(service, path=str(path), timeout=20))
    return tuple(sources)
