"""On-demand reads for the host screen, the stale-allocation audit and the capacity explainer.

Never per poll: each runs when a screen asks (`:host`, `:audit`, `:fit`) in that screen's worker. Listings go
through the client's plain-JSON methods in worker threads; per-provider and per-consumer GETs go through
`client.aget_json_many` (async HTTP on a few keep-alive connections, bounded concurrency): 500 providers cost
~0.1 s CPU that way, ~5.6 s as SDK Resource objects (docs/performance.md). Read-only: GET only.

The judging is pure (tui.rules.allocations, tui.rules.fit); this module only gathers what they need.
"""

from __future__ import annotations

import asyncio
import dataclasses
import time
from collections.abc import Awaitable, Callable, Iterable, Mapping, Sequence
from datetime import UTC, datetime
from types import MappingProxyType
from typing import Any

from tui.errors import SourceError
from tui.models.placement import (
    NOTEWORTHY_VERDICTS,
    AgentInfo,
    AuditReport,
    BoundPort,
    ComputeService,
    ConsumerInfo,
    FitReport,
    HostDetail,
    HostServer,
    Hypervisor,
    Migration,
    Provider,
    ProviderAudit,
    ProviderView,
    parse_allocations,
    parse_inventories,
    parse_time,
    parse_usages,
)
from tui.openstack.errors import NotFound
from tui.openstack.paging import next_marker, query, segment
from tui.rules.allocations import audit_findings, audit_provider, needs_second_look
from tui.rules.fit import candidate_providers, explain, flavor_request, required_param

Progress = Callable[[str, int, int], None]  # (phase, done, total)
CONCURRENCY = 32
CHUNK = 128  # per-provider GETs between two progress reports


def _now() -> datetime:
    return datetime.now(UTC)


def _err(exc: BaseException) -> str:
    text = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
    return text[:300]


async def _many(client: Any, service: str, paths: Sequence[str], *, microversion: str | None,
                concurrency: int = CONCURRENCY, progress: Progress | None = None, phase: str = "",
                chunk: int = CHUNK) -> list[dict[str, Any] | SourceError]:
    """aget_json_many in chunks so a progress indicator can move; answers in the order of `paths`."""
    out: list[dict[str, Any] | SourceError] = []
    total = len(paths)
    if progress is not None:
        progress(phase, 0, total)
    for start in range(0, total, chunk):
        part = list(paths[start:start + chunk])
        out.extend(await client.aget_json_many(service, part, microversion=microversion, concurrency=concurrency))
        if progress is not None:
            progress(phase, len(out), total)
    return out


async def _gather(**calls: Awaitable[Any]) -> dict[str, Any]:
    """Run the awaitables together; each result or its exception, by name."""
    names = list(calls)
    results = await asyncio.gather(*calls.values(), return_exceptions=True)
    for r in results:
        if isinstance(r, BaseException) and not isinstance(r, Exception):
            raise r  # CancelledError & co: the screen went away
    return dict(zip(names, results, strict=True))


def _age(updated: datetime | None, base: datetime | None) -> float | None:
    return None if updated is None or base is None else round((base - updated).total_seconds(), 1)


def parse_services(rows: Iterable[Mapping[str, Any]], date: datetime | None) -> list[ComputeService]:
    out = []
    for r in rows:
        updated = parse_time(r.get("updated_at"))
        out.append(ComputeService(binary=str(r.get("binary") or ""), host=str(r.get("host") or ""),
                                  state=str(r.get("state") or ""), status=str(r.get("status") or ""),
                                  disabled_reason=r.get("disabled_reason") or None,
                                  forced_down=bool(r.get("forced_down")), updated_at=updated,
                                  age_at_read_s=_age(updated, date)))
    return out


def compute_states(services: Iterable[ComputeService]) -> dict[str, str]:
    """nova-compute host -> "up"/"down" (forced_down counts as down)."""
    return {s.host: ("down" if s.down else s.state or "up") for s in services if s.binary == "nova-compute"}


