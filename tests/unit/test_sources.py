"""The source registry (tui.sources): the panes, their order, the `:` commands and the collectors all come from
SOURCES, so a new source is one SourceSpec (holding its collector builder and pane class) plus its own modules.
Shown here with a source added by a test."""

from __future__ import annotations

import sys
import types
from dataclasses import replace
from datetime import datetime
from typing import Any

import pytest

from tui import commands, sources
from tui.app import StacktopApp
from tui.collectors import galera, instances, placement, rabbitmq, services
from tui.collectors.base import BaseCollector, BuildContext
from tui.collectors.registry import build_collectors
from tui.config import Config, OpenStackConfig
from tui.widgets.galera_pane import GaleraPane
from tui.widgets.instances_pane import InstancesPane
from tui.widgets.panes import pane_class, pane_order
from tui.widgets.rabbitmq_pane import RabbitMQPane
from tui.widgets.services_pane import ServicesPane
from tui.widgets.source_pane import SourcePane


def test_panes_commands_and_collectors_follow_the_registry() -> None:
    names = [s.name for s in sources.SOURCES if s.has_pane]
    assert [name for name, _ in pane_order()] == names
    assert any(not s.has_pane for s in sources.SOURCES), "a background source (no pane) is in the registry"
    table = sources.pane_for_command()
    for spec in (s for s in sources.SOURCES if s.has_pane):
        assert all(table[c] == spec.name for c in spec.commands)
        assert commands.find(spec.commands[0]) is not None, f":{spec.commands[0]} exists"
        assert spec.name == pane_class(spec.name, spec.title).SOURCE
    assert table["findings"] == "findings"


def test_every_source_holds_its_builder_and_its_pane() -> None:
    """Each spec's callables reach its own collector module and pane class (no name looked up elsewhere)."""
    config = Config(openstack=OpenStackConfig(cloud="c"))
    context = BuildContext()
    modules = {"services": services, "instances": instances, "rabbitmq": rabbitmq, "galera": galera,
               "placement": placement}
    for spec in sources.SOURCES:
        built = spec.build(config, context)
        assert built == [] or all(type(c).__module__ == modules[spec.name].__name__ for c in built), spec.name
    panes = {s.name: s.pane() for s in sources.SOURCES if s.pane is not None}
    assert panes == {"services": ServicesPane, "instances": InstancesPane, "rabbitmq": RabbitMQPane,
                     "galera": GaleraPane}
    assert all(name == cls.SOURCE for name, cls in panes.items())


class ProbeCollector(BaseCollector):
    name = "probe"
    interval = 7.0
    timeout = 5.0

    async def collect(self) -> dict[str, Any]:
        return {"ok": True}

    def findings(self, snapshot: Any, now: datetime) -> list[Any]:
        return []


@pytest.fixture
def probe_source(monkeypatch: pytest.MonkeyPatch) -> sources.SourceSpec:
    """A source that exists only in this test: a module with build(config, context), and one SourceSpec holding
that builder."""
    module = types.ModuleType("probe_source")
    seen: list[BuildContext] = []

    def build(config: Config, context: BuildContext | None = None) -> list[Any]:
        seen.append(context or BuildContext())
        return [ProbeCollector()] if config.openstack.cloud else []

    module.build = build  # type: ignore[attr-defined]
    module.seen = seen  # type: ignore[attr-defined]
    monkeypatch.setitem(sys.modules, "probe_source", module)
    spec = sources.SourceSpec("probe", "probe", "openstack", commands=("probe",), build=build)
    monkeypatch.setattr(sources, "SOURCES", (*sources.SOURCES, spec))
    return spec


async def test_a_new_source_is_one_spec_and_its_module(probe_source: sources.SourceSpec) -> None:
    config = Config(openstack=OpenStackConfig(cloud="c"))
    built = build_collectors(config, dashboard=True)
    assert [c.name for c in built][-1] == "probe"
    context = sys.modules["probe_source"].seen[-1]  # type: ignore[attr-defined]
    assert context.dashboard and context.session is not None
    assert sources.pane_for_command()["probe"] == "probe"
    assert probe_source.configured(config) and not probe_source.configured(replace(config, openstack=OpenStackConfig()))

    app = StacktopApp(config, collectors=[ProbeCollector()])
    async with app.run_test(size=(160, 48)) as pilot:
        await pilot.pause()
        pane = app.query_one("#pane-probe", SourcePane)
        assert pane.SOURCE == "probe" and pane.border_title == "probe"
        app.show_source("probe")
        await pilot.pause()
        assert app.active_pane() is pane
