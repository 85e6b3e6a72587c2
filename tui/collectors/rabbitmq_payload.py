"""Parse RabbitMQ payloads (management API JSON, `rabbitmqctl --formatter json`) into models.

Real field names only. A key the broker left out stays None: fresh queue rows lack `messages` and
`consumers` until the next statistics emission, and a stopped cluster node is listed with few keys.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping
from datetime import UTC, datetime
from typing import Any

from tui.models.rabbitmq import Alarm, NodeInfo, QueueInfo

# What the collector asks /api/queues for (everything the rules and the pane use, nothing else).
# type/state/node/leader/members/online/delivery_limit: queue type and replication (RabbitMQ 3.8+; a 3.x classic
# row has no leader/members/online, a 3.7 row no type); they come without statistics too, so light rows have them.
TOPOLOGY_COLUMNS = ("type", "state", "node", "leader", "members", "online", "delivery_limit")
QUEUE_COLUMNS = ("name", "vhost", "messages", "messages_ready", "messages_unacknowledged", "consumers",
                 "arguments", "idle_since", *TOPOLOGY_COLUMNS)
# The light listing (`disable_stats=true&enable_queue_totals=true`): no per-queue statistics, so no
# `consumers` / `idle_since`; message totals come from the queue's own counters.
LIGHT_QUEUE_COLUMNS = ("name", "vhost", "messages", "messages_ready", "messages_unacknowledged", "arguments",
                       *TOPOLOGY_COLUMNS)
NODE_COLUMNS = ("name", "type", "running", "partitions", "mem_alarm", "disk_free_alarm", "mem_used",
                "mem_limit", "disk_free", "disk_free_limit", "fd_used", "fd_total", "sockets_used",
                "sockets_total", "uptime", "being_drained")
OVERVIEW_COLUMNS = ("cluster_name", "rabbitmq_version", "management_version", "node", "object_totals")


# Above what a broker's counters reach (Erlang keeps them in 64 bits): a larger number is absurd, not a count
MAX_COUNT = 2**63 - 1


def _int(value: Any) -> int | None:
    """A count or size from the broker; None (unknown) for anything else, and for Infinity, NaN or a number
    beyond MAX_COUNT (JSON allows them): that one value is unknown, the row and the source stand."""
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return None
    if isinstance(value, float) and not math.isfinite(value):
        return None
    return int(value) if -MAX_COUNT <= value <= MAX_COUNT else None


def bounded_counts(value: Any) -> dict[str, int]:
    """/api/overview object_totals ({"queues": 12, ...}): the names with a count MAX_COUNT bounds."""
    if not isinstance(value, Mapping):
        return {}
    return {k: n for k, v in value.items() if isinstance(k, str) and (n := _int(v)) is not None}


def _bool(value: Any) -> bool | None:
    return value if isinstance(value, bool) else None


def _str(value: Any) -> str | None:
    return value if isinstance(value, str) else None


def parse_time(value: Any) -> datetime | None:
    """idle_since: ISO 8601 with offset on 3.10+ ("2026-12-02T10:26:22.309+00:00"), "YYYY-MM-DD HH:MM:SS"
    (UTC) on older brokers."""
    if not isinstance(value, str) or not value:
        return None
    try:
        parsed = datetime.fromisoformat(value)
    except ValueError:
        return None
    return parsed if parsed.tzinfo else parsed.replace(tzinfo=UTC)


def _x_expires(arguments: Any) -> int | None:
    if isinstance(arguments, Mapping):
        return _int(arguments.get("x-expires"))
    if isinstance(arguments, list):  # rabbitmqctl: [["x-expires", "signedint", 1800000], ...]
        for item in arguments:
            if isinstance(item, list) and len(item) == 3 and item[0] == "x-expires":
                return _int(item[2])
    return None


def _names(value: Any) -> tuple[str, ...] | None:
    return tuple(v for v in value if isinstance(v, str)) if isinstance(value, list) else None


def _queue_type(row: Mapping[str, Any]) -> str | None:
    """`type` (3.8+), else the declared x-queue-type argument (a 3.x quorum queue carries it)."""
    kind = row.get("type")
    if isinstance(kind, str):
        return kind
    arguments = row.get("arguments")
    declared = arguments.get("x-queue-type") if isinstance(arguments, Mapping) else None
    return declared if isinstance(declared, str) else None


def _dead_letter(arguments: Any) -> bool:
    """The queue declares a dead-letter exchange (messages over delivery_limit go there, not away)."""
    return isinstance(arguments, Mapping) and bool(arguments.get("x-dead-letter-exchange"))


def parse_queue(row: Mapping[str, Any], vhost: str | None = None) -> QueueInfo | None:
    name = row.get("name")
    vh = row.get("vhost", vhost)
    if not isinstance(name, str) or not isinstance(vh, str):
        return None
    arguments = row.get("arguments")
    return QueueInfo(
        vhost=vh,
        name=name,
        messages=_int(row.get("messages")),
        messages_ready=_int(row.get("messages_ready")),
        messages_unacknowledged=_int(row.get("messages_unacknowledged")),
        consumers=_int(row.get("consumers")),
        x_expires_ms=_x_expires(arguments),
        idle_since=parse_time(row.get("idle_since")),
        queue_type=_queue_type(row),
        state=_str(row.get("state")),
        node=_str(row.get("node")),
        leader=_str(row.get("leader")),
        members=_names(row.get("members")),
        online=_names(row.get("online")),
        delivery_limit=_int(row.get("delivery_limit")),
        dead_letter=_dead_letter(arguments),
    )


def parse_node(row: Mapping[str, Any]) -> NodeInfo | None:
    name = row.get("name")
    if not isinstance(name, str):
        return None
    parts = row.get("partitions")
    sockets_used, sockets_total = _int(row.get("sockets_used")), _int(row.get("sockets_total"))
    if not sockets_total:  # RabbitMQ 4 reports 0 of 0: it no longer counts sockets (unknown, not "0/0")
        sockets_used = sockets_total = None
    return NodeInfo(
        name=name,
        running=_bool(row.get("running")),
        type=_str(row.get("type")),
        partitions=tuple(p for p in parts if isinstance(p, str)) if isinstance(parts, list) else (),
        mem_alarm=_bool(row.get("mem_alarm")),
        disk_free_alarm=_bool(row.get("disk_free_alarm")),
        mem_used=_int(row.get("mem_used")),
        mem_limit=_int(row.get("mem_limit")),
        disk_free=_int(row.get("disk_free")),
        disk_free_limit=_int(row.get("disk_free_limit")),
        fd_used=_int(row.get("fd_used")),
        fd_total=_int(row.get("fd_total")),
        sockets_used=sockets_used,
        sockets_total=sockets_total,
        uptime_ms=_int(row.get("uptime")),
        being_drained=_bool(row.get("being_drained")),
    )


def parse_alarms(payload: Any, via: str = "local-alarms") -> tuple[Alarm, ...]:
    """/api/health/checks/local-alarms 503 body: {"status": "failed", "alarms": [{"node", "resource"}]}.

    Also accepts cluster_status's "alarms" list ({"node", "resource"} items, or legacy strings).
    """
    items = payload.get("alarms") if isinstance(payload, Mapping) else payload
    out = []
    for item in items if isinstance(items, list) else ():
        if isinstance(item, Mapping) and isinstance(item.get("node"), str):
            resource = item.get("resource")
            out.append(Alarm(node=item["node"], resource=str(resource or "unknown"), via=via))
    return tuple(out)


def parse_cluster_status(payload: Mapping[str, Any]) -> tuple[tuple[NodeInfo, ...], tuple[Alarm, ...]]:
    """`rabbitmqctl cluster_status --formatter json`: disk_nodes/ram_nodes are members, running_nodes the
    ones up, partitions {node: [nodes it cannot see]}, alarms [{node, resource}]."""
    running = set(_strs(payload.get("running_nodes")))
    disk = _strs(payload.get("disk_nodes"))
    ram = _strs(payload.get("ram_nodes"))
    partitions = payload.get("partitions") if isinstance(payload.get("partitions"), Mapping) else {}
    alarms = parse_alarms(payload.get("alarms"), via="cluster_status")
    nodes = []
    for name, kind in [*((n, "disc") for n in disk), *((n, "ram") for n in ram)]:
        mem = any(a.node == name and a.resource == "memory" for a in alarms)
        disk_alarm = any(a.node == name and a.resource == "disk" for a in alarms)
        nodes.append(NodeInfo(name=name, running=name in running, type=kind,
                              partitions=tuple(_strs(partitions.get(name))),
                              mem_alarm=mem if name in running else None,
                              disk_free_alarm=disk_alarm if name in running else None))
    return tuple(nodes), alarms


def _strs(value: Any) -> list[str]:
    return [v for v in value if isinstance(v, str)] if isinstance(value, list) else []


ParsedQueues = dict[tuple[str, str], tuple[Mapping[str, Any], QueueInfo]]  # (vhost, name) -> (row, its QueueInfo)


def parse_queues_reusing(rows: Iterable[Any], last: ParsedQueues) -> tuple[list[QueueInfo], ParsedQueues]:
    """parse_queues, reusing the QueueInfo of a row equal to the one it was parsed from at the last poll (2,000
    queues every poll, nearly all unchanged while nothing happens: a dict comparison instead of a parse and a
    dataclass). Returns the infos and what to pass as `last` next time."""
    out: list[QueueInfo] = []
    kept: ParsedQueues = {}
    for row in rows:
        if type(row) is not dict and not isinstance(row, Mapping):  # JSON gives dicts: no ABC check for them
            continue
        name, vh = row.get("name"), row.get("vhost")
        if not isinstance(name, str) or not isinstance(vh, str):
            continue  # parse_queue refuses it too
        hit = last.get((vh, name))
        if hit is not None and hit[0] == row:
            parsed: QueueInfo | None = hit[1]
        else:
            parsed = parse_queue(row)
        if parsed is not None:
            kept[(vh, name)] = (row, parsed)
            out.append(parsed)
    return out, kept


def parse_queues(rows: Iterable[Any], vhost: str | None = None) -> list[QueueInfo]:
    out = []
    for row in rows:
        if isinstance(row, Mapping):
            parsed = parse_queue(row, vhost)
            if parsed is not None:
                out.append(parsed)
    return out
