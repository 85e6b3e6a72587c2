"""The OpenStack read layer every OpenStack pane uses.

openstacksdk does auth, the catalog and microversion negotiation only; every read goes through the SDK's
own service adapters (`conn.compute.get(path, microversion=...)`) and is decoded into plain dicts with the
APIs' real field names: the SDK's Resource objects cost 45-80x more CPU (docs/performance.md).
Adapters are rooted at the versioned endpoints (`conn.network.get("/agents")`, not `/v2.0/agents`).

Every method here is blocking: call it through `asyncio.to_thread`, or use `client.aio.<method>(...)`.
Every failure is a `SourceError` with one line naming the URL or the clouds.yaml cloud to fix.
`openstack` is imported lazily (inside connect), never at module import.
"""

from __future__ import annotations

import asyncio
import contextlib
import re
import threading
import time
from collections.abc import Iterable, Mapping
from datetime import datetime
from pathlib import Path
from typing import Any

from tui import deadline, redirects
from tui.abandon import DaemonThreadPool
from tui.config import OpenStackConfig
from tui.config_keys import mb_bytes
from tui.errors import SourceError
from tui.openstack.errors import (
    NotFound,
    Where,
    check_list,
    describe,
    http_error,
    is_timeout,
    not_json,
    to_source_error,
)
from tui.openstack.paging import iso_param, next_marker, query, resources_param, segment, version_tuple
from tui.readonly import guard_keystoneauth_session
from tui.safetext import clean
from tui.tlserror import ca_file_problem

COMPUTE_MICROVERSION = "2.96"  # wanted; negotiated down to the server's max, never below the minimum
COMPUTE_MIN_MICROVERSION = "2.53"  # UUID ids for services/hypervisors, with_servers; nova Pike
PLACEMENT_MICROVERSION = "1.39"
PLACEMENT_MIN_MICROVERSION = "1.14"  # root/parent provider uuids
MAX_PAGES = 1000
SERVICE_ADAPTERS = {"compute": "compute", "network": "network", "volume": "block_storage",
                    "placement": "placement", "identity": "identity", "image": "image"}


