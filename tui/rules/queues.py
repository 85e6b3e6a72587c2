"""RabbitMQ rules: which service stopped listening, alarms, partitions, nodes down. Pure functions.

Queue names follow oslo.messaging's rabbit driver: service topics (`scheduler`, `compute.<host>`,
`cinder-volume.<host>@<backend>` ...), replies `reply_<hex>`, fanouts `<topic>_fanout_<hex>`, notifications
`notifications.*` / `versioned_notifications.*`; with `use_queue_manager` replies are
`reply_<hostname>:<processname>:<counter>` and fanouts `<topic>_fanout_<hostname>:<processname>:<counter>`;
with `rabbit_stream_fanout` a fanout is one stream `<topic>_fanout`. A service topic with messages and 0
consumers means that service stopped listening (critical); notifications nobody reads grow without bound
(warning); a reply or fanout queue left behind expires by itself after `x-expires` (info, with the time left).
Anything else with messages and nobody consuming is a warning: stacktop cannot tell whose it is. A stream
keeps its messages until its retention drops them (they are read, not taken): its count is never a backlog.

Quorum queues and streams (RabbitMQ 3.8+, required by RabbitMQ 4) are replicated: a quorum queue with fewer
members online than a majority cannot accept or deliver messages (critical, naming the queue and the members
missing). Members missing because their node is down are told once, in that node's finding.

Statistics lag 4-9 s, so a queue must be seen so for `min_polls` polls in a row, or be confirmed live over
AMQP (a passive queue_declare in the same poll), before it is reported (a one-shot run counts a sample history
showing it held long enough as its second poll: tui.collectors.rabbitmq_history). A live answer also vetoes: when the
declare sees a consumer, or no messages, or no queue at all, the management numbers were stale.
"""

from __future__ import annotations

import dataclasses
import shlex
from collections.abc import Iterable
from datetime import datetime

from tui.models.finding import Finding, Severity
from tui.models.rabbitmq import Alarm, NodeInfo, QueueInfo, RabbitSnapshot
from tui.rules.consumers import DEFAULT_GRACE_S, consumer_lost_findings
from tui.rules.queue_groups import group_queue_findings
from tui.rules.queue_names import (
    SOURCE,
    classify_queue,
    queue_subject,
)
from tui.rules.rabbit_cluster import cluster_findings
from tui.shell_command import command, shell_text

MIN_POLLS = 2
LIST_CONSUMERS = command("rabbitmqctl", "list_queues", "name", "consumers")
CLUSTER_STATUS = command("rabbitmqctl", "cluster_status")

SEVERITY_BY_CLASS: dict[str, Severity] = {
    "service": "critical",
    "notifications": "warning",
    "other": "warning",
    "reply": "info",
    "fanout": "info",
}


def is_suspect(q: QueueInfo) -> bool:
    """Management numbers say: messages waiting, nobody consuming (unknown numbers are not suspect)."""
    return q.no_consumer_with_messages


def is_confirmed(q: QueueInfo, min_polls: int = MIN_POLLS) -> bool:
    """Suspect for min_polls polls in a row, or confirmed live; a live answer that disagrees vetoes."""
    if not is_suspect(q) or q.live_missing:
        return False
    if q.live_consumers is not None:
        return q.live_consumers == 0 and (q.live_messages or 0) > 0
    return q.stuck_polls >= min_polls


def expires_in_s(q: QueueInfo, now: datetime) -> float | None:
    """At most how many seconds before x-expires deletes this unused queue (None without x-expires).

    x-expires counts from the last time the queue was used (consumer, basic.get, redeclare). The consumer
    left no later than the first poll that saw 0 consumers, and no later than idle_since: the earlier of the
    two bounds the start, so the result is an upper bound.
    """
    if q.x_expires_ms is None:
        return None
    starts = [t for t in (q.stuck_since, q.idle_since) if t is not None]
    if not starts:
        return q.x_expires_ms / 1000.0
    unused_for = (now - min(starts)).total_seconds()
    return max(0.0, q.x_expires_ms / 1000.0 - unused_for)


