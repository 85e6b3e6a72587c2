"""Redirects never carry a credential elsewhere (tui.redirects), against real redirecting servers on loopback.

A fake cloud (Keystone v3 and the compute and placement APIs on one port, http or https with a test CA) answers
redirects where a test says; an "evil" server on 127.0.0.2 (another loopback address on Linux) or a plain-http
server on the same host records everything it receives. For each HTTP client of the package (the light client,
openstacksdk/keystoneauth, fastget, the RabbitMQ management client):

- Keystone answering 307 to another host: no request (so no password) reaches the other host;
- a catalog endpoint answering 302 to another host: nothing reaches it, neither a read with X-Auth-Token nor
  a version request (the other host's version document, its links pointing at itself, would have openstacksdk
  send the token there next);
- https answering a redirect to http on the same host: refused, with or without credentials;
- each refusal is one line naming both URLs, with no secret in it;
- a redirect within the same origin is still followed.
"""

from __future__ import annotations

import base64
import json
import math
import threading
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest
import yaml

from tests.testbed.faults import TlsKit
from tui.collectors.rabbitmq import RabbitMQCollector
from tui.config import OpenStackConfig
from tui.errors import SourceError
from tui.openstack.client import connect
from tui.openstack.triage import triage_client
from tui.redirects import RedirectRefused, refusal, shown

PASSWORD = "pw-Redirect-S3cret"
TOKEN = "tok-redirect-admin-7f3a"
RABBIT_USER = "monitor"
SECRETS = (PASSWORD, TOKEN, base64.b64encode(f"{RABBIT_USER}:{PASSWORD}".encode()).decode())

Route = Callable[[str, str, dict[str, str], bytes], "tuple[int, dict[str, str], bytes] | None"]


@dataclass(frozen=True)
class Seen:
    method: str
    path: str
    headers: dict[str, str]
    body: bytes

    def secrets(self) -> list[str]:
        text = json.dumps(self.headers) + self.path + self.body.decode(errors="replace")
        return [s for s in SECRETS if s in text]


class Server:
    """An HTTP/1.1 server on host:0 in a thread (https with `tls`): every request is recorded, then answered by
    `route` (None: 404)."""

    def __init__(self, host: str, route: Route | None = None, tls: Any = None) -> None:
        self.seen: list[Seen] = []
        self.route = route or (lambda *_: None)
        server = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args: Any) -> None:
                pass

            def _answer(self) -> None:
                length = int(self.headers.get("Content-Length") or 0)
                body = self.rfile.read(length) if length else b""
                headers = {k.lower(): v for k, v in self.headers.items()}
                server.seen.append(Seen(self.command, self.path, headers, body))
                status, extra, payload = server.route(self.command, self.path, headers, body) or (404, {}, b"{}")
                self.send_response(status)
                for k, v in {"Content-Type": "application/json", **extra}.items():
                    self.send_header(k, v)
                self.send_header("Content-Length", str(len(payload)))
                self.end_headers()
                self.wfile.write(payload)

            do_GET = do_POST = do_HEAD = do_PUT = do_DELETE = _answer

        self.httpd = ThreadingHTTPServer((host, 0), Handler)
        self.httpd.daemon_threads = True
        if tls is not None:
            self.httpd.socket = tls.wrap_socket(self.httpd.socket, server_side=True)
        self.url = f"{'https' if tls is not None else 'http'}://{host}:{self.httpd.server_address[1]}"
        self.thread = threading.Thread(target=self.httpd.serve_forever, daemon=True)
        self.thread.start()

    def leaks(self) -> list[tuple[str, str, list[str]]]:
        return [(s.method, s.path, s.secrets()) for s in self.seen if s.secrets()]

    def close(self) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()


def _json(status: int, data: Any, **headers: str) -> tuple[int, dict[str, str], bytes]:
    return status, headers, json.dumps(data).encode()


