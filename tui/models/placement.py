"""Placement and the host drill-down: providers with inventories, usages and allocations, the migrations and
servers that explain them, and what the audit and the capacity explainer concluded.

Field names follow the APIs (placement 1.39, compute 2.96). Capacity of a resource class is
`(total - reserved) * allocation_ratio` (placement's capacity rule). Everything here is frozen and JSON-able
(tui.jsonable.to_jsonable); the parsing helpers are pure.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import UTC, datetime
from types import MappingProxyType
from typing import Any, Literal

from tui.models.finding import Finding

# What `nova-manage placement audit` looks at: a consumer holding none of these on a compute node is not
# judged (e.g. a port's bandwidth on a child provider).
COMPUTE_RESOURCE_CLASSES: frozenset[str] = frozenset({"VCPU", "PCPU", "MEMORY_MB", "DISK_GB"})
# Migration statuses nova treats as finished (MigrationList.get_in_progress_by_host_and_node excludes them).
FINISHED_MIGRATION_STATUSES: frozenset[str] = frozenset(
    {"confirmed", "reverted", "error", "failed", "completed", "cancelled", "done"})
RC_ORDER = ("VCPU", "PCPU", "MEMORY_MB", "DISK_GB")

ConsumerKind = Literal["instance", "migration", "unknown"]
Verdict = Literal["ok", "stale", "suspected", "migration_stuck", "not_compute"]


def _frozen(mapping: Mapping[str, Any] | None) -> Mapping[str, Any]:
    """A read-only copy; an already read-only mapping is shared (500 views share one compute_states)."""
    if isinstance(mapping, MappingProxyType):
        return mapping
    return MappingProxyType(dict(mapping or {}))


def parse_time(value: Any) -> datetime | None:
    if not value or not isinstance(value, str):
        return None
    try:
        parsed = datetime.fromisoformat(value.strip().replace("Z", "+00:00"))
    except ValueError:
        return None
    return parsed.replace(tzinfo=UTC) if parsed.tzinfo is None else parsed.astimezone(UTC)


def rc_sort_key(rc: str) -> tuple[int, str]:
    return (RC_ORDER.index(rc) if rc in RC_ORDER else len(RC_ORDER), rc)


def fmt_resources(resources: Mapping[str, int]) -> str:
    """"VCPU 2, MEMORY_MB 2048", in the usual resource class order."""
    return ", ".join(f"{rc} {resources[rc]}" for rc in sorted(resources, key=rc_sort_key)) or "nothing"


# ---- placement ------------------------------------------------------------------------------------------
@dataclass(frozen=True)
class Inventory:
    resource_class: str
    total: int
    reserved: int = 0
    allocation_ratio: float = 1.0
    min_unit: int = 1
    max_unit: int | None = None
    step_size: int = 1

    @property
    def capacity(self) -> int:
        return int((self.total - self.reserved) * self.allocation_ratio)

    @classmethod
    def from_api(cls, rc: str, raw: Mapping[str, Any]) -> Inventory:
        return cls(resource_class=rc, total=int(raw.get("total") or 0), reserved=int(raw.get("reserved") or 0),
                   allocation_ratio=float(raw.get("allocation_ratio") or 1.0),
                   min_unit=int(raw.get("min_unit") or 1),
                   max_unit=int(raw["max_unit"]) if raw.get("max_unit") is not None else None,
                   step_size=int(raw.get("step_size") or 1))


@dataclass(frozen=True)
class ProviderAllocation:
    """One consumer's allocation on one provider."""

    consumer: str
    resources: Mapping[str, int] = field(default_factory=dict)

    def __post_init__(self) -> None:
        object.__setattr__(self, "resources", _frozen(self.resources))

    @property
    def holds_compute(self) -> bool:
        return any(n and rc in COMPUTE_RESOURCE_CLASSES for rc, n in self.resources.items())


