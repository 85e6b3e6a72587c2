"""Triage hints on the real test bed (kept few and short: the cloud is shared with other sessions).

- nova-conductor stopped (SIGTERM, held) -> exactly one triage.* hint, naming nova-conductor and the message
  bus, citing the nova.fleet_down finding; started again -> no hint. Services + RabbitMQ (vhost `openstack`,
  where the cloud's queues are) are read, as stacktop would.
- Galera quorum loss (nodes 2 and 3 killed) -> triage.galera_no_quorum, whose exact read/write claims are then
  checked on the surviving server itself; recovered -> no hint.

Each scenario restores what it broke in `finally` (context managers of tests/testbed and the Galera scenarios).
"""

from __future__ import annotations

import signal
import time
from collections.abc import AsyncIterator
from typing import Any

import pymysql
import pytest

from tests.integration.galera.scenarios import TEST_TABLE, ensure_healthy, execute, killed
from tests.integration.galera.scenarios import connect as galera_connect
from tests.integration.triage.conftest import Poll, Triage
from tests.testbed.openstack import KillGuard, OpenStackCloud, service_killed, wait_all_healthy
from tui.collectors.galera import GaleraCollector
from tui.collectors.rabbitmq import RabbitMQCollector
from tui.collectors.services import ServicesCollector
from tui.config import OpenStackConfig, Thresholds
from tui.openstack import connect
from tui.rules.quorum import READS_FAIL, WRITES_FAIL

pytestmark = pytest.mark.integration

# the test cloud's lowered timers (testcloud/README.md)
THRESHOLDS = Thresholds(service_down_time=20, agent_down_time=20, volume_service_down_time=20,
                        fleet_down_fraction=0.5)
DOWN = THRESHOLDS.service_down_time


@pytest.fixture
async def control_plane(openstack_cloud: OpenStackCloud, rabbitmq_broker: Any) -> AsyncIterator[Triage]:
    cfg = OpenStackConfig(cloud=openstack_cloud.cloud, clouds_file=str(openstack_cloud.clouds_yaml), interval=2,
                          timeout=15)
    services = ServicesCollector(cfg, THRESHOLDS, client_factory=lambda: connect(cfg), interval=2)
    rabbit = RabbitMQCollector(rabbitmq_broker.mgmt_url, rabbitmq_broker.user, rabbitmq_broker.password,
                               vhosts=("openstack",), interval=2, timeout=10)
    triage = Triage([services, rabbit])
    try:
        yield triage
    finally:
        await triage.aclose()


def keystone_states(triage: Triage) -> list[str]:
    """What the services source said of Keystone at each poll (for a failure's message)."""
    out = []
    for p in triage.polls:
        snap = getattr(p.observations.get("services"), "snapshot", None)
        ks = getattr(snap, "keystone", None)
        out.append(f"{p.t:.1f}s " + ("-" if ks is None else "ok" if ks.ok and not ks.late
                                     else f"late {ks.late}" if ks.ok else f"down {ks.error}"))
    return out


