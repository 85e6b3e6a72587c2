"""The source registry: every source stacktop reads, described once.

The app (its panes, their order and titles, what is configured and how often it polls), the `:` commands that
focus a pane, the collector registry (`stacktop snapshot`, the dashboard) and replay all read SOURCES. Adding a
source is one SourceSpec here plus its own modules, each bound by name in its own layer: a collector module's
`build(config, context) -> list[Collector]` in tui.collectors.registry.BUILDERS, and optionally a pane class in
tui.widgets.panes.PANES (else a plain summary pane). No Textual and no client imports here: this says what a
source is; the layers above import what reads and shows it, so every edge is a plain import.
"""

from __future__ import annotations

from typing import Any

from tui.records import record


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

    def configured(self, config: Any) -> bool:
        section = getattr(config, self.section)
        if self.enabled_by:
            return bool(getattr(section, self.enabled_by))
        flag = getattr(section, "configured", None)
        return bool(flag) if flag is not None else bool(getattr(section, "cloud", None))

    def interval(self, config: Any) -> float:
        return float(getattr(getattr(config, self.section), self.interval_key))


SOURCES: tuple[SourceSpec, ...] = (  # in pane order
    SourceSpec("services", "control plane", "openstack", ("services", "svc")),
    SourceSpec("instances", "instances", "openstack", ("instances", "servers")),
    SourceSpec("rabbitmq", "RabbitMQ", "rabbitmq", ("queues", "rabbitmq")),
    SourceSpec("galera", "Galera", "galera", ("galera", "db")),
    # the stale-allocation audit in the background (`:audit` runs it on demand): findings only, no pane
    SourceSpec("placement", "placement audit", "openstack", has_pane=False,
               interval_key="audit_interval", enabled_by="audited"),
)
FINDINGS_COMMANDS: tuple[str, ...] = ("findings",)  # the findings pane: every source's findings, not a source


def spec(name: str) -> SourceSpec | None:
    return next((s for s in SOURCES if s.name == name), None)


def pane_for_command() -> dict[str, str]:
    """`:` command or alias -> the source whose pane it focuses ("findings" for the findings pane)."""
    out = {c: s.name for s in SOURCES for c in s.commands}
    out.update({c: "findings" for c in FINDINGS_COMMANDS})
    return out