def parse_agents(rows: Iterable[Mapping[str, Any]], date: datetime | None) -> list[AgentInfo]:
    out = []
    for a in rows:
        beat = parse_time(a.get("heartbeat_timestamp"))
        out.append(AgentInfo(binary=str(a.get("binary") or ""), agent_type=str(a.get("agent_type") or ""),
                             host=str(a.get("host") or ""),
                             alive=a.get("alive") if isinstance(a.get("alive"), bool) else None,
                             admin_state_up=a.get("admin_state_up") if isinstance(a.get("admin_state_up"), bool)
                             else None, heartbeat=beat, age_at_read_s=_age(beat, date)))
    return out


def parse_ports(rows: Iterable[Mapping[str, Any]]) -> list[BoundPort]:
    return [BoundPort(id=str(p.get("id")), device_id=str(p.get("device_id") or ""),
                      device_owner=str(p.get("device_owner") or ""), status=str(p.get("status") or ""),
                      vif_type=p.get("binding:vif_type"),
                      fixed_ips=tuple(str(ip.get("ip_address")) for ip in p.get("fixed_ips") or []))
            for p in rows]


def consumer_info(consumer: str, server: dict[str, Any] | SourceError | None,
                  alloc: dict[str, Any] | SourceError | None) -> ConsumerInfo:
    """Answers of GET /servers/{consumer} and GET /allocations/{consumer} -> ConsumerInfo."""
    srv = None
    missing = False
    if isinstance(server, dict) and isinstance(server.get("server"), dict):
        srv = HostServer.from_api(server["server"])
    elif isinstance(server, NotFound):
        missing = True
    ctype = project = user = None
    if isinstance(alloc, dict):
        ctype, project, user = alloc.get("consumer_type"), alloc.get("project_id"), alloc.get("user_id")
    return ConsumerInfo(consumer=consumer, server=srv, server_missing=missing, consumer_type=ctype,
                        project_id=project, user_id=user)


async def second_look(client: Any, consumers: Sequence[str], *, compute_mv: str, placement_mv: str,
                      concurrency: int = CONCURRENCY) -> dict[str, ConsumerInfo]:
    """GET /servers/{c} and GET /allocations/{c} for each consumer, concurrently."""
    if not consumers:
        return {}
    servers, allocs = await asyncio.gather(
        client.aget_json_many("compute", [f"/servers/{segment(c)}" for c in consumers], microversion=compute_mv,
                              concurrency=concurrency),
        client.aget_json_many("placement", [f"/allocations/{segment(c)}" for c in consumers], microversion=placement_mv,
                              concurrency=concurrency))
    return {c: consumer_info(c, s, a) for c, s, a in zip(consumers, servers, allocs, strict=True)}


def _provider_from_parts(base: Provider, parts: Mapping[str, dict[str, Any] | SourceError],
                         errors: dict[str, str]) -> Provider:
    def ok(name: str) -> dict[str, Any] | None:
        value = parts.get(name)
        if isinstance(value, SourceError):
            errors[name] = _err(value)
            return None
        return value

    inv, use, alloc, traits = ok("inventories"), ok("usages"), ok("allocations"), ok("traits")
    return Provider(uuid=base.uuid, name=base.name, generation=base.generation,
                    root_provider_uuid=base.root_provider_uuid, parent_provider_uuid=base.parent_provider_uuid,
                    inventories=parse_inventories(inv) if inv is not None else None,
                    usages=parse_usages(use) if use is not None else None,
                    allocations=parse_allocations(alloc) if alloc is not None else None,
                    traits=tuple(traits.get("traits") or ()) if traits is not None else None)


async def read_providers(client: Any, providers: Sequence[Provider], parts: Sequence[str], *, placement_mv: str,
                         concurrency: int = CONCURRENCY, progress: Progress | None = None, phase: str = "providers"
                         ) -> tuple[list[Provider], dict[str, dict[str, str]]]:
    """Fill each provider's `parts` (inventories/usages/allocations/traits); errors by provider uuid."""
    paths = [f"/resource_providers/{segment(p.uuid)}/{part}" for p in providers for part in parts]
    answers = await _many(client, "placement", paths, microversion=placement_mv, concurrency=concurrency,
                          progress=progress, phase=phase)
    return await asyncio.to_thread(_assemble_providers, providers, parts, answers)