async def test_stopped_conductor_is_one_hint_naming_conductor_and_bus_citing_the_fleet(
        openstack_cloud: OpenStackCloud, control_plane: Triage) -> None:
    conn = openstack_cloud.connect()
    try:
        t0 = time.monotonic()
        wait_all_healthy(conn, timeout=120)
        await control_plane.until(lambda p: not p.hints and not p.observations["services"].error, timeout=60,
                                  what="a healthy baseline without hints")
        print(f"\n[timing] healthy baseline after {time.monotonic() - t0:.1f} s")
        with service_killed(conn, "nova-conductor", sig=signal.SIGTERM, wait_down=False):
            guard = KillGuard("nova-conductor", signal.SIGTERM)
            # first the early warning: its queues lost their consumer (the computes' late heartbeats follow it)
            early = await control_plane.until(lambda p: guard.check() or p.hints, timeout=DOWN,
                                              what="a triage hint")
            stopped_at = guard.killed_at
            assert [(h.kind, h.evidence.get("binary")) for h in early.hints] == [
                ("triage.service_lost", "nova-conductor")], [(h.kind, h.subject) for h in early.hints]
            # then, once the computes are down together, the one bus-or-conductor hint
            found = await control_plane.until(
                lambda p: guard.check() or any(h.kind == "triage.bus_or_conductor" for h in p.hints),
                timeout=2 * DOWN + 40, what="the bus-or-conductor hint")
            (hint,) = found.hints
            assert hint.kind == "triage.bus_or_conductor" and hint.severity == "critical", \
                f"{hint.kind}: {hint.summary} | Keystone per poll: {keystone_states(control_plane)}"
            assert ("nova.fleet_down", "nova-compute") in hint.evidence["derived_from"]
            assert "nova-conductor" in hint.summary and "message bus" in hint.summary
            assert hint.evidence["hosts"] == ["compute-01", "compute-02"]
            print(f"[timing] conductor stopped -> {hint.kind} ({hint.subject}) after "
                  f"{time.monotonic() - stopped_at:.1f} s; cites {hint.evidence['derived_from']}")
            # it stays one hint while RabbitMQ confirms the conductor queue has nobody consuming it
            def cites_queue(p: Poll) -> bool:
                guard.check()
                return any(k == "rabbitmq.queue_no_consumer" for h in p.hints for k, _ in h.evidence["derived_from"])

            later = await control_plane.until(cites_queue, timeout=30, what="the hint citing the conductor queue")
            assert [h.kind for h in later.hints] == ["triage.bus_or_conductor"]
            assert later.hints[0].subject == "nova-conductor"
            assert ("rabbitmq.queue_no_consumer", "openstack/conductor") in later.hints[0].evidence["derived_from"]
            during = [p for p in control_plane.polls if p.t >= stopped_at - control_plane.t0]
            others = {k for p in during for k in p.kinds() if k[0] != "triage.bus_or_conductor"
                      and not (k[0] == "triage.service_lost" and k[1].startswith("nova-conductor@"))}
            assert others == set(), f"no unrelated hint while the conductor is stopped: {others}"
            print(f"[timing] conductor queue cited after {time.monotonic() - stopped_at:.1f} s")
        healthy_at = time.monotonic()
        print(f"[timing] conductor restarted and the cloud healthy {healthy_at - stopped_at:.1f} s after the stop")
        await control_plane.until(lambda p: not p.hints, timeout=120, what="the hint to clear")
        print(f"[timing] hint cleared {time.monotonic() - healthy_at:.1f} s after the cloud was healthy again")
    finally:
        conn.close()


async def test_galera_quorum_loss_hint_says_what_the_server_does(galera_cluster: Any) -> None:
    ensure_healthy(galera_cluster)
    collector = GaleraCollector(galera_cluster.nodes, galera_cluster.reader_user, galera_cluster.reader_password,
                                expected_size=3, interval=1.0, max_backoff_s=1.0)
    triage = Triage([collector], interval=0.5)
    try:
        await triage.until(lambda p: not p.hints and len(p.observations["galera"].snapshot.reachable) == 3,
                           timeout=30, what="3 nodes read, no hint")
        execute(galera_cluster, 1, "CREATE DATABASE IF NOT EXISTS stacktop_test")
        execute(galera_cluster, 1, f"CREATE TABLE IF NOT EXISTS {TEST_TABLE} (id INT AUTO_INCREMENT PRIMARY KEY, "
                                   "v VARCHAR(64))")
        with killed(galera_cluster, 2, 3):
            killed_at = time.monotonic()
            found = await triage.until(lambda p: p.hints, timeout=30, what="the Galera hint")
            (hint,) = found.hints
            assert hint.kind == "triage.galera_no_quorum" and hint.severity == "critical"
            assert ("galera.quorum_lost", "127.0.0.1:3311") in hint.evidence["derived_from"]
            assert '"lists work, creates fail"' in hint.summary and READS_FAIL in hint.summary
            assert WRITES_FAIL in hint.summary
            print(f"\n[timing] 2 of 3 nodes killed -> {hint.kind} after {time.monotonic() - killed_at:.1f} s")
            # what the hint claims is what the surviving node does
            conn = galera_connect(galera_cluster, 1)
            try:
                with conn.cursor() as cur:
                    cur.execute("SELECT 1")  # "SELECT 1 ... still answer"
                    with pytest.raises(pymysql.err.OperationalError) as e:
                        cur.execute(f"SELECT COUNT(*) FROM {TEST_TABLE}")  # SELECT on tables: 1047
                    assert e.value.args[0] == 1047
                    cur.execute("SET SESSION wsrep_dirty_reads=ON")
                    cur.execute(f"SELECT COUNT(*) FROM {TEST_TABLE}")  # reads work with dirty reads
                    with pytest.raises(pymysql.err.OperationalError) as e:
                        cur.execute(f"INSERT INTO {TEST_TABLE} (v) VALUES ('triage')")  # writes: 1047 still
                    assert e.value.args[0] == 1047
            finally:
                conn.close()
        await triage.until(lambda p: not p.hints, timeout=90, what="the Galera hint to clear after recovery")
        print(f"[timing] cleared {time.monotonic() - killed_at:.1f} s after the kill (recovery included)")
    finally:
        await triage.aclose()
        ensure_healthy(galera_cluster)
