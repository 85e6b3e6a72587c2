"""Nova (compute API v2.1) subset, with microversions, nova's pagination and changes-since.

Field names and spellings follow payloads captured from a real nova 34 (tests/data/payloads/). A server's
JSON is cached as bytes (minus `host_status`, which nova computes per request) and rebuilt only when the
server changes, so serving 10,000 servers costs joins, not json.dumps.
"""

from __future__ import annotations

import hashlib
import json
import re
from typing import Any
from urllib.parse import urlencode

from tui.sim.api_keystone import Auth
from tui.sim.engine import CONTROLLERS, FLAVORS, Engine, Host
from tui.sim.http import Request, Response, Router, json_response, raw_json
from tui.sim.model import Instance, Migration, Service
from tui.sim.util import host_id, iso_us, iso_z, parse_iso

MIN_VERSION = (2, 1)
MAX_VERSION = (2, 104)  # nova 34, as the real test cloud advertises
MAX_LIMIT = 1000
_TRUE = {"1", "true", "yes", "on", "t", "y", ""}


def _fmt(v: tuple[int, int]) -> str:
    return f"{v[0]}.{v[1]}"


def parse_microversion(req: Request, service: str = "compute", legacy: str | None = "X-OpenStack-Nova-API-Version",
                       minimum: tuple[int, int] = MIN_VERSION, maximum: tuple[int, int] = MAX_VERSION,
                       ) -> tuple[int, int] | str:
    """The requested microversion, or an error message when it is out of range/malformed."""
    raw = None
    header = req.headers.get("OpenStack-API-Version")
    if header:
        for part in header.split(","):
            bits = part.strip().split()
            if len(bits) == 2 and bits[0].lower() == service:
                raw = bits[1]
    if raw is None and legacy:
        raw = req.headers.get(legacy)
    if raw is None:
        return minimum
    if raw.strip().lower() == "latest":
        return maximum
    m = re.fullmatch(r"\s*(\d+)\.(\d+)\s*", raw)
    if not m:
        return f"Invalid format for version {raw!r}"
    v = (int(m.group(1)), int(m.group(2)))
    if not minimum <= v <= maximum:
        return (f"Version {_fmt(v)} is not supported by the API. Minimum is {_fmt(minimum)} and maximum "
                f"is {_fmt(maximum)}.")
    return v


def _err(kind: str, code: int, message: str) -> Response:
    return json_response({kind: {"code": code, "message": message}}, code)


