"""Instances snapshot: servers as the compute API lists them, plus what we observed about their task_state.

Field names follow the compute API (`OS-EXT-STS:task_state` -> task_state, `OS-EXT-SRV-ATTR:host` -> host).
The API does not say when a task_state began. `task_since` is our best lower bound on its start, and
`task_since_basis` says what it rests on:
- "observed": the first poll of ours that saw this task_state (the state began at or before it; we poll every
  `poll_interval_s`, so short states can begin and end between two polls);
- "updated_at": the server's `updated_at` at the first poll that saw the state, when that is earlier than our
  own observation (e.g. the state began before stacktop started). Every task_state change bumps `updated_at`,
  so the state began at or before it; it is nova's clock, not ours.
- "created": for `scheduling` only, the server's `created` (nova's clock): a build is in scheduling from its
  POST on and no other operation uses that task_state, so the state began at or before it (the build request's
  or the cell record's creation), even for a build first seen late (changes-since never lists a build cast to a
  compute that has not claimed it).
Either way, `now - task_since` is a lower bound of how long the server has been in that state. A BUILD server
without a task_state is tracked the same way, as the phase BUILD_QUEUED.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import datetime
from functools import cached_property
from types import MappingProxyType
from typing import ClassVar, Literal

from tui.records import record

SinceBasis = Literal["observed", "updated_at", "created"]

# A BUILD server with a host but no task_state: conductor recorded the host and cast the build to
# compute.<host> over the bus; nova-compute has not picked it up. Where a boot stops when that compute is down.
BUILD_QUEUED = "build_queued"


@record
class Fault:
    """A server's `fault`: only present for ERROR (and DELETED) servers."""

    code: int | None = None
    message: str = ""
    created: datetime | None = None
    details: str | None = None  # the traceback: only for admins or code != 500


@dataclass(frozen=True)
class Server:
    id: str
    name: str = ""
    project_id: str = ""
    user_id: str = ""
    status: str = ""
    vm_state: str | None = None
    task_state: str | None = None
    power_state: int | None = None
    host: str | None = None
    hypervisor_hostname: str | None = None
    availability_zone: str | None = None
    flavor: str | None = None
    created: datetime | None = None
    updated_at: datetime | None = None
    launched_at: datetime | None = None
    fault: Fault | None = None
    task_since: datetime | None = None
    task_since_basis: SinceBasis | None = None
    volumes: tuple[str, ...] = ()  # volume ids attached (os-extended-volumes:volumes_attached)
    request_id: str | None = None  # the latest action's request id: read only for stuck and ERROR servers
    # scheduling with no host: the host placement holds its allocation on, i.e. the one the scheduler chose and
    # the conductor cast the build to (nova shows no host until that nova-compute claims it). Read only for
    # servers (nearly) stuck in scheduling; None: no allocation (still with the scheduler/conductor) or unread
    cast_host: str | None = None

    @property
    def short_id(self) -> str:
        return self.id[:8]

    @property
    def label(self) -> str:
        return f"{self.name} ({self.short_id})" if self.name else self.id

    @property
    def phase(self) -> str | None:
        """The task_state, or BUILD_QUEUED for a BUILD server without one, else None."""
        if self.task_state:
            return self.task_state
        return BUILD_QUEUED if self.status == "BUILD" else None

    def in_state_for(self, now: datetime) -> float | None:
        """Seconds since task_since (a lower bound); None when there is no phase."""
        if self.phase is None or self.task_since is None:
            return None
        return max(0.0, (now - self.task_since).total_seconds())


@dataclass(frozen=True)
class AgentHealth:
    """A neutron agent on a host (only the fields the instance rules need)."""

    JOURNAL_HEARTBEATS: ClassVar[tuple[str, ...]] = ("heartbeat",)  # journal: written as an age (codec)

    binary: str
    agent_type: str = ""
    alive: bool | None = None
    admin_state_up: bool | None = None
    heartbeat: datetime | None = None


@dataclass(frozen=True)
class HostHealth:
    """What the instance rules need to know about a compute host: its nova-compute service and L2 agent.

    compute_state / compute_status are the API's `state` (up/down, computed by nova-api with its own
    service_down_time) and `status` (enabled/disabled); None = no nova-compute service reported for the host.
    agents is empty when the agents were not read (agents_read False) or the host has none.
    """

    JOURNAL_HEARTBEATS: ClassVar[tuple[str, ...]] = ("compute_updated_at",)  # journal: written as an age

    host: str
    compute_state: str | None = None
    compute_status: str | None = None
    forced_down: bool = False
    disabled_reason: str | None = None
    compute_updated_at: datetime | None = None
    agents: tuple[AgentHealth, ...] = ()
    agents_read: bool = False

    @property
    def compute_down(self) -> bool:
        return self.compute_state == "down" or self.forced_down

    @property
    def dead_agents(self) -> tuple[AgentHealth, ...]:
        return tuple(a for a in self.agents if a.alive is False)


@record
class PollInfo:
    """How this snapshot was read: mode "full" (paginated list), "changes-since", or "attention" (the
    dashboard's first read: only the servers worth attention, by server-side filters; the full list follows
    at once); counts for the bench."""

    mode: str = "full"
    requests: int = 0
    rows: int = 0  # servers the server listing answered with in this poll (all pages)
    changes_since: datetime | None = None  # the changes-since value sent (overlap included)
    last_full_at: datetime | None = None
    deleted: int = 0  # servers that left the index in this poll
    build_listed: bool = False  # a changes-since poll that also listed status=BUILD (counted in requests/rows)


