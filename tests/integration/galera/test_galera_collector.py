"""The Galera collector and rules against the real 3-node clusters (MariaDB 10.11: testcloud/galera.sh, 11.8:
testcloud/trixie/galera11.sh; every test runs on both): healthy, one node killed, two killed (quorum lost, with
the exact read/write behaviour checked on the server), recovery, desync, flow control, a wrong password on one
node, an unreachable address, no node answering, TLS as each server offers it."""

from __future__ import annotations

import json
from typing import Any

import pymysql
import pytest

from tests.integration.galera.scenarios import (
    connect,
    desynced,
    flow_control,
    killed,
    kinds,
    poll_until,
    reader_password_changed,
)
from tui.errors import SourceError
from tui.jsonable import to_jsonable
from tui.rules.quorum import NO_QUORUM_VERDICT, PC_BOOTSTRAP_OPTION, PC_BOOTSTRAP_VARIABLE, verdict

pytestmark = pytest.mark.integration



def node(snap: Any, address: str) -> Any:
    return next(x for x in snap.nodes if x.address == address)


@pytest.fixture
def addr(galera_cluster: Any) -> dict[int, str]:
    """Data node number -> "host:port" of the cluster under test."""
    return {n: galera_cluster.address(n) for n in galera_cluster.indexes}


async def test_healthy_cluster_has_no_findings(make_collector) -> None:
    c = make_collector()
    snap, found = await poll_until(c, lambda s, f: len(s.reachable) == 3, timeout=15, what="all 3 nodes read")
    assert found == []
    assert verdict(snap) == "healthy"
    assert [n.node_name for n in snap.nodes] == ["node1", "node2", "node3"]
    for n in snap.nodes:
        assert (n.cluster_status, n.state_comment, n.ready, n.cluster_size) == ("Primary", "Synced", True, 3)
        assert n.error is None and n.desync is False and n.flow_control_active is False
    assert len({n.conf_id for n in snap.nodes}) == 1 and len({n.state_uuid for n in snap.nodes}) == 1
    second = await c.collect()
    assert all(n.flow_control_paused_share is not None and n.flow_control_paused_share < 0.1 for n in second.nodes)
    assert all(n.query_ms is not None and n.query_ms < 200 for n in second.nodes)
    assert c.findings(second, snap_time()) == []
    json.dumps(to_jsonable(second))


def snap_time():
    from datetime import UTC, datetime

    return datetime.now(UTC)


async def test_unreachable_address_is_a_row_not_a_crash(make_collector, galera_cluster) -> None:
    c = make_collector(nodes=(*galera_cluster.nodes, "127.0.0.1:1"))
    snap, found = await poll_until(c, lambda s, f: len(s.reachable) == 3, timeout=15, what="3 nodes read")
    bad = snap.nodes[3]
    assert not bad.reachable and bad.error.startswith("(2003)") and not bad.auth_error
    assert kinds(found) == {("galera.node_unreachable", "127.0.0.1:1"): "warning"}
    assert verdict(snap) == "3/3 Primary; 127.0.0.1:1 unreachable"


async def test_tls_as_the_server_offers_it_never_a_silent_plaintext_read(galera_cluster) -> None:
    """[galera] tls = true: MariaDB 10.11 here offers no TLS -> one line saying so (the nodes failing alike share
    it), never a plaintext read. MariaDB 11.8 offers TLS with the self-signed certificate it made at start ->
    verification refuses it in one line naming cacert / insecure; insecure = true reads every node over TLS."""
    from tui.collectors.galera import build
    from tui.collectors.galera_sql import pymysql_connector, tls_context
    from tui.config import Config, GaleraConfig, Secret

    cfg = GaleraConfig(nodes=tuple(galera_cluster.nodes), user=galera_cluster.reader_user,
                       password=Secret(galera_cluster.reader_password, "test"), tls=True)
    (c,) = build(Config(galera=cfg))
    try:
        with pytest.raises(SourceError) as err:
            await c.collect()
    finally:
        await c.aclose()
    text = str(err.value)
    assert "\n" not in text and all(a in text for a in galera_cluster.nodes), text
    if not galera_cluster.offers_tls:
        assert text.count("does not offer TLS") == 1 and "drop [galera] tls" in text, text
        return
    assert text.count("TLS certificate not trusted (certificate verify failed: self-signed certificate)") == 1, text
    assert "set [galera] cacert" in text and "insecure = true" in text, text
    (c,) = build(Config(galera=GaleraConfig(nodes=cfg.nodes, user=cfg.user, password=cfg.password, insecure=True)))
    try:
        snap = await c.collect()
    finally:
        await c.aclose()
    assert [n.cluster_status for n in snap.nodes] == ["Primary"] * len(galera_cluster.nodes)
    conn = pymysql_connector(ssl=tls_context(insecure=True))(galera_cluster.nodes[0], cfg.user,
                                                              cfg.password.value, 5.0)
    try:
        ((_, cipher),) = conn.query("SHOW SESSION STATUS LIKE 'Ssl_cipher'")
    finally:
        conn.close()
    assert cipher.startswith("TLS_"), cipher