@dataclass(frozen=True)
class Provider:
    """A resource provider. inventories/usages/allocations/traits are None when not read."""

    uuid: str
    name: str = ""
    generation: int | None = None
    root_provider_uuid: str | None = None
    parent_provider_uuid: str | None = None
    inventories: Mapping[str, Inventory] | None = None
    usages: Mapping[str, int] | None = None
    allocations: tuple[ProviderAllocation, ...] | None = None
    traits: tuple[str, ...] | None = None

    def __post_init__(self) -> None:
        for name in ("inventories", "usages"):
            value = getattr(self, name)
            if value is not None:
                object.__setattr__(self, name, _frozen(value))

    @property
    def is_root(self) -> bool:
        return not self.root_provider_uuid or self.root_provider_uuid == self.uuid

    def capacity(self, rc: str) -> int | None:
        inv = (self.inventories or {}).get(rc)
        return inv.capacity if inv is not None else None

    def used(self, rc: str) -> int:
        return int((self.usages or {}).get(rc, 0))

    def free(self, rc: str) -> int | None:
        cap = self.capacity(rc)
        return None if cap is None else cap - self.used(rc)

    @classmethod
    def from_api(cls, raw: Mapping[str, Any]) -> Provider:
        return cls(uuid=str(raw.get("uuid")), name=str(raw.get("name") or ""), generation=raw.get("generation"),
                   root_provider_uuid=raw.get("root_provider_uuid"),
                   parent_provider_uuid=raw.get("parent_provider_uuid"))


def parse_inventories(body: Mapping[str, Any]) -> dict[str, Inventory]:
    """GET /resource_providers/{uuid}/inventories -> {rc: Inventory}."""
    return {rc: Inventory.from_api(rc, raw) for rc, raw in (body.get("inventories") or {}).items()
            if isinstance(raw, Mapping)}


def parse_usages(body: Mapping[str, Any]) -> dict[str, int]:
    return {rc: int(n or 0) for rc, n in (body.get("usages") or {}).items()}


def parse_allocations(body: Mapping[str, Any]) -> tuple[ProviderAllocation, ...]:
    """GET /resource_providers/{uuid}/allocations -> allocations, by consumer uuid."""
    out = []
    for consumer, raw in sorted((body.get("allocations") or {}).items()):
        res = (raw or {}).get("resources") or {}
        out.append(ProviderAllocation(consumer=str(consumer), resources={rc: int(n) for rc, n in res.items()}))
    return tuple(out)


# ---- nova -----------------------------------------------------------------------------------------------
@dataclass(frozen=True)
class Migration:
    uuid: str
    id: int | None = None
    instance_uuid: str = ""
    source_compute: str | None = None
    dest_compute: str | None = None
    source_node: str | None = None
    dest_node: str | None = None
    status: str = ""
    migration_type: str | None = None
    created_at: datetime | None = None
    updated_at: datetime | None = None

    @property
    def in_progress(self) -> bool:
        return self.status.lower() not in FINISHED_MIGRATION_STATUSES

    def touches(self, host: str | None, node: str | None = None) -> bool:
        """Source or destination is this compute (host and, when both are known, node)."""
        if not host:
            return False
        for h, n in ((self.source_compute, self.source_node), (self.dest_compute, self.dest_node)):
            if h == host and (node is None or n is None or n == node):
                return True
        return False

    @classmethod
    def from_api(cls, raw: Mapping[str, Any]) -> Migration:
        mid = raw.get("id")
        return cls(uuid=str(raw.get("uuid") or ""), id=mid if isinstance(mid, int) else None,
                   instance_uuid=str(raw.get("instance_uuid") or ""), source_compute=raw.get("source_compute"),
                   dest_compute=raw.get("dest_compute"), source_node=raw.get("source_node"),
                   dest_node=raw.get("dest_node"), status=str(raw.get("status") or ""),
                   migration_type=raw.get("migration_type"), created_at=parse_time(raw.get("created_at")),
                   updated_at=parse_time(raw.get("updated_at")))


@dataclass(frozen=True)
class HostServer:
    """A server as the host screen and the consumer labels need it."""

    id: str
    name: str = ""
    status: str = ""
    task_state: str | None = None
    vm_state: str | None = None
    host: str | None = None
    node: str | None = None
    flavor: str | None = None
    updated_at: datetime | None = None

    @property
    def label(self) -> str:
        return f"{self.name} ({self.id[:8]})" if self.name else self.id

    @classmethod
    def from_api(cls, raw: Mapping[str, Any]) -> HostServer:
        flavor = raw.get("flavor")
        return cls(id=str(raw.get("id")), name=str(raw.get("name") or ""), status=str(raw.get("status") or ""),
                   task_state=raw.get("OS-EXT-STS:task_state") or None, vm_state=raw.get("OS-EXT-STS:vm_state"),
                   host=raw.get("OS-EXT-SRV-ATTR:host") or None,
                   node=raw.get("OS-EXT-SRV-ATTR:hypervisor_hostname") or None,
                   flavor=(flavor.get("original_name") or flavor.get("id")) if isinstance(flavor, Mapping) else None,
                   updated_at=parse_time(raw.get("updated")))


