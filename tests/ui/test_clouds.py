"""Several clouds: `:cloud NAME` and `c` swap every pane to the other cloud's last observations at once, the
inactive cloud keeps polling (slower) and its header badge follows, the journal says which cloud."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from rich.text import Text

from tests.testbed.wait import until_pilot
from tui import sources
from tui.app import StacktopApp, TopBar
from tui.config import Config, GaleraConfig, OpenStackConfig, RabbitMQConfig, UIConfig
from tui.recorder import Journal, Recorder, read_journal
from tui.sim import start_demo
from tui.sim.demo import DemoClouds
from tui.widgets.command_input import StacktopCommands
from tui.widgets.findings_pane import FindingsPane
from tui.widgets.instances_pane import InstancesPane
from tui.widgets.services_pane import ServicesPane
from tui.widgets.triage_row import TriageRow

ACTIVE_S, INACTIVE_S = 0.5, 2.0


@pytest.fixture
def clouds() -> Iterator[DemoClouds]:
    east = start_demo(instances=12, hosts=2, queues=5, churn=0, storyline=False, manual=True,
                      service_down_time=20, seed=0)
    west = start_demo(instances=20, hosts=3, queues=5, churn=0, storyline=False, manual=True,
                      service_down_time=20, seed=1)
    pair = DemoClouds({"east": east, "west": west})
    try:
        for demo in pair.demos.values():
            notifications_consumed(demo)
            demo.advance(6)  # past RabbitMQ's first statistics tick
        yield pair
    finally:
        pair.stop()


def notifications_consumed(demo: Any) -> None:
    """Both clouds healthy: the simulator's notification queues hold thousands of messages with no consumer
    (a real warning, rabbitmq.queue_no_consumer, once two full RabbitMQ polls saw it), which made the 'both ok'
    start depend on how many polls a loaded machine fits in before the first assertion. Here they have a
    consumer and are empty."""
    engine = demo.engine
    with engine.lock:
        for q in engine.queues.values():
            if q.name.startswith(("notifications.", "versioned_notifications.")):
                q.set(engine.t, consumers=1, ready=0, growth=0.0)


def config(pair: DemoClouds) -> Config:
    base = Config(openstack=OpenStackConfig(interval=ACTIVE_S, timeout=10), rabbitmq=RabbitMQConfig(interval=ACTIVE_S),
                  galera=GaleraConfig(interval=ACTIVE_S), ui=UIConfig(inactive_cloud_interval=INACTIVE_S))
    return pair.config(base)


async def until(pilot: Any, probe: Callable[[], Any], what: str, timeout: float = 40.0) -> Any:
    return await until_pilot(pilot, probe, what, timeout, interval=0.05)


def computes(obs: Any) -> int:
    """nova-compute services in a services observation (east has 2 hosts, west 3)."""
    return sum(1 for section in obs.snapshot.sections for r in section.rows if r.binary == "nova-compute")


def topbar(app: StacktopApp) -> str:
    return Text.from_markup(str(app.query_one("#topbar", TopBar).content)).plain


async def test_switch_swaps_panes_at_once_and_inactive_badge_follows_slow_polls(clouds: DemoClouds,
                                                                                tmp_path: Path) -> None:
    recorder = Recorder(Journal(tmp_path, name="j.jsonl"))
    app = StacktopApp(config(clouds), galera_connectors=clouds.galera_connectors, recorder=recorder)
    async with app.run_test(size=(160, 48)) as pilot:
        assert list(app.clouds) == ["east", "west"] and app.active_cloud == "east" and recorder.cloud == "east"
        await until(pilot, lambda: all(len(s.observations) == 4 and all(o.ok for o in s.observations.values())
                                       for s in app.clouds.values()), "every source of both clouds")
        east, west = app.clouds["east"], app.clouds["west"]
        # the cloud on screen polls at its own rates, the other one at [ui] inactive_cloud_interval
        panes = {s.name for s in sources.SOURCES if s.has_pane}
        assert {r.next_delay() for n, r in east.runners.items() if n in panes} == {ACTIVE_S}
        assert {r.next_delay() for n, r in west.runners.items() if n in panes} == {INACTIVE_S}
        # the background placement audit keeps its own (slower) pace on both clouds
        assert [r.next_delay() for n, r in west.runners.items() if n not in panes] == [600.0]
        assert [r.next_delay() for n, r in east.runners.items() if n not in panes] == [600.0]
        services = app.query_one(ServicesPane)
        assert services.table is not None and services.table.shown_keys  # east's 2 computes
        assert services.observation is not None and computes(services.observation) == 2
        assert [(b.name, b.level, b.active) for b in app.cloud_badges()] == [("east", "ok", True),
                                                                              ("west", "ok", False)], \
            [(c, f.severity, f.kind, f.subject, f.summary) for c, s in app.clouds.items()
             for o in s.observations.values() for f in o.findings]
        assert "west ok" in topbar(app)

        # west's compute-02 dies while east is on screen: west's badge turns red from its slower polls
        clouds.demos["west"].inject("kill_compute", host="compute-02")
        clouds.demos["west"].advance(25)  # past service_down_time on west's clock
        await until(pilot, lambda: app.cloud_badges()[1].level == "critical", "west's badge turns critical")
        assert "west CRIT" in topbar(app) and app.active_cloud == "east"
        await pilot.pause()
        assert any(str(n.message).startswith("cloud west turned critical: nova.service_enabled_but_down compute-02")
                   for n in app._notifications), [n.message for n in app._notifications]
        # the palette offers each cloud
        palette = [hit.text async for hit in StacktopCommands(app.screen).discover()]
        assert {":cloud NAME", ":cloud east", ":cloud west"} <= {str(t) for t in palette}
        assert services.observation is east.observations["services"]  # the panes still show east

        # `c`: every pane shows west's last observations at once (paused: no poll can happen meanwhile)
        await pilot.press("p")
        await pilot.press("c")
        await pilot.pause()
        await until(pilot, lambda: app.active_cloud == "west", "the switch to west")
        assert services.observation is west.observations["services"] and recorder.cloud == "west"
        assert computes(services.observation) == 3
        instances = app.query_one(InstancesPane)
        assert instances.observation is west.observations["instances"]
        assert len(instances.observation.snapshot.servers) == 20
        findings = app.query_one(FindingsPane)
        assert any(f.kind == "nova.service_enabled_but_down" and f.subject.startswith("compute-02")
                   for f in findings.findings), [f.kind for f in findings.findings]
        row = app.query_one(TriageRow)
        assert row.observations == west.observations
        compute = row.summary.cell("compute") if row.summary else None
        assert compute is not None and compute.level == "critical", compute
        assert [(b.name, b.active) for b in app.cloud_badges()] == [("east", False), ("west", True)]
        assert {r.next_delay() for n, r in west.runners.items() if n in panes} == {ACTIVE_S}
        assert {r.next_delay() for n, r in east.runners.items() if n in panes} == {INACTIVE_S}
        await pilot.press("p")

        # `:cloud NAME` with tab completion of the name
        await pilot.press("colon", *"cloud ea", "tab")
        assert app.query_one("#command").value == "cloud east"  # type: ignore[attr-defined]
        await pilot.press("enter")
        await until(pilot, lambda: app.active_cloud == "east", ":cloud east")
        assert services.observation is not None and computes(services.observation) == 2
        assert not any(f.subject.startswith("compute-02") and f.severity == "critical" for f in findings.findings)

        # a name that is no cloud: one line naming the clouds
        assert app.run_command("cloud north") is False
        await pilot.pause()
        assert any(":cloud north: no such cloud - one of east, west" in str(n.message) for n in app._notifications)
    events = read_journal(tmp_path / "j.jsonl")
    raised = [e for e in events if e["type"] == "finding_raised"
              and e["finding"]["kind"] == "nova.service_enabled_but_down"]
    assert raised and {e["cloud"] for e in raised} == {"west"}
    assert [(e["from"], e["cloud"]) for e in events if e["type"] == "cloud_switched"] == [("east", "west"),
                                                                                          ("west", "east")]
    snapshots = [e for e in events if e["type"] == "snapshot"]
    assert {(e["cloud"], e["source"]) for e in snapshots} >= {("east", "services"), ("west", "services")}


async def test_one_cloud_c_says_how_to_add_clouds() -> None:
    app = StacktopApp(Config(), collectors=[])
    async with app.run_test(size=(80, 24)) as pilot:
        await pilot.press("c")
        await pilot.pause()
        assert any("only one cloud is configured" in str(n.message) for n in app._notifications)
        assert "cloud no cloud" in topbar(app)  # the single-cloud header as before: no badges


async def test_switch_to_a_cloud_without_galera_says_so_and_back_shows_the_nodes(clouds: DemoClouds) -> None:
    from dataclasses import replace

    from tui.widgets.galera_pane import GaleraPane

    cfg = config(clouds)
    cfg = replace(cfg, clouds=(cfg.clouds[0], replace(cfg.clouds[1], galera=GaleraConfig())))
    app = StacktopApp(cfg, galera_connectors=clouds.galera_connectors)
    async with app.run_test(size=(160, 48)) as pilot:
        pane = app.query_one(GaleraPane)
        await until(pilot, lambda: pane.table is not None and len(pane.table.shown_keys) == 3, "east's 3 nodes")
        await until(pilot, lambda: "services" in app.clouds["west"].observations, "west's first poll")
        assert "galera" not in app.clouds["west"].runners
        await pilot.press("c")
        await until(pilot, lambda: app.active_cloud == "west", "the switch to west")
        await pilot.pause()
        assert not pane.configured and pane.table is None and pane.observation is None
        assert "No Galera source is configured" in str(pane.query_one("#galera-message").content)  # type: ignore[attr-defined]
        await pilot.press("c")
        await until(pilot, lambda: app.active_cloud == "east", "back to east")
        await pilot.pause()
        assert pane.configured and pane.table is not None and len(pane.table.shown_keys) == 3
        assert pane.observation is app.clouds["east"].observations["galera"]


async def test_breadcrumb_starts_with_the_cloud_on_screen(clouds: DemoClouds) -> None:
    """With several clouds the breadcrumb names the cloud on screen first (one cloud: unchanged, see
    tests/ui/test_operator_ux.py), on the dashboard and on every drill-down, and follows a switch."""
    from tui.screens.instance import InstanceScreen
    from tui.widgets.breadcrumb import Breadcrumb

    def crumb() -> str:  # "" while a pushed screen is still composing
        lines = app.screen.query(Breadcrumb)
        return lines.first().text if lines else ""

    app = StacktopApp(config(clouds), galera_connectors=clouds.galera_connectors)
    async with app.run_test(size=(160, 48)) as pilot:
        await until(pilot, lambda: crumb() == "east > services", "the dashboard's breadcrumb")
        await pilot.press("colon", *"instances", "enter", "slash", *"BUILD", "enter")
        await until(pilot, lambda: crumb() == "east > instances /BUILD", "the pane and its filter")
        app.push_screen(InstanceScreen("35b592e5-1111-2222-3333-444455556666"))
        await until(pilot, lambda: crumb() == "east > instances /BUILD > 35b592e5", "the drill-down's breadcrumb")
        await pilot.press("escape", "escape")  # back to the dashboard, then the filter cleared
        await until(pilot, lambda: crumb() == "east > instances", "the filter cleared")
        await pilot.press("colon", *"cloud west", "enter")
        await until(pilot, lambda: app.active_cloud == "west" and crumb() == "west > instances", "the switch")
