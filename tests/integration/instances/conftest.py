"""Instances-source fixtures on the real OpenStack test cloud (timers lowered: report_interval=5,
service_down_time=20, agent_down_time=20; tests/testbed/openstack.py).

`poller` drives an InstancesCollector the way the runner does (collect, then the rules with `now`) and
keeps every poll, so tests wait on what stacktop reports, with a deadline. `slow_compute02` restarts
compute-02's nova-compute with a longer spawn delay (STACKTOP_TESTCLOUD_SPAWN_DELAY, testcloud/openstack/
start.sh) for one test and restores the default (3 s) afterwards, also when the test fails.
"""

from __future__ import annotations

import os
from collections.abc import AsyncIterator, Iterator
from datetime import UTC, datetime
from typing import Any

import pytest

from tests.testbed.openstack import (
    OpenStackCloud,
    nova_service,
    service_pid,
    start_service,
    stop_service,
    wait_all_healthy,
)
from tests.testbed.poller import Poller
from tests.testbed.wait import wait_for
from tui.collectors.instances import InstancesCollector, parse_time
from tui.config import OpenStackConfig
from tui.rules.task_states import DEFAULT_STUCK_SECONDS

POLL_S = 1.0
SPAWN_DELAY_ENV = "STACKTOP_TESTCLOUD_SPAWN_DELAY"


def os_config(cloud: OpenStackCloud) -> OpenStackConfig:
    return OpenStackConfig(cloud=cloud.cloud, clouds_file=str(cloud.clouds_yaml), interval=POLL_S, timeout=20)


def make_collector(cloud: OpenStackCloud, **kw: Any) -> InstancesCollector:
    """A collector with its own client (not the process-wide shared one)."""
    from tui.openstack import connect

    cfg = os_config(cloud)
    kw.setdefault("interval", POLL_S)
    return InstancesCollector(cfg, client_factory=lambda: connect(cfg), **kw)


@pytest.fixture
async def poller(openstack_cloud: OpenStackCloud) -> AsyncIterator[Poller]:
    collector = make_collector(openstack_cloud, stuck={**DEFAULT_STUCK_SECONDS, "spawning": 5.0})
    try:
        yield Poller(collector, POLL_S)
    finally:
        await collector.aclose()


def restart_compute02(conn: Any, delay: str | None) -> None:
    """Restart nova-compute-02 with SLOWFAKE spawn delay `delay` seconds (None: the default) and wait until
    the new process heartbeats (updated_at after the restart)."""
    if delay is None:
        os.environ.pop(SPAWN_DELAY_ENV, None)
    else:
        os.environ[SPAWN_DELAY_ENV] = delay
    if service_pid("nova-compute-02") is not None:  # a test may have killed it
        stop_service("nova-compute-02")
    started = datetime.now(UTC).replace(microsecond=0)
    start_service("nova-compute-02")

    def heartbeating() -> bool:
        svc = nova_service(conn, "nova-compute", "compute-02")
        beat = parse_time(svc.updated_at)
        return svc.state == "up" and beat is not None and beat > started

    wait_for(heartbeating, timeout=90, what=f"nova-compute-02 (spawn delay {delay or 'default'}) to heartbeat")
    wait_all_healthy(conn, timeout=90)


@pytest.fixture
def slow_compute02(healthy: Any, request: pytest.FixtureRequest) -> Iterator[float]:
    """compute-02 spawns in `request.param` seconds (default 25) for this test; restored after it."""
    delay = float(getattr(request, "param", 25))
    previous = os.environ.get(SPAWN_DELAY_ENV)
    try:
        restart_compute02(healthy, f"{delay:g}")
        yield delay
    finally:
        restart_compute02(healthy, previous)