class OpenStackClient:
    """Plain-dict reads of one cloud. Thread-safe for concurrent calls (one token, one session)."""

    def __init__(self, conn: Any, *, where: Where, timeout: float,
                 max_body_mb: float = OpenStackConfig.max_body_mb) -> None:
        self.conn = conn
        self.where = where
        self.timeout = timeout
        self.max_body = mb_bytes(max_body_mb)  # bytes: a larger answer is refused (tui.deadline)
        self.requests = 0  # GETs issued (for the collectors' own accounting)
        self._mv: dict[str, str] = {}
        self._lock = threading.Lock()
        self.aio = AsyncOpenStackClient(self)

    # ------------------------------------------------------------------ plumbing
    def _adapter(self, service: str) -> Any:
        # building a proxy may authenticate and discover versions: failures surface here too
        try:
            with redirects.recording() as refused:
                return getattr(self.conn, SERVICE_ADAPTERS.get(service, service))
        except Exception as exc:
            if refused:  # discovery met a redirect it must not follow, and went on without saying so
                raise refused[-1] from None
            url = self._catalog_url(service)
            names = {cls.__name__ for cls in type(exc).__mro__}
            if url and names & {"NotSupported", "DiscoveryFailure"}:
                # the SDK swallows why discovery failed (TLS, refused...): one plain GET says it
                probe = self.version_get(url, timeout=min(5.0, self.timeout))
                if probe.get("error"):
                    raise SourceError(f"{service} endpoint: version discovery failed: {probe['error']}") from None
            raise to_source_error(exc, self.where, action=f"{service} endpoint{f' {url}' if url else ''}") \
                from None

    def _catalog_url(self, service: str) -> str | None:
        """The catalog URL of a service (no network while the token is valid), for error lines."""
        types = {"volume": ("block-storage", "volumev3", "volumev2", "volume")}.get(service, (service,))
        try:
            cat = self.catalog()
        except Exception:
            return None
        try:
            region = self._interface_region()[1]
        except Exception:
            region = None
        for svc in cat:
            if svc.get("type") in types:
                for ep in svc.get("endpoints", []):
                    if region and region not in (ep.get("region_id"), ep.get("region")):
                        continue  # another region's endpoint: not the one this client reads
                    if ep.get("interface") == "public" and ep.get("url"):
                        return str(ep["url"])
        return None

    def get_json(self, service: str, path: str, *, microversion: str | None = None,
                 action: str = "", expect: str | None = None) -> dict[str, Any]:
        """GET path (relative to the service's versioned endpoint) -> decoded JSON object."""
        return self.get_dated(service, path, microversion=microversion, action=action, expect=expect)[0]

    def get_dated(self, service: str, path: str, *, microversion: str | None = None, action: str = "",
                  timeout: float | None = None, expect: str | None = None
                  ) -> tuple[dict[str, Any], str | None]:
        """GET path -> (decoded JSON object, the response's raw `Date` header or None).
        timeout: seconds for this request (default: the session's, i.e. [openstack] timeout);
        expect: the list key a listing must hold."""
        adapter = self._adapter(service)
        kwargs: dict[str, Any] = {"connect_retries": 0, "headers": {"Accept": "application/json"}}
        if microversion:
            kwargs["microversion"] = microversion
        if timeout is not None:
            kwargs["timeout"] = timeout
        with self._lock:
            self.requests += 1
        try:
            try:
                resp = adapter.get(path, **kwargs)
            except Exception as exc:
                if not dropped_connection(exc):
                    raise
                resp = adapter.get(path, **kwargs)  # a reused keep-alive connection the server had closed
        except Exception as exc:
            raise to_source_error(exc, self.where, action=action or f"GET {service} {path}") from None
        if resp.status_code >= 400:
            raise http_error("GET", resp.url or path, resp.status_code, resp.content, self.where)
        try:
            data = resp.json()
        except ValueError:
            raise not_json(resp.url, resp.status_code, resp.headers.get("Content-Type")) from None
        if not isinstance(data, dict):
            raise SourceError(f"GET {resp.url} answered {resp.status_code} with JSON that is not an object")
        check_list(data, expect, resp.url, resp.status_code)
        return data, resp.headers.get("Date")

    def _list(self, service: str, path: str, key: str, params: Mapping[str, Any], *,
              microversion: str | None, action: str, links_key: str | None = None) -> list[dict[str, Any]]:
        """Follow `<key>_links` rel=next markers until the last page (nova asks one extra empty page when
        the last one is full: so do we, it is how the API says "no more")."""
        links_key = links_key or f"{key}_links"
        out: list[dict[str, Any]] = []
        marker: str | None = None
        seen: set[str] = set()
        for _ in range(MAX_PAGES):
            p = dict(params)
            if marker:
                p["marker"] = marker
            body = self.get_json(service, query(path, p), microversion=microversion, action=action)
            page = body.get(key)
            if not isinstance(page, list):
                raise SourceError(f"GET {service} {path}: answer has no '{key}' list")
            out.extend(page)
            marker = next_marker(body, links_key)
            if not marker or marker in seen or not page:
                break
            seen.add(marker)
        return out

    def _negotiate(self, service: str, want: str, minimum: str) -> str:
        with self._lock:
            if service in self._mv:
                return self._mv[service]
        adapter = self._adapter(service)
        with redirects.recording() as refused:
            try:
                data = adapter.get_endpoint_data()
            except Exception as exc:
                raise to_source_error(exc, self.where, action=f"{service} version discovery") from None
        if refused:  # keystoneauth's discovery swallows a refused redirect: say it
            raise refused[-1]
        if data is None or not data.max_microversion:
            # keystoneauth falls back to the bare catalog URL when discovery fails (TLS, refused...) and says
            # why only in a log line: one plain GET of that URL says it here
            url = (getattr(data, "catalog_url", None) or getattr(data, "url", None)) if data is not None else None
            url = url or self._catalog_url(service)
            if url:
                probe = self.version_get(str(url), timeout=min(5.0, self.timeout))
                if probe.get("error"):
                    raise SourceError(f"{service} version discovery: {probe['error']}") from None
            raise SourceError(f"{service} endpoint of {self.where.cloud_ref} does not advertise microversions "
                              f"(needs >= {minimum}) - check the catalog")
        server_max = tuple(data.max_microversion)[:2]
        chosen = min(version_tuple(want), (int(server_max[0]), int(server_max[1])))
        if chosen < version_tuple(minimum):
            raise SourceError(f"{service} API at {data.url} supports up to {server_max[0]}.{server_max[1]}; "
                              f"stacktop needs >= {minimum}")
        value = f"{chosen[0]}.{chosen[1]}"
        with self._lock:
            self._mv[service] = value
        return value

    def compute_microversion(self) -> str:
        return self._negotiate("compute", COMPUTE_MICROVERSION, COMPUTE_MIN_MICROVERSION)

    def placement_microversion(self) -> str:
        return self._negotiate("placement", PLACEMENT_MICROVERSION, PLACEMENT_MIN_MICROVERSION)

    def authenticate(self) -> None:
        """Get a token and the catalog now (the first call of a session pays ~0.2-1.2 s)."""
        try:
            self.conn.authorize()
        except Exception as exc:
            raise to_source_error(exc, self.where, action="authenticating") from None

    def close(self) -> None:
        with contextlib.suppress(Exception):  # closing must never raise into a shutdown path
            self.conn.close()

    # ------------------------------------------------------------------ keystone
    def catalog(self) -> list[dict[str, Any]]:
        """The token's service catalog: [{type, name, id, endpoints: [{interface, region_id, url, ...}]}]."""
        try:
            access = self.conn.session.auth.get_access(self.conn.session)
        except Exception as exc:
            raise to_source_error(exc, self.where, action="reading the catalog") from None
        return [dict(s, endpoints=[dict(e) for e in s.get("endpoints", [])])
                for s in (access.service_catalog.catalog or [])]

    def version_get(self, url: str, timeout: float | None = None) -> dict[str, Any]:
        """Unauthenticated GET of an endpoint URL: {url, status (None if no answer), seconds, error}; an
        answer that did not come within the timeout also has timed_out=True (keystoneauth's ConnectTimeout
        covers both connect and read timeouts)."""
        t0 = time.perf_counter()
        with self._lock:
            self.requests += 1
        try:
            resp = self._plain_get(url, timeout or self.timeout)
        except Exception as exc:
            return {"url": url, "status": None, "seconds": round(time.perf_counter() - t0, 4),
                    "error": describe(exc, self.where), "timed_out": is_timeout(exc)}
        return {"url": url, "status": resp.status_code, "seconds": round(time.perf_counter() - t0, 4),
                "error": None if resp.status_code < 500 else f"{url} answered {resp.status_code}",
                "document": _version_document(resp)}

    def _plain_get(self, url: str, timeout: float) -> Any:
        """One unauthenticated GET (errors not raised for a status): the response. Not retried, except on a
        keep-alive connection the server closed as it was reused (gunicorn's keepalive is 2 s, a poll every 2 s
        meets it: a false "Keystone does not answer" on the test bed): once more, on a new connection."""
        def get() -> Any:
            return self.conn.session.get(url, authenticated=False, raise_exc=False, connect_retries=0,
                                         timeout=timeout, headers={"Accept": "application/json"})

        try:
            return get()
        except Exception as exc:
            if not dropped_connection(exc):
                raise
            return get()

    def endpoint_versions(self, *, interface: str | None = None, timeout: float | None = None,
                          catalog: list[dict[str, Any]] | None = None) -> list[dict[str, Any]]:
        """A version GET per catalog endpoint of `interface` (default: the cloud's), in parallel.

        Rows: {service_type, name, interface, region, url, status, seconds, error}. Any HTTP answer below
        500 means the endpoint answers; status None means no answer (error says why)."""
        cat = self.catalog() if catalog is None else catalog
        own_iface, region = self._interface_region()
        iface = interface or own_iface
        targets = []
        for svc in cat:
            for ep in svc.get("endpoints", []):
                ep_region = ep.get("region_id") or ep.get("region")
                if ep.get("interface") == iface and (not region or not ep_region or ep_region == region):
                    targets.append((svc.get("type"), svc.get("name"), ep_region, ep.get("url")))
        if not targets:
            return []
        with DaemonThreadPool(min(8, len(targets))) as pool:  # a quit never waits for it
            answers = list(pool.map(lambda t: self.version_get(t[3], timeout), targets))
        return [{"service_type": st, "name": name, "interface": iface, "region": reg, **ans}
                for (st, name, reg, _), ans in zip(targets, answers, strict=True)]

    def _interface_region(self) -> tuple[str, str | None]:
        """The cloud's endpoint interface (default public) and region (None: any)."""
        cfg = getattr(self.conn, "config", None)
        iface = (cfg.get_interface() if cfg is not None else None) or "public"
        return iface, cfg.get_region_name() if cfg is not None else None

    def has_usable_token(self, margin_s: float = 30.0) -> bool:
        """True when the session holds a token valid for at least margin_s more (never calls Keystone)."""
        try:
            ref = getattr(self.conn.session.auth, "auth_ref", None)
            return ref is not None and not ref.will_expire_soon(margin_s)
        except Exception:
            return False

    # ------------------------------------------------------------------ nova
    def compute_services(self, **filters: Any) -> list[dict[str, Any]]:
        """GET /os-services (binary=, host= filters)."""
        body = self.get_json("compute", query("/os-services", filters), microversion=self.compute_microversion(),
                             action="listing compute services", expect="services")
        return list(body.get("services", []))

    def servers(self, *, changes_since: datetime | str | None = None, all_tenants: bool = True,
                limit: int | None = None, **filters: Any) -> list[dict[str, Any]]:
        """GET /servers/detail, every page. changes_since: servers updated at/after it, deleted included."""
        params: dict[str, Any] = {}
        if all_tenants:
            params["all_tenants"] = 1
        if changes_since is not None:
            params["changes-since"] = iso_param(changes_since)
        if limit:
            params["limit"] = limit
        params.update(filters)
        return self._list("compute", "/servers/detail", "servers", params,
                          microversion=self.compute_microversion(), action="listing servers")

    def server(self, server_id: str) -> dict[str, Any]:
        """GET /servers/{id} (with `fault` when ERROR). NotFound when it is gone."""
        try:
            body = self.get_json("compute", f"/servers/{segment(server_id)}",
                                 microversion=self.compute_microversion(), action=f"showing server {server_id}")
        except NotFound:  # what was typed, not the URL it made
            raise NotFound(f"no server '{clean(server_id)}' in nova - give a server id, an id prefix or a name "
                           "from the instances pane") from None
        return dict(body.get("server", {}))

    def instance_actions(self, server_id: str) -> list[dict[str, Any]]:
        """GET /servers/{id}/os-instance-actions, latest first."""
        body = self.get_json("compute", f"/servers/{segment(server_id)}/os-instance-actions",
                             microversion=self.compute_microversion(), action=f"actions of {server_id}")
        return list(body.get("instanceActions", []))

    def instance_action(self, server_id: str, request_id: str) -> dict[str, Any]:
        """GET /servers/{id}/os-instance-actions/{request_id}: the action with its `events`."""
        body = self.get_json("compute", f"/servers/{segment(server_id)}/os-instance-actions/{segment(request_id)}",
                             microversion=self.compute_microversion(), action=f"action {request_id}")
        return dict(body.get("instanceAction", {}))

    def hypervisors(self, *, with_servers: bool = False, detail: bool = True, **filters: Any
                    ) -> list[dict[str, Any]]:
        """GET /os-hypervisors[/detail] (with_servers adds `servers: [{uuid, name}]`)."""
        params = dict(filters)
        if with_servers:
            params["with_servers"] = True
        return self._list("compute", "/os-hypervisors/detail" if detail else "/os-hypervisors", "hypervisors",
                          params, microversion=self.compute_microversion(), action="listing hypervisors")

    def hypervisor(self, hypervisor_id: str, *, with_servers: bool = True) -> dict[str, Any]:
        body = self.get_json("compute", query(f"/os-hypervisors/{segment(hypervisor_id)}",
                                              {"with_servers": True} if with_servers else None),
                             microversion=self.compute_microversion(), action=f"hypervisor {hypervisor_id}")
        return dict(body.get("hypervisor", {}))

    def migrations(self, **filters: Any) -> list[dict[str, Any]]:
        """GET /os-migrations (host=, status=, instance_uuid=, migration_type=, changes-since=)."""
        return self._list("compute", "/os-migrations", "migrations", filters,
                          microversion=self.compute_microversion(), action="listing migrations")

    def flavors(self) -> list[dict[str, Any]]:
        """GET /flavors/detail?is_public=None (all flavors an admin can see)."""
        return self._list("compute", "/flavors/detail", "flavors", {"is_public": "None"},
                          microversion=self.compute_microversion(), action="listing flavors")

    # ------------------------------------------------------------------ neutron
    def network_agents(self, **filters: Any) -> list[dict[str, Any]]:
        """GET /agents (host=, binary=, agent_type=, alive=)."""
        body = self.get_json("network", query("/agents", filters), action="listing network agents", expect="agents")
        return list(body.get("agents", []))

    def ports(self, *, host: str | None = None, device_id: str | Iterable[str] | None = None,
              **filters: Any) -> list[dict[str, Any]]:
        """GET /ports with filters (host -> binding:host_id); follows ports_links when paginated."""
        params = dict(filters)
        if host is not None:
            params["binding:host_id"] = host
        if device_id is not None:
            params["device_id"] = device_id if isinstance(device_id, str) else list(device_id)
        return self._list("network", "/ports", "ports", params, microversion=None, action="listing ports")

    # ------------------------------------------------------------------ cinder
    def volume_services(self, **filters: Any) -> list[dict[str, Any]]:
        body = self.get_json("volume", query("/os-services", filters), action="listing volume services",
                             expect="services")
        return list(body.get("services", []))

    def volumes(self, *, all_tenants: bool = True, **filters: Any) -> list[dict[str, Any]]:
        """GET /volumes/detail (attachments with server_id, host_name), every page."""
        params: dict[str, Any] = {"all_tenants": 1} if all_tenants else {}
        params.update(filters)
        return self._list("volume", "/volumes/detail", "volumes", params, microversion=None,
                          action="listing volumes")

    # ------------------------------------------------------------------ placement
    def _placement(self, path: str, action: str) -> dict[str, Any]:
        return self.get_json("placement", path, microversion=self.placement_microversion(), action=action)

    def resource_providers(self, **filters: Any) -> list[dict[str, Any]]:
        """GET /resource_providers (name=, uuid=, in_tree=, resources=, required=)."""
        return list(self._placement(query("/resource_providers", filters), "listing resource providers")
                    .get("resource_providers", []))

    def consumer_allocations(self, consumer: str) -> dict[str, Any]:
        """GET /allocations/{consumer}: {allocations: {rp: {generation, resources}}, project_id, user_id,
        consumer_generation, consumer_type (>= 1.38)}; {allocations: {}} for an unknown consumer."""
        return self._placement(f"/allocations/{segment(consumer)}", f"allocations of consumer {consumer}")

    def allocation_candidates(self, resources: Mapping[str, int] | str, *, required: Iterable[str] = (),
                              limit: int | None = None) -> dict[str, Any]:
        """GET /allocation_candidates: {allocation_requests, provider_summaries}."""
        params: dict[str, Any] = {"resources": resources_param(resources)}
        req = [r for r in required if r]
        if req:
            params["required"] = ",".join(req)
        if limit:
            params["limit"] = limit
        return self._placement(query("/allocation_candidates", params), "asking for allocation candidates")

    # ------------------------------------------------------------------ many GETs at once (async HTTP)
    async def aget_json_many(self, service: str, paths: list[str], *, microversion: str | None = None,
                             concurrency: int = 32) -> list[dict[str, Any] | SourceError]:
        """GET many paths of one service concurrently (tui.openstack.fastget: persistent connections on
        asyncio streams), reusing the SDK's token and endpoint: ~0.1-0.2 ms of CPU a call instead of ~1 ms
        through the SDK adapter. Per-path failures come back in place as SourceError (NotFound for 404);
        a refused token is renewed once; auth/catalog failures raise."""
        import json

        from tui.openstack.fastget import FetchError, get_many

        token, endpoint, tls = await asyncio.to_thread(self._token_endpoint, service)
        headers = {"Accept": "application/json", "User-Agent": "stacktop"}
        if microversion:
            svc = {"volume": "volume"}.get(service, service)
            headers["OpenStack-API-Version"] = f"{svc} {microversion}"
        with self._lock:
            self.requests += len(paths)
        answers = await get_many(endpoint, paths, {**headers, "X-Auth-Token": token}, concurrency=concurrency,
                                 timeout=self.timeout, tls=tls, max_body=self.max_body)
        if any(not isinstance(a, FetchError) and a.status == 401 for a in answers):
            token, endpoint, tls = await asyncio.to_thread(self._token_endpoint, service, True)
            redo = [i for i, a in enumerate(answers) if not isinstance(a, FetchError) and a.status == 401]
            again = await get_many(endpoint, [paths[i] for i in redo], {**headers, "X-Auth-Token": token},
                                   concurrency=concurrency, timeout=self.timeout, tls=tls, max_body=self.max_body)
            for i, a in zip(redo, again, strict=True):
                answers[i] = a
        out: list[dict[str, Any] | SourceError] = []
        for a in answers:
            if isinstance(a, FetchError):
                out.append(SourceError(f"GET {a.url}: {a.reason}"))
            elif a.status in redirects.REDIRECT_STATUSES and a.location is not None:
                out.append(_redirect_error(a.url, a.status, a.location))
            elif a.status >= 400:
                out.append(http_error("GET", a.url, a.status, a.body, self.where))
            else:
                try:
                    data = json.loads(a.body)
                except ValueError:
                    out.append(SourceError(f"GET {a.url} answered {a.status} with a body that is not JSON"))
                    continue
                out.append(data if isinstance(data, dict) else SourceError(f"GET {a.url}: not a JSON object"))
        return out

    def _token_endpoint(self, service: str, renew: bool = False) -> tuple[str, str, Any]:
        try:
            if renew:
                self.conn.session.invalidate()
            token = self.conn.session.get_token()
            endpoint = self._adapter(service).get_endpoint()
        except Exception as exc:
            raise to_source_error(exc, self.where, action=f"{service} endpoint") from None
        if not endpoint:
            raise SourceError(f"no {service} endpoint in the catalog of {self.where.cloud_ref}")
        verify = getattr(self.conn.session, "verify", True)
        tls = None
        if str(endpoint).startswith("https:"):
            from tui.openstack.fastget import tls_context

            tls = tls_context(verify)
            cert = getattr(self.conn.session, "cert", None)
            if cert:
                tls.load_cert_chain(*(cert if isinstance(cert, tuple) else (cert,)))
        return token, str(endpoint), tls


