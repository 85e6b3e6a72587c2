"""Control-plane reads the services source needs beyond tui.openstack.client: the three service listings
*with the API's clock* (the response's `Date` header), so heartbeat ages do not depend on the stacktop
machine's clock, and whether the session still holds a usable token (to read through a Keystone outage).

Blocking, like the client: call through asyncio.to_thread. Plain dicts, API field names.
"""

from __future__ import annotations

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
    return list(body.get("services", [])), date, mv


def network_agents(client: OpenStackClient, timeout: float | None = None, **filters: Any
                   ) -> tuple[list[dict[str, Any]], datetime | None]:
    body, date = dated_get(client, "network", query("/agents", filters), action="listing network agents",
                           timeout=timeout, expect="agents")
    return list(body.get("agents", [])), date


def volume_services(client: OpenStackClient, timeout: float | None = None
                    ) -> tuple[list[dict[str, Any]], datetime | None]:
    body, date = dated_get(client, "volume", "/os-services", action="listing volume services", timeout=timeout,
                           expect="services")
    return list(body.get("services", [])), date


def has_usable_token(client: OpenStackClient, margin_s: float = 30.0) -> bool:
    """True when the session holds a token valid for at least margin_s more: reads can go on without
    Keystone. Never calls Keystone."""
    return bool(client.has_usable_token(margin_s))
