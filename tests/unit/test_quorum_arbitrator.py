"""Galera rules with an arbitrator ([galera] arbitrators): two data nodes + garbd, shaped like the real
2 + garbd cluster of testcloud/galera-arb.sh (garbd's entry in wsrep_incoming_addresses is empty)."""

from __future__ import annotations

from datetime import UTC, datetime

from tests.unit.test_quorum import down, non_primary, synced
from tui.collectors.galera_parse import arbitrators_seen
from tui.models.galera import GaleraNode, GaleraSnapshot
from tui.rules.quorum import NO_QUORUM_VERDICT, galera_findings, verdict

NOW = datetime(2026, 1, 1, tzinfo=UTC)
GARBD = "127.0.0.1:4633"


def data(n: int, size: int, incoming: str | None) -> GaleraNode:
    return synced(n, size=size, incoming_addresses=incoming, arbitrators_seen=arbitrators_seen(incoming))


def snap(*nodes: GaleraNode, arbitrators: tuple[str, ...] = (GARBD,), expected: int = 3) -> GaleraSnapshot:
    return GaleraSnapshot(nodes=tuple(nodes), expected_size=expected, taken_at=0.0, arbitrators=arbitrators)


def kinds(s: GaleraSnapshot) -> dict[tuple[str, str], str]:
    return {(f.kind, f.subject): f.severity for f in galera_findings(s, NOW)}


def test_incoming_addresses_count_members_without_sql() -> None:
    assert arbitrators_seen("127.0.0.1:3321,127.0.0.1:3322,") == 1
    assert arbitrators_seen("127.0.0.1:3321,127.0.0.1:3322") == 0
    assert arbitrators_seen(",127.0.0.1:3321,") == 2
    assert arbitrators_seen(None) is None


def test_two_nodes_and_garbd_is_healthy() -> None:
    both = "127.0.0.1:3311,127.0.0.1:3312,"
    s = snap(data(1, 3, both), data(2, 3, both))
    assert galera_findings(s, NOW) == [] and verdict(s) == "healthy"


def test_one_data_node_down_is_degraded_with_the_arbitrator_not_quorum_lost() -> None:
    s = snap(data(1, 2, "127.0.0.1:3311,"), down(2))
    assert kinds(s) == {("galera.size_mismatch", "cluster"): "warning",
                        ("galera.node_unreachable", "127.0.0.1:3312"): "warning"}
    summary = next(f.summary for f in galera_findings(s, NOW) if f.kind == "galera.size_mismatch")
    assert summary == ("Galera cluster degraded: 1 of 2 data nodes in the Primary component (1 missing), with the "
                       "arbitrator: 2 of 3 members. Still Primary with the arbitrator: reads and writes work. "
                       "Losing the arbitrator or the other data node stops it (no quorum).")
    assert verdict(s) == "degraded 2/3, still Primary with the arbitrator"


def test_arbitrator_gone_is_one_finding_naming_it() -> None:
    both = "127.0.0.1:3311,127.0.0.1:3312"
    s = snap(data(1, 2, both), data(2, 2, both))
    assert kinds(s) == {("galera.arbitrator_missing", GARBD): "warning"}
    f = galera_findings(s, NOW)[0]
    assert f.summary.startswith(f"Galera arbitrator {GARBD} is not in the cluster: the Primary component has 2 "
                                "of 3 members, 0 without an SQL address")
    assert "losing one more data node stops the cluster" in f.summary
    assert "garbd on 127.0.0.1" in f.next_step
    assert verdict(s) == f"degraded 2/3, still Primary; arbitrator {GARBD} missing"


def test_without_incoming_addresses_the_members_nobody_accounts_for_are_the_arbitrator() -> None:
    assert kinds(snap(data(1, 3, None), data(2, 3, None))) == {}
    assert kinds(snap(data(1, 2, None), data(2, 2, None))) == {("galera.arbitrator_missing", GARBD): "warning"}


def test_survivor_alone_without_the_arbitrator_has_no_quorum() -> None:
    s = snap(non_primary(1), down(2))
    found = kinds(s)
    assert found[("galera.quorum_lost", "127.0.0.1:3311")] == "critical"
    assert found[("galera.size_mismatch", "cluster")] == "critical"
    assert ("galera.arbitrator_missing", GARBD) not in found  # no Primary view to tell it from
    assert verdict(s) == NO_QUORUM_VERDICT


def test_no_arbitrators_configured_keeps_the_plain_wording() -> None:
    s = snap(data(1, 2, "127.0.0.1:3311,"), down(2), arbitrators=(), expected=3)
    summary = next(f.summary for f in galera_findings(s, NOW) if f.kind == "galera.size_mismatch")
    assert summary.startswith("Galera cluster degraded: 2 of 3 nodes (1 missing); still Primary")
    assert verdict(s) == "degraded 2/3, still Primary"


def test_an_arbitrator_not_configured_is_named_as_such() -> None:
    both = "127.0.0.1:3311,127.0.0.1:3312,"
    s = snap(data(1, 3, both), data(2, 3, both), arbitrators=(), expected=2)
    (f,) = galera_findings(s, NOW)
    assert (f.kind, f.severity) == ("galera.size_mismatch", "info")
    assert "1 of them have no SQL address (wsrep_incoming_addresses): arbitrators (garbd), 0 configured" in f.summary
    assert "[galera] arbitrators" in f.next_step