_DROPPED = re.compile(r"Connection aborted|RemoteDisconnected|Server disconnected|reset by peer|Broken pipe",
                      re.IGNORECASE)


def dropped_connection(exc: Exception) -> bool:
    """The connection closed under the request (not refused, not timed out): worth one new connection."""
    return not is_timeout(exc) and bool(_DROPPED.search(f"{type(exc).__name__} {exc}"))


def _redirect_error(url: str, status: int, location: str) -> SourceError:
    """A redirect answer to a GET of fastget, which follows none: named as refused when following it would leave
    the origin or https (tui.redirects), else as not followed."""
    target = redirects.target_of(url, location)
    reason = redirects.refusal(url, target)
    if reason is not None:
        return redirects.RedirectRefused(url, target, reason)
    return SourceError(f"GET {redirects.shown(url)} answered {status} (redirect to {redirects.shown(target)}, "
                       "not followed) - check the endpoint in the catalog")


def _version_document(resp: Any) -> str | None:
    """Why a version answer is not a version document (None when it is one): Keystone's must be."""
    if resp.status_code >= 400:
        return f"answered {resp.status_code}"
    ctype = str(resp.headers.get("Content-Type") or "").split(";")[0].strip()
    try:
        data = resp.json()
    except ValueError:
        return f"answered {resp.status_code} {ctype or 'without a content type'}, not a JSON version document"
    if not isinstance(data, dict) or not ("version" in data or "versions" in data):
        return f"answered {resp.status_code} with JSON that is not a version document"
    return None