def _fmt_duration(seconds: float) -> str:
    seconds = int(max(0, seconds))
    if seconds < 90:
        return f"{seconds}s"
    if seconds < 5400:
        return f"{seconds // 60}m"
    return f"{seconds // 3600}h{(seconds % 3600) // 60:02d}m"


def queue_no_consumer_finding(q: QueueInfo, now: datetime, min_polls: int = MIN_POLLS) -> Finding | None:
    if not is_confirmed(q, min_polls):
        return None
    kind = classify_queue(q.name)
    severity = SEVERITY_BY_CLASS[kind.cls]
    since_s = None if q.stuck_since is None else max(0.0, (now - q.stuck_since).total_seconds())
    held = f"{q.messages} message{'s' if q.messages != 1 else ''}"
    # no "for 45s" in the summaries: it ticked every poll and repainted the findings table; the `since`
    # columns show when it started and the evidence keeps for_s
    evidence: dict[str, object] = {
        "vhost": q.vhost,
        "queue": q.name,
        "class": kind.cls,
        "messages": q.messages,
        "messages_ready": q.messages_ready,
        "messages_unacknowledged": q.messages_unacknowledged,
        "consumers": q.consumers,
        "polls": q.stuck_polls,
        "since": q.stuck_since,
        "for_s": None if since_s is None else round(since_s, 1),
        "confirmed_live": q.live_consumers is not None,
    }
    if q.history_s is not None:
        evidence["history_s"] = q.history_s  # the broker's own samples showed it held that long
    if q.consumer_lost_since is not None:
        evidence["consumer_lost_since"] = q.consumer_lost_since
    if q.live_consumers is not None:
        evidence["live_messages"] = q.live_messages
        evidence["live_consumers"] = q.live_consumers
    if kind.topic:
        evidence["topic"] = kind.topic
    if kind.service:
        evidence["service"] = kind.service
    if kind.host:
        evidence["host"] = kind.host
    if kind.backend:
        evidence["backend"] = kind.backend
    if kind.process:
        evidence["process"] = kind.process

    if kind.cls == "service":
        service = kind.service or kind.topic
        if kind.host:
            where = f"{kind.host}@{kind.backend}" if kind.backend else kind.host
            summary = (f"{service} on {where} stopped listening: queue {q.name} holds {held} with 0 "
                       "consumers")
            next_step = (f"on {kind.host}: is {service} running and connected to RabbitMQ? Read its log for "
                         f"AMQP errors, then restart it")
        else:
            summary = (f"no {service} is listening: shared topic queue {q.name} holds {held} with 0 "
                       "consumers")
            next_step = f"check every {service}: are they running and connected to RabbitMQ? Read their logs"
    elif kind.cls == "notifications":
        summary = (f"nobody reads notifications: {q.name} holds {held} with 0 consumers and "
                   "grows without bound")
        next_step = ("start its consumer (e.g. ceilometer-agent-notification), or stop emitting "
                     "([oslo_messaging_notifications] driver = noop) and purge the queue")
    elif kind.cls in ("reply", "fanout"):
        left = expires_in_s(q, now)
        evidence["x_expires_s"] = None if q.x_expires_ms is None else q.x_expires_ms / 1000.0
        evidence["expires_in_s_at_most"] = None if left is None else round(left, 1)
        what = "reply queue" if kind.cls == "reply" else f"fanout queue of {kind.topic}"
        if kind.process:
            what += f" of {kind.process} on {kind.host}"
        expiry = ("no x-expires: it stays until deleted" if q.x_expires_ms is None
                  else f"x-expires removes it {_fmt_duration(q.x_expires_ms / 1000.0)} after its last use")
        summary = f"{what} {q.name} holds {held} with 0 consumers; {expiry}"
        next_step = ("its client went away (a restarted service or a finished CLI call); nothing to do unless "
                     "such queues keep piling up")
        if left is None:
            next_step = "its client went away and the queue has no x-expires: delete it once you are sure"
    else:
        summary = f"queue {q.name} holds {held} with 0 consumers (not an OpenStack topic)"
        evidence["command"] = LIST_CONSUMERS
        next_step = f"find the application that should consume it ({shell_text(LIST_CONSUMERS)})"
    return Finding(severity=severity, kind="rabbitmq.queue_no_consumer", subject=queue_subject(q),
                   summary=summary, evidence=evidence, next_step=next_step, source=SOURCE)


