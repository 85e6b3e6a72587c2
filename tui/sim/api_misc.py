"""Neutron (v2.0 agents, ports), Cinder (v3 services, volumes), Placement and Glance (version document only)."""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any
from urllib.parse import urlencode

from tui.sim.api_keystone import Auth
from tui.sim.api_nova import parse_microversion
from tui.sim.engine import Engine
from tui.sim.http import Request, Response, Router, json_response
from tui.sim.model import Agent, Port, Provider, Service, Volume
from tui.sim.util import iso_space, iso_us, iso_z

PLACEMENT_MAX = (1, 39)
CINDER_MAX = (3, 71)


def _guard(engine: Engine, auth: Auth, fn: Callable[..., Response]) -> Callable[..., Response]:
    def wrapped(req: Request, **kw: str) -> Response:
        denied = auth.check(req)
        if denied:
            return denied
        t = engine.clock.time()
        with engine.lock:
            engine.advance_to(t)
            return fn(req, t, **kw)
    return wrapped


def _bool_filter(raw: str | None) -> bool | None:
    if raw is None:
        return None
    return raw.strip().lower() in ("1", "true", "yes", "on")


# ------------------------------------------------------------------------------------------------- neutron
def agent_dict(e: Engine, a: Agent, t: float) -> dict[str, Any]:
    return {"id": a.id, "agent_type": a.agent_type, "binary": a.binary, "topic": "N/A", "host": a.host,
            "admin_state_up": a.admin_state_up, "created_at": iso_space(a.created),
            "started_at": iso_space(a.started), "heartbeat_timestamp": iso_space(a.heartbeat(t)),
            "description": None, "resources_synced": None, "availability_zone": a.availability_zone,
            "alive": e.agent_alive(a, t), "configurations": a.configurations}


def port_dict(p: Port) -> dict[str, Any]:
    bound = p.vif_type not in ("unbound", "binding_failed")
    return {
        "id": p.id, "name": "", "network_id": p.network_id, "project_id": p.project_id,
        "mac_address": p.mac, "admin_state_up": True, "status": p.status, "device_id": p.device_id,
        "device_owner": p.device_owner, "fixed_ips": [{"subnet_id": p.subnet_id, "ip_address": p.ip}],
        "allowed_address_pairs": [], "extra_dhcp_opts": [], "security_groups": ["sg-default"],
        "description": "", "binding:vnic_type": "normal", "binding:profile": {}, "binding:host_id": p.host,
        "binding:vif_type": p.vif_type,
        "binding:vif_details": {"connectivity": "l2", "port_filter": True, "ovs_hybrid_plug": False,
                                "ovs_create_tap": True, "datapath_type": "system", "bridge_name": "br-int",
                                "bound_drivers": {"0": "openvswitch"}} if bound else {},
        "port_security_enabled": True, "tags": [], "created_at": iso_z(p.created),
        "updated_at": iso_z(p.updated), "revision_number": p.revision, "tenant_id": p.project_id,
    }


_PORT_FILTERS = {"id": "id", "device_id": "device_id", "device_owner": "device_owner", "status": "status",
                 "network_id": "network_id", "binding:host_id": "host", "mac_address": "mac",
                 "project_id": "project_id", "tenant_id": "project_id"}


def _neutron_err(kind: str, code: int, message: str) -> Response:
    return json_response({"NeutronError": {"type": kind, "message": message, "detail": ""}}, code)


