"""Galera rules (tui.rules.quorum) and the one-line verdict, on snapshots shaped like the measured states."""

from __future__ import annotations

import dataclasses
from datetime import UTC, datetime

from tui.models.galera import NON_PRIMARY_CONF_ID, GaleraNode, GaleraSnapshot
from tui.rules.quorum import (
    NO_QUORUM_VERDICT,
    GaleraThresholds,
    galera_findings,
    most_advanced,
    verdict,
)

NOW = datetime(2026, 1, 1, tzinfo=UTC)
UUID = "3ed5d036-ee3b-11f1-a091-0ad27cc1aae1"


def synced(n: int, size: int = 3, conf_id: int = 7, **kw) -> GaleraNode:
    base = dict(
        address=f"127.0.0.1:331{n}", reachable=True, node_name=f"node{n}", cluster_name="c", cluster_size=size,
        cluster_status="Primary", state_comment="Synced", ready=True, connected=True, desync=False,
        conf_id=conf_id, state_uuid=UUID, evs_state="OPERATIONAL", last_committed=100 + n, recv_queue=0,
        send_queue=0, flow_control_active=False, flow_control_paused_ns=0, flow_control_paused_share=0.0,
        flow_control_interval_s=5.0, flow_control_sent_delta=0, recv_queue_history=(0, 0, 0),
    )
    base.update(kw)
    return GaleraNode(**base)


def non_primary(n: int, last_committed: int = 200) -> GaleraNode:
    # measured: 1 of 3 left (facts.md)
    return synced(n, size=1, conf_id=NON_PRIMARY_CONF_ID, cluster_status="non-Primary",
                  state_comment="Initialized", ready=False, last_committed=last_committed)


def down(n: int, error: str = "(2003) Can't connect to MySQL server on '127.0.0.1' ([Errno 111] Connection refused)",
         auth: bool = False) -> GaleraNode:
    return GaleraNode(address=f"127.0.0.1:331{n}", reachable=False, error=error, auth_error=auth)


def snap(*nodes: GaleraNode, expected: int | None = 3, disagreement_polls: int = 0) -> GaleraSnapshot:
    return GaleraSnapshot(nodes=tuple(nodes), expected_size=expected, taken_at=0.0, interval_s=5.0,
                          disagreement_polls=disagreement_polls)


def kinds(s: GaleraSnapshot, th: GaleraThresholds | None = None) -> dict[tuple[str, str], str]:
    found = galera_findings(s, NOW, th) if th else galera_findings(s, NOW)
    assert all(f.source == "galera" for f in found)
    return {(f.kind, f.subject): f.severity for f in found}


def one(s: GaleraSnapshot, kind: str):
    found = [f for f in galera_findings(s, NOW) if f.kind == kind]
    assert len(found) == 1, found
    return found[0]


def test_healthy_has_no_findings_and_says_healthy() -> None:
    s = snap(synced(1), synced(2), synced(3))
    assert galera_findings(s, NOW) == []
    assert verdict(s) == "healthy"


def test_one_node_down_is_a_warning_and_degraded() -> None:
    s = snap(synced(1, size=2), synced(2, size=2), down(3))
    assert kinds(s) == {("galera.size_mismatch", "cluster"): "warning",
                        ("galera.node_unreachable", "127.0.0.1:3313"): "warning"}
    assert "Losing one more node stops it" in one(s, "galera.size_mismatch").summary
    assert verdict(s) == "degraded 2/3, still Primary"


def test_quorum_lost_on_the_survivor_states_the_exact_behaviour() -> None:
    s = snap(non_primary(1), down(2), down(3))
    found = kinds(s)
    assert found[("galera.quorum_lost", "127.0.0.1:3311")] == "critical"
    assert found[("galera.size_mismatch", "cluster")] == "critical"
    f = one(s, "galera.quorum_lost")
    assert "ERROR 1047" in f.summary
    assert "unless the client sets wsrep_dirty_reads=ON" in f.summary
    assert "INSERT/UPDATE/DELETE and DDL fail" in f.summary
    assert "SELECT 1, SHOW STATUS and information_schema still answer" in f.summary
    assert "restart the missing nodes" in f.next_step
    assert "pc.bootstrap=YES" in f.next_step and "node1 (127.0.0.1:3311)" in f.next_step
    assert "split brain" in f.next_step
    assert f.evidence["wsrep_ready"] == "OFF" and f.evidence["wsrep_cluster_status"] == "non-Primary"
    assert verdict(s) == NO_QUORUM_VERDICT == "NO QUORUM: reads fail (1047), writes fail"