class NovaViews:
    """Turns engine records into nova JSON for one base URL."""

    def __init__(self, engine: Engine, base: str) -> None:
        self.e = engine
        self.base = base
        self.flavor_ids = {name: hashlib.md5(name.encode()).hexdigest()[:8] + "-0000-4000-8000-" +
                           hashlib.md5(name.encode()).hexdigest()[:12] for name in FLAVORS}

    # -- services
    def service(self, s: Service, t: float, mv: tuple[int, int]) -> dict[str, Any]:
        up = self.e.service_up(s, t)
        d: dict[str, Any] = {
            "binary": s.binary, "host": s.host,
            "id": s.id if mv >= (2, 53) else int(s.id[:4], 16),
            "zone": s.zone, "status": s.status, "state": "up" if up else "down",
            "updated_at": iso_us(s.updated_at(t)), "disabled_reason": s.disabled_reason,
        }
        if mv >= (2, 11):
            d["forced_down"] = s.forced_down
        return d

    def host_status(self, inst: Instance, t: float) -> str:
        if not inst.host:
            return ""
        svc = self.e.host_by_name[inst.host].service
        if not self.e.service_up(svc, t):
            return "DOWN"
        return "MAINTENANCE" if svc.status == "disabled" else "UP"

    # -- servers
    def server_dict(self, inst: Instance, mv: tuple[int, int], *, show: bool = False,
                    t: float | None = None) -> dict[str, Any]:
        """t: the request's time, shown as `updated` of a build whose updated_at is still NULL (nova's
        utils.isotime(None) is utcnow())."""
        e = self.e
        vcpus, ram, disk = FLAVORS[inst.flavor]
        port = e.ports.get(inst.port_id) if inst.port_id else None
        addresses: dict[str, Any] = {}
        if port is not None and inst.task_state not in ("scheduling", "networking"):
            addresses = {"demo-net": [{"version": 4, "addr": port.ip, "OS-EXT-IPS:type": "fixed",
                                       "OS-EXT-IPS-MAC:mac_addr": port.mac}]}
        if mv >= (2, 47):
            flavor: dict[str, Any] = {"vcpus": vcpus, "ram": ram, "disk": disk, "ephemeral": 0, "swap": 0,
                                      "original_name": inst.flavor, "extra_specs": {}}
        else:
            fid = self.flavor_ids[inst.flavor]
            flavor = {"id": fid, "links": [{"rel": "bookmark", "href": f"{self.base}/flavors/{fid}"}]}
        d: dict[str, Any] = {
            "accessIPv4": "", "accessIPv6": "", "addresses": addresses, "created": iso_z(inst.created),
            "flavor": flavor, "hostId": host_id(inst.project_id, inst.host), "id": inst.id,
            "image": {"id": inst.image_id,
                      "links": [{"rel": "bookmark", "href": f"{self.base}/images/{inst.image_id}"}]},
            "links": [{"rel": "self", "href": f"{self.base}/v2.1/servers/{inst.id}"},
                      {"rel": "bookmark", "href": f"{self.base}/servers/{inst.id}"}],
            "metadata": {}, "name": inst.name, "status": inst.status, "tenant_id": inst.project_id,
            "user_id": inst.user_id, "OS-DCF:diskConfig": "MANUAL",
            "updated": iso_z(t if inst.pending is not None and t is not None else inst.updated),
        }
        if inst.status in ("ACTIVE", "BUILD", "REBUILD", "RESIZE", "VERIFY_RESIZE", "MIGRATING"):
            d["progress"] = 0
        if inst.fault is not None and inst.status in ("ERROR", "DELETED"):
            f = inst.fault
            d["fault"] = {"code": f["code"], "created": iso_z(f["created"]), "message": f["message"],
                          "details": f["details"]}
        d.update({
            "OS-EXT-AZ:availability_zone": inst.az if inst.host else "",
            "config_drive": "", "key_name": inst.key_name,
            "OS-SRV-USG:launched_at": iso_us(inst.launched_at) if inst.launched_at else None,
            "OS-SRV-USG:terminated_at": iso_us(inst.terminated_at) if inst.terminated_at else None,
            "OS-EXT-SRV-ATTR:host": inst.host,
            "OS-EXT-SRV-ATTR:instance_name": f"instance-{inst.seq:08x}",
            "OS-EXT-SRV-ATTR:hypervisor_hostname": inst.host,
            "OS-EXT-SRV-ATTR:hostname": inst.name.lower(),
            "OS-EXT-SRV-ATTR:kernel_id": "", "OS-EXT-SRV-ATTR:launch_index": 0,
            "OS-EXT-SRV-ATTR:ramdisk_id": "", "OS-EXT-SRV-ATTR:reservation_id": inst.reservation_id,
            "OS-EXT-SRV-ATTR:root_device_name": "/dev/vda" if inst.host else None,
            "OS-EXT-SRV-ATTR:user_data": None,
            "OS-EXT-STS:task_state": inst.task_state, "OS-EXT-STS:vm_state": inst.vm_state,
            "OS-EXT-STS:power_state": inst.power_state,
            "os-extended-volumes:volumes_attached": [
                {"id": vid, "delete_on_termination": dot} for vid, dot in inst.volumes],
            "locked": False,
        })
        if mv >= (2, 19):
            d["description"] = None
        if mv >= (2, 26):
            d["tags"] = []
        if mv >= (2, 63):
            d["trusted_image_certificates"] = None
        if show and mv >= (2, 71):
            d["server_groups"] = []
        if mv >= (2, 73):
            d["locked_reason"] = None
        if mv >= (2, 96):
            d["pinned_availability_zone"] = None
        if port is not None and inst.status != "DELETED":
            d["security_groups"] = [{"name": "default"}]
        return d

    def server_bytes(self, inst: Instance, mv: tuple[int, int], t: float) -> bytes:
        """One server's JSON. Cached (for the newest shape) as bytes without host_status."""
        hs = self.host_status(inst, t) if mv >= (2, 16) else None
        if inst.pending is not None:  # `updated` is the request's time: never cached
            head = json.dumps(self.server_dict(inst, mv, t=t)).encode()[:-1]
        elif mv >= (2, 96):
            if inst.cache is None:
                inst.cache = json.dumps(self.server_dict(inst, mv)).encode()[:-1]
            head = inst.cache
        else:
            head = json.dumps(self.server_dict(inst, mv)).encode()[:-1]
        if hs is None:
            return head + b"}"
        return head + b', "host_status": "' + hs.encode() + b'"}'

    # -- actions
    def actions(self, inst: Instance) -> list[Any]:
        if inst.actions is not None:
            return inst.actions
        # initial servers: synthesise their create action deterministically from the id
        from tui.sim.model import Action

        rid = "req-" + hashlib.md5(inst.id.encode()).hexdigest()
        rid = f"{rid[:12]}-{rid[12:16]}-{rid[16:20]}-{rid[20:24]}-{rid[24:36]}"
        start = inst.created
        done = inst.launched_at or inst.created + 5
        a = Action("create", rid, start, done)
        a.events = [
            {"event": "conductor_schedule_and_build_instances", "start_time": start + 1, "finish_time": start + 2,
             "result": "Success", "traceback": None, "host": CONTROLLERS[0], "details": None,
             "project_id": inst.project_id},
            {"event": "compute__do_build_and_run_instance", "start_time": start + 2, "finish_time": done,
             "result": "Success", "traceback": None, "host": inst.host, "details": None,
             "project_id": inst.project_id},
        ]
        return [a]

    def action_dict(self, inst: Instance, a: Any, mv: tuple[int, int], events: bool) -> dict[str, Any]:
        d: dict[str, Any] = {"action": a.action, "instance_uuid": inst.id, "request_id": a.request_id,
                             "user_id": inst.user_id, "project_id": inst.project_id,
                             "start_time": iso_us(a.start), "message": a.message}
        if mv >= (2, 58):
            d["updated_at"] = iso_us(a.updated)
        if events:
            evs = []
            for ev in reversed(a.events):
                item: dict[str, Any] = {
                    "event": ev["event"], "start_time": iso_us(ev["start_time"]),
                    "finish_time": iso_us(ev["finish_time"]) if ev["finish_time"] is not None else None,
                    "result": ev["result"], "traceback": ev["traceback"]}
                if mv >= (2, 62):
                    item["host"] = ev["host"]
                    item["hostId"] = host_id(ev["project_id"], ev["host"])
                if mv >= (2, 84):
                    item["details"] = ev["details"]
                evs.append(item)
            d["events"] = evs
        return d

    # -- hypervisors
    def hypervisor(self, h: Host, t: float, mv: tuple[int, int], *, detail: bool,
                   servers: list[Instance] | None) -> dict[str, Any]:
        up = self.e.service_up(h.service, t)
        d: dict[str, Any] = {"id": h.hypervisor_id if mv >= (2, 53) else h.index + 1,
                             "hypervisor_hostname": h.name, "state": "up" if up else "down",
                             "status": h.service.status}
        if detail:
            d.update({"hypervisor_type": "QEMU", "hypervisor_version": 8002000, "host_ip": h.host_ip,
                      "service": {"id": h.service.id if mv >= (2, 53) else h.index + 1, "host": h.name,
                                  "disabled_reason": h.service.disabled_reason}})
            if mv >= (2, 88):
                d["uptime"] = None if not up else f" 09:00:00 up 12 days,  3:12,  0 users,  load average: " \
                                                  f"{0.5 + h.index % 7 / 3:.2f}, 0.61, 0.58"
            else:
                prov = self.e.providers[h.hypervisor_id]
                inv, use = prov.inventories, prov.usages
                d.update({
                    "vcpus": inv["VCPU"]["total"], "memory_mb": inv["MEMORY_MB"]["total"],
                    "local_gb": inv["DISK_GB"]["total"], "vcpus_used": use.get("VCPU", 0),
                    "memory_mb_used": use.get("MEMORY_MB", 0) + inv["MEMORY_MB"]["reserved"],
                    "local_gb_used": use.get("DISK_GB", 0),
                    "free_ram_mb": inv["MEMORY_MB"]["total"] - use.get("MEMORY_MB", 0),
                    "free_disk_gb": inv["DISK_GB"]["total"] - use.get("DISK_GB", 0), "current_workload": 0,
                    "running_vms": len(prov.allocations), "disk_available_least": inv["DISK_GB"]["total"],
                    "cpu_info": "{}"})
        if servers is not None:
            d["servers"] = [{"name": s.name, "uuid": s.id} for s in servers]
        return d

    def migration(self, m: Migration, mv: tuple[int, int]) -> dict[str, Any]:
        d: dict[str, Any] = {"id": m.id}
        if mv >= (2, 59):
            d["uuid"] = m.uuid
        d.update({"source_compute": m.source, "dest_compute": m.dest, "source_node": m.source,
                  "dest_node": m.dest, "dest_host": m.dest_ip, "old_instance_type_id": 1,
                  "new_instance_type_id": 1, "instance_uuid": m.instance_uuid, "status": m.status})
        if mv >= (2, 23):
            d["migration_type"] = m.migration_type
        if mv >= (2, 80):
            d["user_id"] = m.user_id
            d["project_id"] = m.project_id
        d["created_at"] = iso_us(m.created)
        d["updated_at"] = iso_us(m.updated)
        return d

    def flavor(self, name: str, mv: tuple[int, int]) -> dict[str, Any]:
        vcpus, ram, disk = FLAVORS[name]
        fid = self.flavor_ids[name]
        d: dict[str, Any] = {
            "id": fid, "name": name, "ram": ram, "disk": disk, "swap": 0 if mv >= (2, 75) else "",
            "OS-FLV-EXT-DATA:ephemeral": 0, "OS-FLV-DISABLED:disabled": False, "vcpus": vcpus,
            "os-flavor-access:is_public": True,
            "links": [{"rel": "self", "href": f"{self.base}/v2.1/flavors/{fid}"},
                      {"rel": "bookmark", "href": f"{self.base}/flavors/{fid}"}]}
        d["rxtx_factor"] = 1.0  # still there at 2.96 (the live contract test caught its absence)
        if mv >= (2, 55):
            d["description"] = None
        if mv >= (2, 61):
            d["extra_specs"] = {}
        return d


