"""The source registry: every source stacktop reads, described once, with what builds, judges and shows it.

The app (its panes, their order and titles, what is configured and how often it polls), the `:` commands that
focus a pane, the collectors (`stacktop snapshot`, the dashboard; tui.collectors.registry) and replay all read
SOURCES. Adding a source is one SourceSpec here plus its own modules: its collector module's
`build(config, context) -> list[Collector]` and optionally its pane class (else a plain summary pane), each held
by the spec as a callable. Those callables import their module when called (plain import statements, so the
layer test sees every edge; no module is loaded by its name as a string), so reading this registry loads no
collector, client or pane before the first frame.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from tui.records import record

if TYPE_CHECKING:
    from tui.collectors.base import BuildContext, Collector
    from tui.config import Config
    from tui.widgets.source_pane import SourcePane

Builder = Callable[["Config", "BuildContext"], list["Collector"]]


def _build_services(config: Config, context: BuildContext) -> list[Collector]:
    from tui.collectors import services

    return services.build(config, context)


def _build_instances(config: Config, context: BuildContext) -> list[Collector]:
    from tui.collectors import instances

    return instances.build(config, context)


def _build_rabbitmq(config: Config, context: BuildContext) -> list[Collector]:
    from tui.collectors import rabbitmq

    return rabbitmq.build(config, context)


def _build_galera(config: Config, context: BuildContext) -> list[Collector]:
    from tui.collectors import galera

    return galera.build(config, context)


def _build_placement(config: Config, context: BuildContext) -> list[Collector]:
    from tui.collectors import placement

    return placement.build(config, context)


def _services_pane() -> type[SourcePane]:
    from tui.widgets.services_pane import ServicesPane

    return ServicesPane


def _instances_pane() -> type[SourcePane]:
    from tui.widgets.instances_pane import InstancesPane

    return InstancesPane


def _rabbitmq_pane() -> type[SourcePane]:
    from tui.widgets.rabbitmq_pane import RabbitMQPane

    return RabbitMQPane


def _galera_pane() -> type[SourcePane]:
    from tui.widgets.galera_pane import GaleraPane

    return GaleraPane


def _builds_nothing(config: Config, context: BuildContext) -> list[Collector]:
    return []


@record
class SourceSpec:
    """One source: its collector, its pane, its config section and the `:` commands that focus it."""

    name: str  # the collector's name: observations, findings and the journal are keyed by it
    title: str  # its pane's border title
    section: str  # the config section that configures it (Config.<section>)
    commands: tuple[str, ...] = ()  # `:` commands that focus its pane (the first is the command, the rest aliases)
    has_pane: bool = True  # False: its findings go to the findings pane only
    interval_key: str = "interval"  # the section's key for its interval
    enabled_by: str = ""  # a property of the section that must be true too (e.g. an off switch)
    build: Builder = _builds_nothing  # (config, context) -> its collectors ([] when its section is not configured)
    pane: Callable[[], type[SourcePane]] | None = None  # its pane class (None: a plain summary pane)

    def configured(self, config: Any) -> bool:
        section = getattr(config, self.section)
        if self.enabled_by:
            return bool(getattr(section, self.enabled_by))
        flag = getattr(section, "configured", None)
        return bool(flag) if flag is not None else bool(getattr(section, "cloud", None))

    def interval(self, config: Any) -> float:
        return float(getattr(getattr(config, self.section), self.interval_key))


SOURCES: tuple[SourceSpec, ...] = (  # in pane order
    SourceSpec("services", "control plane", "openstack", ("services", "svc"), build=_build_services,
               pane=_services_pane),
    SourceSpec("instances", "instances", "openstack", ("instances", "servers"), build=_build_instances,
               pane=_instances_pane),
    SourceSpec("rabbitmq", "RabbitMQ", "rabbitmq", ("queues", "rabbitmq"), build=_build_rabbitmq,
               pane=_rabbitmq_pane),
    SourceSpec("galera", "Galera", "galera", ("galera", "db"), build=_build_galera, pane=_galera_pane),
    # the stale-allocation audit in the background (`:audit` runs it on demand): findings only, no pane
    SourceSpec("placement", "placement audit", "openstack", has_pane=False, interval_key="audit_interval",
               enabled_by="audited", build=_build_placement),
)
FINDINGS_COMMANDS: tuple[str, ...] = ("findings",)  # the findings pane: every source's findings, not a source


def spec(name: str) -> SourceSpec | None:
    return next((s for s in SOURCES if s.name == name), None)


def pane_for_command() -> dict[str, str]:
    """`:` command or alias -> the source whose pane it focuses ("findings" for the findings pane)."""
    out = {c: s.name for s in SOURCES for c in s.commands}
    out.update({c: "findings" for c in FINDINGS_COMMANDS})
    return out