class Cloud:
    """Keystone v3 (password auth), compute (/compute/v2.1) and placement (/placement) on one server.
    `redirect(method, path)` -> a Location to answer with (307 for the token POST, 302 for GETs), or None."""

    def __init__(self, tls: Any = None) -> None:
        self.redirect: Callable[[str, str], str | None] = lambda method, path: None
        self.server = Server("127.0.0.1", self._route, tls)
        self.url = self.server.url

    def _route(self, method: str, path: str, headers: dict[str, str], body: bytes
               ) -> tuple[int, dict[str, str], bytes] | None:
        location = self.redirect(method, path)
        if location is not None:
            return 307 if method == "POST" else 302, {"Location": location}, b""
        path = path.split("?")[0].rstrip("/")
        if path in ("", "/v3"):
            return _json(200, {"version": self._identity_version()})
        if method == "POST" and path == "/v3/auth/tokens":
            sent = json.loads(body)["auth"]["identity"]["password"]["user"]["password"]
            if sent != PASSWORD:
                return _json(401, {"error": {"code": 401, "message": "bad password"}})
            return _json(201, self._token(), **{"X-Subject-Token": TOKEN})
        for prefix in ("/compute", "/compute-moved"):
            if path == prefix:
                return _json(200, {"versions": [self._compute_version(prefix)]})
            if path.startswith(f"{prefix}/v2.1"):
                rest = path[len(prefix) + len("/v2.1"):]
                if headers.get("x-auth-token") != TOKEN and rest:
                    return _json(401, {"error": "no token"})
                if rest == "":
                    return _json(200, {"version": self._compute_version(prefix)})
                if rest == "/os-services":
                    return _json(200, {"services": [{"id": "a1", "binary": "nova-compute", "host": "cmp1",
                                                     "zone": "nova", "status": "enabled", "state": "up",
                                                     "updated_at": "2026-12-07T10:00:00.000000"}]})
                if rest.startswith("/servers/"):
                    return _json(200, {"server": {"id": rest.rsplit("/", 1)[-1]}})
        if path == "/placement":
            return _json(200, {"versions": [{"id": "v1.0", "max_version": "1.39", "min_version": "1.0",
                                             "status": "CURRENT", "links": [{"rel": "self", "href": ""}]}]})
        if path == "/placement/resource_providers":
            return _json(200, {"resource_providers": []})
        return None

    def _identity_version(self) -> dict[str, Any]:
        return {"id": "v3.14", "status": "stable", "updated": "2020-04-07T00:00:00Z",
                "links": [{"rel": "self", "href": f"{self.url}/v3/"}],
                "media-types": [{"base": "application/json", "type": "application/vnd.openstack.identity-v3+json"}]}

    def _compute_version(self, prefix: str) -> dict[str, Any]:
        return {"id": "v2.1", "status": "CURRENT", "version": "2.96", "min_version": "2.1",
                "updated": "2013-07-23T11:33:21Z", "links": [{"rel": "self", "href": f"{self.url}{prefix}/v2.1/"}]}

    def _token(self) -> dict[str, Any]:
        def endpoint(kind: str, url: str) -> dict[str, Any]:
            return {"type": kind, "name": kind, "id": kind, "endpoints": [
                {"id": f"{kind}-public", "interface": "public", "region": "RegionOne", "region_id": "RegionOne",
                 "url": url}]}

        domain = {"id": "default", "name": "Default"}
        return {"token": {
            "methods": ["password"], "audit_ids": ["a"], "is_domain": False,
            "user": {"id": "u1", "name": "admin", "domain": domain, "password_expires_at": None},
            "project": {"id": "p1", "name": "admin", "domain": domain},
            "roles": [{"id": "r1", "name": "admin"}],
            "expires_at": "2099-01-01T00:00:00.000000Z", "issued_at": "2026-12-07T10:00:00.000000Z",
            "catalog": [endpoint("identity", f"{self.url}/v3"), endpoint("compute", f"{self.url}/compute/v2.1"),
                        endpoint("placement", f"{self.url}/placement")]}}

    def config(self, tmp_path: Path, cacert: str | None = None) -> OpenStackConfig:
        entry: dict[str, Any] = {
            "auth_type": "password", "identity_api_version": 3, "region_name": "RegionOne", "interface": "public",
            "auth": {"auth_url": f"{self.url}/v3", "username": "admin", "password": PASSWORD,
                     "project_name": "admin", "user_domain_name": "Default", "project_domain_name": "Default"}}
        if cacert:
            entry["cacert"] = cacert
        path = tmp_path / "clouds.yaml"
        path.write_text(yaml.safe_dump({"clouds": {"redirecting": entry}}))
        path.chmod(0o600)
        return OpenStackConfig(cloud="redirecting", clouds_file=str(path), timeout=10.0)

    def close(self) -> None:
        self.server.close()


