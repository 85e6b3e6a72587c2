"""Which collectors a config asks for. Each source module exposes build(config) -> list[Collector]."""

from __future__ import annotations

import importlib
from typing import Any

from tui.collectors.base import Collector
from tui.config import Config

# Source modules under tui.collectors, in pane order. Each returns [] when its section is not configured.
SOURCE_MODULES: tuple[str, ...] = ("services", "instances", "rabbitmq", "galera")


def build_collectors(config: Config, *, galera_connector: Any = None, dashboard: bool = False) -> list[Collector]:
    """galera_connector: the Galera collector's connection seam (the simulator passes its own).
    dashboard: for the app (the instances source first reads the servers worth attention, then every
    server); `stacktop snapshot` reads everything in its one poll."""
    collectors: list[Collector] = []
    from tui.openstack.session import LIGHT_HANDOVER_S, OpenStackSession

    # one session per cloud for its OpenStack sources: one client, one token, one request plan; the dashboard's
    # reads go without openstacksdk's import (tui.openstack.triage)
    session = OpenStackSession(config.openstack, light_first=LIGHT_HANDOVER_S if dashboard else None)
    for module_name in SOURCE_MODULES:
        module = importlib.import_module(f"tui.collectors.{module_name}")
        if module_name == "galera" and galera_connector is not None:
            collectors.extend(module.build(config, connector=galera_connector))
        elif module_name == "instances":
            collectors.extend(module.build(config, dashboard=dashboard, session=session))
        elif module_name == "services":
            collectors.extend(module.build(config, session=session))
        else:
            collectors.extend(module.build(config))
    return collectors
