"""Early warning for the bus and the database: how soon stacktop names a stopped RabbitMQ node (the 3-node
RabbitMQ 4.0 cluster) and a killed Galera node (the 3-node MariaDB 10.11 cluster), against how soon the cluster
itself says so (another RabbitMQ node's management API lists it not running; a surviving Galera node's
wsrep_cluster_size drops), asked every 0.5 s. stacktop polls every 5 s, as testcloud/stacktop.toml ships.

The measured seconds join tests/integration/early_warning/test_detection_latency.py's (STACKTOP_LATENCY_OUT).
"""

from __future__ import annotations

import asyncio
import contextlib
import threading
import time
from collections.abc import Callable
from datetime import UTC, datetime
from typing import Any

import pytest

from tests.integration.conftest import start_galera
from tests.integration.early_warning.test_detection_latency import record_cluster
from tests.integration.galera.scenarios import _evicted, ensure_healthy, status
from tui.collectors.galera import GaleraCollector
from tui.collectors.rabbitmq import RabbitMQCollector
from tui.models.finding import Finding

pytestmark = pytest.mark.integration

POLL_S = 5.0


class CloudView(threading.Thread):
    """Seconds since the fault until `says()` first returns True, asked every 0.5 s."""

    def __init__(self, says: Callable[[], bool], fault_at: float) -> None:
        super().__init__(daemon=True)
        self.says, self.fault_at = says, fault_at
        self.after: float | None = None
        self.stop = threading.Event()

    def run(self) -> None:
        while not self.stop.is_set() and self.after is None:
            with contextlib.suppress(Exception):
                if self.says():
                    self.after = time.monotonic() - self.fault_at
            self.stop.wait(0.5)


async def watch(collector: Any, apply: Callable[[], None], cloud_says: Callable[[], bool],
                names: Callable[[Finding], bool], seconds: float) -> tuple[float | None, float | None]:
    """(stacktop named it, the cluster said it), in seconds after the fault."""
    for _ in range(2):  # history, as a running dashboard has
        snap = await collector.collect()
        collector.findings(snap, datetime.now(UTC))
    await asyncio.sleep(POLL_S * 0.4)
    fault_at = time.monotonic()
    await asyncio.to_thread(apply)
    view = CloudView(cloud_says, fault_at)
    view.start()
    named: float | None = None
    try:
        while time.monotonic() - fault_at < seconds:
            start = time.monotonic()
            try:
                snap = await asyncio.wait_for(collector.collect(), timeout=30)
            except Exception:  # a failing poll: not yet, as in the runner
                snap = None
            if snap is not None and named is None \
                    and any(names(f) for f in collector.findings(snap, datetime.now(UTC))):
                named = time.monotonic() - fault_at
            if named is not None and view.after is not None:
                break
            await asyncio.sleep(max(0.0, POLL_S - (time.monotonic() - start)))
    finally:
        view.stop.set()
        await collector.aclose()
    return named, view.after


async def test_a_stopped_rabbitmq_node_is_named_at_the_next_poll(rabbitmq4_cluster: Any) -> None:
    cluster = rabbitmq4_cluster
    broker = cluster.broker(0)
    node = cluster.nodes[2]
    collector = RabbitMQCollector(broker.mgmt_url, broker.user, broker.password, interval=POLL_S, timeout=10)
    try:
        named, said = await watch(
            collector, lambda: cluster.run("stop-node", "2"),
            lambda: node not in cluster.running_nodes(besides=2),
            lambda f: f.kind == "rabbitmq.node_down" and f.subject == node, seconds=40)
    finally:
        cluster.start_node(2)
    record_cluster("RabbitMQ node stopped (rabbitmq4)", named, said)
    assert named is not None and said is not None
    assert named <= said + POLL_S + 3.0, (named, said)  # its next poll after the cluster knows


async def test_a_killed_galera_node_is_named_before_the_cluster_evicts_it() -> None:
    cluster = start_galera("galera")
    ensure_healthy(cluster)
    survivors = [n for n in cluster.indexes if n != 3]
    collector = GaleraCollector(tuple(cluster.nodes), cluster.reader_user, cluster.reader_password,
                                expected_size=len(cluster.nodes), interval=POLL_S)
    address = cluster.nodes[-1]
    try:
        named, said = await watch(
            collector, lambda: cluster.run("kill", "3"),
            lambda: int(status(cluster, survivors[0], "wsrep_cluster_size")["wsrep_cluster_size"] or 0)
            < len(cluster.nodes),
            lambda f: f.kind.startswith("galera.") and (f.subject == address or address in str(f.evidence)),
            seconds=40)
    finally:
        with contextlib.suppress(TimeoutError):
            from tests.testbed.wait import wait_for

            wait_for(lambda: _evicted(cluster, survivors, len(survivors)), timeout=30, interval=0.2,
                     what="the survivors to evict node 3")
        cluster.run("up")
    record_cluster("Galera node killed", named, said)
    assert named is not None and said is not None
    assert named <= POLL_S + 3.0, named  # the next poll finds the node refusing connections
