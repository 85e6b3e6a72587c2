"""The stale-allocation audit: `nova-manage placement audit`'s semantics, redone over the APIs (pure).

Legitimate consumers of a compute node's provider (placement's allocations API):
- non-deleted instances whose host and node are that compute node (GET /os-hypervisors/{id}?with_servers);
- in-progress migrations (status not confirmed/reverted/error/failed/completed/cancelled/done) whose source
  or destination is that compute node (GET /os-migrations?host=). Since Queens the *migration* holds the
  source allocation and the instance the destination's; while the migration is in flight we also accept the
  instance's own allocation on either side (an old-style move, or a destination before finish_resize).
Any other consumer holding VCPU/PCPU/MEMORY_MB/DISK_GB there is stale -> `placement.stale_allocation`.
An allocation held by an in-progress migration whose *source* nova-compute is down -> `placement.migration_stuck`
instead: it is not an orphan, the migration cannot finish until that compute is back.
When the provider's host cannot be resolved (no hypervisor behind it) or a listing failed, the verdict is
*suspected*, never stale.

A second look (GET /servers/{consumer}) guards against the races the audit has too: a server that arrived on
the host after the listing, or one still in BUILD before conductor records its host.
"""

from __future__ import annotations

from collections.abc import Iterable

from tui.models.finding import Finding, sort_findings
from tui.models.placement import (
    ConsumerVerdict,
    Migration,
    ProviderAllocation,
    ProviderAudit,
    ProviderView,
    fmt_resources,
)
from tui.shell_command import command, shell_text

SOURCE = "placement"


def _in_flight(view: ProviderView) -> list[Migration]:
    return [m for m in view.migrations or () if m.in_progress and m.touches(view.host, view.node)]


def needs_second_look(view: ProviderView) -> list[str]:
    """Consumers holding compute resources that the host's listings do not explain (pure)."""
    allocations = view.provider.allocations or ()
    instances = view.instances or frozenset()
    flight = _in_flight(view)
    explained = set(instances) | {m.uuid for m in flight} | {m.instance_uuid for m in flight}
    return [a.consumer for a in allocations if a.holds_compute and a.consumer not in explained]


def classify(view: ProviderView, alloc: ProviderAllocation) -> ConsumerVerdict:
    c, res = alloc.consumer, dict(alloc.resources)
    info = view.consumers.get(c)
    server = info.server if info is not None else None
    ctype = info.consumer_type if info is not None else None
    host, node = view.host, view.node
    known = {m.uuid: m for m in view.migrations or ()}
    mig = known.get(c)

    def verdict(kind: str, v: str, reason: str, **kw: object) -> ConsumerVerdict:
        return ConsumerVerdict(consumer=c, resources=res, kind=kind, verdict=v, reason=reason,  # type: ignore[arg-type]
                               server=kw.get("server", server), migration=kw.get("migration"),  # type: ignore[arg-type]
                               consumer_type=ctype)

    if view.instances is not None and c in view.instances:
        return verdict("instance", "ok", f"instance on {host}")
    if mig is not None and mig.in_progress and mig.touches(host, node):
        src_state = view.compute_states.get(mig.source_compute or "")
        if src_state == "down":
            return verdict("migration", "migration_stuck",
                           f"in-progress migration ({mig.status}); its source nova-compute on "
                           f"{mig.source_compute} is down", migration=mig)
        return verdict("migration", "ok", f"in-progress migration ({mig.status})", migration=mig)
    owner = next((m for m in _in_flight(view) if m.instance_uuid == c), None)
    if owner is not None:
        return verdict("instance", "ok", f"instance of in-progress migration {owner.uuid} ({owner.status})",
                       migration=owner)
    if not alloc.holds_compute:
        kind = "instance" if server else "migration" if mig else "unknown"
        return verdict(kind, "not_compute", "holds no compute resource class (not judged)", migration=mig)
    if server is not None and host and server.host == host and (node is None or server.node in (None, node)):
        return verdict("instance", "ok", f"instance on {host} (arrived after the listing)")
    if server is not None and server.status == "BUILD" and not server.host:
        return verdict("instance", "ok", "instance still building (claimed before its host is recorded)")

    # not explained: stale, or only suspected when we could not see everything
    if server is not None:
        kind, what = "instance", f"instance {server.name or server.id[:8]} lives on {server.host or 'no host'}"
    elif mig is not None:
        kind, what = "migration", f"migration {mig.status} ({mig.source_compute} -> {mig.dest_compute}) is over"
    elif ctype == "MIGRATION":
        kind, what = "migration", "a migration consumer that is no in-progress migration here"
    else:
        kind, what = "unknown", "no instance or migration has this id"
    missing = []
    if not host:
        missing.append(f"provider {view.provider.name or view.provider.uuid} has no hypervisor behind it "
                       f"(host unresolved)")
    if view.instances is None:
        missing.append("the host's instances could not be read" +
                       (f" ({view.errors['instances']})" if "instances" in view.errors else ""))
    if view.migrations is None:
        missing.append("the host's migrations could not be read" +
                       (f" ({view.errors['migrations']})" if "migrations" in view.errors else ""))
    if missing:
        return verdict(kind, "suspected", f"{what}; " + "; ".join(missing), migration=mig)
    return verdict(kind, "stale", f"{what}; no instance on {host} and no in-progress migration from or to it",
                   migration=mig)


