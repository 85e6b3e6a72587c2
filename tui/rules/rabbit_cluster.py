"""RabbitMQ cluster rules: nodes down or being drained, replicated queues (quorum, stream) short of members,
queues the broker reports `down`. Pure functions over one RabbitSnapshot.

A node down is one finding, whatever it takes with it: the quorum queues and streams running without their
member there (still led while a majority is online) and the classic queues that lived on it (`state: down`)
are counted in that finding, not reported one by one. What a node down does not explain is reported per
queue: a quorum queue or stream with fewer members online than a majority cannot accept or deliver messages
(critical, naming the queue and the members missing); members offline on nodes not reported down (info, one
line per set of missing members); a queue `down` on a node that runs.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field

from tui.models.finding import Finding
from tui.models.rabbitmq import NodeInfo, QueueInfo, RabbitSnapshot
from tui.rules.queue_names import SOURCE, classify_queue, queue_subject
from tui.shell_command import command, shell_text

MAX_QUEUE_FINDINGS = 20  # per-queue criticals beyond this are counted in one more finding
EXAMPLES = 5
QUORUM_CRITICAL = command("rabbitmq-queues", "check_if_node_is_quorum_critical")
SERVICE_STATUS = command("systemctl", "status", "rabbitmq-server")


@dataclass
class _NodeImpact:
    """What one node down takes with it."""

    replicated: list[QueueInfo] = field(default_factory=list)  # quorum/stream queues still with a majority
    down: list[QueueInfo] = field(default_factory=list)  # queues `down` that lived on it


def _short(names: Iterable[str]) -> str:
    names = list(names)
    shown = ", ".join(names[:EXAMPLES])
    return shown + (f" and {len(names) - EXAMPLES} more" if len(names) > EXAMPLES else "")


def _kind_word(q: QueueInfo) -> str:
    return "stream" if q.queue_type == "stream" else "quorum queue"


def _missing(q: QueueInfo, down: set[str]) -> tuple[str, ...]:
    """Members not online, or on a node reported down (a stream's `online` can lag its members' nodes)."""
    online = set(q.online or ()) if q.online is not None else None
    return tuple(m for m in q.members or () if m in down or (online is not None and m not in online))


def _lost_majority(queues: list[QueueInfo], down: set[str]) -> list[Finding]:
    """One critical per replicated queue without a majority (service queues first), capped."""
    order = {"service": 0, "notifications": 1, "other": 2, "fanout": 3, "reply": 4}
    queues = sorted(queues, key=lambda q: (order.get(classify_queue(q.name).cls, 5), q.vhost, q.name))
    out = []
    for q in queues[:MAX_QUEUE_FINDINGS]:
        members = q.members or ()
        missing = _missing(q, down)
        online = [m for m in members if m not in missing]
        need = len(members) // 2 + 1
        kind = classify_queue(q.name)
        what = _kind_word(q)
        whose = ""
        if kind.cls == "service" and kind.host:
            whose = f" ({kind.service or kind.topic} on {kind.host})"
        elif kind.cls == "service":
            whose = f" ({kind.service or kind.topic})"
        start = command("rabbitmqctl", "-n", missing[0], "start_app") if missing else None
        how = (f"{shell_text(start)}{' and the same for the others' if len(missing) > 1 else ''}" if start
               else "rabbitmqctl -n NODE start_app")
        out.append(Finding(
            severity="critical", kind="rabbitmq.quorum_lost", subject=queue_subject(q),
            summary=(f"{what} {q.name}{whose} has {len(online)} of {len(members)} members online (a majority is "
                     f"{need}): it cannot accept or deliver messages; missing {', '.join(missing)}"),
            evidence={"vhost": q.vhost, "queue": q.name, "type": q.queue_type, "state": q.state, "leader": q.leader,
                      "members": list(members), "online": online, "missing": list(missing),
                      "messages": q.messages, "class": kind.cls, **({"command": start} if start else {})},
            next_step=f"bring {', '.join(missing)} back ({how}, or the node's service); "
                      "never force-shrink the queue while they can return",
            source=SOURCE))
    rest = queues[MAX_QUEUE_FINDINGS:]
    if rest:
        out.append(Finding(
            severity="critical", kind="rabbitmq.quorum_lost", subject=f"{len(rest)} more replicated queues",
            summary=f"{len(rest)} more quorum queues/streams have fewer members online than a majority: "
                    f"{_short(queue_subject(q) for q in rest)}",
            evidence={"queues": [queue_subject(q) for q in rest]},
            next_step="bring the missing nodes back", source=SOURCE))
    return out


def cluster_findings(snapshot: RabbitSnapshot) -> list[Finding]:
    nodes = snapshot.nodes
    down_nodes = [n for n in nodes if n.running is False]
    down = {n.name for n in down_nodes}
    impact = {name: _NodeImpact() for name in down}
    lost: list[QueueInfo] = []
    unexplained: dict[tuple[str, ...], list[QueueInfo]] = {}
    down_elsewhere: list[QueueInfo] = []
    for q in snapshot.queues:
        if q.replicated:
            missing = _missing(q, down)
            if q.state == "minority" or (q.members and (len(q.members) - len(missing)) * 2 <= len(q.members)):
                lost.append(q)
                continue
            if not missing:
                continue
            for m in missing:
                if m in impact:
                    impact[m].replicated.append(q)
            others = tuple(m for m in missing if m not in down)
            if others:
                unexplained.setdefault(others, []).append(q)
        elif q.state == "down":
            if q.node in impact:
                impact[q.node].down.append(q)
            else:
                down_elsewhere.append(q)
    out = [_node_down(n, impact[n.name], snapshot.node) for n in down_nodes]
    out += _drained(nodes)
    out += _lost_majority(lost, down)
    for missing, queues in sorted(unexplained.items()):
        status = [command("rabbitmq-diagnostics", "-n", m, "status") for m in missing]
        out.append(Finding(
            severity="info", kind="rabbitmq.members_offline", subject=", ".join(missing),
            summary=f"{len(queues)} quorum queue{'s' if len(queues) != 1 else ''}/streams run without their "
                    f"member{'s' if len(missing) != 1 else ''} on {', '.join(missing)} (still a majority): "
                    f"{_short(queue_subject(q) for q in queues)}",
            evidence={"missing": list(missing), "queues": [queue_subject(q) for q in queues],
                      "command": QUORUM_CRITICAL},
            next_step=f"{shell_text(QUORUM_CRITICAL)}; " + "; ".join(shell_text(a) for a in status),
            source=SOURCE))
    for q in down_elsewhere:
        kind = classify_queue(q.name)
        status_cmd = command("rabbitmq-diagnostics", "-n", q.node, "status") if q.node else None
        out.append(Finding(
            severity="critical" if kind.cls == "service" else "warning", kind="rabbitmq.queue_down",
            subject=queue_subject(q),
            summary=f"queue {q.name} is down" + (f" on {q.node}" if q.node else "")
                    + ": publishing to it and consuming from it fail",
            evidence={"vhost": q.vhost, "queue": q.name, "type": q.queue_type, "state": q.state, "node": q.node,
                      "class": kind.cls, **({"command": status_cmd} if status_cmd else {})},
            next_step=(f"{shell_text(status_cmd)}, then its log" if status_cmd
                       else "rabbitmq-diagnostics status on its node, then its log"), source=SOURCE))
    return out


def _node_down(n: NodeInfo, impact: _NodeImpact, answered_by: str | None) -> Finding:
    host = n.name.partition("@")[2] or n.name
    summary = f"cluster node {n.name} is not running"
    evidence: dict[str, object] = {"node": n.name, "type": n.type, "answered_by": answered_by}
    if impact.replicated:
        led = sum(1 for q in impact.replicated if q.leader and q.leader != n.name)
        summary += (f"; {len(impact.replicated)} quorum queue{'s' if len(impact.replicated) != 1 else ''}/"
                    f"streams run without their member there ({led} led elsewhere)")
        evidence["replicated_without_member"] = len(impact.replicated)
    if impact.down:
        summary += f"; {len(impact.down)} queue{'s' if len(impact.down) != 1 else ''} on it down: " \
                   f"{_short(queue_subject(q) for q in impact.down)}"
        evidence["queues_down"] = [queue_subject(q) for q in impact.down]
    elif not impact.replicated:
        summary += "; queues led there move to other members, classic queues on it are unavailable"
    if answered_by and answered_by != n.name:
        summary += f" (reported by {answered_by})"
    evidence["command"] = SERVICE_STATUS
    start = command("rabbitmqctl", "-n", n.name, "start_app")
    return Finding(
        severity="critical", kind="rabbitmq.node_down", subject=n.name, summary=summary, evidence=evidence,
        next_step=f"on {host}: {shell_text(SERVICE_STATUS)} (or the container), then its log; "
                  f"{shell_text(start)} if only the app was stopped",
        source=SOURCE)


def _drained(nodes: Iterable[NodeInfo]) -> list[Finding]:
    return [Finding(
        severity="warning", kind="rabbitmq.node_drained", subject=n.name,
        summary=f"cluster node {n.name} is being drained (maintenance mode): it serves no clients and leads "
                "no queues",
        evidence={"node": n.name, "running": n.running, "command": revive},
        next_step=f"{shell_text(revive)} once the maintenance is over", source=SOURCE)
        for n in nodes if n.being_drained and n.running is not False
        for revive in [command("rabbitmq-upgrade", "-n", n.name, "revive")]]