class AsyncOpenStackClient:
    """`await client.aio.servers(...)`: every OpenStackClient read, run in a worker thread."""

    def __init__(self, client: OpenStackClient) -> None:
        self._client = client

    def __getattr__(self, name: str) -> Any:
        fn = getattr(self._client, name)
        if not callable(fn) or name.startswith("_"):
            return fn
        if asyncio.iscoroutinefunction(fn):
            return fn

        async def call(*args: Any, **kwargs: Any) -> Any:
            return await asyncio.to_thread(fn, *args, **kwargs)

        call.__name__ = name
        return call


def connect(cfg: OpenStackConfig) -> OpenStackClient:
    """Load the cloud from clouds.yaml ([openstack] clouds_file / cloud, else OS_CLOUD and the usual
    search path) and build a client. No network yet: the first read authenticates."""
    where = Where(cfg.cloud, cfg.clouds_file)
    _quiet_library_loggers()
    try:
        from tui.openstack.cloudsyaml import refuse_alias_bombs

        refuse_alias_bombs(cfg)  # openstacksdk would expand a billion-laughs clouds.yaml: refused first
        import openstack.connection  # lazy: ~0.36 s
        from openstack.config import loader

        files = [str(Path(cfg.clouds_file).expanduser())] if cfg.clouds_file else None
        osc = loader.OpenStackConfig(config_files=files) if files else loader.OpenStackConfig()
        try:
            tls: dict[str, Any] = {}
            if cfg.insecure:
                tls["verify"] = False
            elif cfg.cacert:
                tls["cacert"] = str(Path(cfg.cacert).expanduser())
            region = osc.get_one(cloud=cfg.cloud, api_timeout=cfg.timeout, **tls)
            ca = region.config.get("cacert")
            where.cafile = str(ca) if ca else None
            problem = ca_file_problem(str(ca)) if ca and region.config.get("verify", True) else None
            if problem:
                origin = f"[openstack] cacert {ca}" if cfg.cacert else f"cacert {ca} of {where.cloud_ref}"
                raise SourceError(f"{origin} {problem} - point it at the PEM bundle of the CA that signed the "
                                  "cloud's certificates")
        except Exception as exc:
            if type(exc).__name__ == "ConfigException" and cfg.clouds_file:
                from tui.openstack.cloudsyaml import yaml_problem

                problem = yaml_problem(Path(cfg.clouds_file).expanduser())
                if problem is not None:
                    raise SourceError(f"{clean(problem)} - fix that line of [openstack] clouds_file") from None
            if type(exc).__name__ == "ConfigException" and cfg.cloud:
                known = ", ".join(sorted(osc.get_cloud_names())) or "none"
                files = cfg.clouds_file or "clouds.yaml (./, ~/.config/openstack/, /etc/openstack/)"
                raise SourceError(f"cloud '{cfg.cloud}' is not in {files} (clouds there: {known}) - set "
                                  f"[openstack] cloud / clouds_file or OS_CLOUD") from None
            raise
        conn = openstack.connection.Connection(config=region)
        guard_keystoneauth_session(conn.session)  # every HTTP request of the SDK passes the read-only guard
        # every request under one overall deadline (its timeout) and the body cap
        deadline.guard_requests_session(conn.session.session, cap=cfg.max_body_bytes,
                                        key="[openstack] max_body_mb", timeout_key="[openstack] timeout",
                                        default_timeout=cfg.timeout)
        # no redirect to another origin or from https to http is followed (tui.redirects)
        redirects.guard_requests_session(conn.session.session)
    except SourceError:
        raise
    except Exception as exc:
        raise to_source_error(exc, where, action="loading clouds.yaml") from None
    auth = region.config.get("auth") or {}
    where.auth_url = auth.get("auth_url")
    if where.cloud is None:
        where.cloud = region.name
    return OpenStackClient(conn, where=where, timeout=cfg.timeout, max_body_mb=cfg.max_body_mb)


def _quiet_library_loggers() -> None:
    """keystoneauth/openstacksdk log WARNINGs (e.g. failed discovery) that would land on the terminal
    through logging's last-resort handler; we report those failures as SourceErrors instead. Loggers
    someone configured explicitly are left alone."""
    import logging

    for name in ("keystoneauth", "openstack", "stevedore", "os_service_types"):
        logger = logging.getLogger(name)
        if logger.level == logging.NOTSET:
            logger.setLevel(logging.ERROR)


async def aconnect(cfg: OpenStackConfig) -> OpenStackClient:
    """connect() in a worker thread (importing openstack costs ~0.36 s: keep it off the UI loop)."""
    return await asyncio.to_thread(connect, cfg)
