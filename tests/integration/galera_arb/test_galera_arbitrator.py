"""Two data nodes + garbd against the real cluster (testcloud/galera-arb.sh): healthy with the arbitrator counted
in expected_size; one data node killed -> degraded, still Primary with the arbitrator (writes checked on the
server), not quorum lost; the arbitrator killed -> one finding naming it. Restored on exit (scenarios.killed)."""

from __future__ import annotations

from typing import Any

import pytest

from tests.integration.galera.scenarios import connect, killed, kinds, poll_until
from tui.rules.quorum import verdict

pytestmark = pytest.mark.integration
GARBD = "127.0.0.1:4633"


async def test_two_nodes_and_garbd_are_healthy(arb_collector, galera_arb_cluster) -> None:
    assert arb_collector.expected_size == 3
    snap, found = await poll_until(arb_collector, lambda s, f: len(s.reachable) == 2, timeout=15,
                                   what="both data nodes read")
    assert found == [] and verdict(snap) == "healthy"
    for n in snap.nodes:
        assert (n.cluster_status, n.state_comment, n.ready, n.cluster_size) == ("Primary", "Synced", True, 3)
        # what the data nodes report about garbd: a member with an empty incoming address
        assert n.incoming_addresses == ",".join(galera_arb_cluster.nodes) + ","
        assert n.arbitrators_seen == 1


async def test_one_data_node_killed_is_degraded_with_the_arbitrator(arb_collector, galera_arb_cluster) -> None:
    second = galera_arb_cluster.address(2)
    await poll_until(arb_collector, lambda s, f: len(s.reachable) == 2, timeout=15, what="both data nodes read")
    with killed(galera_arb_cluster, 2):
        snap, found = await poll_until(
            arb_collector, lambda s, f: ("galera.size_mismatch", "cluster") in kinds(f), timeout=30,
            what="size_mismatch after killing node2")
        assert kinds(found) == {("galera.size_mismatch", "cluster"): "warning",
                                ("galera.node_unreachable", second): "warning"}
        summary = next(f.summary for f in found if f.kind == "galera.size_mismatch")
        assert "1 of 2 data nodes" in summary and "Still Primary with the arbitrator: reads and writes work" in summary
        survivor = snap.nodes[0]
        assert (survivor.cluster_status, survivor.ready, survivor.cluster_size) == ("Primary", True, 2)
        assert survivor.arbitrators_seen == 1
        assert verdict(snap) == "degraded 2/3, still Primary with the arbitrator"
        # what the finding says is what the server does: the survivor takes writes
        conn = connect(galera_arb_cluster, 1)
        try:
            with conn.cursor() as cur:
                cur.execute("INSERT INTO stacktop_test.t (v) VALUES ('with the arbitrator')")
                cur.execute("DELETE FROM stacktop_test.t WHERE v = 'with the arbitrator'")
        finally:
            conn.close()
    snap, _ = await poll_until(arb_collector, lambda s, f: f == [], timeout=60, what="findings to clear")
    assert verdict(snap) == "healthy"


async def test_arbitrator_killed_is_a_finding_naming_it(arb_collector, galera_arb_cluster) -> None:
    await poll_until(arb_collector, lambda s, f: len(s.reachable) == 2, timeout=15, what="both data nodes read")
    with killed(galera_arb_cluster, "garbd"):
        snap, found = await poll_until(
            arb_collector, lambda s, f: ("galera.arbitrator_missing", GARBD) in kinds(f), timeout=30,
            what="arbitrator_missing after killing garbd")
        assert kinds(found) == {("galera.arbitrator_missing", GARBD): "warning"}
        assert found[0].summary.startswith(f"Galera arbitrator {GARBD} is not in the cluster")
        assert all(n.cluster_status == "Primary" and n.cluster_size == 2 and n.arbitrators_seen == 0
                   for n in snap.nodes)
        assert verdict(snap) == f"degraded 2/3, still Primary; arbitrator {GARBD} missing"
    snap, _ = await poll_until(arb_collector, lambda s, f: f == [], timeout=60, what="findings to clear")
    assert verdict(snap) == "healthy"


def test_up_again_is_a_no_op_and_status_lists_garbd(galera_arb_cluster: Any) -> None:
    from tests.integration.conftest import run_script
    from tests.testbed import paths

    rc, out = run_script([str(paths.TESTCLOUD_SCRIPT), "up", "galera-arb"], 60)
    assert rc == 0 and "starting" not in out, out
    rc, out = run_script([str(paths.TESTCLOUD_SCRIPT), "status", "galera-arb"], 30)
    assert rc == 0 and out.count("cluster_size=3 cluster_status=Primary") == 2, out
    assert f"garbd {GARBD} pid=" in out, out