def _assemble_providers(providers: Sequence[Provider], parts: Sequence[str],
                        answers: Sequence[dict[str, Any] | SourceError]
                        ) -> tuple[list[Provider], dict[str, dict[str, str]]]:
    out, errors = [], {}
    for i, p in enumerate(providers):
        got = dict(zip(parts, answers[i * len(parts):(i + 1) * len(parts)], strict=True))
        errs: dict[str, str] = {}
        out.append(_provider_from_parts(p, got, errs))
        if errs:
            errors[p.uuid] = errs
    return out, errors


async def read_migrations(client: Any, hosts: Sequence[str], *, compute_mv: str, concurrency: int = CONCURRENCY
                          ) -> dict[str, list[Migration] | SourceError]:
    """GET /os-migrations?host=H for each host (every page: the host filter matches source or destination)."""
    out: dict[str, list[Migration] | SourceError] = {h: [] for h in hosts}
    pending = {h: query("/os-migrations", {"host": h}) for h in hosts}
    for _ in range(100):
        if not pending:
            break
        names = list(pending)
        answers = await client.aget_json_many("compute", [pending[h] for h in names], microversion=compute_mv,
                                              concurrency=concurrency)
        pending = {}
        for h, a in zip(names, answers, strict=True):
            if isinstance(a, SourceError):
                out[h] = a
                continue
            page = a.get("migrations") or []
            current = out[h]
            assert isinstance(current, list)
            current.extend(Migration.from_api(m) for m in page)
            marker = next_marker(a, "migrations_links")
            if marker and page:
                pending[h] = query("/os-migrations", {"host": h, "marker": marker})
    return out


# ---- the whole-cloud audit -----------------------------------------------------------------------------------
async def audit_cloud(client: Any, *, concurrency: int = CONCURRENCY, progress: Progress | None = None,
                      clock: Callable[[], datetime] = _now, every_capacity: bool = True) -> AuditReport:
    """Every provider's allocations judged against the hypervisors' servers and in-progress migrations.

    Requests: 3 listings, 2 per provider (allocations, inventories), 1 per host with unexplained consumers
    (migrations), 2 per still-unexplained consumer (second look). With every_capacity=False (the background
    audit, which keeps only the providers worth a finding: AuditDigest) the inventories, which give nothing but
    the capacities, are read after the verdicts and only for the providers with a noteworthy consumer: 1 per
    provider instead of 2 on a healthy cloud. Parsing and judging run in worker threads: at 500 providers /
    10,000 consumers they cost ~0.3 s of CPU the UI loop must not pay."""
    t0 = time.monotonic()
    before = client.requests
    cmv, pmv = await asyncio.gather(asyncio.to_thread(client.compute_microversion),
                                    asyncio.to_thread(client.placement_microversion))
    if progress:
        progress("listing providers, hypervisors, computes", 0, 3)
    got = await _gather(rps=asyncio.to_thread(client.resource_providers),
                        hvs=asyncio.to_thread(client.hypervisors, with_servers=True),
                        svcs=asyncio.to_thread(client.compute_services, binary="nova-compute"))
    if isinstance(got["rps"], Exception):
        raise got["rps"]
    errors: dict[str, str] = {}
    if isinstance(got["hvs"], Exception):
        errors["hypervisors"] = _err(got["hvs"])
    if isinstance(got["svcs"], Exception):
        errors["compute services"] = _err(got["svcs"])
    providers = [Provider.from_api(r) for r in got["rps"]]
    parts = ("allocations", "inventories") if every_capacity else ("allocations",)
    filled, perrors = await read_providers(client, providers, parts, placement_mv=pmv,
                                           concurrency=concurrency, progress=progress, phase="provider allocations")
    views = await asyncio.to_thread(_audit_views, filled, perrors, got["hvs"], got["svcs"], errors)
    # migrations only where instances do not explain every consumer
    hosts = sorted({v.host for v in views if v.host and needs_second_look(v)})
    if progress:
        progress("migrations of hosts with unexplained consumers", 0, len(hosts))
    migs = await read_migrations(client, hosts, compute_mv=cmv, concurrency=concurrency) if hosts else {}
    if progress:
        progress("migrations of hosts with unexplained consumers", len(hosts), len(hosts))
    views = await asyncio.to_thread(lambda: [_with_migrations(v, migs) for v in views])
    look = sorted({c for v in views for c in needs_second_look(v)})
    if progress:
        progress("second look at unexplained consumers", 0, len(look))
    infos = await second_look(client, look, compute_mv=cmv, placement_mv=pmv, concurrency=concurrency)
    if progress:
        progress("second look at unexplained consumers", len(look), len(look))
    audits = await asyncio.to_thread(_judge, views, infos)
    if not every_capacity:
        audits = await _noteworthy_capacities(client, audits, filled, placement_mv=pmv, concurrency=concurrency)
    return AuditReport(taken_at=clock(), providers=tuple(audits), errors=errors,
                       requests=client.requests - before, duration_s=round(time.monotonic() - t0, 3),
                       findings=tuple(audit_findings(audits)))