def queue_findings(queues: Iterable[QueueInfo], now: datetime, min_polls: int = MIN_POLLS) -> list[Finding]:
    out = []
    for q in queues:
        if not q.no_consumer_with_messages:  # nearly every queue of 2,000: no call chain for them
            continue
        f = queue_no_consumer_finding(q, now, min_polls)
        if f is not None:
            out.append(f)
    return out


def alarm_findings(nodes: Iterable[NodeInfo], alarms: Iterable[Alarm]) -> list[Finding]:
    """One critical per node with a memory or disk alarm, from the live check and/or /api/nodes."""
    nodes_by_name = {n.name: n for n in nodes}
    per_node: dict[str, dict[str, set[str]]] = {}
    for a in alarms:
        per_node.setdefault(a.node, {}).setdefault(a.resource, set()).add(a.via)
    for n in nodes_by_name.values():
        if n.mem_alarm:
            per_node.setdefault(n.name, {}).setdefault("memory", set()).add("nodes")
        if n.disk_free_alarm:
            per_node.setdefault(n.name, {}).setdefault("disk", set()).add("nodes")
    out = []
    for node, resources in sorted(per_node.items()):
        info = nodes_by_name.get(node)
        evidence: dict[str, object] = {"node": node, "resources": sorted(resources),
                                       "seen_by": sorted({v for vias in resources.values() for v in vias})}
        steps = []
        if "memory" in resources:
            if info is not None:
                evidence["mem_used"] = info.mem_used
                evidence["mem_limit"] = info.mem_limit
            evidence["command"] = breakdown = command("rabbitmq-diagnostics", "-n", node, "memory_breakdown")
            steps.append(f"memory: see what holds it ({shell_text(breakdown)}), drain or purge "
                         "the biggest queues, or raise vm_memory_high_watermark")
        if "disk" in resources:
            if info is not None:
                evidence["disk_free"] = info.disk_free
                evidence["disk_free_limit"] = info.disk_free_limit
            steps.append("disk: free space on the node's data volume (disk_free_limit)")
        names = " and ".join(sorted(resources))
        status = command("rabbitmqctl", "-n", node, "status")
        if not steps:
            evidence["command"] = status
        out.append(Finding(
            severity="critical", kind="rabbitmq.alarm", subject=node,
            summary=f"{names} alarm on {node}: publishers are blocked, RPC calls and service reports stall",
            evidence=evidence,
            next_step="; ".join(steps) or f"{shell_text(status)} (alarms section)",
            source=SOURCE))
    return out


def partition_findings(nodes: Iterable[NodeInfo]) -> list[Finding]:
    out = []
    for n in nodes:
        if n.partitions:
            others = ", ".join(n.partitions)
            out.append(Finding(
                severity="critical", kind="rabbitmq.partition", subject=n.name,
                summary=f"network partition: {n.name} cannot see {others}; both sides may look healthy",
                evidence={"node": n.name, "partitions": list(n.partitions), "command": CLUSTER_STATUS},
                next_step=f"{shell_text(CLUSTER_STATUS)} on each node; restart the minority side's nodes "
                          "(or follow cluster_partition_handling) once the network is back",
                source=SOURCE))
    return out


def set_permissions(vhost: str, user: str) -> str:
    """The command that lets `user` list `vhost`'s queues and change nothing (empty configure, write and read
    patterns: the management API lists a vhost to any user with a permission entry on it)."""
    return f"rabbitmqctl set_permissions -p {shlex.quote(vhost)} {shlex.quote(user)} '' '' ''"