# ------------------------------------------------------------------------------------------------ fixtures
@pytest.fixture(scope="module")
def kit(tmp_path_factory: pytest.TempPathFactory) -> TlsKit:
    return TlsKit(tmp_path_factory.mktemp("tls"))


@pytest.fixture
def evil() -> Iterator[Server]:
    """Another host (127.0.0.2): whatever it receives is recorded; it answers like a cooperative Keystone."""
    server = Server("127.0.0.2", lambda method, path, headers, body: _json(201, {"token": {}},
                                                                           **{"X-Subject-Token": "evil"}))
    yield server
    server.close()


@pytest.fixture
def plain() -> Iterator[Server]:
    """Plain http on the cloud's host (127.0.0.1), another port: the target of a downgrade."""
    server = Server("127.0.0.1", lambda method, path, headers, body: _json(200, {}))
    yield server
    server.close()


@pytest.fixture
def cloud() -> Iterator[Cloud]:
    c = Cloud()
    yield c
    c.close()


@pytest.fixture
def tls_cloud(kit: TlsKit) -> Iterator[Cloud]:
    c = Cloud(tls=kit.trusted)
    yield c
    c.close()


@pytest.fixture(autouse=True)
def _no_ca_from_the_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("SSL_CERT_FILE", raising=False)
    monkeypatch.delenv("SSL_CERT_DIR", raising=False)
    monkeypatch.delenv("OS_CLOUD", raising=False)


def client_of(kind: str, cfg: OpenStackConfig) -> Any:
    if kind == "light":
        client = triage_client(cfg, handover_after_s=math.inf)
        assert client is not None and client.backend == "light"
        return client
    return connect(cfg)


def assert_refusal(err: BaseException, source: str, target: str) -> None:
    """One line naming both URLs (their start: the path may go on), no secret in it."""
    text = str(err)
    assert isinstance(err, SourceError), repr(err)
    assert "\n" not in text and "\r" not in text, text
    assert f"refused redirect from {source}" in text, text
    assert f" to {target}" in text, text
    assert not [s for s in SECRETS if s in text], text


KINDS = ("light", "sdk")


# --------------------------------------------------------------------------------------------- Keystone
@pytest.mark.parametrize("kind", KINDS)
def test_keystone_307_to_another_host_gets_no_password(kind: str, cloud: Cloud, evil: Server,
                                                       tmp_path: Path) -> None:
    cloud.redirect = lambda method, path: f"{evil.url}/v3/auth/tokens" if method == "POST" else None
    client = client_of(kind, cloud.config(tmp_path))
    try:
        with pytest.raises(SourceError) as err:
            client.compute_services()
    finally:
        client.close()
    assert evil.seen == [], f"the other host received {[(s.method, s.path, s.secrets()) for s in evil.seen]}"
    assert any(s.method == "POST" for s in cloud.server.seen), "the token request went to Keystone first"
    assert_refusal(err.value, f"{cloud.url}/v3/auth/tokens", f"{evil.url}/v3/auth/tokens")


@pytest.mark.parametrize("kind", KINDS)
def test_keystone_over_https_307_to_http_on_the_same_host_is_refused(kind: str, tls_cloud: Cloud, plain: Server,
                                                                     kit: TlsKit, tmp_path: Path) -> None:
    tls_cloud.redirect = lambda method, path: f"{plain.url}/v3/auth/tokens" if method == "POST" else None
    client = client_of(kind, tls_cloud.config(tmp_path, cacert=str(kit.ca_file)))
    try:
        with pytest.raises(SourceError) as err:
            client.authenticate()
    finally:
        client.close()
    assert plain.seen == [], f"plain http received {[(s.method, s.path, s.secrets()) for s in plain.seen]}"
    assert_refusal(err.value, f"{tls_cloud.url}/v3/auth/tokens", f"{plain.url}/v3/auth/tokens")
    assert "https" in str(err.value).split(": ", 1)[1]