@dataclass(frozen=True)
class ConsumerInfo:
    """What a second look found about a consumer the host's own listings do not explain.

    server: GET /servers/{id} found it (anywhere); server_missing: that GET answered 404.
    consumer_type/project_id/user_id: GET /allocations/{consumer} (consumer_type needs placement >= 1.38).
    """

    consumer: str
    server: HostServer | None = None
    server_missing: bool = False
    consumer_type: str | None = None
    project_id: str | None = None
    user_id: str | None = None


@dataclass(frozen=True)
class Hypervisor:
    id: str
    hypervisor_hostname: str
    host: str | None = None  # the service's host (the compute host name)
    state: str | None = None
    status: str | None = None
    hypervisor_type: str | None = None
    servers: tuple[str, ...] | None = None  # uuids (with_servers); None when not asked
    server_names: Mapping[str, str] = field(default_factory=dict)  # uuid -> instance name (libvirt's)

    def __post_init__(self) -> None:
        object.__setattr__(self, "server_names", _frozen(self.server_names))

    @classmethod
    def from_api(cls, raw: Mapping[str, Any], *, with_servers: bool = False) -> Hypervisor:
        """with_servers: the request asked for them; before compute 2.75 nova omits `servers` when empty."""
        svc = raw.get("service") or {}
        servers = raw.get("servers")
        if servers is None and with_servers:
            servers = []
        return cls(id=str(raw.get("id")), hypervisor_hostname=str(raw.get("hypervisor_hostname") or ""),
                   host=svc.get("host") if isinstance(svc, Mapping) else None, state=raw.get("state"),
                   status=raw.get("status"), hypervisor_type=raw.get("hypervisor_type"),
                   servers=tuple(str(s.get("uuid")) for s in servers) if isinstance(servers, list) else None,
                   server_names={str(s.get("uuid")): str(s.get("name") or "") for s in servers or []})


@dataclass(frozen=True)
class ComputeService:
    """A nova service on the host (nova-compute first), with its heartbeat age on the API's clock."""

    binary: str
    host: str
    state: str = ""
    status: str = ""
    disabled_reason: str | None = None
    forced_down: bool = False
    updated_at: datetime | None = None
    age_at_read_s: float | None = None

    @property
    def down(self) -> bool:
        return self.state == "down" or self.forced_down


@dataclass(frozen=True)
class AgentInfo:
    binary: str
    agent_type: str = ""
    host: str = ""
    alive: bool | None = None
    admin_state_up: bool | None = None
    heartbeat: datetime | None = None
    age_at_read_s: float | None = None


@dataclass(frozen=True)
class BoundPort:
    id: str
    device_id: str = ""
    device_owner: str = ""
    status: str = ""
    vif_type: str | None = None
    fixed_ips: tuple[str, ...] = ()

    @property
    def binding_failed(self) -> bool:
        return self.vif_type == "binding_failed"

    @property
    def flagged(self) -> bool:
        """binding_failed, or DOWN while it belongs to something (an unowned DOWN port is normal)."""
        return self.binding_failed or (self.status == "DOWN" and bool(self.device_id))


# ---- the audit --------------------------------------------------------------------------------------------
@dataclass(frozen=True)
class ProviderView:
    """Everything the audit of one provider rests on (built by tui.openstack.placement_reads; pure from here on).

    host/node: the compute host and hypervisor_hostname behind the provider (None: unresolved).
    instances: uuids of the non-deleted servers on that host/node (None: could not be read).
    migrations: migrations whose source or destination is the host, any status (None: not read).
    compute_states: nova-compute host -> "up"/"down" for every compute (a migration's source may be elsewhere).
    consumers: second look at consumers the listings above do not explain.
    errors: part -> one line, for what could not be read.
    """

    provider: Provider
    host: str | None = None
    node: str | None = None
    instances: frozenset[str] | None = None
    migrations: tuple[Migration, ...] | None = None
    compute_states: Mapping[str, str] = field(default_factory=dict)
    consumers: Mapping[str, ConsumerInfo] = field(default_factory=dict)
    errors: Mapping[str, str] = field(default_factory=dict)

    def __post_init__(self) -> None:
        for name in ("compute_states", "consumers", "errors"):
            object.__setattr__(self, name, _frozen(getattr(self, name)))


