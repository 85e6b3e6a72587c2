"""Lost consumers: a service topic queue that had a consumer and has none now. Pure functions.

A live oslo.messaging RPC server always consumes its topic queues: nova-compute on host H consumes
`compute.H`, every nova-conductor consumes `conductor` and `conductor.<host>`, cinder-volume consumes
`cinder-volume.<host>@<backend>`. RabbitMQ sees a killed consumer's connection close at once (a hung host after the
AMQP heartbeat), so a queue whose consumers drop from >= 1 to 0 names a dead or cut-off process long before its
service heartbeat is late (report_interval) or nova says it is down (service_down_time). Empty or not.

History kept by the collector (tui.collectors.rabbitmq): which service queues were seen with a consumer, and
since when one has none (QueueInfo.consumer_lost_since). Judgement here:

- lost for less than the grace period (a planned restart: the new process consumes again within about one report
  interval): an info, never more;
- lost for longer: critical for a queue only one process consumes (`<topic>.<host>`, or a shared topic with no
  consumer left), naming the process and host;
- several queues of one service lost together (a rolling restart, or the bus cut off a fleet): one grouped
  finding naming the hosts, at the severity of its worst member.

OVN agents do not use the bus, so no OVN agent is judged here; their liveness is the services source's.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterable, Mapping
from datetime import datetime
from typing import NamedTuple

from tui.models.finding import SEVERITY_ORDER, Finding, Severity
from tui.models.rabbitmq import QueueInfo
from tui.rules.queue_names import SOURCE, classify_queue, queue_subject

KIND = "rabbitmq.consumer_lost"
GROUP_KIND = "rabbitmq.consumers_lost"
DEFAULT_GRACE_S = 10.0  # nova's default report_interval: a restart consumes again within it
GROUP_OVER = 1  # more lost queues of one service than this (lost together): one finding

Key = tuple[str, str]


class ConsumerState(NamedTuple):
    """One service queue's consumer history: last seen consumed, first seen without a consumer since then
    (None while consumed), its consumers' connections when last listed, and its last restart."""

    seen_at: datetime
    lost_since: datetime | None = None
    conns: frozenset[str] = frozenset()
    restarted_at: datetime | None = None


ConsumerHistory = dict[Key, ConsumerState]


def consumers_now(q: QueueInfo) -> int | None:
    """The consumer count to judge: a live AMQP answer wins over the management API's (up to 5 s old)."""
    if q.live_missing:
        return 0
    if q.live_consumers is not None:
        return q.live_consumers
    return q.consumers


def watched(q: QueueInfo) -> bool:
    """A queue whose consumer is a service process (a service topic, shared or per host)."""
    return classify_queue(q.name).cls == "service"


def _replaced(before: frozenset[str], now: frozenset[str] | None) -> bool:
    """A consumer connection gone and a new one in its place: the process restarted between two polls."""
    return bool(now is not None and before and (before - now) and (now - before))


def apply_consumer_history(history: ConsumerHistory, queues: Iterable[QueueInfo], now: datetime,
                           conns: Mapping[Key, frozenset[str]] | None = None
                           ) -> tuple[ConsumerHistory, list[QueueInfo]]:
    """Advance the consumer history by one poll. Each service queue seen with a consumer before and with none
    now gets consumer_lost_since; one whose consumer came back, or whose consumer connection was replaced by
    another between two polls (`conns`: the connections consuming each queue, when listed this poll; a
    restart quicker than a poll shows only there), gets consumer_restarted_at. Unknown counts keep the state
    as it was; a queue gone is forgotten (its service was removed, or the broker lost it: the queue-level
    rules tell that)."""
    new: ConsumerHistory = {}
    out: list[QueueInfo] = []
    for q in queues:
        if not watched(q):
            out.append(q)
            continue
        key = q.key
        prev = history.get(key)
        n = consumers_now(q)
        if n is not None and n > 0:
            # a queue consumed but not in the consumer listing: the listing lags the count (unknown, not none)
            listed = None if conns is None else (conns.get(key) or None)
            restarted = prev.restarted_at if prev is not None else None
            if prev is not None and (prev.lost_since is not None or _replaced(prev.conns, listed)):
                restarted = now
            kept = listed if listed is not None else (prev.conns if prev is not None else frozenset())
            new[key] = ConsumerState(now, None, kept, restarted)
            if restarted is not None:
                q = dataclasses.replace(q, consumer_restarted_at=restarted)
        elif n == 0 and prev is not None:
            lost_since = prev.lost_since or now
            new[key] = prev._replace(lost_since=lost_since, conns=frozenset())
            q = dataclasses.replace(q, consumer_lost_since=lost_since, consumer_restarted_at=prev.restarted_at)
        elif prev is not None:  # unknown this poll: as it was
            new[key] = prev
            if prev.lost_since is not None or prev.restarted_at is not None:
                q = dataclasses.replace(q, consumer_lost_since=prev.lost_since,
                                        consumer_restarted_at=prev.restarted_at)
        out.append(q)
    return new, out