# ------------------------------------------------------------------------------------ catalog endpoints
def _moved(prefix: str, to: str) -> Callable[[str, str], str | None]:
    """Every GET under `prefix` answered 302 to `to` followed by the rest of its path."""
    def redirect(method: str, path: str) -> str | None:
        if method == "GET" and (path == prefix or path.startswith((f"{prefix}/", f"{prefix}?"))):
            return f"{to}{path[len(prefix):]}"
        return None

    return redirect


def _steering(evil_url: str, service: str) -> Route:
    """The other host answering as the service would, its version document pointing at itself."""
    def route(method: str, path: str, headers: dict[str, str], body: bytes) -> tuple[int, dict[str, str], bytes]:
        if service == "compute":
            version = {"id": "v2.1", "status": "CURRENT", "version": "2.96", "min_version": "2.1",
                       "links": [{"rel": "self", "href": f"{evil_url}/compute/v2.1/"}]}
            return _json(200, {"version": version, "services": []})
        version = {"id": "v1.0", "max_version": "1.39", "min_version": "1.0", "status": "CURRENT",
                   "links": [{"rel": "self", "href": f"{evil_url}/placement"}]}
        return _json(200, {"versions": [version], "resource_providers": []})

    return route


READS: dict[str, Callable[[Any], Any]] = {
    "compute": lambda client: client.compute_services(),
    "placement": lambda client: client.resource_providers(),
}


@pytest.mark.parametrize("service", sorted(READS))
@pytest.mark.parametrize("kind", KINDS)
def test_catalog_endpoint_302_to_another_host_gets_no_token(kind: str, service: str, cloud: Cloud, evil: Server,
                                                            tmp_path: Path) -> None:
    cloud.redirect = _moved(f"/{service}", f"{evil.url}/{service}")
    evil.route = _steering(evil.url, service)
    client = client_of(kind, cloud.config(tmp_path))
    errors: list[BaseException | None] = []
    try:
        for _ in range(2):  # every poll
            try:
                READS[service](client)
                errors.append(None)
            except SourceError as exc:
                errors.append(exc)
    finally:
        client.close()
    assert evil.leaks() == [], "the token went to the other host"
    assert evil.seen == [], [(s.method, s.path) for s in evil.seen]
    for error in errors:
        assert error is not None, "the read answered from the other host"
        assert_refusal(error, f"{cloud.url}/{service}", f"{evil.url}/{service}")


@pytest.mark.parametrize("kind", KINDS)
def test_https_endpoint_302_to_http_on_the_same_host_is_refused(kind: str, tls_cloud: Cloud, plain: Server,
                                                                kit: TlsKit, tmp_path: Path) -> None:
    tls_cloud.redirect = _moved("/compute", f"{plain.url}/compute")
    client = client_of(kind, tls_cloud.config(tmp_path, cacert=str(kit.ca_file)))
    try:
        with pytest.raises(SourceError) as err:
            client.compute_services()
        probe = client.version_get(f"{tls_cloud.url}/compute/v2.1")  # unauthenticated: still not downgraded
    finally:
        client.close()
    assert plain.seen == [], f"plain http received {[(s.method, s.path, s.secrets()) for s in plain.seen]}"
    assert_refusal(err.value, f"{tls_cloud.url}/compute", f"{plain.url}/compute")
    assert probe["status"] is None and f"to {plain.url}/compute/v2.1" in probe["error"], probe


@pytest.mark.parametrize("kind", KINDS)
def test_a_redirect_within_the_origin_is_still_followed(kind: str, cloud: Cloud, tmp_path: Path) -> None:
    cloud.redirect = _moved("/compute", f"{cloud.url}/compute-moved")
    client = client_of(kind, cloud.config(tmp_path))
    try:
        services = client.compute_services()
    finally:
        client.close()
    assert [s["host"] for s in services] == ["cmp1"]
    assert any(s.path.startswith("/compute-moved/v2.1/os-services") for s in cloud.server.seen)