@dataclass(frozen=True)
class ConsumerVerdict:
    consumer: str
    resources: Mapping[str, int]
    kind: ConsumerKind
    verdict: Verdict
    reason: str = ""
    server: HostServer | None = None
    migration: Migration | None = None
    consumer_type: str | None = None

    def __post_init__(self) -> None:
        object.__setattr__(self, "resources", _frozen(self.resources))

    @property
    def legitimate(self) -> bool:
        return self.verdict in ("ok", "migration_stuck")

    @property
    def label(self) -> str:
        """instance (name, state, host) / migration (status, source -> dest) / unknown."""
        if self.kind == "instance" and self.server is not None:
            s = self.server
            state = s.status + (f"/{s.task_state}" if s.task_state else "")
            return f"instance {s.name or s.id[:8]} ({state}, host {s.host or '-'})"
        if self.kind == "instance":
            return "instance"
        if self.kind == "migration" and self.migration is not None:
            m = self.migration
            return (f"migration ({m.status}, {m.migration_type or 'migration'}, "
                    f"{m.source_compute or '?'} -> {m.dest_compute or '?'})")
        if self.kind == "migration":
            return "migration"
        shown = self.consumer_type and self.consumer_type.lower() != "unknown"
        return "unknown" + (f" (consumer_type {self.consumer_type})" if shown else "")


@dataclass(frozen=True)
class ProviderAudit:
    """One provider judged: each consumer's verdict, and what placement counts vs what is really there."""

    provider_uuid: str
    provider_name: str
    host: str | None
    resolved: bool
    consumers: tuple[ConsumerVerdict, ...] = ()
    usages: Mapping[str, int] = field(default_factory=dict)
    capacities: Mapping[str, int] = field(default_factory=dict)
    errors: Mapping[str, str] = field(default_factory=dict)

    def __post_init__(self) -> None:
        for name in ("usages", "capacities", "errors"):
            object.__setattr__(self, name, _frozen(getattr(self, name)))

    @property
    def legit_usage(self) -> dict[str, int]:
        out: dict[str, int] = {}
        for c in self.consumers:
            if c.legitimate:
                for rc, n in c.resources.items():
                    out[rc] = out.get(rc, 0) + int(n)
        return out

    @property
    def phantom(self) -> dict[str, int]:
        """Per resource class: what stale (and suspected) consumers hold."""
        out: dict[str, int] = {}
        for c in self.consumers:
            if c.verdict in ("stale", "suspected"):
                for rc, n in c.resources.items():
                    out[rc] = out.get(rc, 0) + int(n)
        return {rc: n for rc, n in out.items() if n}

    @property
    def stale(self) -> tuple[ConsumerVerdict, ...]:
        return tuple(c for c in self.consumers if c.verdict in ("stale", "suspected"))

    @property
    def instance_count(self) -> int:
        return sum(1 for c in self.consumers if c.legitimate and c.kind == "instance")

    @property
    def migration_count(self) -> int:
        return sum(1 for c in self.consumers if c.legitimate and c.kind == "migration")

    def phantom_lines(self) -> list[str]:
        """'placement says 6 of 8 VCPU used, 2 instances really use 2', per resource class with phantom usage."""
        legit = self.legit_usage
        n, m = self.instance_count, self.migration_count
        who = f"{n} instance{'' if n == 1 else 's'}"
        if m:
            who += f" and {m} migration{'' if m == 1 else 's'}"
        lines = []
        for rc in sorted(self.phantom, key=rc_sort_key):
            real = legit.get(rc, 0)
            used = self.usages.get(rc, real + self.phantom[rc])
            cap = self.capacities.get(rc)
            of = f" of {cap}" if cap is not None else ""
            lines.append(f"placement says {used}{of} {rc} used, {who} really use {real}")
        return lines


@dataclass(frozen=True)
class AuditReport:
    """The whole-cloud audit (`:audit`)."""

    taken_at: datetime
    providers: tuple[ProviderAudit, ...] = ()
    errors: Mapping[str, str] = field(default_factory=dict)
    requests: int = 0
    duration_s: float = 0.0
    findings: tuple[Finding, ...] = ()  # the stale-allocation audit of `providers`, judged by the read

    def __post_init__(self) -> None:
        object.__setattr__(self, "errors", _frozen(self.errors))