def _fields(req: Request, rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
    fields = req.query.get("fields")
    if not fields:
        return rows
    return [{k: r[k] for k in fields if k in r} for r in rows]


def make_neutron(engine: Engine, auth: Auth) -> Router:
    r = Router()

    def root(req: Request) -> Response:
        return json_response({"versions": [{"id": "v2.0", "status": "CURRENT",
                                            "links": [{"href": f"{req.base}/v2.0/", "rel": "self"}]}]})

    def v20(req: Request) -> Response:
        names = ("agents", "ports", "networks", "subnets")
        return json_response({"resources": [
            {"name": n[:-1], "collection": n, "links": [{"href": f"{req.base}/v2.0/{n}", "rel": "self"}]}
            for n in names]})

    def agents(req: Request, t: float) -> Response:
        rows = [agent_dict(engine, a, t) for a in engine.net_agents]
        for key in ("host", "binary", "agent_type", "id", "availability_zone"):
            want = req.query.get(key)
            if want:
                rows = [x for x in rows if x[key] in want]
        for key in ("alive", "admin_state_up"):
            b = _bool_filter(req.q(key))
            if b is not None:
                rows = [x for x in rows if x[key] is b]
        return json_response({"agents": _fields(req, rows)})

    def agent_show(req: Request, t: float, aid: str) -> Response:
        for a in engine.net_agents:
            if a.id == aid:
                return json_response({"agent": agent_dict(engine, a, t)})
        return _neutron_err("AgentNotFound", 404, f"Agent {aid} could not be found.")

    def ports(req: Request, t: float) -> Response:
        pool: list[Port] = sorted(engine.ports.values(), key=lambda p: p.id)
        for key, attr in _PORT_FILTERS.items():
            want = req.query.get(key)
            if want:
                wanted = set(want)
                pool = [p for p in pool if getattr(p, attr) in wanted]
        marker = req.q("marker")
        if marker:
            pool = [p for p in pool if p.id > marker]
        limit_raw = req.q("limit")
        links = None
        if limit_raw:
            try:
                limit = int(limit_raw)
            except ValueError:
                return _neutron_err("BadRequest", 400, f"Bad limit request: limit {limit_raw} is invalid.")
            if limit > 0 and len(pool) > limit:
                pool = pool[:limit]
                params = [(k, v) for k, vs in req.query.items() for v in vs if k != "marker"]
                params.append(("marker", pool[-1].id))
                links = [{"rel": "next", "href": f"{req.base}/v2.0/ports?{urlencode(params)}"}]
        out: dict[str, Any] = {"ports": _fields(req, [port_dict(p) for p in pool])}
        if links:
            out["ports_links"] = links
        return json_response(out)

    def port_show(req: Request, t: float, pid: str) -> Response:
        p = engine.ports.get(pid)
        if p is None:
            return _neutron_err("PortNotFound", 404, f"Port {pid} could not be found.")
        return json_response({"port": port_dict(p)})

    g = lambda fn: _guard(engine, auth, fn)  # noqa: E731
    r.add("GET", "/", root)
    r.add("GET", "/v2.0", v20)
    r.add("GET", "/v2.0/agents", g(agents))
    r.add("GET", "/v2.0/agents/(?P<aid>[^/]+)", g(agent_show))
    r.add("GET", "/v2.0/ports", g(ports))
    r.add("GET", "/v2.0/ports/(?P<pid>[^/]+)", g(port_show))
    return r


# ------------------------------------------------------------------------------------------------- cinder
def cinder_service_dict(e: Engine, s: Service, t: float, mv: tuple[int, int]) -> dict[str, Any]:
    d: dict[str, Any] = {"binary": s.binary, "host": s.host, "zone": s.zone, "status": s.status,
                         "state": "up" if e.service_up(s, t) else "down", "updated_at": iso_us(s.updated_at(t)),
                         "disabled_reason": s.disabled_reason}
    if s.backend:
        d.update({"replication_status": "disabled", "active_backend_id": None, "frozen": False})
    if mv >= (3, 7):
        d["cluster"] = None
    if mv >= (3, 49) and s.backend:
        d["backend_state"] = "up" if e.service_up(s, t) else "down"
    return d


def volume_dict(v: Volume, base: str, project: str) -> dict[str, Any]:
    return {
        "id": v.id, "status": v.status, "size": v.size, "availability_zone": "nova",
        "created_at": iso_us(v.created), "updated_at": iso_us(v.updated), "name": v.name, "description": None,
        "volume_type": "__DEFAULT__", "snapshot_id": None, "source_volid": None, "metadata": {},
        "links": [{"rel": "self", "href": f"{base}/v3/{project}/volumes/{v.id}"},
                  {"rel": "bookmark", "href": f"{base}/{project}/volumes/{v.id}"}],
        "user_id": v.user_id, "bootable": "true" if v.bootable else "false", "encrypted": False,
        "replication_status": None, "consistencygroup_id": None, "multiattach": False,
        "attachments": [{**a, "attached_at": iso_us(a["attached_at"])} for a in v.attachments],
        "migration_status": None, "os-vol-tenant-attr:tenant_id": v.project_id,
        "os-vol-mig-status-attr:migstat": None, "os-vol-mig-status-attr:name_id": None,
        "os-vol-host-attr:host": v.backend_host,
    }


def make_cinder(engine: Engine, auth: Auth) -> Router:
    r = Router()

    def vdoc(base: str) -> dict[str, Any]:
        return {"id": "v3.0", "status": "CURRENT", "version": f"{CINDER_MAX[0]}.{CINDER_MAX[1]}",
                "min_version": "3.0", "updated": "2023-08-31T00:00:00Z",
                "links": [{"rel": "describedby", "type": "text/html",
                           "href": "https://docs.openstack.org/"}, {"rel": "self", "href": f"{base}/v3/"}],
                "media-types": [{"base": "application/json",
                                 "type": "application/vnd.openstack.volume+json;version=3"}]}

    def root(req: Request) -> Response:
        return json_response({"versions": [vdoc(req.base)]}, 300)

    def v3(req: Request) -> Response:
        return json_response({"versions": [vdoc(req.base)]})

    def api(fn: Callable[..., Response]) -> Callable[..., Response]:
        def inner(req: Request, t: float, project: str, **kw: str) -> Response:
            mv = parse_microversion(req, "volume", None, (3, 0), CINDER_MAX)
            if isinstance(mv, str):
                return json_response({"computeFault": {"code": 406, "message": mv}}, 406)
            resp = fn(req, t, project, mv, **kw)
            resp.headers += [("OpenStack-API-Version", f"volume {mv[0]}.{mv[1]}"),
                             ("Vary", "OpenStack-API-Version")]
            return resp
        return _guard(engine, auth, inner)

    @api
    def services(req: Request, t: float, project: str, mv: tuple[int, int]) -> Response:
        host, binary = req.q("host"), req.q("binary")
        rows = [cinder_service_dict(engine, s, t, mv) for s in engine.cinder_services
                if (host is None or s.host == host) and (binary is None or s.binary == binary)]
        return json_response({"services": rows})

    def _volumes(req: Request, project: str, detail: bool) -> Response:
        all_tenants = _bool_filter(req.q("all_tenants")) or False
        pool = sorted(engine.volumes.values(), key=lambda v: (v.created, v.id), reverse=True)
        if not all_tenants:
            pool = [v for v in pool if v.project_id == project]
        status = req.q("status")
        if status:
            pool = [v for v in pool if v.status == status]
        marker = req.q("marker")
        if marker:
            idx = next((k for k, v in enumerate(pool) if v.id == marker), None)
            if idx is None:
                return json_response({"badRequest": {"code": 400, "message": f"marker {marker} not found"}},
                                     400)
            pool = pool[idx + 1:]
        try:
            limit = min(int(req.q("limit") or 1000), 1000)
        except ValueError:
            return json_response({"badRequest": {"code": 400, "message": "limit must be an integer"}}, 400)
        page = pool[:limit]
        if detail:
            rows = [volume_dict(v, req.base, project) for v in page]
        else:
            rows = [{"id": v.id, "name": v.name, "links": volume_dict(v, req.base, project)["links"]}
                    for v in page]
        out: dict[str, Any] = {"volumes": rows}
        if page and len(page) == limit:
            params = [(k, v) for k, vs in req.query.items() for v in vs if k != "marker"]
            params.append(("marker", page[-1].id))
            out["volumes_links"] = [{"rel": "next", "href": f"{req.base}/v3/{project}/volumes"
                                                            f"{'/detail' if detail else ''}?{urlencode(params)}"}]
        return json_response(out)

    @api
    def volumes_detail(req: Request, t: float, project: str, mv: tuple[int, int]) -> Response:
        return _volumes(req, project, True)

    @api
    def volumes(req: Request, t: float, project: str, mv: tuple[int, int]) -> Response:
        return _volumes(req, project, False)

    @api
    def volume_show(req: Request, t: float, project: str, mv: tuple[int, int], vid: str) -> Response:
        v = engine.volumes.get(vid)
        if v is None:
            return json_response({"itemNotFound": {"code": 404,
                                                   "message": f"Volume {vid} could not be found."}}, 404)
        return json_response({"volume": volume_dict(v, req.base, project)})

    def project_root(req: Request, t: float, project: str) -> Response:
        return json_response({"itemNotFound": {"code": 404, "message": "The resource could not be found."}}, 404)

    r.add("GET", "/", root)
    r.add("GET", "/v3", v3)
    r.add("GET", "/v3/(?P<project>[0-9a-f]{32})", _guard(engine, auth, project_root))  # real: 401 unauthenticated
    r.add("GET", "/v3/(?P<project>[0-9a-f]{32})/os-services", services)
    r.add("GET", "/v3/(?P<project>[0-9a-f]{32})/volumes/detail", volumes_detail)
    r.add("GET", "/v3/(?P<project>[0-9a-f]{32})/volumes", volumes)
    r.add("GET", "/v3/(?P<project>[0-9a-f]{32})/volumes/(?P<vid>[^/]+)", volume_show)
    return r


# ------------------------------------------------------------------------------------------------- placement
def provider_dict(p: Provider) -> dict[str, Any]:
    rels = ("inventories", "usages", "aggregates", "traits", "allocations")
    return {"uuid": p.uuid, "name": p.name, "generation": p.generation,
            "links": [{"rel": "self", "href": f"/resource_providers/{p.uuid}"}] +
                     [{"rel": rel, "href": f"/resource_providers/{p.uuid}/{rel}"} for rel in rels],
            "parent_provider_uuid": None, "root_provider_uuid": p.uuid}


def _placement_err(code: int, title: str, detail: str) -> Response:
    return json_response({"errors": [{"status": code, "title": title, "detail": detail,
                                      "request_id": "req-sim"}]}, code)


def _parse_resources(raw: str) -> dict[str, int] | None:
    out: dict[str, int] = {}
    for part in raw.split(","):
        rc, _, amount = part.partition(":")
        if not rc or not amount.isdigit():
            return None
        out[rc.strip()] = int(amount)
    return out


def provider_fits(p: Provider, resources: dict[str, int], required: list[str], forbidden: list[str]) -> bool:
    for rc, amount in resources.items():
        inv = p.inventories.get(rc)
        if inv is None or amount > inv["max_unit"] or amount < inv["min_unit"]:
            return False
        if p.usages.get(rc, 0) + amount > p.capacity(rc):
            return False
    traits = set(p.traits)
    return all(t in traits for t in required) and not any(t in traits for t in forbidden)


def make_placement(engine: Engine, auth: Auth) -> Router:
    r = Router()

    def root(req: Request) -> Response:
        return json_response({"versions": [{"id": "v1.0", "max_version": f"{PLACEMENT_MAX[0]}.{PLACEMENT_MAX[1]}",
                                            "min_version": "1.0", "status": "CURRENT",
                                            "links": [{"rel": "self", "href": ""}]}]})

    def api(fn: Callable[..., Response]) -> Callable[..., Response]:
        def inner(req: Request, t: float, **kw: str) -> Response:
            mv = parse_microversion(req, "placement", None, (1, 0), PLACEMENT_MAX)
            if isinstance(mv, str):
                return _placement_err(406, "Not Acceptable", mv)
            resp = fn(req, mv, **kw)
            resp.headers += [("OpenStack-API-Version", f"placement {mv[0]}.{mv[1]}"),
                             ("vary", "openstack-api-version")]
            return resp
        return _guard(engine, auth, inner)

    def _provider(uuid: str) -> Provider | Response:
        p = engine.providers.get(uuid)
        if p is None:
            return _placement_err(404, "Not Found", f"No resource provider with uuid {uuid} found")
        return p

    @api
    def providers(req: Request, mv: tuple[int, int]) -> Response:
        pool = list(engine.providers.values())
        name, uuid = req.q("name"), req.q("uuid")
        if name:
            pool = [p for p in pool if p.name == name]
        if uuid:
            pool = [p for p in pool if p.uuid == uuid]
        if req.q("resources"):
            res = _parse_resources(req.q("resources") or "")
            if res is None:
                return _placement_err(400, "Bad Request", "Invalid resources query")
            pool = [p for p in pool if provider_fits(p, res, [], [])]
        if req.q("required"):
            req_traits = (req.q("required") or "").split(",")
            pool = [p for p in pool if provider_fits(p, {}, [x for x in req_traits if not x.startswith("!")],
                                                     [x[1:] for x in req_traits if x.startswith("!")])]
        return json_response({"resource_providers": [provider_dict(p) for p in pool]})

    @api
    def provider(req: Request, mv: tuple[int, int], uuid: str) -> Response:
        p = _provider(uuid)
        return p if isinstance(p, Response) else json_response(provider_dict(p))

    @api
    def inventories(req: Request, mv: tuple[int, int], uuid: str) -> Response:
        p = _provider(uuid)
        if isinstance(p, Response):
            return p
        return json_response({"inventories": p.inventories, "resource_provider_generation": p.generation})

    @api
    def usages(req: Request, mv: tuple[int, int], uuid: str) -> Response:
        p = _provider(uuid)
        if isinstance(p, Response):
            return p
        use = {rc: p.usages.get(rc, 0) for rc in p.inventories}
        return json_response({"resource_provider_generation": p.generation, "usages": use})

    @api
    def allocations(req: Request, mv: tuple[int, int], uuid: str) -> Response:
        p = _provider(uuid)
        if isinstance(p, Response):
            return p
        allocs = {c: {"resources": dict(res), "consumer_generation": engine.consumers[c].generation
                      if c in engine.consumers else 1} for c, res in p.allocations.items()}
        return json_response({"allocations": allocs, "resource_provider_generation": p.generation})

    @api
    def traits(req: Request, mv: tuple[int, int], uuid: str) -> Response:
        p = _provider(uuid)
        if isinstance(p, Response):
            return p
        return json_response({"traits": list(p.traits), "resource_provider_generation": p.generation})

    @api
    def aggregates(req: Request, mv: tuple[int, int], uuid: str) -> Response:
        p = _provider(uuid)
        if isinstance(p, Response):
            return p
        return json_response({"aggregates": [], "resource_provider_generation": p.generation})

    @api
    def consumer_allocations(req: Request, mv: tuple[int, int], consumer: str) -> Response:
        c = engine.consumers.get(consumer)
        allocs = {p.uuid: {"generation": p.generation, "resources": dict(p.allocations[consumer])}
                  for p in engine.providers.values() if consumer in p.allocations}
        if c is None or not allocs:
            return json_response({"allocations": {}})
        out: dict[str, Any] = {"allocations": allocs, "consumer_generation": c.generation,
                               "project_id": c.project_id, "user_id": c.user_id}
        if mv >= (1, 38):
            out["consumer_type"] = c.consumer_type
        return json_response(out)

    @api
    def all_traits(req: Request, mv: tuple[int, int]) -> Response:
        names = sorted({t for p in engine.providers.values() for t in p.traits})
        return json_response({"traits": names})

    @api
    def candidates(req: Request, mv: tuple[int, int]) -> Response:
        res = _parse_resources(req.q("resources") or "")
        if res is None:
            return _placement_err(400, "Bad Request",
                                  "Invalid query string parameters: 'resources' is a required property")
        required = [x for part in req.query.get("required", []) for x in part.split(",") if x]
        want = [x for x in required if not x.startswith("!")]
        forbid = [x[1:] for x in required if x.startswith("!")]
        fits = [p for p in engine.providers.values() if provider_fits(p, res, want, forbid)]
        limit = req.q("limit")
        if limit and limit.isdigit():
            fits = fits[:int(limit)]
        reqs = [{"allocations": {p.uuid: {"resources": dict(res)}}, "mappings": {"": [p.uuid]}} for p in fits]
        summaries = {p.uuid: {
            "resources": {rc: {"capacity": p.capacity(rc), "used": p.usages.get(rc, 0)} for rc in p.inventories},
            "traits": list(p.traits), "parent_provider_uuid": None, "root_provider_uuid": p.uuid}
            for p in fits}
        return json_response({"allocation_requests": reqs, "provider_summaries": summaries})

    u = "(?P<uuid>[0-9a-f-]{36})"
    r.add("GET", "/", root)
    r.add("GET", "/resource_providers", providers)
    r.add("GET", f"/resource_providers/{u}", provider)
    r.add("GET", f"/resource_providers/{u}/inventories", inventories)
    r.add("GET", f"/resource_providers/{u}/usages", usages)
    r.add("GET", f"/resource_providers/{u}/allocations", allocations)
    r.add("GET", f"/resource_providers/{u}/traits", traits)
    r.add("GET", f"/resource_providers/{u}/aggregates", aggregates)
    r.add("GET", "/allocations/(?P<consumer>[^/]+)", consumer_allocations)
    r.add("GET", "/traits", all_traits)
    r.add("GET", "/allocation_candidates", candidates)
    return r


# ------------------------------------------------------------------------------------------------- glance
def make_glance() -> Router:
    """Only what the catalog check reads: the version document."""
    r = Router()

    def root(req: Request) -> Response:
        versions = [{"id": f"v2.{n}", "status": "CURRENT" if n == 17 else "SUPPORTED",
                     "links": [{"rel": "self", "href": f"{req.base}/v2/"}]} for n in (17, 16, 15)]
        return Response(300, json.dumps({"versions": versions}).encode())

    r.add("GET", "/", root)
    r.add("GET", "/versions", root)
    return r