def _audit_views(filled: list[Provider], perrors: Mapping[str, Mapping[str, str]], raw_hvs: Any, raw_svcs: Any,
                 errors: Mapping[str, str]) -> list[ProviderView]:
    """Each provider with what explains its consumers (blocking CPU work: run in a thread)."""
    hypervisors = [] if isinstance(raw_hvs, Exception) else [Hypervisor.from_api(h, with_servers=True)
                                                              for h in raw_hvs]
    states = MappingProxyType({} if isinstance(raw_svcs, Exception)
                              else compute_states(parse_services(raw_svcs, None)))
    by_id = {h.id: h for h in hypervisors}
    by_node = {h.hypervisor_hostname: h for h in hypervisors}
    views: list[ProviderView] = []
    for p in filled:
        hv = by_id.get(p.root_provider_uuid or p.uuid) or by_id.get(p.uuid) or (by_node.get(p.name) if p.is_root
                                                                                 else None)
        perr = dict(perrors.get(p.uuid, {}))
        if "hypervisors" in errors:
            perr["instances"] = errors["hypervisors"]
        views.append(ProviderView(
            provider=p, host=hv.host if hv else None, node=hv.hypervisor_hostname if hv else None,
            instances=frozenset(hv.servers) if hv is not None and hv.servers is not None else None,
            migrations=None, compute_states=states, errors=perr))
    return views


async def _noteworthy_capacities(client: Any, audits: list[ProviderAudit], providers: Sequence[Provider], *,
                                 placement_mv: str, concurrency: int) -> list[ProviderAudit]:
    """The audits, those with a noteworthy consumer given their capacities (one inventories GET each; a failed
    read is in the audit's errors, as when the inventories are read with the allocations)."""
    wanted = {a.provider_uuid for a in audits if any(c.verdict in NOTEWORTHY_VERDICTS for c in a.consumers)}
    if not wanted:
        return audits
    filled, perrors = await read_providers(client, [p for p in providers if p.uuid in wanted], ("inventories",),
                                           placement_mv=placement_mv, concurrency=concurrency)
    capacities = {p.uuid: {rc: inv.capacity for rc, inv in (p.inventories or {}).items()} for p in filled}
    return [dataclasses.replace(a, capacities=capacities[a.provider_uuid],
                                errors={**a.errors, **perrors.get(a.provider_uuid, {})})
            if a.provider_uuid in capacities else a for a in audits]


def _judge(views: list[ProviderView], infos: Mapping[str, ConsumerInfo]) -> list[ProviderAudit]:
    audits = []
    for v in views:
        mine = {c: infos[c] for c in needs_second_look(v) if c in infos}
        audits.append(audit_provider(dataclasses.replace(v, consumers=mine)))
    audits.sort(key=lambda a: (a.host or "~", a.provider_name))
    return audits


def _with_migrations(view: ProviderView, migs: Mapping[str, list[Migration] | SourceError]) -> ProviderView:
    if not view.host:
        return view
    found = migs.get(view.host)
    errors = dict(view.errors)
    if found is None:  # not needed: every consumer is an instance on the host
        migrations: tuple[Migration, ...] | None = ()
    elif isinstance(found, SourceError):
        migrations = None
        errors["migrations"] = _err(found)
    else:
        migrations = tuple(found)
    return dataclasses.replace(view, migrations=migrations, errors=errors)