# ---- the host screen ----------------------------------------------------------------------------------------
@dataclass(frozen=True)
class HostDetail:
    """What the host screen shows, read on demand. errors: part -> why it could not be read."""

    host: str
    taken_at: datetime
    services: tuple[ComputeService, ...] = ()
    hypervisors: tuple[Hypervisor, ...] = ()
    agents: tuple[AgentInfo, ...] = ()
    ports: tuple[BoundPort, ...] = ()
    servers: tuple[HostServer, ...] = ()
    migrations: tuple[Migration, ...] = ()  # in progress, from or to this host
    providers: tuple[Provider, ...] = ()
    audits: tuple[ProviderAudit, ...] = ()
    compute_states: Mapping[str, str] = field(default_factory=dict)  # every nova-compute: host -> up/down
    errors: Mapping[str, str] = field(default_factory=dict)
    findings: tuple[Finding, ...] = ()  # the stale-allocation audit of `audits`, judged by the read

    def __post_init__(self) -> None:
        object.__setattr__(self, "errors", _frozen(self.errors))
        object.__setattr__(self, "compute_states", _frozen(self.compute_states))

    @property
    def compute(self) -> ComputeService | None:
        return next((s for s in self.services if s.binary == "nova-compute"), None)


# ---- the capacity explainer ---------------------------------------------------------------------------------
@dataclass(frozen=True)
class FitRequest:
    """What a boot of `flavor` asks placement for (as nova's scheduler builds it)."""

    flavor: str
    resources: Mapping[str, int]
    required: tuple[str, ...] = ()
    forbidden: tuple[str, ...] = ()
    notes: tuple[str, ...] = ()

    def __post_init__(self) -> None:
        object.__setattr__(self, "resources", _frozen(self.resources))


@dataclass(frozen=True)
class HostFit:
    """One compute (root provider tree): can it take the request, and if not, why."""

    provider_uuid: str
    name: str
    host: str | None
    candidate: bool
    reasons: tuple[str, ...] = ()
    free: Mapping[str, int] = field(default_factory=dict)

    def __post_init__(self) -> None:
        object.__setattr__(self, "free", _frozen(self.free))


@dataclass(frozen=True)
class FitReport:
    request: FitRequest
    taken_at: datetime
    hosts: tuple[HostFit, ...] = ()
    aggregate_free: Mapping[str, int] = field(default_factory=dict)
    candidates: int = 0
    errors: Mapping[str, str] = field(default_factory=dict)

    def __post_init__(self) -> None:
        object.__setattr__(self, "aggregate_free", _frozen(self.aggregate_free))
        object.__setattr__(self, "errors", _frozen(self.errors))

    def summary_line(self) -> str:
        """'m1.tiny fits on 2 of 2 computes' / 'x.huge fits nowhere: ...'."""
        asks = ", ".join(f"{rc} {n}" for rc, n in sorted(self.request.resources.items(),
                                                          key=lambda i: rc_sort_key(i[0])))
        agg = ", ".join(f"{rc} {self.aggregate_free.get(rc, 0)}" for rc in sorted(self.request.resources,
                                                                                   key=rc_sort_key))
        total = len(self.hosts)
        verdict = (f"fits on {self.candidates} of {total} compute{'s' if total != 1 else ''}" if self.candidates
                   else f"fits nowhere ({total} compute{'s' if total != 1 else ''} checked)")
        return f"{self.request.flavor} asks {asks}: {verdict}; cloud-wide free {agg}"


NOTEWORTHY_VERDICTS = frozenset({"stale", "suspected", "migration_stuck"})


@dataclass(frozen=True)
class AuditDigest:
    """The background audit's snapshot (tui.collectors.placement): counts, and in full only the providers with a
    consumer worth a finding (the rules need each such provider whole: its phantom usage), so the journal does
    not carry 10,000 judged consumers every audit."""

    taken_at: datetime
    providers: int = 0
    consumers: int = 0
    judged: tuple[ProviderAudit, ...] = ()
    errors: Mapping[str, str] = field(default_factory=dict)
    requests: int = 0
    duration_s: float = 0.0

    def __post_init__(self) -> None:
        object.__setattr__(self, "errors", _frozen(self.errors))

    @classmethod
    def of(cls, report: AuditReport) -> AuditDigest:
        judged = tuple(p for p in report.providers if any(c.verdict in NOTEWORTHY_VERDICTS for c in p.consumers))
        return cls(taken_at=report.taken_at, providers=len(report.providers),
                   consumers=sum(len(p.consumers) for p in report.providers), judged=judged,
                   errors=report.errors, requests=report.requests, duration_s=report.duration_s)
