"""The OpenStack test cloud under the 2025 messaging profile (what kolla-ansible 2025.1 deploys: quorum topic
queues, quorum transient queues, oslo.messaging's queue manager naming reply and fanout queues
`reply_<host>:<process>:<n>`, stream fanouts), read by stacktop's RabbitMQ collector as the dashboard reads it.

Killing nova-compute on compute-02 and booting a server there makes its quorum `compute.compute-02` the one
critical; the queue-manager reply queue it leaves (a reply waiting in it) is a reply queue, not a warning; the
stream fanouts (their message count is retention) are never paged. The module switches the shared cloud to the
profile and back (`STACKTOP_TESTCLOUD_PROFILE`, about a minute each way)."""

from __future__ import annotations

import asyncio
import os
import time
from collections.abc import Iterator
from typing import Any

import pika
import pytest

from tests.integration.conftest import testcloud as bring
from tests.testbed.openstack import OpenStackCloud, create_server, delete_server_and_wait, service_killed
from tui.collectors.rabbitmq import RabbitMQCollector
from tui.models.finding import Finding

pytestmark = pytest.mark.integration

VHOST = "openstack2025"
MGMT = os.environ.get("STACKTOP_RABBITMQ_MGMT_URL", "http://127.0.0.1:15672")


@pytest.fixture(scope="module")
def cloud2025(openstack_cloud: OpenStackCloud) -> Iterator[OpenStackCloud]:
    before = os.environ.get("STACKTOP_TESTCLOUD_PROFILE")
    os.environ["STACKTOP_TESTCLOUD_PROFILE"] = "2025"
    try:
        bring("up", "openstack", timeout=900)
        yield openstack_cloud
    finally:
        if before is None:
            os.environ.pop("STACKTOP_TESTCLOUD_PROFILE", None)
        else:
            os.environ["STACKTOP_TESTCLOUD_PROFILE"] = before
        bring("up", "openstack", timeout=900)  # back to the default profile for the tests after these


def collector() -> RabbitMQCollector:
    return RabbitMQCollector(MGMT, "guest", "guest", vhosts=[VHOST], interval=5, timeout=15)


async def poll_until(c: RabbitMQCollector, pred: Any, what: str, timeout: float = 120.0) -> tuple[Any, list[Finding]]:
    from datetime import UTC, datetime

    deadline = time.monotonic() + timeout
    last: tuple[Any, list[Finding]] | None = None
    while time.monotonic() < deadline:
        snap = await c.collect()
        findings = c.findings(snap, datetime.now(UTC))
        last = (snap, findings)
        if pred(snap, findings):
            return last
        await asyncio.sleep(2)
    detail = [(f.severity, f.subject, f.evidence.get("class")) for f in (last[1] if last else [])]
    raise AssertionError(f"timed out after {timeout:g}s waiting for {what}; last findings: {detail}")


def publish(queue: str, body: bytes = b"{}") -> None:
    """A message straight into a queue (default exchange), as a late reply would arrive."""
    conn = pika.BlockingConnection(pika.ConnectionParameters("127.0.0.1", 5672, VHOST,
                                                             pika.PlainCredentials("guest", "guest")))
    try:
        conn.channel().basic_publish("", queue, body)
    finally:
        conn.close()


def test_the_2025_shapes_are_what_the_cloud_declared(cloud2025: OpenStackCloud) -> None:
    async def run() -> Any:
        c = collector()
        try:
            snap, _ = await poll_until(c, lambda s, f: any(q.name == "compute.compute-02" for q in s.queues),
                                       "the cloud's queues")
        finally:
            await c.aclose()
        return snap

    snap = asyncio.run(run())
    by_name = {q.name: q for q in snap.queues}
    assert by_name["compute.compute-02"].queue_type == "quorum"
    assert by_name["compute_fanout"].queue_type == "stream"
    assert "reply_compute-02:nova-compute-02:1" in by_name, sorted(by_name)


def test_compute_down_pages_its_quorum_queue_and_nothing_else(cloud2025: OpenStackCloud, conn: Any) -> None:
    reply = "reply_compute-02:nova-compute-02:1"

    async def scenario() -> list[Finding]:
        c = collector()
        try:
            def paged(snap: Any, findings: list[Finding]) -> bool:
                return any(f.severity == "critical" and f.subject == f"{VHOST}/compute.compute-02"
                           for f in findings) and any(f.evidence.get("queue") == reply for f in findings)

            _, findings = await poll_until(c, paged, "compute.compute-02 critical and its reply queue reported",
                                           timeout=180)
            return findings
        finally:
            await c.aclose()

    # the build goes out before nova notices the compute is gone (service_down_time): the scheduler still picks
    # compute-02 and casts the build to compute.compute-02, where nobody reads it
    with service_killed(conn, "nova-compute-02", wait_down=False):
        server = create_server(conn, host="compute-02")
        try:
            publish(reply)  # a reply the dead process never reads
            findings = asyncio.run(scenario())
        finally:
            delete_server_and_wait(conn, server.id)
    critical = [f.subject for f in findings if f.severity == "critical"]
    assert critical == [f"{VHOST}/compute.compute-02"], [(f.severity, f.subject) for f in findings]
    left = next(f for f in findings if f.evidence.get("queue") == reply)
    assert left.evidence.get("class") == "reply" and left.severity == "info", (left.severity, left.evidence)
    louder = [(f.severity, f.subject, f.evidence.get("class")) for f in findings
              if f.severity in ("warning", "critical") and f.subject != f"{VHOST}/compute.compute-02"]
    assert louder == [], "no queue-manager reply/fanout name and no stream fanout is a warning"
    assert not [f for f in findings if str(f.evidence.get("queue", "")).endswith("_fanout")], \
        "a stream fanout's messages are retention, not backlog"