_ATTENTION_STATUSES = frozenset({"BUILD", "ERROR"})


def in_attention(server: Server) -> bool:
    """In a phase (a task_state, or BUILD: Server.phase) or in ERROR, without the property's call."""
    return bool(server.task_state) or server.status in _ATTENTION_STATUSES


def attention_of(servers: tuple[Server, ...]) -> tuple[Server, ...]:
    """The servers in_attention, in order (inlined: a call per server cost as much as the rest of the scan)."""
    return tuple(s for s in servers if s.task_state or s.status in _ATTENTION_STATUSES)


@record
class InstancesSnapshot:
    """All servers known to the index (DELETED ones left it), host health, and how they were read.

    hosts_error: why the host health could not be read this poll (None = read fine). The rules then say the
    host's health is unknown instead of claiming it is healthy.

    A partial snapshot (only the servers worth attention) knows every server of the hosts in listed_hosts
    only (`stacktop snapshot` lists the computes whose nova-compute is down): servers_on() says so.
    """

    taken_at: datetime
    servers: tuple[Server, ...] = ()
    hosts: Mapping[str, HostHealth] = field(default_factory=dict)
    hosts_error: str | None = None
    poll: PollInfo = field(default_factory=PollInfo)
    poll_interval_s: float = 10.0
    listed_hosts: tuple[str, ...] = ()  # partial: the hosts every server of which was read all the same

    def __post_init__(self) -> None:
        object.__setattr__(self, "hosts", MappingProxyType(dict(self.hosts)))

    @cached_property
    def attention(self) -> tuple[Server, ...]:
        """The servers in a phase or in ERROR (in_attention), in listing order: the only ones a rule can raise
        a finding about, and the pane's default view. Found once per snapshot: the rules, the status line and
        the pane each scanned 10,000 servers (and their `phase` property) every poll."""
        return attention_of(self.servers)

    def with_attention(self, attention: tuple[Server, ...]) -> InstancesSnapshot:
        """This snapshot, its attention subset given by whoever already scanned the servers for it (it must be
        attention_of(servers): the collector's own scan)."""
        self.__dict__["attention"] = attention
        return self

    @property
    def partial(self) -> bool:
        """Only the servers worth attention were read (the first poll of a dashboard): not every server."""
        return self.poll.mode == "attention"

    def servers_on(self, host: str) -> list[Server] | None:
        """Every server on `host` (built there or cast to it), or None when this snapshot does not know them all
        (a partial one that did not list the host)."""
        if self.partial and host not in self.listed_hosts:
            return None
        return [s for s in self.servers if (s.host or s.cast_host) == host]

    def server(self, server_id: str) -> Server | None:
        for s in self.servers:
            if s.id == server_id:
                return s
        return None

    def to_dict(self) -> dict[str, object]:
        from tui.jsonable import to_jsonable

        return {
            "taken_at": to_jsonable(self.taken_at),
            "servers": [to_jsonable(s) for s in self.servers],
            "hosts": {k: to_jsonable(v) for k, v in self.hosts.items()},
            "hosts_error": self.hosts_error,
            "poll": to_jsonable(self.poll),
            "poll_interval_s": self.poll_interval_s,
            "listed_hosts": list(self.listed_hosts),
        }


# ---- the instance screen (read on demand, not every poll) ------------------------------------------------
@record
class ActionEvent:
    event: str
    start_time: datetime | None = None
    finish_time: datetime | None = None
    result: str | None = None
    host: str | None = None
    traceback: str | None = None


@record
class InstanceAction:
    action: str
    request_id: str
    start_time: datetime | None = None
    message: str | None = None
    user_id: str | None = None
    events: tuple[ActionEvent, ...] = ()


@record
class PortInfo:
    id: str
    network_id: str = ""
    status: str = ""
    fixed_ips: tuple[str, ...] = ()
    binding_host: str | None = None
    vif_type: str | None = None
    vnic_type: str | None = None
    mac_address: str = ""

    @property
    def binding_failed(self) -> bool:
        return self.vif_type == "binding_failed"


@record
class VolumeInfo:
    id: str
    name: str = ""
    status: str = ""
    size: int | None = None
    device: str | None = None
    attach_status: str | None = None  # cinder's attachment view of this server
    delete_on_termination: bool | None = None
    backend_host: str | None = None  # os-vol-host-attr:host (the cinder-volume serving it)


@record
class AllocationInfo:
    """Placement's allocations for this server as a consumer, by provider."""

    provider_id: str
    provider_name: str | None = None
    resources: Mapping[str, int] = field(default_factory=dict)


@record
class InstanceDetail:
    """Everything the instance screen shows, read on demand. *_error: why one part could not be read."""

    server: Server
    actions: tuple[InstanceAction, ...] = ()
    ports: tuple[PortInfo, ...] = ()
    volumes: tuple[VolumeInfo, ...] = ()
    allocations: tuple[AllocationInfo, ...] | None = None
    host_health: HostHealth | None = None
    errors: Mapping[str, str] = field(default_factory=dict)
