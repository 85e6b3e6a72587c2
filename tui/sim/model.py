"""Mutable state records of the simulated cloud (internal to tui/sim; renderers turn them into JSON)."""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any


def last_beat(phase: float, interval: float, t: float, dead_since: float | None) -> float:
    """Last heartbeat at or before t of a reporter beating every `interval` s (frozen once dead)."""
    end = t if dead_since is None else min(t, dead_since)
    return phase + math.floor((end - phase) / interval) * interval


@dataclass(slots=True)
class Service:
    """A nova or cinder service row; `updated_at` is the last heartbeat (or status change)."""

    id: str
    binary: str
    host: str
    zone: str
    created: float
    phase: float
    interval: float = 10.0
    status: str = "enabled"
    disabled_reason: str | None = None
    forced_down: bool = False
    dead_since: float | None = None
    status_changed: float = 0.0
    backend: bool = False  # cinder-volume (extra fields)

    def updated_at(self, t: float) -> float:
        return max(last_beat(self.phase, self.interval, t, self.dead_since), self.status_changed)


@dataclass(slots=True)
class Agent:
    id: str
    agent_type: str
    binary: str
    host: str
    created: float
    started: float
    phase: float
    interval: float = 30.0
    admin_state_up: bool = True
    availability_zone: str | None = None
    dead_since: float | None = None
    configurations: dict[str, Any] = field(default_factory=dict)

    def heartbeat(self, t: float) -> float:
        return last_beat(self.phase, self.interval, t, self.dead_since)


@dataclass(slots=True)
class Provider:
    uuid: str
    name: str
    inventories: dict[str, dict[str, Any]]
    traits: list[str]
    generation: int = 1
    allocations: dict[str, dict[str, int]] = field(default_factory=dict)  # consumer -> resources
    usages: dict[str, int] = field(default_factory=dict)

    def allocate(self, consumer: str, resources: dict[str, int]) -> None:
        self.free(consumer)
        self.allocations[consumer] = dict(resources)
        for rc, n in resources.items():
            self.usages[rc] = self.usages.get(rc, 0) + n
        self.generation += 1

    def free(self, consumer: str) -> None:
        old = self.allocations.pop(consumer, None)
        if old:
            for rc, n in old.items():
                self.usages[rc] = self.usages.get(rc, 0) - n
            self.generation += 1

    def capacity(self, rc: str) -> int:
        inv = self.inventories[rc]
        return int((inv["total"] - inv["reserved"]) * inv["allocation_ratio"])


@dataclass(slots=True)
class Consumer:
    uuid: str
    project_id: str
    user_id: str
    consumer_type: str = "INSTANCE"
    generation: int = 1


@dataclass(slots=True)
class Host:
    name: str
    index: int
    hypervisor_id: str  # == root resource provider uuid
    host_ip: str
    service: Service
    agent: Agent


@dataclass(slots=True)
class Action:
    action: str
    request_id: str
    start: float
    updated: float
    message: str | None = None
    events: list[dict[str, Any]] = field(default_factory=list)


@dataclass(slots=True)
class Instance:
    id: str
    seq: int
    name: str
    project_id: str
    user_id: str
    flavor: str
    image_id: str
    created: float
    updated: float
    host: str | None = None
    status: str = "ACTIVE"
    vm_state: str = "active"
    task_state: str | None = None
    power_state: int = 1
    launched_at: float | None = None
    terminated_at: float | None = None
    az: str = "nova"
    fault: dict[str, Any] | None = None
    port_id: str | None = None
    volumes: list[tuple[str, bool]] = field(default_factory=list)  # (volume id, delete_on_termination)
    actions: list[Action] | None = None  # None: synthesised from `created` on demand
    reservation_id: str = ""
    key_name: str | None = None
    # where nova keeps a build before a nova-compute claims it (its updated_at is NULL until then):
    # "build_request" (API cell; listed whatever changes-since says), "cast" (in the cell DB, cast to a compute
    # that has not claimed it: changes-since never lists it), None (claimed, or never a build: updated is set)
    pending: str | None = None
    cache: bytes | None = None  # JSON of the server minus host_status, without the closing brace

    def touch(self, t: float) -> None:
        self.updated = max(t, self.updated)
        self.cache = None


@dataclass(slots=True)
class Port:
    id: str
    network_id: str
    subnet_id: str
    project_id: str
    mac: str
    ip: str
    device_id: str
    device_owner: str
    host: str
    created: float
    updated: float
    status: str = "ACTIVE"
    vif_type: str = "ovs"
    revision: int = 4


@dataclass(slots=True)
class Volume:
    id: str
    name: str
    size: int
    project_id: str
    user_id: str
    created: float
    updated: float
    status: str = "available"
    bootable: bool = False
    backend_host: str = "storage-01@ceph#ceph"
    attachments: list[dict[str, Any]] = field(default_factory=list)


@dataclass(slots=True)
class Migration:
    id: int
    uuid: str
    instance_uuid: str
    source: str
    dest: str
    dest_ip: str
    status: str
    migration_type: str
    project_id: str
    user_id: str
    created: float
    updated: float


@dataclass(slots=True)
class Queue:
    """A RabbitMQ queue. Stats are published with a lag (collect_statistics_interval)."""

    name: str
    vhost: str
    created: float
    consumers: int = 1
    ready: int = 0
    unacked: int = 0
    growth: float = 0.0  # ready messages per second added since `grow_from`
    grow_from: float = 0.0
    durable: bool = False
    auto_delete: bool = False
    arguments: dict[str, Any] = field(default_factory=dict)
    changed: float = 0.0
    prev: tuple[int, int, int] = (1, 0, 0)  # (consumers, ready, unacked) before `changed`
    qtype: str = "classic"  # classic | quorum | stream (RabbitMQ 4 shape; 3.10 rows are all classic)
    leader: int = 0  # index into the engine's rabbit_nodes of the member leading it (quorum/stream)
    connected: float = 0.0  # when its consumers last came back from none (their connections are new since)

    def set(self, t: float, *, consumers: int | None = None, ready: int | None = None,
            growth: float | None = None) -> None:
        self.prev = self.values(t)
        self.changed = t
        if ready is not None or growth is not None:
            self.ready = self.prev[1] if ready is None else ready
            self.grow_from = t
        if consumers is not None:
            if consumers > 0 and self.consumers == 0:
                self.connected = t
            self.consumers = consumers
        if growth is not None:
            self.growth = growth

    def values(self, t: float) -> tuple[int, int, int]:
        ready = self.ready + int(max(0.0, t - self.grow_from) * self.growth)
        return self.consumers, ready, self.unacked

    def stats(self, t: float, interval: float = 5.0) -> tuple[int, int, int]:
        """(consumers, ready, unacked) as the management API shows them at t: as of the last stats tick."""
        tick = math.floor(t / interval) * interval
        if tick < self.changed:
            return self.prev
        return self.values(tick)


@dataclass(slots=True)
class RabbitNode:
    name: str
    started: float
    mem_limit: int = 3_356_618_342
    mem_used: int = 412_000_000
    alarms: list[list[float | None]] = field(default_factory=list)  # [start, end or None]
    fd_used: int = 85
    sockets_used: int = 40
    proc_used: int = 1200
    running: bool = True  # False: the app stopped (RabbitMQ 4 lists it as the sparse row)

    def alarmed(self, t: float) -> bool:
        return any(s is not None and s <= t and (e is None or t < e) for s, e in self.alarms)


@dataclass(slots=True)
class GaleraNode:
    name: str
    address: str
    index: int
    reachable: bool = True
    state: str = "synced"  # synced | isolated | joined
    since: float = 0.0
