"""The one HTTP method guard: stacktop only reads.

Every HTTP request stacktop makes passes `check_method(method, url)`:
- the SDK path (openstacksdk -> keystoneauth -> requests): `guard_requests_session` wraps the requests
  Session's `send`, the funnel of every keystoneauth request (token, discovery, reads, redirects);
- tui.openstack.fastget (async GETs on raw streams) calls it for each request line it writes;
- the RabbitMQ management client (httpx) carries `httpx_request_hook` as a request event hook.

Allowed: GET, and POST to Keystone's `.../v3/auth/tokens` (getting a token is how a read starts). Anything
else raises WriteRefused before a byte leaves the machine. The SQL side has its own gate
(tui.collectors.galera_sql.check_read_only) and AMQP use is passive declares only
(tui.collectors.rabbitmq_amqp.PassiveChannel).
"""

from __future__ import annotations

from typing import Any
from urllib.parse import urlsplit

from tui.errors import SourceError

TOKEN_PATH_SUFFIX = "/v3/auth/tokens"


class WriteRefused(SourceError):
    """A request that could change something was about to be sent: refused, never sent."""


def allowed(method: str, url: str) -> bool:
    verb = (method or "").upper()
    if verb == "GET":
        return True
    return verb == "POST" and urlsplit(str(url)).path.rstrip("/").endswith(TOKEN_PATH_SUFFIX)


def check_method(method: str, url: str) -> None:
    """Raise WriteRefused unless (method, url) is a read (or Keystone's token request)."""
    if not allowed(method, url):
        shown = urlsplit(str(url))._replace(query="", fragment="").geturl()  # no query: it may hold anything
        raise WriteRefused(f"stacktop is read-only: refused {str(method).upper()} {shown} (only GET, and POST to "
                           f"Keystone's /v3/auth/tokens, leave stacktop)")


def guard_requests_session(session: Any) -> Any:
    """Wrap a requests.Session's send() with the guard (idempotent). Returns the session."""
    if getattr(session, "_stacktop_guarded", False):
        return session
    send = session.send

    def guarded_send(request: Any, **kwargs: Any) -> Any:
        check_method(request.method, request.url)
        return send(request, **kwargs)

    session.send = guarded_send
    session._stacktop_guarded = True
    return session


def guard_keystoneauth_session(ks_session: Any) -> Any:
    """Guard the requests.Session under a keystoneauth Session (openstacksdk's conn.session)."""
    guard_requests_session(ks_session.session)
    return ks_session


def httpx_request_hook(request: Any) -> None:
    """httpx Client event hook: event_hooks={"request": [httpx_request_hook]}."""
    check_method(request.method, str(request.url))