def unreadable_vhost_findings(snapshot: RabbitSnapshot) -> list[Finding]:
    """One warning when the user may not list some vhosts' queues: whatever is stuck there goes unseen. The fix
    is the least permission the management API needs to list a vhost: an empty configure, write and read
    pattern (no right to declare, publish or consume anything)."""
    vhosts = list(snapshot.unreadable_vhosts)
    if not vhosts:
        return []
    user = snapshot.user or "USER"
    evidence: dict[str, object] = {"user": user, "vhosts": vhosts, "queues_seen": len(snapshot.queues)}
    total = snapshot.object_totals.get("queues") if not snapshot.vhosts else None
    hidden = ""
    if isinstance(total, int) and total > len(snapshot.queues):
        evidence["queues_on_broker"] = total
        hidden = f" ({total - len(snapshot.queues)} of the broker's {total} queues)"
    names = ", ".join(vhosts)
    grants = "; ".join(set_permissions(v, user) for v in vhosts)
    return [Finding(
        severity="warning", kind="rabbitmq.vhost_not_readable", subject=names,
        summary=f"RabbitMQ user '{user}' may not read vhost{'s' if len(vhosts) > 1 else ''} {names}: "
                f"{'their' if len(vhosts) > 1 else 'its'} queues{hidden} are neither shown nor judged",
        evidence=evidence,
        next_step=f"{grants} (lets it list the queues, change nothing; or set [rabbitmq] user to an account "
                  "that can)",
        source=SOURCE)]


def rabbitmq_findings(snapshot: RabbitSnapshot, now: datetime, min_polls: int = MIN_POLLS,
                      consumer_grace_s: float = DEFAULT_GRACE_S) -> list[Finding]:
    """Every RabbitMQ finding of one poll. A service queue that lost its consumer and holds messages confirmed
    waiting is told once, by its queue_no_consumer finding (with when the consumer left in its evidence)."""
    backlog = queue_findings(snapshot.queues, now, min_polls)
    told = {(str(f.evidence.get("vhost")), str(f.evidence.get("queue"))) for f in backlog}
    lost = consumer_lost_findings(snapshot.queues, now, consumer_grace_s, told)
    return (alarm_findings(snapshot.nodes, snapshot.alarms) + partition_findings(snapshot.nodes)
            + cluster_findings(snapshot) + unreadable_vhost_findings(snapshot) + lost
            + group_queue_findings(backlog))


def queue_sort_key(q: QueueInfo) -> tuple[int, int, str, str]:
    """Pane order: known zero-consumer queues first, fullest first, then by name."""
    zero = 0 if q.consumers == 0 else 1
    return (zero, -(q.messages or 0), q.vhost, q.name)


# ---------------------------------------------------------------------------------------------- the 2-poll rule
History = dict[tuple[str, str], tuple[datetime, int]]  # (vhost, queue) -> (suspect since, polls in a row)


def apply_history(history: History, queues: Iterable[QueueInfo], now: datetime) -> tuple[History, list[QueueInfo]]:
    """Advance the per-queue "messages but no consumer" streaks by one poll.

    Suspect -> streak +1 (since kept); numbers unknown this poll -> streak kept as is (not counted);
    anything else, or a queue that vanished -> streak dropped.
    """
    new: History = {}
    out = []
    for q in queues:  # 2,000 queues a poll: a key built and a streak looked up only where one can be
        streak = None
        if q.no_consumer_with_messages:  # is_suspect(q), without a call per queue
            key = q.key
            prev = history.get(key)
            since, polls = prev if prev else (now, 0)
            streak = new[key] = (since, polls + 1)
        elif q.messages is None or q.consumers is None:
            key = q.key
            prev = history.get(key)
            if prev:
                streak = new[key] = prev
        if streak is not None:
            q = dataclasses.replace(q, stuck_since=streak[0], stuck_polls=streak[1])
        out.append(q)
    return new, out
