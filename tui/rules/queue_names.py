"""What an oslo.messaging queue name says: its class (service topic, reply, fanout, notifications, other),
and for service topics the topic, the service consuming it, the host and backend. Pure and cached.

Names follow oslo.messaging's rabbit driver: service topics (`scheduler`, `compute.<host>`,
`cinder-volume.<host>@<backend>` ...), replies `reply_<hex>`, fanouts `<topic>_fanout_<hex>`, notifications
`notifications.*` / `versioned_notifications.*`; with `use_queue_manager` replies are
`reply_<hostname>:<processname>:<counter>` and fanouts `<topic>_fanout_<hostname>:<processname>:<counter>`;
with `rabbit_stream_fanout` a fanout is one stream `<topic>_fanout`.
"""

from __future__ import annotations

import functools
import re
from dataclasses import dataclass
from typing import Literal

from tui.models.rabbitmq import QueueInfo

SOURCE = "rabbitmq"

QueueClass = Literal["service", "reply", "fanout", "notifications", "other"]

# oslo.messaging topic -> the service that consumes it. Longest topic wins, so dotted topics work.
SERVICE_TOPICS: dict[str, str] = {
    # nova
    "scheduler": "nova-scheduler",
    "conductor": "nova-conductor",
    "compute": "nova-compute",
    "consoleauth": "nova-consoleauth",
    "cert": "nova-cert",
    "console": "nova-console",
    # neutron (agents report their state to q-reports-plugin: nobody there = every agent looks down)
    "q-plugin": "neutron-server",
    "q-reports-plugin": "neutron-server",
    "q-l3-plugin": "neutron-server",
    "q-server-resource-versions": "neutron-server",
    "q-metering-plugin": "neutron-server",
    "q-firewall-plugin": "neutron-server",
    "dhcp_agent": "neutron-dhcp-agent",
    "l3_agent": "neutron-l3-agent",
    "metering_agent": "neutron-metering-agent",
    # cinder
    "cinder-scheduler": "cinder-scheduler",
    "cinder-volume": "cinder-volume",
    "cinder-backup": "cinder-backup",
    # others commonly on the same broker
    "engine": "heat-engine",
    "heat-engine-listener": "heat-engine",
    "ironic.conductor_manager": "ironic-conductor",
    "manila-scheduler": "manila-scheduler",
    "manila-share": "manila-share",
    "manila-data": "manila-data",
    "magnum-conductor": "magnum-conductor",
    "octavia_prov": "octavia-driver-agent",
    "trove-taskmanager": "trove-taskmanager",
    "trove-conductor": "trove-conductor",
    "central": "designate-central",
    "worker": "designate-worker",
    "producer": "designate-producer",
    "mdns": "designate-mdns",
}
_TOPICS_LONGEST_FIRST = sorted(SERVICE_TOPICS, key=len, reverse=True)

# reply_<uuid4 hex>, or with the queue manager reply_<hostname>:<processname>:<counter>
_REPLY = re.compile(r"^reply_(?:[0-9a-f]{8,}|(?P<host>[^:]+):(?P<process>[^:]+):[0-9]+)$")
# <topic>_fanout_<uuid4 hex>, <topic>_fanout_<hostname>:<processname>:<counter>, or the stream <topic>_fanout
_FANOUT = re.compile(r"^(?P<topic>.+)_fanout(?:_[0-9a-f]{8,}|_(?P<host>[^:]+):(?P<process>[^:]+):[0-9]+)?$")
_NOTIFICATIONS = re.compile(r"^(versioned_)?notifications([._].*)?$")

@dataclass(frozen=True)
class QueueKind:
    """What a queue name says: its class and, for service topics, the topic, service, host and backend; for
    queue-manager reply/fanout names, the client's host and process."""

    cls: QueueClass
    topic: str | None = None
    service: str | None = None
    host: str | None = None
    backend: str | None = None
    process: str | None = None


@functools.lru_cache(maxsize=8192)
def classify_queue(name: str) -> QueueKind:
    """What the name says (pure, so cached: the RabbitMQ pane's attention view and the rules ask it for every
    one of thousands of queues on every poll, and the names hardly change)."""
    m = _REPLY.match(name)
    if m:
        return QueueKind("reply", host=m.group("host"), process=m.group("process"))
    m = _FANOUT.match(name)
    if m:
        topic = m.group("topic")
        return QueueKind("fanout", topic=topic, service=_service_of(topic), host=m.group("host"),
                         process=m.group("process"))
    if _NOTIFICATIONS.match(name):
        return QueueKind("notifications", topic=name)
    for topic in _TOPICS_LONGEST_FIRST:
        if name == topic:
            return QueueKind("service", topic=topic, service=SERVICE_TOPICS[topic])
        if name.startswith(topic + "."):
            server = name[len(topic) + 1:]
            if not server:
                break
            host, backend = server, None
            if "@" in server:  # cinder-volume.<host>@<backend>
                host, _, backend = server.partition("@")
            return QueueKind("service", topic=topic, service=SERVICE_TOPICS[topic], host=host or None,
                             backend=backend or None)
    return QueueKind("other")


def _service_of(topic: str) -> str | None:
    for known in _TOPICS_LONGEST_FIRST:
        if topic == known or topic.startswith(known + "."):
            return SERVICE_TOPICS[known]
    return None


def queue_subject(q: QueueInfo) -> str:
    """The finding subject: the queue name, qualified by its vhost unless that is the default "/"."""
    return q.name if q.vhost == "/" else f"{q.vhost}/{q.name}"

