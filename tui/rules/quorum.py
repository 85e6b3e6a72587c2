"""Galera rules: quorum, membership, sync state, flow control. Pure functions over a GaleraSnapshot.

What a node outside the Primary component does was measured on MariaDB 10.11 and 11.8 / galera-4
(tests/integration/galera): with
`wsrep_cluster_status` != Primary (or `wsrep_ready` = OFF) `SELECT 1`, `SHOW STATUS`, information_schema and
new connections still work, but SELECT on tables, INSERT, UPDATE and DDL fail with
`(1047, 'WSREP has not yet prepared node for application use')`; with `SET SESSION wsrep_dirty_reads=ON`
the SELECTs succeed (possibly stale) and writes still fail. The findings say exactly that.

Kinds: galera.quorum_lost (critical, per node), galera.size_mismatch (warning when nodes are missing but
the Primary component keeps a majority, critical below majority, info above), galera.node_unreachable
(warning, per node), galera.partitioned (critical: reachable nodes disagree on wsrep_cluster_conf_id or
wsrep_cluster_state_uuid for `partition_polls` polls in a row, so a view change caught between two nodes'
answers is not reported), galera.not_synced (Donor/Desynced warning, Joining/Joined info),
galera.flow_control (warning: paused share over the last interval above a threshold, or
wsrep_flow_control_active), galera.recv_queue_growing (warning), galera.arbitrator_missing (warning while the
Primary component keeps a majority, naming the configured arbitrator).

Arbitrators ([galera] arbitrators: garbd, a group member without SQL) are seen only through the data nodes: a
member with an empty entry in wsrep_incoming_addresses is one (measured on MariaDB 10.11 / galera-4 26.4 with
garbd 26.4). With two data nodes and one arbitrator (expected_size 3) one data node down leaves a Primary
component of 2 (the survivor and garbd): reads and writes work; the size finding says so instead of "below
majority", and the arbitrator gone is its own finding, not a missing node.
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from tui.models.finding import Finding, Severity
from tui.models.galera import GaleraNode, GaleraSnapshot

SOURCE = "galera"
CLUSTER = "cluster"

READS_FAIL = (
    "SELECT on tables fails with ERROR 1047 (WSREP has not yet prepared node for application use) unless the "
    "client sets wsrep_dirty_reads=ON (then reads work but may be stale)"
)
WRITES_FAIL = "INSERT/UPDATE/DELETE and DDL fail (1047) even with wsrep_dirty_reads=ON"
STILL_ANSWERS = "SELECT 1, SHOW STATUS and information_schema still answer"
NO_QUORUM_VERDICT = "NO QUORUM: reads fail (1047), writes fail"


@dataclass(frozen=True)
class GaleraThresholds:
    """flow_control_share: paused fraction of the poll interval that counts as a stall (0.1 = 10 %);
    recv_queue_min / recv_queue_polls: a receive queue that grew on each of the last recv_queue_polls polls
    and reached recv_queue_min write-sets; partition_polls: polls in a row of disagreement before
    galera.partitioned."""

    flow_control_share: float = 0.10
    recv_queue_min: int = 10
    recv_queue_polls: int = 3
    partition_polls: int = 2


DEFAULT_THRESHOLDS = GaleraThresholds()


def _finding(severity: Severity, kind: str, subject: str, summary: str, evidence: dict[str, Any],
             next_step: str) -> Finding:
    return Finding(severity=severity, kind=kind, subject=subject, summary=summary, evidence=evidence,
                   next_step=next_step, source=SOURCE)


def _onoff(value: bool | None) -> str:
    return "?" if value is None else ("ON" if value else "OFF")


PC_BOOTSTRAP_OPTION = "SET GLOBAL wsrep_provider_options='pc.bootstrap=YES'"
PC_BOOTSTRAP_VARIABLE = "SET GLOBAL wsrep_provider_pc_bootstrap=ON"


def pc_bootstrap_sql(node: GaleraNode) -> str:
    """The statement that re-forms a Primary component on `node`. MariaDB 11.x loads the provider as a plugin
    with its options as variables and refuses wsrep_provider_options changes (ERROR 1210, measured on 11.8):
    there it is wsrep_provider_pc_bootstrap; unknown (the node's variables not read): both forms."""
    if node.provider_option_variables:
        return PC_BOOTSTRAP_VARIABLE
    if node.provider_option_variables is None:
        return f"{PC_BOOTSTRAP_OPTION} (MariaDB 11.x: {PC_BOOTSTRAP_VARIABLE})"
    return PC_BOOTSTRAP_OPTION


def most_advanced(nodes: tuple[GaleraNode, ...]) -> GaleraNode | None:
    """The reachable node with the highest wsrep_last_committed (the pc.bootstrap candidate)."""
    known = [n for n in nodes if n.reachable and n.last_committed is not None]
    return max(known, key=lambda n: n.last_committed or 0) if known else None


def disagreement(nodes: tuple[GaleraNode, ...]) -> dict[str, dict[str, Any]]:
    """Which membership fields the reachable nodes disagree on: {"conf_id": {addr: value}, ...}."""
    out: dict[str, dict[str, Any]] = {}
    for field_name in ("conf_id", "state_uuid"):
        values = {n.address: getattr(n, field_name) for n in nodes
                  if n.reachable and getattr(n, field_name) is not None}
        if len(set(values.values())) > 1:
            out[field_name] = values
    return out


@dataclass(frozen=True)
class ArbitratorView:
    """The Primary component split into data nodes and arbitrators, against the configured counts."""

    configured: tuple[str, ...]
    present: int  # arbitrators in the Primary component
    data_present: int  # data nodes in the Primary component
    data_expected: int

    @property
    def missing(self) -> int:
        return max(0, len(self.configured) - self.present)

    @property
    def data_missing(self) -> int:
        return max(0, self.data_expected - self.data_present)

    @property
    def name(self) -> str:
        return ", ".join(self.configured)


def arbitrator_view(snap: GaleraSnapshot) -> ArbitratorView | None:
    """None without configured arbitrators or without a Primary component. Arbitrators present: the most any
    Primary node counts in wsrep_incoming_addresses; when no node reports that variable, the members no
    reachable Primary node accounts for (an estimate: data nodes stacktop cannot reach count as arbitrators)."""
    size = snap.primary_size
    if not snap.arbitrators or size is None:
        return None
    primary = [n for n in snap.reachable if n.primary]
    seen = [n.arbitrators_seen for n in primary if n.arbitrators_seen is not None]
    present = max(seen) if seen else size - len(primary)
    present = max(0, min(len(snap.arbitrators), present, size))
    expected = snap.expected_size or len(snap.nodes) + len(snap.arbitrators)
    return ArbitratorView(snap.arbitrators, present, size - present, max(0, expected - len(snap.arbitrators)))


def arbitrator_findings(snap: GaleraSnapshot) -> list[Finding]:
    view = arbitrator_view(snap)
    if view is None or not view.missing:
        return []
    size, expected = snap.primary_size or 0, snap.expected_size or 0
    one = len(view.configured) == 1
    who = f"arbitrator {view.name}" if one else f"{view.missing} of the arbitrators {view.name}"
    summary = (f"Galera {who} {'is' if one else 'are'} not in the cluster: the Primary component has {size} of "
               f"{expected} members, {view.present} without an SQL address (wsrep_incoming_addresses).")
    majority = size * 2 > expected
    if majority:
        summary += " Still Primary: reads and writes work"
        summary += (", but losing one more data node stops the cluster (no quorum): the arbitrator is the "
                    "tie-breaker." if size == 2 else ".")
    evidence = {
        "arbitrators": list(view.configured), "arbitrators_in_component": view.present,
        "data_nodes_in_component": view.data_present, "cluster_size": size, "expected_size": expected,
        "incoming_addresses_by_node": {n.address: n.incoming_addresses for n in snap.reachable},
    }
    host = view.configured[0].rpartition(":")[0] if one else "the arbitrator hosts"
    next_step = (f"Start garbd on {host} (its service: garb) and check it reaches the data nodes' group "
                 "communication port (4567 by default); its log says why it left.")
    subject = view.configured[0] if one else "arbitrators"
    return [_finding("warning" if majority else "critical", "galera.arbitrator_missing", subject, summary,
                     evidence, next_step)]


def quorum_findings(snap: GaleraSnapshot) -> list[Finding]:
    out: list[Finding] = []
    candidate = most_advanced(snap.nodes)
    unreachable = [n.address for n in snap.unreachable]
    for node in snap.nodes:
        if not node.quorum_lost:
            continue
        evidence = {
            "wsrep_cluster_status": node.cluster_status, "wsrep_ready": _onoff(node.ready),
            "wsrep_local_state_comment": node.state_comment, "wsrep_cluster_size": node.cluster_size,
            "wsrep_cluster_conf_id": node.conf_id, "wsrep_last_committed": node.last_committed,
            "last_committed_by_node": {n.address: n.last_committed for n in snap.reachable},
            "unreachable_nodes": unreachable,
        }
        if node.cluster_status == "Primary":
            summary = (f"{node.label}: wsrep_ready=OFF although in the Primary component "
                       f"(state {node.state_comment}): on this node {READS_FAIL}; {WRITES_FAIL}. "
                       f"{STILL_ANSWERS}. Clients of other nodes are not affected.")
            next_step = (f"Wait for {node.label} to finish joining; if it stays not ready, read its error log "
                         "and restart it so it rejoins by IST/SST.")
        else:
            summary = (f"{node.label}: no quorum (wsrep_cluster_status={node.cluster_status}, "
                       f"wsrep_ready={_onoff(node.ready)}, {node.state_comment}, sees {node.cluster_size} "
                       f"node(s)): {READS_FAIL}; {WRITES_FAIL}. {STILL_ANSWERS}.")
            if candidate is not None:
                where = (f"on the most advanced node, {candidate.label} "
                         f"(wsrep_last_committed={candidate.last_committed} among the nodes stacktop reads)")
            else:
                where = "on the most advanced node (highest wsrep_last_committed)"
            next_step = (
                "Recovery, choose one: (1) restart the missing nodes: once every member of the last Primary "
                "component is back, the component re-forms by itself (pc.recovery, gvwstate.dat); "
                f"(2) if they cannot come back, {where} run "
                f"{pc_bootstrap_sql(candidate or node)}. Risk of (2): if the other nodes are "
                "alive in another component that is still Primary (a network split, not a crash) you get two "
                "Primary components writing diverging data (split brain), and anything committed on a more "
                "advanced node you cannot see is lost: check their grastate.dat / mariadbd --wsrep-recover "
                "first.")
        out.append(_finding("critical", "galera.quorum_lost", node.address, summary, evidence, next_step))
    return out


def size_findings(snap: GaleraSnapshot) -> list[Finding]:
    expected = snap.expected_size
    if not expected or not snap.reachable:
        return []
    primary_size = snap.primary_size
    if primary_size is not None:
        size, primary = primary_size, True
    else:
        sizes = [n.cluster_size for n in snap.reachable if n.cluster_size is not None]
        if not sizes:
            return []
        size, primary = max(sizes), False
    evidence = {
        "expected_size": expected, "cluster_size": size, "primary": primary,
        "cluster_size_by_node": {n.address: n.cluster_size for n in snap.reachable},
        "unreachable_nodes": [n.address for n in snap.unreachable],
    }
    if size > expected:
        summary = f"Galera cluster has {size} nodes, [galera] expected_size is {expected}."
        next_step = "If the extra node is intended, raise [galera] expected_size."
        seen = max((n.arbitrators_seen or 0 for n in snap.reachable if n.primary), default=0)
        if seen > len(snap.arbitrators):
            summary += (f" {seen} of them have no SQL address (wsrep_incoming_addresses): arbitrators (garbd), "
                        f"{len(snap.arbitrators)} configured.")
            next_step = ("List the arbitrator's group address in [galera] arbitrators (it counts in "
                         "expected_size), or raise [galera] expected_size.")
        return [_finding("info", "galera.size_mismatch", CLUSTER, summary, evidence, next_step)]
    if size == expected:
        return []
    missing = expected - size
    majority = size * 2 > expected
    view = arbitrator_view(snap) if primary else None
    if view is not None:
        if not view.data_missing:
            return []  # only arbitrators are missing: galera.arbitrator_missing tells it
        evidence.update(arbitrators=list(view.configured), arbitrators_in_component=view.present,
                        data_nodes_in_component=view.data_present)
    if majority and primary and view is not None and view.present:
        summary = (f"Galera cluster degraded: {view.data_present} of {view.data_expected} data nodes in the "
                   f"Primary component ({view.data_missing} missing), with the arbitrator: {size} of {expected} "
                   "members. Still Primary with the arbitrator: reads and writes work.")
        if size == 2:
            summary += " Losing the arbitrator or the other data node stops it (no quorum)."
        severity: Severity = "warning"
    elif majority and primary:
        summary = (f"Galera cluster degraded: {size} of {expected} nodes ({missing} missing); still Primary, "
                   "reads and writes work.")
        if size == 2:
            summary += " Losing one more node stops it (no quorum)."
        severity = "warning"
    else:
        summary = (f"Galera cluster below majority: {size} of {expected} nodes"
                   + ("" if primary else ", no Primary component: reads fail (1047), writes fail") + ".")
        severity = "critical"
    return [_finding(severity, "galera.size_mismatch", CLUSTER, summary, evidence,
                     "Find the missing node(s) (galera.node_unreachable rows, wsrep_incoming_addresses) and "
                     "restart them; they rejoin by IST/SST.")]


def unreachable_findings(snap: GaleraSnapshot) -> list[Finding]:
    out: list[Finding] = []
    for node in snap.unreachable:
        evidence = {"error": node.error, "auth_error": node.auth_error}
        if node.privilege_error:
            out.append(_finding("warning", "galera.privilege_missing", node.address,
                                f"stacktop's account may not read {node.address}: {node.error}. The node itself "
                                "may be fine; its state is unknown.", evidence,
                                "Run the GRANT or ALTER USER the summary names on the node (account statements "
                                "replicate to the cluster), or set [galera] user to an account that has it."))
            continue
        if node.auth_error:
            summary = (f"stacktop cannot log in to {node.address}: {node.error}. The node itself may be fine; "
                       "its state is unknown.")
            next_step = "Fix [galera] user / password (password_env or password_file) for this node."
        else:
            summary = f"{node.address} does not answer: {node.error}."
            next_step = (f"Check mariadbd on {node.address} (service status, error log); a restarted node "
                         "rejoins by IST/SST.")
        out.append(_finding("warning", "galera.node_unreachable", node.address, summary, evidence, next_step))
    return out


def partition_findings(snap: GaleraSnapshot, th: GaleraThresholds) -> list[Finding]:
    differ = disagreement(snap.nodes)
    if not differ or snap.disagreement_polls < th.partition_polls:
        return []
    what = " and ".join(f"wsrep_cluster_{k}" for k in differ)
    summary = (f"Galera nodes disagree on {what} for {snap.disagreement_polls} polls: they are not in the same "
               "component (partitioned"
               + (", or a node was bootstrapped into a separate cluster history" if "state_uuid" in differ
                  else "") + "). Writes on different sides may diverge or fail.")
    evidence: dict[str, Any] = {f"wsrep_cluster_{k}": v for k, v in differ.items()}
    evidence["cluster_status_by_node"] = {n.address: n.cluster_status for n in snap.reachable}
    return [_finding("critical", "galera.partitioned", CLUSTER, summary, evidence,
                     "Compare wsrep_incoming_addresses and wsrep_cluster_status on each node; restore the "
                     "network between them, then restart the nodes outside the Primary component.")]


def sync_findings(snap: GaleraSnapshot) -> list[Finding]:
    out: list[Finding] = []
    for node in snap.reachable:
        comment = node.state_comment
        if comment is None or comment == "Synced" or node.quorum_lost:
            continue
        evidence = {"wsrep_local_state_comment": comment, "wsrep_desync": _onoff(node.desync),
                    "wsrep_local_recv_queue": node.recv_queue}
        if comment.startswith("Donor"):
            why = ("wsrep_desync=ON was set on it" if node.desync
                   else "it is serving a state transfer (SST) to a joining node")
            summary = (f"{node.label} is {comment}: {why}. It does not take part in flow control and may fall "
                       "behind the cluster; reads there can be stale.")
            next_step = ("If no backup or SST is running from it, SET GLOBAL wsrep_desync=OFF on it."
                         if node.desync else "Wait for the state transfer to finish.")
            out.append(_finding("warning", "galera.not_synced", node.address, summary, evidence, next_step))
        elif comment.startswith(("Join", "Waiting")):
            summary = f"{node.label} is {comment}: receiving state (SST/IST) or catching up; not serving yet."
            out.append(_finding("info", "galera.not_synced", node.address, summary, evidence,
                                "Wait for Synced; if it does not get there, read its error log."))
        else:
            summary = f"{node.label} is {comment}, not Synced."
            out.append(_finding("warning", "galera.not_synced", node.address, summary, evidence,
                                "Read its error log."))
    return out


def flow_control_findings(snap: GaleraSnapshot, th: GaleraThresholds) -> list[Finding]:
    nodes = snap.reachable
    active = [n for n in nodes if n.flow_control_active]
    shares = {n.address: n.flow_control_paused_share for n in nodes if n.flow_control_paused_share is not None}
    worst = max(shares.values(), default=0.0)
    if not active and worst <= th.flow_control_share:
        return []
    # who asks for the pauses: wsrep_flow_control_requested (live), else pause requests sent since last poll
    senders = [n for n in nodes if n.flow_control_requested] or [
        n for n in nodes if (n.flow_control_sent_delta or 0) > 0]
    interval = max((n.flow_control_interval_s or 0.0 for n in nodes), default=0.0) or snap.interval_s
    parts = []
    if worst > 0:
        parts.append(f"replication was paused by flow control {worst:.0%} of the last {interval:.0f}s")
    if active:
        parts.append(f"wsrep_flow_control_active=ON on {', '.join(n.label for n in active)}")
    summary = "; ".join(parts) + ": writes stall cluster-wide even while every node says Synced."
    if senders:
        culprit = max(senders, key=lambda n: (n.flow_control_sent_delta or 0, n.recv_queue or 0))
        summary += (f" {culprit.label} is asking for the pauses (recv queue {culprit.recv_queue}): it is the "
                    "slow applier.")
        next_step = (f"Look at {culprit.label}: long transactions or table locks blocking its applier "
                     "(SHOW PROCESSLIST), disk or CPU saturation.")
    else:
        next_step = ("Find the node whose wsrep_flow_control_sent grows and whose wsrep_local_recv_queue is "
                     "high: locks or a slow disk there.")
    evidence = {
        "paused_share_by_node": shares,
        "flow_control_active": [n.address for n in active],
        "flow_control_requested": [n.address for n in nodes if n.flow_control_requested],
        "flow_control_sent_by_node": {n.address: n.flow_control_sent_delta for n in nodes},
        "recv_queue_by_node": {n.address: n.recv_queue for n in nodes},
        "threshold": th.flow_control_share,
    }
    return [_finding("warning", "galera.flow_control", CLUSTER, summary, evidence, next_step)]


def recv_queue_findings(snap: GaleraSnapshot, th: GaleraThresholds) -> list[Finding]:
    out: list[Finding] = []
    k = max(2, th.recv_queue_polls)
    for node in snap.reachable:
        hist = node.recv_queue_history[-k:]
        if len(hist) < k or hist[-1] < th.recv_queue_min:
            continue
        if all(b > a for a, b in itertools.pairwise(hist)):
            summary = (f"{node.label}: receive queue grew {len(hist) - 1} polls in a row to {hist[-1]} "
                       "write-sets: it applies slower than the cluster writes; flow control will throttle "
                       "every writer.")
            out.append(_finding("warning", "galera.recv_queue_growing", node.address, summary,
                                {"recv_queue_history": list(hist), "wsrep_local_recv_queue_avg":
                                 node.recv_queue_avg},
                                "Look for long transactions, table locks or a slow disk on that node."))
    return out


def galera_findings(snap: GaleraSnapshot, now: datetime,
                    thresholds: GaleraThresholds = DEFAULT_THRESHOLDS) -> list[Finding]:
    """Every Galera finding for one snapshot. `now` is unused (history lives in the snapshot); kept for the
    rule signature shared by all sources."""
    del now
    return (quorum_findings(snap) + size_findings(snap) + arbitrator_findings(snap) + unreachable_findings(snap)
            + partition_findings(snap, thresholds) + sync_findings(snap)
            + flow_control_findings(snap, thresholds) + recv_queue_findings(snap, thresholds))


def _short(node: GaleraNode) -> str:
    return node.node_name or node.address


def verdict(snap: GaleraSnapshot, thresholds: GaleraThresholds = DEFAULT_THRESHOLDS) -> str:
    """One line for the top of the pane: "healthy", "degraded 2/3, still Primary",
    "NO QUORUM: reads fail (1047), writes fail", with what else is wrong appended after a semicolon."""
    reachable = snap.reachable
    if not reachable:
        return "NO DATA: no node answers"
    serving = [n for n in reachable if n.primary and not n.quorum_lost]
    if not serving:
        return NO_QUORUM_VERDICT
    size = snap.primary_size or len(serving)
    expected = snap.expected_size or size
    extras: list[str] = []
    for node in reachable:
        if node.quorum_lost:
            extras.append(f"{_short(node)} NO QUORUM (reads fail 1047, writes fail there)")
    if partition_findings(snap, thresholds):
        extras.append("PARTITIONED")
    if size >= expected:
        for node in snap.unreachable:
            extras.append(f"{node.address} {'login refused' if node.auth_error else 'unreachable'}")
    for node in reachable:
        if not node.quorum_lost and node.state_comment not in (None, "Synced"):
            extras.append(f"{_short(node)} {node.state_comment}")
    fc = flow_control_findings(snap, thresholds)
    if fc:
        share = max((n.flow_control_paused_share or 0.0 for n in reachable), default=0.0)
        extras.append(f"flow control paused {share:.0%}" if share > 0 else "flow control active")
    if recv_queue_findings(snap, thresholds):
        extras.append("recv queue growing")
    view = arbitrator_view(snap)
    if view is not None and view.missing:
        extras.insert(0, f"arbitrator {view.name} missing")
    if size < expected:
        base = f"degraded {size}/{expected}, still Primary"
        if view is not None and view.present and view.data_missing:
            base += " with the arbitrator"
    elif size > expected:
        base = f"{size}/{expected} Primary"
    else:
        base = "healthy" if not extras else f"{size}/{expected} Primary"
    return "; ".join([base, *extras])