async def test_no_node_answering_fails_the_source_in_one_line(make_collector, addr) -> None:
    c = make_collector(password="wrong-everywhere")
    with pytest.raises(SourceError) as err:
        await c.collect()
    message = str(err.value)
    assert "\n" not in message and "[galera]" in message
    assert all(a in message for a in addr.values()) and "(1045)" in message
    assert "wrong-everywhere" not in message


async def test_wrong_password_on_one_node(make_collector, galera_cluster, addr) -> None:
    c = make_collector()
    with reader_password_changed(galera_cluster, 2, "not-the-password"):
        snap, found = await poll_until(c, lambda s, f: not node(s, addr[2]).reachable, timeout=15,
                                       what="node2 to refuse the reader")
        bad = node(snap, addr[2])
        assert bad.auth_error and bad.error.startswith("(1045) Access denied for user 'stacktop'")
        for n in (1, 3):
            assert node(snap, addr[n]).reachable and node(snap, addr[n]).cluster_status == "Primary"
        assert kinds(found) == {("galera.node_unreachable", addr[2]): "warning"}
        assert "cannot log in" in found[0].summary
        assert verdict(snap) == f"3/3 Primary; {addr[2]} login refused"
        json.dumps(to_jsonable(snap))
    await poll_until(c, lambda s, f: f == [], timeout=15, what="node2 read again after the password fix")


async def test_kill_one_node_is_degraded_but_primary(make_collector, galera_cluster, addr) -> None:
    c = make_collector()
    await poll_until(c, lambda s, f: len(s.reachable) == 3, timeout=15, what="all 3 nodes read")
    with killed(galera_cluster, 3):
        snap, found = await poll_until(
            c, lambda s, f: ("galera.size_mismatch", "cluster") in kinds(f), timeout=30,
            what="size_mismatch after killing node3")
        assert kinds(found) == {("galera.size_mismatch", "cluster"): "warning",
                                ("galera.node_unreachable", addr[3]): "warning"}
        for n in (1, 2):
            assert node(snap, addr[n]).cluster_status == "Primary" and node(snap, addr[n]).cluster_size == 2
            assert node(snap, addr[n]).ready is True
        assert verdict(snap) == "degraded 2/3, still Primary"
    # the same collector reconnects to the restarted node
    snap, _ = await poll_until(c, lambda s, f: f == [], timeout=30, what="findings to clear after restart")
    assert verdict(snap) == "healthy"


async def test_kill_two_quorum_lost_exact_behaviour_then_recover(make_collector, galera_cluster, addr) -> None:
    c = make_collector()
    await poll_until(c, lambda s, f: len(s.reachable) == 3, timeout=15, what="all 3 nodes read")
    with killed(galera_cluster, 2, 3):
        snap, found = await poll_until(
            c, lambda s, f: ("galera.quorum_lost", addr[1]) in kinds(f), timeout=30,
            what="quorum_lost on the survivor")
        survivor = node(snap, addr[1])
        assert (survivor.cluster_status, survivor.ready, survivor.state_comment) == ("non-Primary", False,
                                                                                     "Initialized")
        f = next(x for x in found if x.kind == "galera.quorum_lost")
        assert f.severity == "critical"
        assert "ERROR 1047" in f.summary and "unless the client sets wsrep_dirty_reads=ON" in f.summary
        assert "INSERT/UPDATE/DELETE and DDL fail" in f.summary
        assert f"node1 ({addr[1]})" in f.next_step
        sql = PC_BOOTSTRAP_VARIABLE if galera_cluster.provider_plugin else PC_BOOTSTRAP_OPTION
        assert f"run {sql}. Risk" in f.next_step  # the statement the server takes (galera11.sh uses it too)
        assert kinds(found)[("galera.size_mismatch", "cluster")] == "critical"
        assert verdict(snap) == NO_QUORUM_VERDICT

        # what the finding says is what the server does
        conn = connect(galera_cluster, 1)
        try:
            with conn.cursor() as cur:
                cur.execute("SELECT 1")
                assert cur.fetchall() == ((1,),)
                with pytest.raises(pymysql.err.OperationalError) as e:
                    cur.execute("SELECT COUNT(*) FROM stacktop_test.t")
                assert e.value.args[0] == 1047
                with pytest.raises(pymysql.err.OperationalError) as e:
                    cur.execute("INSERT INTO stacktop_test.t (v) VALUES ('no quorum')")
                assert e.value.args[0] == 1047
                cur.execute("SET SESSION wsrep_dirty_reads=ON")
                cur.execute("SELECT COUNT(*) FROM stacktop_test.t")
                with pytest.raises(pymysql.err.OperationalError) as e:
                    cur.execute("INSERT INTO stacktop_test.t (v) VALUES ('dirty')")
                assert e.value.args[0] == 1047
        finally:
            conn.close()

        # recovery choice (2): pc.bootstrap on the most advanced (only) node
        galera_cluster.run("bootstrap-pc", "1")
        snap, found = await poll_until(
            c, lambda s, f: ("galera.quorum_lost", addr[1]) not in kinds(f) and node(s, addr[1]).primary,
            timeout=30, what="quorum_lost to clear after pc.bootstrap")
        assert verdict(snap) == "degraded 1/3, still Primary"
    snap, _ = await poll_until(c, lambda s, f: f == [], timeout=60, what="all findings to clear after restart")
    assert verdict(snap) == "healthy"