def test_ready_off_alone_is_quorum_lost() -> None:
    s = snap(synced(1), synced(2), synced(3, ready=False, state_comment="Joined"))
    f = one(s, "galera.quorum_lost")
    assert f.subject == "127.0.0.1:3313" and f.severity == "critical"
    assert "wsrep_ready=OFF although in the Primary component" in f.summary and "1047" in f.summary


def test_pc_bootstrap_names_the_most_advanced_reachable_node() -> None:
    nodes = (non_primary(1, last_committed=50), non_primary(2, last_committed=90), non_primary(3, 70))
    assert most_advanced(nodes).address == "127.0.0.1:3312"
    s = snap(*nodes)
    for f in galera_findings(s, NOW):
        if f.kind == "galera.quorum_lost":
            assert "node2 (127.0.0.1:3312)" in f.next_step
    assert verdict(s) == NO_QUORUM_VERDICT


def test_size_majority_rules_for_five_nodes() -> None:
    five = [synced(n, size=3) for n in (1, 2, 3)] + [down(4), down(5)]
    assert one(snap(*five, expected=5), "galera.size_mismatch").severity == "warning"
    two = [synced(1, size=2), synced(2, size=2)]
    assert one(snap(*two, down(3), expected=4), "galera.size_mismatch").severity == "critical"  # 2 of 4
    big = snap(synced(1, size=4), synced(2, size=4), synced(3, size=4))
    assert one(big, "galera.size_mismatch").severity == "info"
    assert one(big, "galera.size_mismatch").severity == "info"
    assert verdict(big).startswith("4/3 Primary")


def test_no_expected_size_means_no_size_rule() -> None:
    s = snap(synced(1, size=2), synced(2, size=2), expected=None)
    assert kinds(s) == {}
    assert verdict(s) == "healthy"


def test_wrong_password_is_a_row_error_not_a_down_node() -> None:
    s = snap(synced(1), synced(2), down(3, "(1045) Access denied for user 'stacktop'@'127.0.0.1'", auth=True))
    f = one(s, "galera.node_unreachable")
    assert "cannot log in" in f.summary and "[galera] user / password" in f.next_step
    assert kinds(s) == {("galera.node_unreachable", "127.0.0.1:3313"): "warning"}
    assert verdict(s) == "3/3 Primary; 127.0.0.1:3313 login refused"


def test_partitioned_needs_consecutive_polls() -> None:
    nodes = (synced(1, size=2, conf_id=8), synced(2, size=2, conf_id=8), non_primary(3))
    assert ("galera.partitioned", "cluster") not in kinds(snap(*nodes, disagreement_polls=1))
    found = kinds(snap(*nodes, disagreement_polls=2))
    assert found[("galera.partitioned", "cluster")] == "critical"
    assert found[("galera.quorum_lost", "127.0.0.1:3313")] == "critical"
    assert found[("galera.size_mismatch", "cluster")] == "warning"
    v = verdict(snap(*nodes, disagreement_polls=2))
    assert v.startswith("degraded 2/3, still Primary") and "node3 NO QUORUM" in v and "PARTITIONED" in v


def test_different_history_uuid_is_partitioned() -> None:
    s = snap(synced(1), synced(2), synced(3, state_uuid="00000000-0000-0000-0000-000000000001"),
             disagreement_polls=3)
    f = one(s, "galera.partitioned")
    assert "wsrep_cluster_state_uuid" in f.summary and "separate cluster history" in f.summary