def audit_provider(view: ProviderView) -> ProviderAudit:
    p = view.provider
    consumers = tuple(classify(view, a) for a in p.allocations or ())
    usages = dict(p.usages or {})
    if not usages:  # placement's usage is the sum of the allocations
        for a in p.allocations or ():
            for rc, n in a.resources.items():
                usages[rc] = usages.get(rc, 0) + int(n)
    capacities = {rc: inv.capacity for rc, inv in (p.inventories or {}).items()}
    return ProviderAudit(provider_uuid=p.uuid, provider_name=p.name, host=view.host, resolved=bool(view.host),
                         consumers=consumers, usages=usages, capacities=capacities, errors=dict(view.errors))


def phantom_lines(audit: ProviderAudit) -> list[str]:
    """'placement says 6 of 8 VCPU used, 2 instances really use 2', per resource class with phantom usage."""
    return audit.phantom_lines()


def _confirm_stale(v: ConsumerVerdict, audit: ProviderAudit) -> tuple[tuple[str, ...], str]:
    """The first command to run and the next step naming it with the two others."""
    show = command("openstack", "server", "show", operands=(v.consumer,))
    allocation = command("openstack", "resource", "provider", "allocation", "show", operands=(v.consumer,))
    audit_cmd = command("nova-manage", "placement", "audit", "--verbose", "--resource_provider",
                        audit.provider_uuid)
    return show, (f"Confirm before anything changes: `{shell_text(show)}`, `{shell_text(allocation)}` and "
                  f"`{shell_text(audit_cmd)}` (read-only without --delete). Only an allocation nothing owns is "
                  "safe to remove.")


def audit_findings(audits: Iterable[ProviderAudit], source: str = SOURCE) -> list[Finding]:
    out: list[Finding] = []
    seen: set[tuple[str, str]] = set()
    for audit in audits:
        where = audit.host or audit.provider_name or audit.provider_uuid
        phantom = phantom_lines(audit)
        for v in audit.consumers:
            base = {"provider": audit.provider_uuid, "provider_name": audit.provider_name, "host": audit.host,
                    "resources": dict(v.resources), "kind": v.kind, "label": v.label, "reason": v.reason}
            if v.consumer_type:
                base["consumer_type"] = v.consumer_type
            if v.server is not None:
                base["server_host"] = v.server.host
            if v.verdict in ("stale", "suspected"):
                subject = v.consumer
                if ("placement.stale_allocation", subject) in seen:
                    subject = f"{v.consumer}@{audit.provider_name or audit.provider_uuid}"
                seen.add(("placement.stale_allocation", subject))
                if v.verdict == "stale":
                    summary = (f"stale allocation on {where}: {v.consumer[:8]} ({v.label}) holds "
                               f"{fmt_resources(v.resources)} but is no instance there and no in-progress migration")
                    severity = "warning"
                else:
                    summary = (f"suspected stale allocation on {where}: {v.consumer[:8]} ({v.label}) holds "
                               f"{fmt_resources(v.resources)}; {v.reason}")
                    severity = "info"
                first, next_step = _confirm_stale(v, audit)
                out.append(Finding(severity=severity, kind="placement.stale_allocation", subject=subject,  # type: ignore[arg-type]
                                   summary=summary,
                                   evidence={**base, "verdict": v.verdict, "phantom": phantom, "command": first},
                                   next_step=next_step, source=source))
            elif v.verdict == "migration_stuck" and v.migration is not None:
                m = v.migration
                out.append(Finding(
                    severity="warning", kind="placement.migration_stuck", subject=v.consumer,
                    summary=(f"migration {m.uuid[:8]} ({m.status}) {m.source_compute} -> {m.dest_compute} holds "
                             f"{fmt_resources(v.resources)} on {where}: its source nova-compute on "
                             f"{m.source_compute} is down, so it cannot finish"),
                    evidence={**base, "verdict": v.verdict, "migration": m.uuid, "instance": m.instance_uuid,
                              "status": m.status, "migration_type": m.migration_type, "source": m.source_compute,
                              "dest": m.dest_compute, "source_state": "down"},
                    next_step=(f"Bring nova-compute on {m.source_compute} back: it finishes the {m.status} "
                               f"migration and frees this allocation. It is not an orphan: do not delete it."),
                    source=source))
    return sort_findings(out)
