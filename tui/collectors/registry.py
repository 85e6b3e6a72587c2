"""Which collectors a config asks for: each source's build(config, context), as its SourceSpec holds it
(tui.sources.SOURCES)."""

from __future__ import annotations

from collections.abc import Callable
from datetime import datetime
from typing import Any

from tui import sources
from tui.collectors.base import BuildContext, Collector
from tui.config import Config


def build_collectors(config: Config, *, galera_connector: Any = None, dashboard: bool = False,
                     clock: Callable[[], datetime] | None = None) -> list[Collector]:
    """galera_connector: the Galera collector's connection seam (the simulator passes its own). clock: the
    time the collectors stamp their reads with (BuildContext.clock; None: the wall clock).
    dashboard: for the app (the instances source first reads the servers worth attention, then every
    server); `stacktop snapshot` reads everything in its one poll. Each source module returns [] when its
    section is not configured."""
    from tui.openstack.session import LIGHT_HANDOVER_S, OpenStackSession

    # one session per cloud for its OpenStack sources: one client, one token, one request plan; the dashboard's
    # and `stacktop snapshot`'s reads go without openstacksdk's import (tui.openstack.triage), which answers
    # only what the light client does not handle
    session = OpenStackSession(config.openstack, light_first=LIGHT_HANDOVER_S)
    context = BuildContext(dashboard=dashboard, session=session, galera_connector=galera_connector, clock=clock)
    collectors: list[Collector] = []
    for spec in sources.SOURCES:
        collectors.extend(spec.build(config, context))
    return collectors
