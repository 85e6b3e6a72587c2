"""The dashboard's OpenStack reads without openstacksdk: a small Keystone v3 client and plain GETs.

Why: importing openstacksdk and loading clouds.yaml through it costs ~0.25 s of CPU at start-up, which the
control plane and instances panes would wait for. LightClient is an OpenStackClient whose plumbing (token,
catalog, endpoints, microversions, HTTP) is its own, over httpx (already loaded for RabbitMQ); every named read
(compute_services, servers, ...) is the parent's. The dashboard uses it for the whole session
(tui.openstack.triage: openstacksdk only for what it does not handle).

Read-only: the token POST to .../v3/auth/tokens and GETs, every request through tui.readonly.check_method.
Redirects are followed within their origin only, never from https to http (tui.redirects).
Failures name the same things as the openstacksdk path: transport errors are raised as exceptions named like
keystoneauth's (ConnectFailure, ConnectTimeout, SSLError, Unauthorized) with keystoneauth's texts, and go
through the same tui.openstack.errors.describe(). What it does not handle raises LightUnsupported.
"""

from __future__ import annotations

import contextlib
import threading
import time
from datetime import datetime
from typing import Any
from urllib.parse import urlsplit

from tui import deadline
from tui.config import OpenStackConfig
from tui.deadline import install_httpx
from tui.errors import SourceError
from tui.httpx_import import import_httpx
from tui.openstack.client import OpenStackClient, dropped_connection
from tui.openstack.cloudsyaml import LightCloud, LightUnsupported
from tui.openstack.errors import Where, check_list, http_error, not_json, to_source_error
from tui.openstack.paging import version_tuple
from tui.readonly import check_method
from tui.redirects import httpx_response_hook

TOKEN_MARGIN_S = 120.0  # renew a token that expires within this (keystoneauth's minimum token life)
SERVICE_TYPES: dict[str, tuple[str, ...]] = {
    "volume": ("block-storage", "volumev3", "volumev2", "volume", "block-store"),
}


# keystoneauth's exception names: tui.openstack.errors.describe() classifies by class name
class LightConnectionError(Exception):
    pass


class ConnectFailure(LightConnectionError):
    pass


class ConnectTimeout(LightConnectionError):
    pass


class SSLError(LightConnectionError):
    pass


class Unauthorized(Exception):
    http_status = 401


def _transport_error(exc: Exception, url: str) -> Exception:
    """An httpx exception -> the keystoneauth-named one, with keystoneauth's text."""
    httpx = import_httpx()

    if isinstance(exc, httpx.TimeoutException):
        return ConnectTimeout(f"Request to {url} timed out")
    text = " ".join(str(exc).split()) or type(exc).__name__
    low = text.lower()
    if "certificate" in low or "[ssl" in low or "ssl:" in low:
        return SSLError(f"SSL exception connecting to {url}: {text}")
    if isinstance(exc, httpx.RemoteProtocolError):
        if "without sending a response" in low or "server disconnected" in low:
            text = f"RemoteDisconnected: {text}"
        elif "incomplete" in low or "complete message body" in low:
            text = f"Connection broken: IncompleteRead: {text}"
    return ConnectFailure(f"Unable to establish connection to {url}: {text}")


def _expiry(value: Any) -> float:
    try:
        return datetime.fromisoformat(str(value).replace("Z", "+00:00")).timestamp()
    except ValueError:
        return time.time() + 300.0  # no readable expiry: renew soon


