"""Where a redirect may take a request: only within its origin, and never from https to plain http.

A server that answers 30x with a Location must not be able to send stacktop's password or token somewhere
else: Keystone answering 307 to another host would receive the re-sent POST with the password, a catalog
endpoint answering 302 to http://elsewhere would receive X-Auth-Token on every poll. An unauthenticated read
moved to another host is no safer: keystoneauth takes a service's URL from the links of the version document
it reads, so a version request redirected elsewhere lets that other host say where the token goes next.

The policy, for every HTTP client of the package: a redirect to another origin (scheme, host or port) is
refused, and so is one from https to anything but https. A redirect within the origin is left to the client,
which follows it as it did. A refused redirect is a `RedirectRefused` SourceError: one line naming both URLs
(passwords in them redacted, controls escaped, each cut to a readable length), raised before the next hop is
sent.

Where it applies:
- httpx (the light OpenStack client, the RabbitMQ management API): `httpx_response_hook` as a response event
  hook; httpx calls it for every answer, before it follows a redirect;
- requests (openstacksdk / keystoneauth, which follows redirects itself and re-sends headers and body):
  `guard_requests_session(session)` checks every answer each adapter returns;
- tui.openstack.fastget follows no redirect: its caller asks `refusal()` about a 30x answer.
keystoneauth's version discovery swallows errors: `recording()` hands the caller the refusals all the same.
"""

from __future__ import annotations

import contextlib
import re
import threading
from collections.abc import Iterator
from typing import Any
from urllib.parse import urljoin, urlsplit

from tui.errors import SourceError
from tui.redact import redact_userinfo
from tui.safetext import clean

# answers a client follows (keystoneauth follows 305 too)
REDIRECT_STATUSES = frozenset({301, 302, 303, 305, 307, 308})
DEFAULT_PORTS = {"http": 80, "https": 443}
SHOWN_URL_CHARS = 300
_AMBIGUOUS = re.compile(r"[\\\s\x00-\x1f\x7f]")  # URL parsers disagree where these are
_local = threading.local()


class RedirectRefused(SourceError):
    """A redirect to another origin, or from https to plain http: not followed."""

    def __init__(self, source: str, target: str, reason: str) -> None:
        super().__init__(f"refused redirect from {shown(source)} to {shown(target)}: {reason} - if the service "
                         f"really moved, configure the URL it moved to")
        self.source = source
        self.target = target


def shown(url: str) -> str:
    """A URL fit for an error line: passwords redacted, controls escaped, at most SHOWN_URL_CHARS long."""
    text = clean(redact_userinfo(str(url)))
    return text if len(text) <= SHOWN_URL_CHARS else f"{text[:SHOWN_URL_CHARS]}..."


def origin(url: str) -> tuple[str, str, int | None] | None:
    """(scheme, host, port) of an absolute URL, the port filled in for http(s); None when it has no host, a
    port that cannot be read or characters parsers read differently (never the same origin as another)."""
    text = str(url)
    if _AMBIGUOUS.search(text):
        return None
    try:
        parts = urlsplit(text)
        port = parts.port
    except ValueError:
        return None
    scheme = parts.scheme.lower()
    host = (parts.hostname or "").lower()
    if not host:
        return None
    return scheme, host, port if port is not None else DEFAULT_PORTS.get(scheme)


def target_of(source: str, location: str) -> str:
    """The absolute URL a Location header points to from `source`."""
    return urljoin(str(source), str(location).strip())


def refusal(source: str, target: str) -> str | None:
    """Why a redirect from `source` to the absolute URL `target` must not be followed (None: it may be)."""
    if urlsplit(str(source)).scheme.lower() == "https" and urlsplit(str(target)).scheme.lower() != "https":
        return "it would leave https for a connection that is not encrypted"
    here, there = origin(source), origin(target)
    if here is None or there is None or here != there:
        return "another origin (scheme, host or port) than the one asked; stacktop's password and tokens go " \
               "only where the config and the catalog say"
    return None


def check(source: str, location: str) -> None:
    """Raise RedirectRefused when a redirect from `source` to `location` (absolute or relative) is refused."""
    target = target_of(source, location)
    reason = refusal(source, target)
    if reason is not None:
        raise _refused(source, target, reason)


@contextlib.contextmanager
def recording() -> Iterator[list[RedirectRefused]]:
    """The redirects refused in this thread while the block runs: for a library that swallows the error and
    goes on (keystoneauth's version discovery), so the caller can still say why."""
    outer: list[RedirectRefused] | None = getattr(_local, "refused", None)
    refused: list[RedirectRefused] = []
    _local.refused = refused
    try:
        yield refused
    finally:
        _local.refused = outer
        if outer is not None:
            outer.extend(refused)


def _refused(source: str, target: str, reason: str) -> RedirectRefused:
    """The error for a redirect about to be refused, noted for recording()."""
    exc = RedirectRefused(source, target, reason)
    noted: list[RedirectRefused] | None = getattr(_local, "refused", None)
    if noted is not None:
        noted.append(exc)
    return exc


# ------------------------------------------------------------------------------------------------ httpx
def httpx_response_hook(response: Any) -> None:
    """httpx Client event hook, event_hooks={"response": [httpx_response_hook]}: runs on every answer before
    httpx follows it, and refuses a redirect the policy forbids."""
    location = response.headers.get("Location")
    if response.status_code not in REDIRECT_STATUSES or location is None:
        return
    source = str(response.request.url)
    target = _httpx_target(response.request.url, location)
    if target is None:
        return  # httpx cannot read the Location either: it does not follow it
    reason = refusal(source, target)
    if reason is not None:
        raise _refused(source, target, reason)


def _httpx_target(url: Any, location: str) -> str | None:
    """Where httpx goes for this Location, resolved as httpx resolves it (a Location with a scheme and no host
    keeps the request's host; a relative one is joined); None when httpx cannot parse it."""
    try:
        target = type(url)(location)
        if target.scheme and not target.host:
            target = target.copy_with(host=url.host)
        if target.is_relative_url:
            target = url.join(target)
    except Exception:
        return None
    return str(target)


# --------------------------------------------------------------------------------------------- requests
def guard_requests_session(session: Any) -> Any:
    """Every adapter of a requests.Session checks each answer it returns: a refused redirect raises
    RedirectRefused before requests or keystoneauth sends the next hop. Idempotent; returns the session."""
    if getattr(session, "_stacktop_redirects", False):
        return session
    for adapter in session.adapters.values():
        adapter.send = _checked_send(adapter.send)
    session._stacktop_redirects = True
    return session


def _checked_send(send: Any) -> Any:
    def checked_send(request: Any, *args: Any, **kwargs: Any) -> Any:
        resp = send(request, *args, **kwargs)
        location = resp.headers.get("Location")
        if resp.status_code in REDIRECT_STATUSES and location is not None:
            try:
                check(request.url, location)
            except RedirectRefused:
                resp.close()
                raise
        return resp

    return checked_send