def lost_for_s(q: QueueInfo, now: datetime) -> float | None:
    if q.consumer_lost_since is None:
        return None
    return max(0.0, (now - q.consumer_lost_since).total_seconds())


def who(q: QueueInfo) -> tuple[str, str | None]:
    """(service, host) the queue names: `nova-compute`, `compute-02`; host None for a shared topic."""
    kind = classify_queue(q.name)
    return (kind.service or kind.topic or q.name, kind.host)


def consumer_lost_finding(q: QueueInfo, now: datetime, grace_s: float = DEFAULT_GRACE_S) -> Finding | None:
    lost = lost_for_s(q, now)
    if lost is None:
        return None
    kind = classify_queue(q.name)
    service, host = who(q)
    where = f"{host}@{kind.backend}" if host and kind.backend else host
    in_grace = lost < grace_s
    severity: Severity = "info" if in_grace else "critical"
    ago = f"{lost:.0f} s ago"
    if host:
        summary = (f"{service} on {where} stopped consuming {q.name} {ago}: process gone or cut off from the bus")
        next_step = (f"on {host}: is {service} running (a restart?), and connected to RabbitMQ? Its log, then "
                     "`rabbitmqctl list_consumers` for the queue")
    else:
        summary = (f"no {service} consumes its shared topic {q.name} since {ago}: every {service} is gone or cut off "
                   "from the bus")
        next_step = f"is any {service} running and connected to RabbitMQ? Their logs (AMQP errors), then restart them"
    if in_grace:
        summary += f" (a restart consumes again within {grace_s:g} s: watching)"
    evidence: dict[str, object] = {
        "vhost": q.vhost, "queue": q.name, "class": kind.cls, "topic": kind.topic, "service": service,
        "host": host, "backend": kind.backend, "consumers": q.consumers, "messages": q.messages,
        "lost_since": q.consumer_lost_since, "lost_for_s": round(lost, 1), "grace_s": grace_s,
        "confirmed_live": q.live_consumers is not None or q.live_missing,
    }
    return Finding(severity=severity, kind=KIND, subject=queue_subject(q), summary=summary, evidence=evidence,
                   next_step=next_step, source=SOURCE)


def group_lost(findings: list[Finding]) -> list[Finding]:
    """More than GROUP_OVER lost queues of one service and vhost: one finding naming the hosts."""
    groups: dict[tuple[str, str], list[Finding]] = {}
    for f in findings:
        groups.setdefault((str(f.evidence.get("vhost")), str(f.evidence.get("service"))), []).append(f)
    out: list[Finding] = []
    for (vhost, service), members in groups.items():
        if len(members) <= GROUP_OVER:
            out.extend(members)
            continue
        hosts = sorted({str(f.evidence.get("host")) for f in members if f.evidence.get("host")})
        severity = min((f.severity for f in members), key=lambda s: SEVERITY_ORDER[s])
        shown = ", ".join(hosts[:6]) + (f" and {len(hosts) - 6} more" if len(hosts) > 6 else "")
        restarting = sum(1 for f in members if f.severity == "info")
        tail = f"; {restarting} of them within the restart grace" if restarting else ""
        summary = f"{len(members)} {service} processes stopped consuming their queues together: {shown}{tail}"
        next_step = ("a rolling restart? Then they come back one by one. Otherwise many hosts lost the bus at once: "
                     "check RabbitMQ (alarms, partitions, connections) before the hosts")
        subject = f"{service} ({vhost})" if vhost != "/" else service
        out.append(Finding(severity=severity, kind=GROUP_KIND, subject=subject, summary=summary,
                           evidence={"service": service, "vhost": vhost, "hosts": hosts, "count": len(members),
                                     "queues": [str(f.evidence.get("queue")) for f in members][:20],
                                     "in_grace": restarting},
                           next_step=next_step, source=SOURCE))
    return out


def consumer_lost_findings(queues: Iterable[QueueInfo], now: datetime, grace_s: float = DEFAULT_GRACE_S,
                           skip: set[tuple[str, str]] | None = None) -> list[Finding]:
    """A finding per service queue that lost its consumer (grouped per service when many), except the queues
    in `skip` (already a `rabbitmq.queue_no_consumer` finding: messages waiting tell more)."""
    out = []
    for q in queues:
        if q.consumer_lost_since is None or (skip and q.key in skip):
            continue
        f = consumer_lost_finding(q, now, grace_s)
        if f is not None:
            out.append(f)
    return group_lost(out)
