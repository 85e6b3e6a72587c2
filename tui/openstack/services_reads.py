"""Control-plane reads the services source needs beyond tui.openstack.client: the three service listings
*with the API's clock* (the response's `Date` header), so heartbeat ages do not depend on the stacktop
machine's clock, and whether the session still holds a usable token (to read through a Keystone outage).

Blocking, like the client: call through asyncio.to_thread. Plain dicts, API field names.
"""

from __future__ import annotations

import contextlib
import threading
import time
import weakref
from datetime import UTC, datetime
from email.utils import parsedate_to_datetime
from typing import Any

from tui.openstack.client import OpenStackClient
from tui.openstack.paging import query


def parse_http_date(value: str | None) -> datetime | None:
    if not value:
        return None
    try:
        parsed = parsedate_to_datetime(value)
    except (TypeError, ValueError, IndexError):
        return None
    return parsed.replace(tzinfo=UTC) if parsed.tzinfo is None else parsed.astimezone(UTC)


def dated_get(client: OpenStackClient, service: str, path: str, *, microversion: str | None = None,
              action: str = "", timeout: float | None = None, expect: str | None = None
              ) -> tuple[dict[str, Any], datetime | None]:
    """GET path on the service's versioned endpoint -> (JSON object, the server's Date or None).
    timeout: seconds for this request (default: the session's, i.e. [openstack] timeout)."""
    data, date = client.get_dated(service, path, microversion=microversion, action=action, timeout=timeout,
                                  expect=expect)
    return data, parse_http_date(date)


def compute_services(client: OpenStackClient, timeout: float | None = None
                     ) -> tuple[list[dict[str, Any]], datetime | None, str]:
    """GET /os-services at the negotiated compute microversion (>= 2.53: UUID ids, forced_down)."""
    mv = client.compute_microversion()
    body, date = dated_get(client, "compute", "/os-services", microversion=mv, action="listing compute services",
                           timeout=timeout, expect="services")
    rows = list(body.get("services", []))
    _remember(client, "compute", rows)
    return rows, date, mv


def network_agents(client: OpenStackClient, timeout: float | None = None, **filters: Any
                   ) -> tuple[list[dict[str, Any]], datetime | None]:
    body, date = dated_get(client, "network", query("/agents", filters), action="listing network agents",
                           timeout=timeout, expect="agents")
    rows = list(body.get("agents", []))
    if not filters:
        _remember(client, "network", rows)
    return rows, date


# The latest full compute-service and agent listings per client (one client per cloud is shared by the
# collectors): the instances source reads host health from them instead of asking again every poll.
_recent: weakref.WeakKeyDictionary[Any, dict[str, tuple[float, list[dict[str, Any]]]]] = weakref.WeakKeyDictionary()
_recent_lock = threading.Lock()


def _remember(client: OpenStackClient, what: str, rows: list[dict[str, Any]]) -> None:
    with _recent_lock, contextlib.suppress(TypeError):  # a client without weak references: nothing shared
        _recent.setdefault(client, {})[what] = (time.monotonic(), rows)


def recent_listing(client: OpenStackClient, what: str, max_age: float) -> list[dict[str, Any]] | None:
    """The rows of the last full `compute` (/os-services) or `network` (/agents) listing read through this
    client within max_age seconds, else None (then read it yourself)."""
    with _recent_lock:
        try:
            entry = _recent.get(client, {}).get(what)
        except TypeError:
            return None
    if entry is None or time.monotonic() - entry[0] > max_age:
        return None
    return entry[1]


# When the instances source next lists status=BUILD, per client (its clock: the collectors of one cloud share
# it). That listing is the steady poll's one optional request; the services source leaves its endpoint check's
# turn to the cycle without one, so a steady cycle of both panes stays at 6 requests (issue #12).
_build_list_due: weakref.WeakKeyDictionary[Any, datetime] = weakref.WeakKeyDictionary()


def plan_build_list(client: OpenStackClient, due: datetime) -> None:
    """The instances source says when its next status=BUILD listing is due."""
    with _recent_lock, contextlib.suppress(TypeError):
        _build_list_due[client] = due


def build_list_due_near(client: OpenStackClient, now: datetime, within_s: float) -> bool:
    """True when the instances source's next status=BUILD listing is due within within_s seconds of `now`,
    before or after. Not when it is overdue by more: that source is not polling on time (failing, backing
    off, a cloud not on screen), and the services source must not wait for it."""
    with _recent_lock:
        try:
            due = _build_list_due.get(client)
        except TypeError:
            return False
    return due is not None and abs((due - now).total_seconds()) <= within_s


def volume_services(client: OpenStackClient, timeout: float | None = None
                    ) -> tuple[list[dict[str, Any]], datetime | None]:
    body, date = dated_get(client, "volume", "/os-services", action="listing volume services", timeout=timeout,
                           expect="services")
    return list(body.get("services", [])), date


def has_usable_token(client: OpenStackClient, margin_s: float = 30.0) -> bool:
    """True when the session holds a token valid for at least margin_s more: reads can go on without
    Keystone. Never calls Keystone."""
    return bool(client.has_usable_token(margin_s))
