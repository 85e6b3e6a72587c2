"""Keystone v3 subset: version discovery, password tokens with the sim's catalog, token validation."""

from __future__ import annotations

import random
import threading
import time
from collections.abc import Callable
from typing import Any

from tui.sim.engine import Engine
from tui.sim.http import Request, Response, Router, json_response
from tui.sim.util import hex32, iso_keystone

DOMAIN = {"id": "default", "name": "Default"}
UNAUTHORIZED = {"error": {"code": 401, "title": "Unauthorized",
                          "message": "The request you have made requires authentication."}}


class Auth:
    """Issued tokens (shared by every simulated service) and the fake admin credentials."""

    def __init__(self, engine: Engine, username: str, password: str, project: str) -> None:
        self.engine = engine
        self.username, self.password, self.project = username, password, project
        self._tokens: dict[str, float] = {}
        self._lock = threading.Lock()
        self._n = 0
        self.token_ttl_s = 86400.0  # tests shorten it to see clients renew their tokens
        self.rng = random.Random(engine.seed ^ 0x5EED)  # never draw from the engine's RNG here

    def issue(self) -> str:
        with self._lock:
            self._n += 1
            token = f"gAAAAAsim{self._n:06d}{hex32(self.rng)}"
            self._tokens[token] = time.time() + self.token_ttl_s
            return token

    def valid(self, token: str | None) -> bool:
        if not token:
            return False
        with self._lock:
            exp = self._tokens.get(token)
        return exp is not None and exp > time.time()

    def revoke_all(self) -> None:
        """Every issued token refused from now on (a Keystone restart with new keys, say)."""
        with self._lock:
            self._tokens.clear()

    def check(self, req: Request) -> Response | None:
        """None when the request carries a valid token, else the 401 a service answers."""
        if self.valid(req.headers.get("X-Auth-Token")):
            return None
        return json_response(UNAUTHORIZED, 401, [("WWW-Authenticate", "Keystone uri='sim'")])


def _version(base: str) -> dict[str, Any]:
    return {"id": "v3.14", "status": "stable", "updated": "2020-04-07T00:00:00Z",
            "links": [{"rel": "self", "href": f"{base}/v3/"}],
            "media-types": [{"base": "application/json",
                             "type": "application/vnd.openstack.identity-v3+json"}]}


def make_app(auth: Auth, catalog: Callable[[], list[dict[str, Any]]]) -> Router:
    engine = auth.engine
    r = Router()
    role_ids = {name: hex32(auth.rng) for name in ("admin", "member", "reader")}

    def token_body(token_expires: float, issued: float) -> dict[str, Any]:
        return {"token": {
            "methods": ["password"],
            "user": {"domain": DOMAIN, "id": engine.admin_user, "name": auth.username,
                     "password_expires_at": None},
            "audit_ids": [hex32(auth.rng)[:22]],
            "expires_at": iso_keystone(token_expires), "issued_at": iso_keystone(issued),
            "project": {"domain": DOMAIN, "id": engine.admin_project, "name": auth.project},
            "is_domain": False,
            "roles": [{"id": rid, "name": name} for name, rid in role_ids.items()],
            "catalog": catalog(),
        }}

    def root(req: Request) -> Response:
        return json_response({"versions": {"values": [_version(req.base)]}}, 300)

    def v3(req: Request) -> Response:
        return json_response({"version": _version(req.base)})

    def tokens_post(req: Request) -> Response:
        try:
            ident = req.json()["auth"]["identity"]
            pw = ident["password"]["user"]
        except (KeyError, TypeError, ValueError):
            return json_response({"error": {"code": 400, "title": "Bad Request",
                                            "message": "Expecting to find identity in auth."}}, 400)
        if pw.get("name") != auth.username or pw.get("password") != auth.password:
            return json_response(UNAUTHORIZED, 401)
        now = time.time()  # wall clock: clients judge token expiry by theirs, whatever the sim clock says
        token = auth.issue()
        return json_response(token_body(now + auth.token_ttl_s, now), 201, [("X-Subject-Token", token)])

    def tokens_get(req: Request) -> Response:
        denied = auth.check(req)
        if denied:
            return denied
        subject = req.headers.get("X-Subject-Token")
        if not auth.valid(subject):
            return json_response({"error": {"code": 404, "title": "Not Found",
                                            "message": "Could not find token."}}, 404)
        now = time.time()
        return json_response(token_body(now + 86400, now), 200, [("X-Subject-Token", subject or "")])

    def auth_catalog(req: Request) -> Response:
        return auth.check(req) or json_response(
            {"catalog": catalog(), "links": {"self": f"{req.base}/v3/auth/catalog"}})

    r.add("GET", "/", root)
    r.add("GET", "/v3", v3)
    r.add("POST", "/v3/auth/tokens", tokens_post)
    r.add("GET", "/v3/auth/tokens", tokens_get)
    r.add("GET", "/v3/auth/catalog", auth_catalog)
    return r


def catalog_entries(services: dict[str, tuple[str, str, str]], engine: Engine) -> list[dict[str, Any]]:
    """services: type -> (name, url). Endpoint ids are stable per (type, interface)."""
    out = []
    for stype, (name, url, sid) in services.items():
        endpoints = [{"id": f"{sid[:24]}{i:08x}", "interface": iface, "region_id": "RegionOne", "url": url,
                      "region": "RegionOne"} for i, iface in enumerate(("public", "internal", "admin"))]
        out.append({"endpoints": endpoints, "id": sid, "type": stype, "name": name})
    del engine
    return out