# ---- the host screen ------------------------------------------------------------------------------------------
def _dated(client: Any, service: str, path: str, mv: str | None) -> tuple[dict[str, Any], datetime | None]:
    from tui.openstack.services_reads import dated_get

    return dated_get(client, service, path, microversion=mv, action=f"GET {service} {path}")


def _host_hypervisors(client: Any, host: str, mv: str) -> list[dict[str, Any]]:
    """Hypervisors whose service host is `host`, with their servers. The name pattern is a substring match
    (compute-1 also finds compute-10): filter on service.host; fall back to the full listing."""
    try:
        body = client.get_json("compute", query("/os-hypervisors/detail", {"hypervisor_hostname_pattern": host,
                                                                            "with_servers": True}),
                               microversion=mv, action=f"hypervisors of {host}")
        rows = [h for h in body.get("hypervisors") or [] if (h.get("service") or {}).get("host") == host]
    except NotFound:
        rows = []
    if rows:
        return rows
    listed = [h for h in client.hypervisors(detail=True) if (h.get("service") or {}).get("host") == host]
    return [client.hypervisor(str(h["id"]), with_servers=True) for h in listed]


async def read_host(client: Any, host: str, *, concurrency: int = 16,
                    clock: Callable[[], datetime] = _now) -> HostDetail:
    """Everything the host screen shows. Parts that fail say why in HostDetail.errors."""
    cmv, pmv = await asyncio.gather(asyncio.to_thread(client.compute_microversion),
                                    asyncio.to_thread(client.placement_microversion))
    got = await _gather(
        services=asyncio.to_thread(_dated, client, "compute", "/os-services", cmv),
        agents=asyncio.to_thread(_dated, client, "network", query("/agents", {"host": host}), None),
        hypervisors=asyncio.to_thread(_host_hypervisors, client, host, cmv),
        servers=asyncio.to_thread(client.servers, host=host),
        ports=asyncio.to_thread(client.ports, host=host),
        migrations=asyncio.to_thread(client.migrations, host=host))
    errors: dict[str, str] = {k: _err(v) for k, v in got.items() if isinstance(v, Exception)}
    all_services = parse_services(got["services"][0]["services"], got["services"][1]) \
        if "services" not in errors else []
    states = MappingProxyType(compute_states(all_services))
    agents = parse_agents(got["agents"][0].get("agents") or [], got["agents"][1]) if "agents" not in errors else []
    hypervisors = ([Hypervisor.from_api(h, with_servers=True) for h in got["hypervisors"]]
                   if "hypervisors" not in errors else [])
    servers = [HostServer.from_api(s) for s in got["servers"]] if "servers" not in errors else []
    ports = parse_ports(got["ports"]) if "ports" not in errors else []
    migrations = [Migration.from_api(m) for m in got["migrations"]] if "migrations" not in errors else None

    # placement: each hypervisor's provider tree (root provider uuid == hypervisor id)
    providers: list[Provider] = []
    owner: dict[str, Hypervisor] = {}
    if hypervisors:
        trees = await client.aget_json_many("placement", [query("/resource_providers", {"in_tree": h.id})
                                                          for h in hypervisors],
                                            microversion=pmv, concurrency=concurrency)
        for hv, answer in zip(hypervisors, trees, strict=True):
            if isinstance(answer, SourceError):
                errors[f"provider of {hv.hypervisor_hostname}"] = _err(answer)
                continue
            # in_tree: the hypervisor's provider and its descendants (filtered again: a server that ignores
            # the parameter answers with every provider)
            rows = [r for r in answer.get("resource_providers") or []
                    if hv.id in (r.get("uuid"), r.get("root_provider_uuid"))]
            if not rows:
                errors[f"provider of {hv.hypervisor_hostname}"] = (
                    f"placement has no provider with the hypervisor's id {hv.id} (in_tree answered nothing)")
            for r in rows:
                p = Provider.from_api(r)
                providers.append(p)
                owner[p.uuid] = hv
    elif "hypervisors" not in errors:
        errors["hypervisors"] = f"no hypervisor reports service host {host}"
    filled, perrors = await read_providers(client, providers, ("inventories", "usages", "allocations", "traits"),
                                           placement_mv=pmv, concurrency=concurrency)
    for uuid, errs in perrors.items():
        for part, why in errs.items():
            errors[f"{part} of provider {uuid}"] = why
    filled.sort(key=lambda p: (not p.is_root, p.name))
    views = []
    for p in filled:
        hv = owner[p.uuid]
        views.append(ProviderView(provider=p, host=hv.host or host, node=hv.hypervisor_hostname,
                                  instances=frozenset(hv.servers) if hv.servers is not None else None,
                                  migrations=tuple(migrations) if migrations is not None else None,
                                  compute_states=states,
                                  errors={"migrations": errors["migrations"]} if "migrations" in errors else {}))
    look = sorted({c for v in views for c in needs_second_look(v)})
    known = {s.id: s for s in servers}
    infos = await second_look(client, [c for c in look], compute_mv=cmv, placement_mv=pmv,
                              concurrency=concurrency) if look else {}
    audits = []
    for v in views:
        consumers = {c: infos[c] for c in needs_second_look(v) if c in infos}
        # label the legitimate ones with what the server listing says (name, state)
        for a in v.provider.allocations or ():
            if a.consumer in known and a.consumer not in consumers:
                consumers[a.consumer] = ConsumerInfo(consumer=a.consumer, server=known[a.consumer])
        audits.append(audit_provider(ProviderView(
            provider=v.provider, host=v.host, node=v.node, instances=v.instances, migrations=v.migrations,
            compute_states=v.compute_states, consumers=consumers, errors=v.errors)))
    in_flight = tuple(m for m in migrations or () if m.in_progress)
    return HostDetail(host=host, taken_at=clock(), services=tuple(s for s in all_services if s.host == host),
                      hypervisors=tuple(hypervisors), agents=tuple(agents), ports=tuple(ports),
                      servers=tuple(servers), migrations=in_flight, providers=tuple(filled), audits=tuple(audits),
                      compute_states=states, errors=errors, findings=tuple(audit_findings(audits)))