# ---------------------------------------------------------------------------------------------- fastget
@pytest.mark.parametrize("kind", KINDS)
async def test_fastget_names_a_redirect_to_another_host_and_sends_it_nothing(kind: str, cloud: Cloud,
                                                                             evil: Server, tmp_path: Path) -> None:
    cloud.redirect = _moved("/compute/v2.1/servers", f"{evil.url}/compute/v2.1/servers")
    client = client_of(kind, cloud.config(tmp_path))
    try:
        answers = await client.aget_json_many("compute", ["/servers/abc", "/servers/def"],
                                              microversion=client.compute_microversion())
    finally:
        client.close()
    assert evil.seen == []
    for answer, sid in zip(answers, ("abc", "def"), strict=True):
        assert isinstance(answer, RedirectRefused), answer
        assert_refusal(answer, f"{cloud.url}/compute/v2.1/servers/{sid}", f"{evil.url}/compute/v2.1/servers/{sid}")


async def test_fastget_names_a_redirect_within_the_origin_as_not_followed(cloud: Cloud, tmp_path: Path) -> None:
    cloud.redirect = _moved("/compute/v2.1/servers", f"{cloud.url}/compute-moved/v2.1/servers")
    client = client_of("light", cloud.config(tmp_path))
    try:
        [answer] = await client.aget_json_many("compute", ["/servers/abc"])
    finally:
        client.close()
    assert isinstance(answer, SourceError) and not isinstance(answer, RedirectRefused), answer
    assert f"answered 302 (redirect to {cloud.url}/compute-moved/v2.1/servers/abc, not followed)" \
        in str(answer), answer


# ----------------------------------------------------------------------------------------------- RabbitMQ
def _rabbit(url: str, cacert: str | None = None) -> RabbitMQCollector:
    return RabbitMQCollector(url, RABBIT_USER, PASSWORD, timeout=10.0, cacert=cacert)


async def test_rabbitmq_redirect_to_another_host_gets_no_credentials(evil: Server) -> None:
    broker = Server("127.0.0.1", lambda method, path, headers, body: (302, {"Location": f"{evil.url}{path}"}, b""))
    collector = _rabbit(broker.url)
    try:
        with pytest.raises(SourceError) as err:
            await collector.collect()
    finally:
        await collector.aclose()
        broker.close()
    assert evil.seen == []
    assert broker.seen and all("authorization" in s.headers for s in broker.seen), "the broker got the request"
    assert_refusal(err.value, f"{broker.url}/api/", f"{evil.url}/api/")


async def test_rabbitmq_https_redirect_to_http_on_the_same_host_is_refused(plain: Server, kit: TlsKit) -> None:
    broker = Server("127.0.0.1", lambda method, path, headers, body: (302, {"Location": f"{plain.url}{path}"}, b""),
                    tls=kit.trusted)
    collector = _rabbit(broker.url, cacert=str(kit.ca_file))
    try:
        with pytest.raises(SourceError) as err:
            await collector.collect()
    finally:
        await collector.aclose()
        broker.close()
    assert plain.seen == []
    assert_refusal(err.value, f"{broker.url}/api/", f"{plain.url}/api/")


# ------------------------------------------------------------------------------------------------ policy
def test_policy() -> None:
    assert refusal("https://h:5000/a", "http://h:5000/a"), "https never drops to http"
    assert refusal("https://h/a", "https://h:8443/a"), "another port is another origin"
    assert refusal("http://h/a", "https://h/a"), "another scheme is another origin"
    assert refusal("http://h/a", "http://evil\\@h/a"), "an ambiguous URL is never the same origin"
    assert refusal("http://H:80/a", "http://h/b") is None, "the same origin, written differently"
    line = shown("http://u:hunter2@evil/\x1b[31m" + "x" * 1000)
    assert "hunter2" not in line and "\x1b" not in line and len(line) < 400