def test_donor_desynced_is_a_warning_joining_is_info() -> None:
    s = snap(synced(1), synced(2, state_comment="Donor/Desynced", desync=True), synced(3))
    f = one(s, "galera.not_synced")
    assert f.severity == "warning" and "wsrep_desync=ON" in f.summary and f.subject == "127.0.0.1:3312"
    assert verdict(s) == "3/3 Primary; node2 Donor/Desynced"
    sst = one(snap(synced(1), synced(2, state_comment="Donor/Desynced"), synced(3)), "galera.not_synced")
    assert "state transfer" in sst.summary
    for comment in ("Joining", "Joined", "Joining: receiving State Transfer"):
        f = one(snap(synced(1), synced(2), synced(3, state_comment=comment)), "galera.not_synced")
        assert f.severity == "info"


def test_non_primary_node_is_not_also_not_synced() -> None:
    s = snap(non_primary(1), down(2), down(3))
    assert "galera.not_synced" not in {k for k, _ in kinds(s)}


def test_flow_control_by_paused_share_names_the_sender() -> None:
    s = snap(synced(1, flow_control_paused_share=0.7), synced(2, flow_control_paused_share=0.7),
             synced(3, flow_control_paused_share=0.7, flow_control_sent_delta=4, recv_queue=16))
    f = one(s, "galera.flow_control")
    assert f.severity == "warning" and "70%" in f.summary
    assert "node3 (127.0.0.1:3313) is asking for the pauses (recv queue 16)" in f.summary
    live = snap(synced(1, flow_control_active=True), synced(2, flow_control_active=True),
                synced(3, flow_control_active=True, flow_control_requested=True, recv_queue=29))
    assert "node3 (127.0.0.1:3313) is asking for the pauses (recv queue 29)" in one(live, "galera.flow_control").summary
    assert verdict(s) == "3/3 Primary; flow control paused 70%"


def test_flow_control_active_alone_fires_and_threshold_is_respected() -> None:
    s = snap(synced(1), synced(2), synced(3, flow_control_active=True))
    assert "wsrep_flow_control_active=ON on node3" in one(s, "galera.flow_control").summary
    below = snap(synced(1, flow_control_paused_share=0.05), synced(2), synced(3))
    assert kinds(below) == {}
    assert kinds(below, GaleraThresholds(flow_control_share=0.01)) == {("galera.flow_control", "cluster"): "warning"}


def test_recv_queue_growth() -> None:
    growing = snap(synced(1), synced(2), synced(3, recv_queue=30, recv_queue_history=(2, 12, 30)))
    assert kinds(growing) == {("galera.recv_queue_growing", "127.0.0.1:3313"): "warning"}
    assert verdict(growing).endswith("recv queue growing")
    for hist in ((30, 12, 40), (1, 2, 3), (12, 30)):
        s = snap(synced(1), synced(2), synced(3, recv_queue_history=hist))
        assert kinds(s) == {}, hist


def test_no_reachable_node_verdict() -> None:
    assert verdict(snap(down(1), down(2), down(3))) == "NO DATA: no node answers"


def test_findings_and_snapshot_are_jsonable() -> None:
    import json

    from tui.jsonable import to_jsonable

    s = snap(non_primary(1), down(2), down(3, "(1045) Access denied", auth=True))
    json.dumps(to_jsonable(s))
    for f in galera_findings(s, NOW):
        json.dumps(f.to_dict())


def test_snapshot_is_frozen() -> None:
    node = synced(1)
    try:
        node.reachable = False  # type: ignore[misc]
    except dataclasses.FrozenInstanceError:
        return
    raise AssertionError("GaleraNode must be frozen")


def test_pc_bootstrap_statement_follows_the_server() -> None:
    from tui.rules.quorum import PC_BOOTSTRAP_OPTION, PC_BOOTSTRAP_VARIABLE, pc_bootstrap_sql

    assert pc_bootstrap_sql(synced(1, provider_option_variables=True)) == PC_BOOTSTRAP_VARIABLE
    assert pc_bootstrap_sql(synced(1, provider_option_variables=False)) == PC_BOOTSTRAP_OPTION
    both = pc_bootstrap_sql(synced(1))
    assert PC_BOOTSTRAP_OPTION in both and PC_BOOTSTRAP_VARIABLE in both
    s = snap(dataclasses.replace(non_primary(1), provider_option_variables=True), down(2), down(3))
    assert f"run {PC_BOOTSTRAP_VARIABLE}. Risk" in one(s, "galera.quorum_lost").next_step
