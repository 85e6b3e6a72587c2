"""The hosts the dashboard knows (services, agents, volume services, servers' hosts), so that `:host NAME` and
`:trace-down NAME` can refuse a name that is not one of them and suggest the closest ones."""

from __future__ import annotations

import difflib
from typing import Any

from tui.models.services import SECTIONS
from tui.screens.context import context


def known_hosts(app: Any) -> set[str]:
    """Every host named by the latest services and instances snapshots (cinder's host@backend as host too)."""
    hosts: set[str] = set()
    services = context(app).snapshot("services")
    for section in SECTIONS:
        for row in getattr(getattr(services, section, None), "rows", ()) or ():
            if row.host:
                hosts.add(row.host)
                hosts.add(row.host.split("@", 1)[0])
    instances = context(app).snapshot("instances")
    for server in getattr(instances, "servers", ()) or ():
        for host in (getattr(server, "host", None), getattr(server, "hypervisor_hostname", None)):
            if host:
                hosts.add(host)
    return hosts


def unknown_host(app: Any, name: str) -> str | None:
    """None when `name` is a known host, or when no host is known yet (nothing read: it cannot be judged);
    else one line saying so, with the closest known names."""
    hosts = known_hosts(app)
    if not hosts or name in hosts:
        return None
    close = difflib.get_close_matches(name, sorted(hosts), n=3, cutoff=0.5)
    hint = f" (did you mean {', '.join(close)}?)" if close else f" (known: {', '.join(sorted(hosts)[:6])})"
    return f"unknown host '{name}'{hint}"