async def test_desync_is_not_synced_warning(make_collector, galera_cluster, addr) -> None:
    c = make_collector()
    with desynced(galera_cluster, 2):
        snap, found = await poll_until(c, lambda s, f: ("galera.not_synced", addr[2]) in kinds(f), timeout=15,
                                       what="not_synced on node2")
        assert kinds(found) == {("galera.not_synced", addr[2]): "warning"}
        assert node(snap, addr[2]).state_comment == "Donor/Desynced" and node(snap, addr[2]).desync is True
        assert "Donor/Desynced" in found[0].summary and "wsrep_desync=ON" in found[0].summary
        assert verdict(snap) == "3/3 Primary; node2 Donor/Desynced"
    await poll_until(c, lambda s, f: f == [], timeout=15, what="not_synced to clear")


async def test_flow_control_from_a_locked_table(make_collector, galera_cluster, addr) -> None:
    c = make_collector()
    await poll_until(c, lambda s, f: len(s.reachable) == 3, timeout=15, what="all 3 nodes read")
    with flow_control(galera_cluster, lock_node=3, write_node=1) as writer:
        snap, found = await poll_until(
            c, lambda s, f: ("galera.flow_control", "cluster") in kinds(f)
            and max(n.flow_control_paused_share or 0 for n in s.nodes) > 0.5,
            timeout=30, every=0.5, what="flow_control with a paused share over 50%")
        f = next(x for x in found if x.kind == "galera.flow_control")
        assert f.severity == "warning"
        assert f"node3 ({addr[3]}) is asking for the pauses" in f.summary
        assert node(snap, addr[3]).recv_queue and node(snap, addr[3]).recv_queue > 0
        assert all(n.state_comment == "Synced" for n in snap.nodes)  # flow control hides behind Synced
        assert "flow control paused" in verdict(snap)
        assert writer.error is None
    await poll_until(c, lambda s, f: ("galera.flow_control", "cluster") not in kinds(f), timeout=30,
                     every=0.5, what="flow_control to clear")


async def test_connections_are_kept_and_failed_connects_back_off(galera_cluster, addr) -> None:
    """One connect per reachable node over many polls; a refusing address is retried only after its backoff
    (1 s, 2 s, 4 s ... on the collector's monotonic clock, driven by hand here)."""
    from tui.collectors.galera import GaleraCollector
    from tui.collectors.galera_sql import pymysql_connector

    real = pymysql_connector()
    calls: list[str] = []

    def counting(address, user, password, timeout):  # the real pymysql connector, counted
        calls.append(address)
        return real(address, user, password, timeout)

    clock = [1000.0]
    c = GaleraCollector((addr[1], "127.0.0.1:1"), galera_cluster.reader_user, galera_cluster.reader_password,
                        expected_size=1, connector=counting, monotonic=lambda: clock[0])
    try:
        for _ in range(5):
            snap = await c.collect()
        assert calls.count(addr[1]) == 1 and calls.count("127.0.0.1:1") == 1
        assert snap.nodes[1].error.startswith("(2003)")  # the last error is kept while backing off
        clock[0] += 1.01
        await c.collect()
        assert calls.count("127.0.0.1:1") == 2
        clock[0] += 1.5  # second backoff is 2 s
        await c.collect()
        assert calls.count("127.0.0.1:1") == 2
        clock[0] += 0.6
        await c.collect()
        assert calls.count("127.0.0.1:1") == 3 and calls.count(addr[1]) == 1
    finally:
        await c.aclose()
