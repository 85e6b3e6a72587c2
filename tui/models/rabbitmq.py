"""RabbitMQ snapshot: queues, nodes and alarms as one poll saw them.

Numbers the broker did not report are None ("unknown"), never 0: rows of fresh queues lack `messages` and
`consumers` until the next statistics emission (RabbitMQ 4 quorum and stream rows lack `messages` for 5-10 s
after a declare or a leader change). Field names follow the management API.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from tui.records import record


@dataclass(frozen=True)
class QueueInfo:
    """One queue. The *_since / polls fields are history the collector keeps between polls.

    stuck_since: first poll (collector clock, UTC) that saw messages > 0 and consumers == 0 without a break;
    stuck_polls: how many consecutive polls saw it so. live_*: a passive AMQP queue_declare done right now
    (None when not done); live_missing: that declare answered 404 (the queue is gone).
    queue_type is classic / quorum / stream (None: a broker that does not say); state is the broker's
    ("running", "down", "minority", ...). Quorum queues and streams name their leader, members and the members online
    (None when not reported: classic queues); node is where a classic queue lives. history_s: how long the
    broker's own sample history showed it holding messages with no consumer and no delivery (a one-shot run's
    confirmation, tui.collectors.rabbitmq_history; None when not asked). consumer_lost_since: for a service topic
    queue seen with a consumer before, the first poll that saw it with none (None while it has one, or never had
    one); consumer_restarted_at: the last poll that saw its consumer come back, or a new consumer connection
    replace the old one (a restarted process): tui.rules.consumers.
    """

    vhost: str
    name: str
    messages: int | None = None
    messages_ready: int | None = None
    messages_unacknowledged: int | None = None
    consumers: int | None = None
    x_expires_ms: int | None = None
    idle_since: datetime | None = None
    stuck_since: datetime | None = None
    stuck_polls: int = 0
    live_messages: int | None = None
    live_consumers: int | None = None
    live_missing: bool = False
    queue_type: str | None = None
    state: str | None = None
    node: str | None = None
    leader: str | None = None
    members: tuple[str, ...] | None = None
    online: tuple[str, ...] | None = None
    delivery_limit: int | None = None
    dead_letter: bool = False
    history_s: float | None = None
    consumer_lost_since: datetime | None = None
    consumer_restarted_at: datetime | None = None

    @property
    def key(self) -> tuple[str, str]:
        return (self.vhost, self.name)

    @property
    def no_consumer_with_messages(self) -> bool:
        """Known to hold messages with nobody consuming (False when either number is unknown, and for a
        stream: its messages are retention, read and kept, never a backlog)."""
        return (self.messages is not None and self.messages > 0 and self.queue_type != "stream"
                and self.consumers is not None and self.consumers == 0)

    @property
    def replicated(self) -> bool:
        """A quorum queue or a stream (members and a leader), as opposed to a classic queue."""
        return self.queue_type in ("quorum", "stream")

    @property
    def offline_members(self) -> tuple[str, ...]:
        """Members not online, in members order (empty when either list is unknown)."""
        if self.members is None or self.online is None:
            return ()
        online = set(self.online)
        return tuple(m for m in self.members if m not in online)

    @property
    def has_majority(self) -> bool | None:
        """Whether more than half the members are online (None when not a replicated queue or unknown)."""
        if not self.replicated or not self.members or self.online is None:
            return None
        return len(set(self.online) & set(self.members)) * 2 > len(self.members)


@record
class NodeInfo:
    """One cluster member from /api/nodes (or `cluster_status` for the CLI source).

    A stopped member is listed with few keys (RabbitMQ 4: name, type, running, being_drained, cluster_links):
    everything else stays None. sockets_* are None where the broker reports 0 of 0 (RabbitMQ 4 always does:
    it no longer counts sockets), so no "0/0" is ever shown."""

    name: str
    running: bool | None = None
    type: str | None = None
    partitions: tuple[str, ...] = ()
    mem_alarm: bool | None = None
    disk_free_alarm: bool | None = None
    mem_used: int | None = None
    mem_limit: int | None = None
    disk_free: int | None = None
    disk_free_limit: int | None = None
    fd_used: int | None = None
    fd_total: int | None = None
    sockets_used: int | None = None
    sockets_total: int | None = None
    uptime_ms: int | None = None
    being_drained: bool | None = None


@record
class Alarm:
    """A resource alarm in effect: resource is "memory" or "disk" (as the broker names it)."""

    node: str
    resource: str
    via: str = "local-alarms"


@record
class RabbitSnapshot:
    """What one RabbitMQ poll saw.

    endpoint is the management URL (or the CLI prefix) without credentials. vhosts is the configured
    filter (empty = all). alarms_checked says the live alarm check answered (local-alarms or cluster_status);
    confirmation says how suspects were confirmed in this poll: "amqp", "history", "second-sample" or None, and
    confirm_error why an AMQP confirmation could not be done (the poll itself still succeeded).
    detail_by_queue is set (to the collector's light_max_queues) when the listing held more queues than that:
    the light polls ask the statistics they need one queue at a time (tui.collectors.rabbitmq).
    unreadable_vhosts are the vhosts whose queues `user` may not list (the management API answers 401 "not
    authorised to access virtual host"): a blind spot, told as a finding (rabbitmq.vhost_not_readable).
    """

    endpoint: str
    taken_at: datetime
    queues: tuple[QueueInfo, ...] = ()
    nodes: tuple[NodeInfo, ...] = ()
    alarms: tuple[Alarm, ...] = ()
    alarms_checked: bool = False
    vhosts: tuple[str, ...] = ()
    via: str = "management"
    cluster_name: str | None = None
    rabbitmq_version: str | None = None
    node: str | None = None
    object_totals: Mapping[str, Any] = field(default_factory=dict)
    confirmation: str | None = None
    confirm_error: str | None = None
    detail_by_queue: int | None = None
    fetch: Mapping[str, Any] = field(default_factory=dict)
    unreadable_vhosts: tuple[str, ...] = ()
    user: str | None = None

    def queue(self, name: str, vhost: str | None = None) -> QueueInfo | None:
        for q in self.queues:
            if q.name == name and (vhost is None or q.vhost == vhost):
                return q
        return None