class LightClient(OpenStackClient):
    """OpenStackClient reads over a Keystone v3 token of our own (no openstacksdk). Thread-safe."""

    def __init__(self, cloud: LightCloud, *, where: Where, timeout: float,
                 max_body_mb: float = OpenStackConfig.max_body_mb) -> None:
        super().__init__(None, where=where, timeout=timeout, max_body_mb=max_body_mb)
        self.cloud = cloud
        self._http: dict[bool, Any] = {}  # https? -> httpx.Client
        self._token: str | None = None
        self._expires_at = 0.0
        self._catalog_rows: list[dict[str, Any]] = []
        self._endpoints: dict[str, str] = {}
        self._auth_lock = threading.Lock()  # one token request at a time
        self._http_lock = threading.Lock()

    # ------------------------------------------------------------------ HTTP
    def _client(self, url: str) -> Any:
        """One httpx client for https URLs (verifying as configured) and one for plain http, whose TLS context
        trusts no CA: loading the CA bundle costs ~15-40 ms of CPU at start-up, and a redirect from http to
        https through it fails closed."""
        secure = url.startswith("https:")
        with self._http_lock:
            client = self._http.get(secure)
            if client is None:
                import ssl

                httpx = import_httpx()

                verify: Any = self.cloud.verify if secure else ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT)
                if isinstance(verify, str):
                    verify = ssl.create_default_context(cafile=verify)
                client = self._http[secure] = install_httpx(httpx.Client(
                    verify=verify, timeout=self.timeout, follow_redirects=True, headers={"User-Agent": "stacktop"},
                    event_hooks={"request": [_guard], "response": [httpx_response_hook]}))
        return client

    def _send(self, method: str, url: str, *, headers: dict[str, str], body: Any = None,
              timeout: float | None = None) -> Any:
        """One request, its redirects and its body under one overall deadline (the timeout) and the body cap
        (tui.deadline); transport failures raise the keystoneauth-named exceptions."""
        httpx = import_httpx()

        check_method(method, url)
        kwargs: dict[str, Any] = {"headers": headers}
        if body is not None:
            kwargs["json"] = body
        seconds = self.timeout if timeout is None else timeout
        kwargs["timeout"] = seconds
        for attempt in (1, 2):
            state = None
            try:
                with deadline.scope(seconds) as state:
                    client = self._client(url)
                    resp = client.send(client.build_request(method, url, **kwargs), stream=True)
                    try:
                        deadline.read_httpx(resp, cap=self.max_body, key="[openstack] max_body_mb")
                    finally:
                        resp.close()
                    return resp
            except httpx.HTTPError as exc:
                if isinstance(exc, httpx.TimeoutException) and state is not None and state.trickled:
                    raise deadline.DeadlineExceeded(url, seconds, "[openstack] timeout") from None
                error = _transport_error(exc, url)
                # a GET on a keep-alive connection the server closed as it was reused: once more, on a new one
                if method != "GET" or attempt == 2 or not dropped_connection(error):
                    raise error from None
            except OSError as exc:  # e.g. a CA file that cannot be read
                raise ConnectFailure(f"Unable to establish connection to {url}: {exc}") from None
        raise AssertionError("unreachable")

    # ------------------------------------------------------------------ Keystone
    def _auth_body(self) -> dict[str, Any]:
        a = self.cloud.auth
        user: dict[str, Any] = {"id": a["user_id"]} if "user_id" in a else {"name": a.get("username", "")}
        if "user_id" not in a:
            user["domain"] = {"id": a["user_domain_id"]} if "user_domain_id" in a \
                else {"name": a.get("user_domain_name", "Default")}
        if self.cloud.auth_type == "v3applicationcredential":
            cred: dict[str, Any] = {"secret": a["application_credential_secret"]}
            if "application_credential_id" in a:
                cred["id"] = a["application_credential_id"]
            else:
                cred.update(name=a["application_credential_name"], user=user)
            return {"auth": {"identity": {"methods": ["application_credential"], "application_credential": cred}}}
        user["password"] = a["password"]
        if "project_id" in a:
            project: dict[str, Any] = {"id": a["project_id"]}
        else:
            project = {"name": a["project_name"],
                       "domain": {"id": a["project_domain_id"]} if "project_domain_id" in a
                       else {"name": a.get("project_domain_name", "Default")}}
        return {"auth": {"identity": {"methods": ["password"], "password": {"user": user}},
                         "scope": {"project": project}}}

    def _ensure_token(self, force: bool = False) -> str:
        """A token valid for a while: the cached one, else POST /v3/auth/tokens (under a lock: one at a time)."""
        with self._auth_lock:
            if not force and self._token and self._expires_at - time.time() > TOKEN_MARGIN_S:
                return self._token
            url = f"{self.cloud.identity_v3}/auth/tokens"
            resp = self._send("POST", url, headers={"Accept": "application/json"}, body=self._auth_body())
            if resp.status_code == 401:
                raise Unauthorized(f"The request you have made requires authentication. (HTTP 401) {url}")
            token = resp.headers.get("X-Subject-Token")
            if resp.status_code != 201 or not token:
                raise LightUnsupported(f"token answer {resp.status_code}")  # openstacksdk words the rest
            try:
                body = resp.json()["token"]
                catalog = body["catalog"]
            except (ValueError, KeyError, TypeError):
                raise LightUnsupported("token without a catalog") from None
            if not isinstance(catalog, list):
                raise LightUnsupported("token without a catalog")
            self._catalog_rows = [s for s in catalog if isinstance(s, dict)]
            self._endpoints = {}
            self._token, self._expires_at = str(token), _expiry(body.get("expires_at"))
            return self._token

    def _token_or_error(self, action: str) -> str:
        try:
            return self._ensure_token()
        except LightUnsupported:
            raise
        except Exception as exc:
            raise to_source_error(exc, self.where, action=action) from None

    def authenticate(self) -> None:
        self._token_or_error("authenticating")

    def has_usable_token(self, margin_s: float = 30.0) -> bool:
        return bool(self._token) and self._expires_at - time.time() > margin_s

    def catalog(self) -> list[dict[str, Any]]:
        self._token_or_error("reading the catalog")
        return [dict(s, endpoints=[dict(e) for e in s.get("endpoints", []) if isinstance(e, dict)])
                for s in self._catalog_rows]

    def _interface_region(self) -> tuple[str, str | None]:
        return self.cloud.interface, self.cloud.region

    # ------------------------------------------------------------------ endpoints
    def _endpoint(self, service: str) -> str:
        """The service's versioned endpoint, as openstacksdk's adapter roots it."""
        self._token_or_error(f"{service} endpoint")
        cached = self._endpoints.get(service)
        if cached:
            return cached
        url = self._catalog_lookup(service)
        path = urlsplit(url).path.rstrip("/")
        base = url.rstrip("/")
        if service == "compute" and not any(p in ("v2", "v2.1") for p in path.split("/")):
            raise LightUnsupported("unversioned compute endpoint")
        if service == "volume" and not any(p in ("v2", "v3") for p in path.split("/")):
            raise LightUnsupported("unversioned volume endpoint")
        suffix = {"network": "/v2.0", "image": "/v2", "identity": "/v3"}.get(service)
        if suffix and not path.endswith(suffix):
            if path.split("/")[-1].startswith("v"):
                raise LightUnsupported(f"{service} endpoint at another version")
            base = f"{base}{suffix}"
        self._endpoints[service] = base
        return base

    def _catalog_lookup(self, service: str) -> str:
        iface, region = self._interface_region()
        for stype in SERVICE_TYPES.get(service, (service,)):
            for svc in self._catalog_rows:
                if svc.get("type") != stype:
                    continue
                for ep in svc.get("endpoints") or ():
                    ep_region = ep.get("region_id") or ep.get("region")
                    if ep.get("interface") == iface and ep.get("url") and (not region or ep_region == region):
                        return str(ep["url"])
        raise LightUnsupported(f"no {service} endpoint")  # openstacksdk's EndpointNotFound line says it

    def _token_endpoint(self, service: str, renew: bool = False) -> tuple[str, str, Any]:
        if renew:
            try:
                self._ensure_token(force=True)
            except LightUnsupported:
                raise
            except Exception as exc:
                raise to_source_error(exc, self.where, action=f"{service} endpoint") from None
        token = self._token_or_error(f"{service} endpoint")
        endpoint = self._endpoint(service)
        tls = None
        if endpoint.startswith("https:"):
            from tui.openstack.fastget import tls_context

            tls = tls_context(self.cloud.verify)
        return token, endpoint, tls

    # ------------------------------------------------------------------ reads
    def _get(self, url: str, headers: dict[str, str], timeout: float | None, action: str) -> Any:
        """An authenticated GET; a refused token is renewed once (as keystoneauth does)."""
        for attempt in (1, 2):
            token = self._token_or_error(action)
            try:
                resp = self._send("GET", url, headers={**headers, "X-Auth-Token": token}, timeout=timeout)
            except Exception as exc:
                raise to_source_error(exc, self.where, action=action) from None
            if resp.status_code != 401 or attempt == 2:
                return resp
            with self._auth_lock:
                if self._token == token:
                    self._expires_at = 0.0
        return resp

    def get_dated(self, service: str, path: str, *, microversion: str | None = None, action: str = "",
                  timeout: float | None = None, expect: str | None = None
                  ) -> tuple[dict[str, Any], str | None]:
        action = action or f"GET {service} {path}"
        with self._lock:
            self.requests += 1
        base = self._endpoint(service)
        headers = {"Accept": "application/json"}
        if microversion:
            headers["OpenStack-API-Version"] = f"{service} {microversion}"
            if service == "compute":
                headers["X-OpenStack-Nova-API-Version"] = microversion
        resp = self._get(f"{base}/{path.lstrip('/')}", headers, timeout, action)
        url = str(resp.url)
        if resp.status_code >= 400:
            raise http_error("GET", url, resp.status_code, resp.content, self.where)
        try:
            data = resp.json()
        except ValueError:
            raise not_json(url, resp.status_code, resp.headers.get("Content-Type")) from None
        if not isinstance(data, dict):
            raise SourceError(f"GET {url} answered {resp.status_code} with JSON that is not an object")
        check_list(data, expect, url, resp.status_code)
        return data, resp.headers.get("Date")

    def _negotiate(self, service: str, want: str, minimum: str) -> str:
        with self._lock:
            if service in self._mv:
                return self._mv[service]
        base = self._endpoint(service)
        resp = self._get(base, {"Accept": "application/json"}, None, f"{service} version discovery")
        url = str(resp.url)
        # A failing answer is the source's fault, said as for any read: handing it to openstacksdk would keep
        # openstacksdk for the rest of the session (one placement 500 made the dashboard's steady state the
        # costly path). Only a version document the light path does not read goes to openstacksdk.
        if resp.status_code >= 400:
            raise http_error("GET", url, resp.status_code, resp.content, self.where)
        try:
            data = resp.json()
        except ValueError:
            raise not_json(url, resp.status_code, resp.headers.get("Content-Type")) from None
        if not isinstance(data, dict) or not ({"version", "versions"} & set(data)):
            raise SourceError(f"GET {url} answered {resp.status_code} without a version document - is this "
                              f"the {service} endpoint of the catalog?")
        entry = data.get("version")
        if entry is None and isinstance(data.get("versions"), list) and len(data["versions"]) == 1:
            entry = data["versions"][0]
        server_max = (entry.get("max_version") or entry.get("version")) if isinstance(entry, dict) else None
        if not isinstance(server_max, str) or "." not in server_max:
            raise LightUnsupported(f"{service} version document")  # openstacksdk's discovery says what is wrong
        chosen = min(version_tuple(want), version_tuple(server_max))
        if chosen < version_tuple(minimum):
            raise SourceError(f"{service} API at {base} supports up to {server_max}; stacktop needs >= {minimum}")
        value = f"{chosen[0]}.{chosen[1]}"
        with self._lock:
            self._mv[service] = value
        return value

    def _plain_get(self, url: str, timeout: float) -> Any:
        """version_get's unauthenticated GET (the base class builds the answer)."""
        return self._send("GET", url, headers={"Accept": "application/json"}, timeout=timeout)

    def close(self) -> None:
        clients, self._http = list(self._http.values()), {}
        for http in clients:
            with contextlib.suppress(Exception):  # closing must never raise into a shutdown path
                http.close()


def _guard(request: Any) -> None:
    """httpx request hook: redirects pass the read-only guard too."""
    check_method(request.method, str(request.url))
