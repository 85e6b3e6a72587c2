"""Placement fixtures on the real OpenStack test cloud (timers lowered: report_interval=5,
service_down_time=20; tests/testbed/openstack.py). The cloud is shared with other sessions: every scenario
helper undoes itself in `finally`, and tests wait on what stacktop reports with a deadline.
"""

from __future__ import annotations

import time
from collections.abc import AsyncIterator, Awaitable, Callable
from typing import Any, TypeVar

import pytest

from tests.testbed.openstack import OpenStackCloud
from tui.config import OpenStackConfig

T = TypeVar("T")


def os_config(cloud: OpenStackCloud) -> OpenStackConfig:
    return OpenStackConfig(cloud=cloud.cloud, clouds_file=str(cloud.clouds_yaml), interval=60.0, timeout=20)


@pytest.fixture
async def client(openstack_cloud: OpenStackCloud) -> AsyncIterator[Any]:
    """stacktop's own read client (not the process-wide shared one)."""
    from tui.openstack import connect

    c = connect(os_config(openstack_cloud))
    try:
        yield c
    finally:
        c.close()


async def poll(probe: Callable[[], Awaitable[T | None]], *, timeout: float, what: str, interval: float = 1.0,
               last: Callable[[], str] | None = None) -> T:
    """Await probe() until it returns something truthy; the TimeoutError says what was seen last."""
    import asyncio

    deadline = time.monotonic() + timeout
    while True:
        value = await probe()
        if value:
            return value
        if time.monotonic() >= deadline:
            raise TimeoutError(f"timed out after {timeout:.0f} s waiting for {what}" +
                               (f"; last: {last()}" if last else ""))
        await asyncio.sleep(interval)