def _truthy(v: str | None) -> bool:
    return v is not None and v.strip().lower() in _TRUE


def make_app(engine: Engine, auth: Auth, base_ref: list[str]) -> Router:
    """base_ref[0] is filled with the listener's base URL once it is bound."""
    r = Router()
    views: list[NovaViews] = []

    def v() -> NovaViews:
        if not views:
            views.append(NovaViews(engine, base_ref[0]))
        return views[0]

    def version_doc(base: str) -> dict[str, Any]:
        return {"id": "v2.1", "status": "CURRENT", "version": _fmt(MAX_VERSION), "min_version": "2.1",
                "updated": "2013-07-23T11:33:21Z",
                "links": [{"rel": "self", "href": f"{base}/v2.1/"},
                          {"rel": "describedby", "type": "text/html", "href": "http://docs.openstack.org/"}],
                "media-types": [{"base": "application/json",
                                 "type": "application/vnd.openstack.compute+json;version=2.1"}]}

    def root(req: Request) -> Response:
        v20 = {"id": "v2.0", "status": "SUPPORTED", "version": "", "min_version": "",
               "updated": "2011-01-21T11:33:21Z", "links": [{"rel": "self", "href": f"{req.base}/v2/"}]}
        d = version_doc(req.base)
        d.pop("media-types")
        d["links"] = d["links"][:1]
        return json_response({"versions": [v20, d]})

    def v21(req: Request) -> Response:
        return json_response({"version": version_doc(req.base)})

    def api(fn: Any) -> Any:
        """Token check, microversion negotiation, sync of the engine, response headers."""
        def wrapped(req: Request, **kw: str) -> Response:
            denied = auth.check(req)
            if denied:
                return denied
            mv = parse_microversion(req)
            if isinstance(mv, str):
                return _err("computeFault" if "supported" in mv else "badRequest",
                            406 if "supported" in mv else 400, mv)
            t = engine.clock.time()
            with engine.lock:
                engine.advance_to(t)
                resp = fn(req, mv, t, **kw)
            resp.headers += [("OpenStack-API-Version", f"compute {_fmt(mv)}"),
                             ("X-OpenStack-Nova-API-Version", _fmt(mv)),
                             ("Vary", "OpenStack-API-Version, X-OpenStack-Nova-API-Version"),
                             ("x-openstack-request-id", f"req-sim-{int(t * 1000) % 10**12:012d}")]
            return resp
        return wrapped

    @api
    def services(req: Request, mv: tuple[int, int], t: float) -> Response:
        binary, host = req.q("binary"), req.q("host")
        rows = [v().service(s, t, mv) for s in engine.compute_services()
                if (binary is None or s.binary == binary) and (host is None or s.host == host)]
        return json_response({"services": rows})

    def _next_link(req: Request, path: str, marker: str) -> list[dict[str, str]]:
        params = [(k, val) for k, vals in req.query.items() for val in vals if k != "marker"]
        params.append(("marker", marker))
        return [{"rel": "next", "href": f"{req.base}/v2.1/{path}?{urlencode(params)}"}]

    def _limit(req: Request) -> int | Response:
        raw = req.q("limit")
        if raw is None:
            return MAX_LIMIT
        try:
            n = int(raw)
        except ValueError:
            return _err("badRequest", 400, f"Invalid input for query parameters limit. Value: {raw}.")
        if n < 0:
            return _err("badRequest", 400, f"Invalid input for query parameters limit. Value: {raw}.")
        return min(n, MAX_LIMIT)

    def _list_servers(req: Request, mv: tuple[int, int], t: float, detail: bool) -> Response:
        limit = _limit(req)
        if isinstance(limit, Response):
            return limit
        all_tenants = "all_tenants" in req.query and _truthy(req.q("all_tenants"))
        project = req.q("project_id") or req.q("tenant_id")
        if not all_tenants:
            project = engine.admin_project
        since_raw = req.q("changes-since")
        since = None
        if since_raw is not None:
            try:
                since = parse_iso(since_raw)
            except ValueError:
                return _err("badRequest", 400, f"Invalid input for query parameters changes-since. "
                                               f"Value: {since_raw}. '{since_raw}' is not a 'date-time'")
        host, node = req.q("host"), req.q("node")
        status, task_state, name = req.q("status"), req.q("task_state"), req.q("name")
        name_rx = re.compile(name) if name else None
        if since is not None:
            # nova filters changes-since on the cell DB's updated_at (NULL for a build cast to a compute that
            # has not claimed it: never listed) and ignores it for build requests (nova/objects/build_request.py)
            pool = [i for i in list(engine.instances.values()) + list(engine.deleted.values())
                    if i.pending == "build_request" or (i.pending is None and i.updated >= since)]
            pool.sort(key=lambda i: (i.created, i.id), reverse=True)
        filtered = any(x is not None for x in (project, host, node, status, task_state, name_rx))
        if filtered:
            wanted_status = status.upper() if status is not None else None
            pool = [i for i in (pool if since is not None else engine.instances.values())
                    if (project is None or i.project_id == project) and (host is None or i.host == host)
                    and (node is None or i.host == node) and (status is None or i.status == wanted_status)
                    and (task_state is None or i.task_state == task_state)
                    and (name_rx is None or name_rx.search(i.name))]
            if since is None:  # nova's order (created_at desc, id desc), sorting the matches only: a filtered
                # read of 10,000 servers used to build the whole ordered list first (~6 ms a request)
                pool.sort(key=lambda i: (i.created, i.id), reverse=True)
        elif since is None:
            pool = [engine.instances[sid] for sid in engine.order_desc()]
        marker = req.q("marker")
        start = 0
        if marker is not None:
            idx = next((k for k, i in enumerate(pool) if i.id == marker), None)
            if idx is None:
                return _err("badRequest", 400, f"marker [{marker}] not found")
            start = idx + 1
        page = pool[start:start + limit]
        views_ = v()
        if detail:
            items = b", ".join(views_.server_bytes(i, mv, t) for i in page)
        else:
            items = b", ".join(json.dumps({"id": i.id, "links": [
                {"rel": "self", "href": f"{req.base}/v2.1/servers/{i.id}"},
                {"rel": "bookmark", "href": f"{req.base}/servers/{i.id}"}], "name": i.name}).encode()
                for i in page)
        body = b'{"servers": [' + items + b"]"
        if page and len(page) == limit:
            link = _next_link(req, "servers/detail" if detail else "servers", page[-1].id)
            body += b', "servers_links": ' + json.dumps(link).encode()
        return raw_json(body + b"}")

    @api
    def servers_detail(req: Request, mv: tuple[int, int], t: float) -> Response:
        return _list_servers(req, mv, t, True)

    @api
    def servers(req: Request, mv: tuple[int, int], t: float) -> Response:
        return _list_servers(req, mv, t, False)

    def _live_or_404(sid: str) -> Instance | Response:
        inst = engine.instances.get(sid)
        if inst is None:
            return _err("itemNotFound", 404, f"Instance {sid} could not be found.")
        return inst

    @api
    def server_show(req: Request, mv: tuple[int, int], t: float, sid: str) -> Response:
        inst = _live_or_404(sid)
        if isinstance(inst, Response):
            return inst
        d = v().server_dict(inst, mv, show=True, t=t)
        if mv >= (2, 16):
            d["host_status"] = v().host_status(inst, t)
        return json_response({"server": d})

    @api
    def actions(req: Request, mv: tuple[int, int], t: float, sid: str) -> Response:
        inst = _live_or_404(sid)
        if isinstance(inst, Response):
            return inst
        acts = [v().action_dict(inst, a, mv, False) for a in reversed(v().actions(inst))]
        return json_response({"instanceActions": acts})

    @api
    def action_show(req: Request, mv: tuple[int, int], t: float, sid: str, rid: str) -> Response:
        inst = _live_or_404(sid)
        if isinstance(inst, Response):
            return inst
        for a in v().actions(inst):
            if a.request_id == rid:
                return json_response({"instanceAction": v().action_dict(inst, a, mv, True)})
        return _err("itemNotFound", 404, f"Action for request_id {rid} on instance {sid} not found")

    def _servers_by_host() -> dict[str, list[Instance]]:
        out: dict[str, list[Instance]] = {}
        for sid in engine.order_desc():
            inst = engine.instances[sid]
            if inst.host:
                out.setdefault(inst.host, []).append(inst)
        return out

    def _hypervisors(req: Request, mv: tuple[int, int], t: float, detail: bool) -> Response:
        with_servers = _truthy(req.q("with_servers")) if "with_servers" in req.query else False
        pattern = req.q("hypervisor_hostname_pattern")
        limit = _limit(req)
        if isinstance(limit, Response):
            return limit
        hosts = [h for h in engine.hosts if pattern is None or pattern in h.name]
        if pattern is not None and not hosts:
            return _err("itemNotFound", 404, f"No hypervisor matching '{pattern}' could be found.")
        # nova pages the listing from 2.33 at [api] max_limit (1000), a next link whenever a page is full,
        # asked-for limit or not (nova/api/openstack/common.py ViewBuilder._get_collection_links); a hostname
        # pattern search is not paged (limit/marker with it are a 400)
        paged = mv >= (2, 33) and pattern is None
        if pattern is not None and ("limit" in req.query or "marker" in req.query):
            return _err("badRequest", 400, "Paging over hypervisors with the hypervisor_hostname_pattern query "
                                           "parameter is not supported.")
        marker = req.q("marker") if paged else None
        if marker is not None:
            idx = next((k for k, h in enumerate(hosts) if h.hypervisor_id == marker), None)
            if idx is None:
                return _err("badRequest", 400, f"marker [{marker}] not found")
            hosts = hosts[idx + 1:]
        page = hosts[:limit] if paged else hosts
        by_host = _servers_by_host() if with_servers else {}
        rows = [v().hypervisor(h, t, mv, detail=detail,
                               servers=by_host.get(h.name, []) if with_servers else None) for h in page]
        out: dict[str, Any] = {"hypervisors": rows}
        if paged and page and len(page) == limit:
            out["hypervisors_links"] = _next_link(req, "os-hypervisors/detail" if detail else "os-hypervisors",
                                                  page[-1].hypervisor_id)
        return json_response(out)

    @api
    def hypervisors(req: Request, mv: tuple[int, int], t: float) -> Response:
        return _hypervisors(req, mv, t, False)

    @api
    def hypervisors_detail(req: Request, mv: tuple[int, int], t: float) -> Response:
        return _hypervisors(req, mv, t, True)

    @api
    def hypervisor_show(req: Request, mv: tuple[int, int], t: float, hid: str) -> Response:
        host = next((h for h in engine.hosts if h.hypervisor_id == hid), None)
        if host is None:
            return _err("itemNotFound", 404, f"Hypervisor with ID '{hid}' could not be found.")
        with_servers = _truthy(req.q("with_servers")) if "with_servers" in req.query else False
        servers = [engine.instances[s] for s in engine.order_desc()
                   if engine.instances[s].host == host.name] if with_servers else None
        return json_response({"hypervisor": v().hypervisor(host, t, mv, detail=True, servers=servers)})

    @api
    def migrations(req: Request, mv: tuple[int, int], t: float) -> Response:
        host, status = req.q("host"), req.q("status")
        iuuid, mtype = req.q("instance_uuid"), req.q("migration_type")
        rows = [m for m in reversed(engine.migrations)
                if (host is None or host in (m.source, m.dest)) and (status is None or m.status == status)
                and (iuuid is None or m.instance_uuid == iuuid) and (mtype is None or m.migration_type == mtype)]
        paged = mv >= (2, 59)  # before 2.59 nova lists every migration in one answer
        limit = _limit(req) if paged else len(rows)
        if isinstance(limit, Response):
            return limit
        marker = req.q("marker") if paged else None
        if marker is not None:
            idx = next((k for k, m in enumerate(rows) if m.uuid == marker), None)
            if idx is None:
                return _err("badRequest", 400, f"Marker {marker} could not be found.")
            rows = rows[idx + 1:]
        page = rows[:limit]
        out: dict[str, Any] = {"migrations": [v().migration(m, mv) for m in page]}
        if paged and page and len(page) == limit:
            out["migrations_links"] = _next_link(req, "os-migrations", page[-1].uuid)
        return json_response(out)

    @api
    def flavors_detail(req: Request, mv: tuple[int, int], t: float) -> Response:
        return json_response({"flavors": [v().flavor(n, mv) for n in FLAVORS]})

    @api
    def flavor_show(req: Request, mv: tuple[int, int], t: float, fid: str) -> Response:
        for n in FLAVORS:
            if fid in (n, v().flavor_ids[n]):
                return json_response({"flavor": v().flavor(n, mv)})
        return _err("itemNotFound", 404, f"Flavor {fid} could not be found.")

    r.add("GET", "/", root)
    r.add("GET", "/v2.1", v21)
    r.add("GET", "/v2.1/os-services", services)
    r.add("GET", "/v2.1/servers/detail", servers_detail)
    r.add("GET", "/v2.1/servers", servers)
    r.add("GET", "/v2.1/servers/(?P<sid>[^/]+)", server_show)
    r.add("GET", "/v2.1/servers/(?P<sid>[^/]+)/os-instance-actions", actions)
    r.add("GET", "/v2.1/servers/(?P<sid>[^/]+)/os-instance-actions/(?P<rid>[^/]+)", action_show)
    r.add("GET", "/v2.1/os-hypervisors", hypervisors)
    r.add("GET", "/v2.1/os-hypervisors/detail", hypervisors_detail)
    r.add("GET", "/v2.1/os-hypervisors/(?P<hid>[^/]+)", hypervisor_show)
    r.add("GET", "/v2.1/os-migrations", migrations)
    r.add("GET", "/v2.1/flavors/detail", flavors_detail)
    r.add("GET", "/v2.1/flavors/(?P<fid>[^/]+)", flavor_show)
    return r
