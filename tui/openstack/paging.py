"""Pure helpers for OpenStack pagination and query strings."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from datetime import UTC, datetime
from typing import Any
from urllib.parse import parse_qs, quote, urlencode, urlsplit


def next_marker(body: Mapping[str, Any], links_key: str) -> str | None:
    """The marker of the rel=next link in body[links_key] (nova/cinder/neutron style), else None.

    We rebuild the next request on our own endpoint from the marker instead of following the href: behind
    proxies the href often names an internal host or the wrong scheme.
    """
    for link in body.get(links_key) or ():
        if isinstance(link, Mapping) and link.get("rel") == "next" and link.get("href"):
            marker = parse_qs(urlsplit(str(link["href"])).query).get("marker")
            if marker:
                return marker[-1]
    return None


def iso_param(value: datetime | str) -> str:
    """A timestamp for changes-since: UTC, second precision, 'Z' (no '+' to mis-encode)."""
    if isinstance(value, str):
        return value
    if value.tzinfo is None:
        value = value.replace(tzinfo=UTC)
    return value.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def segment(value: object) -> str:
    """One path segment from outside (a server id or name typed after :server, a request id, a host):
    percent-encoded whole, so `/`, `?` or `#` cannot change which resource is read. `.` and `..` are
    refused (NotFound, no request): HTTP clients decode %2E back to a dot and servers resolve dot segments."""
    text = str(value)
    if text in ("", ".", ".."):
        from tui.openstack.errors import NotFound

        raise NotFound(f"'{text}' is not an id")
    return quote(text, safe="")


def query(path: str, params: Mapping[str, Any] | Iterable[tuple[str, Any]] | None) -> str:
    """path?urlencoded params; None values dropped, booleans as 'true'/'false', lists repeated."""
    if not params:
        return path
    items = params.items() if isinstance(params, Mapping) else params
    pairs: list[tuple[str, str]] = []
    for key, value in items:
        if value is None:
            continue
        if isinstance(value, bool):
            pairs.append((key, "true" if value else "false"))
        elif isinstance(value, (list, tuple, set, frozenset)):
            pairs.extend((key, str(v)) for v in value)
        else:
            pairs.append((key, str(value)))
    return f"{path}?{urlencode(pairs)}" if pairs else path


def resources_param(resources: Mapping[str, int] | str) -> str:
    """{'VCPU': 2, 'MEMORY_MB': 4096} -> 'VCPU:2,MEMORY_MB:4096' (placement's resources= syntax)."""
    if isinstance(resources, str):
        return resources
    return ",".join(f"{rc}:{int(n)}" for rc, n in resources.items())


def version_tuple(value: str) -> tuple[int, int]:
    major, _, minor = value.partition(".")
    return int(major), int(minor or 0)