# ---- the capacity explainer ---------------------------------------------------------------------------------
def find_flavor(flavors: Sequence[Mapping[str, Any]], ref: str) -> Mapping[str, Any]:
    for f in flavors:
        if ref in (f.get("id"), f.get("name")):
            return f
    names = ", ".join(sorted(str(f.get("name")) for f in flavors)[:20]) or "none"
    raise SourceError(f"no flavor named or with id '{ref}' (flavors: {names})")


async def explain_fit(client: Any, flavor_ref: str, traits: Sequence[str] = (), *,
                      concurrency: int = CONCURRENCY, progress: Progress | None = None,
                      clock: Callable[[], datetime] = _now) -> FitReport:
    """`:fit FLAVOR [TRAIT...]`: placement's candidates, and why every other compute is ruled out."""
    pmv = await asyncio.to_thread(client.placement_microversion)
    flavors = await asyncio.to_thread(client.flavors)
    request = flavor_request(find_flavor(flavors, flavor_ref), traits)
    if progress:
        progress("asking placement for allocation candidates", 0, 1)
    got = await _gather(cands=asyncio.to_thread(client.allocation_candidates, dict(request.resources),
                                                required=required_param(request)),
                        rps=asyncio.to_thread(client.resource_providers),
                        hvs=asyncio.to_thread(client.hypervisors, detail=True))
    if isinstance(got["cands"], Exception):
        raise got["cands"]
    if isinstance(got["rps"], Exception):
        raise got["rps"]
    errors: dict[str, str] = {}
    hosts: dict[str, str] = {}
    if isinstance(got["hvs"], Exception):
        errors["hypervisors"] = _err(got["hvs"])
    else:
        for h in got["hvs"]:
            host = (h.get("service") or {}).get("host")
            if host:
                hosts[str(h.get("id"))] = host
    providers = [Provider.from_api(r) for r in got["rps"]]
    filled, perrors = await read_providers(client, providers, ("inventories", "usages", "traits"), placement_mv=pmv,
                                           concurrency=concurrency, progress=progress, phase="provider inventories")
    for uuid, errs in perrors.items():
        for part, why in errs.items():
            errors[f"{part} of provider {uuid}"] = why
    return explain(request, filled, candidate_providers(got["cands"]), clock(), hosts=hosts, errors=errors)
