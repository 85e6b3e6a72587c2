"""Drill-down screens follow their sources live (the simulated cloud on a manual clock, driven with Pilot):
the instance screen re-renders when its host dies and says STALE when its source stops answering; the finding
screen shows the whole finding, `y` copies its command, and it says when the finding cleared."""

from __future__ import annotations

import io
import re
from collections.abc import Callable, Iterator
from typing import Any

import pytest
from rich.console import Console

from tests.testbed.sim_instances import sim_instances
from tests.testbed.wait import until_pilot
from tui.app import StacktopApp
from tui.collectors.services import ServicesCollector
from tui.config import Config
from tui.freshness import utc_clock_time
from tui.models.instances import InstancesSnapshot
from tui.openstack import connect
from tui.screens.finding import FindingScreen
from tui.screens.host import HostScreen
from tui.screens.instance import InstanceScreen
from tui.sim import start_demo
from tui.sim.demo import Demo
from tui.widgets.findings_pane import FindingsPane
from tui.widgets.read_at import ReadAtLine


@pytest.fixture
def demo() -> Iterator[Demo]:
    d = start_demo(instances=30, hosts=3, queues=5, churn=0, storyline=False, manual=True,
                   service_down_time=20, agent_down_time=20)
    try:
        yield d
    finally:
        d.stop()




async def until(pilot: Any, probe: Callable[[], Any], what: str, timeout: float = 30.0) -> Any:
    return await until_pilot(pilot, probe, what, timeout, interval=0.05)


def plain(widget: Any) -> str:
    """What a Static shows, as the terminal would (markup and Rich renderables alike), unwrapped."""
    content = widget.content
    out = io.StringIO()
    Console(file=out, width=400, color_system=None).print(widget.render() if isinstance(content, str) else content)
    return out.getvalue()


def read_line(screen: Any) -> ReadAtLine:
    return screen.query_one("#read-at", ReadAtLine)


async def test_instance_screen_follows_its_host_dying_and_says_stale_when_the_source_stops(demo: Demo) -> None:
    host = demo.engine.hosts[1].name
    with demo.engine.lock:
        sid = demo.engine.boot("canary", demo.engine.projects[0], "m1.small", host=host,
                               durations=(1.0, 1.0, 1.0, 600.0)).id
    demo.advance(5)  # the canary is spawning on a healthy host
    app = StacktopApp(Config(), collectors=[sim_instances(demo)], clock=lambda: demo.clock.time())
    async with app.run_test(size=(160, 48)) as pilot:
        def seen() -> Any:
            obs = app.observations.get("instances")
            snap = obs.snapshot if obs is not None else None
            return isinstance(snap, InstancesSnapshot) and not snap.partial and snap.server(sid) is not None

        await until(pilot, seen, "the canary in the instances source")
        app.run_command(f"server {sid}")
        screen = await until(pilot, lambda: isinstance(app.screen, InstanceScreen) and app.screen.detail is not None
                             and app.screen, "the instance screen's read")
        body = screen.query_one("#instance-body")
        assert f"yes: nova-compute on {host} is up" in plain(body)
        spawning = re.search(r"spawning for (\d+)s", plain(body))
        assert spawning is not None, plain(body)
        first = app.observations["instances"]
        assert first.ok_at is not None
        assert screen.read_at_text.startswith(f"instances read {utc_clock_time(first.ok_at)}"), screen.read_at_text
        assert f"details read {utc_clock_time(screen.detail_at)}" in screen.read_at_text  # type: ignore[arg-type]
        assert "STALE" not in plain(read_line(screen))

        # `h` to the host screen, and the host dies meanwhile: the instance screen under it follows the next poll
        await pilot.press("h")
        await until(pilot, lambda: isinstance(app.screen, HostScreen), "the host screen")
        demo.inject("kill_compute", host=host)
        demo.advance(25)  # past service_down_time (20 s) on the API's clock
        await until(pilot, lambda: f"nova-compute on {host} is down" in plain(body), "question 4 turning red")
        await pilot.press("escape")
        await until(pilot, lambda: app.screen is screen, "back on the instance screen")
        text = plain(body)
        assert f"yes: nova-compute on {host} is up" not in text
        assert f"spawning for {int(spawning.group(1)) + 25}s" in text, text
        latest = app.observations["instances"]
        assert latest.ok_at is not None and latest.ok_at > first.ok_at
        assert screen.read_at_text.startswith(f"instances read {utc_clock_time(latest.ok_at)}")
        assert isinstance(app.screen, InstanceScreen), "still the same screen, re-rendered in place"

        # nova stops answering: the source's polls fail and the screen says its data is stale, and since when
        demo.set_refusing("compute", True)
        await until(pilot, lambda: read_line(screen).has_class("-stale"), "the STALE mark")
        line = plain(read_line(screen))
        assert line.startswith(f"STALE · instances read {utc_clock_time(latest.ok_at)} (0s ago)"), line
        assert f"nova-compute on {host} is down" in plain(body), "the last data stays on screen"
        demo.set_refusing("compute", False)
        await until(pilot, lambda: not read_line(screen).has_class("-stale"), "fresh again")

        # the source stops without failing (its runner no longer polls): ~3 intervals later it is stale too
        runner = app.runners["instances"]
        runner.pause()
        await until(pilot, lambda: not runner._lock.locked() and app.observations["instances"] is runner.observation,
                    "a poll under way to land")
        stopped = app.observations["instances"]
        assert stopped.ok_at is not None
        demo.advance(90)
        await until(pilot, lambda: read_line(screen).has_class("-stale"), "STALE by age")
        assert plain(read_line(screen)).startswith(f"STALE · instances read {utc_clock_time(stopped.ok_at)} (1m ago)")

        # refresh paused on purpose (`p`): old, and said so, but not stale
        await pilot.press("p")
        await until(pilot, lambda: not read_line(screen).has_class("-stale"), "PAUSED instead of STALE")
        assert plain(read_line(screen)).startswith(f"PAUSED · instances read {utc_clock_time(stopped.ok_at)}")


async def test_instance_screen_copies_its_ids_and_says_when_the_server_is_gone(demo: Demo) -> None:
    with demo.engine.lock:
        sid = demo.engine.boot("canary", demo.engine.projects[0], "m1.small", host=demo.engine.hosts[0].name,
                               durations=(1.0, 1.0, 1.0, 600.0)).id
    demo.advance(5)
    app = StacktopApp(Config(), collectors=[sim_instances(demo)], clock=lambda: demo.clock.time())
    async with app.run_test(size=(160, 48)) as pilot:
        await until(pilot, lambda: app.observations.get("instances") is not None, "the first poll")
        app.run_command(f"server {sid}")
        screen = await until(pilot, lambda: isinstance(app.screen, InstanceScreen) and app.screen.detail is not None
                             and app.screen, "the instance screen's read")
        await pilot.press("y")
        assert app.clipboard == sid
        assert any(f"copied the instance id to the clipboard: {sid}" == n.message for n in app._notifications)
        await pilot.press("Y")
        request = next(a.request_id for a in screen.detail.actions if a.request_id)
        assert request.startswith("req-") and app.clipboard == request

        # deleted while the screen is open: the next full poll no longer lists it, and the screen says so
        with demo.engine.lock:
            demo.engine.delete(sid)
        demo.advance(5)
        body = screen.query_one("#instance-body")
        await until(pilot, lambda: "no longer lists this server" in plain(body), "the deleted server noticed")
        assert sid in plain(body), "the last read stays on screen"


async def test_finding_screen_shows_the_whole_finding_copies_its_command_and_says_when_it_cleared(
        demo: Demo) -> None:
    host = demo.engine.hosts[1].name
    cfg = demo.config()
    services = ServicesCollector(cfg.openstack, cfg.thresholds, client_factory=lambda: connect(cfg.openstack),
                                 interval=0.2, timeout=10)
    app = StacktopApp(cfg, collectors=[services], clock=lambda: demo.clock.time())
    key = f"nova.service_enabled_but_down|{host}"
    async with app.run_test(size=(160, 48)) as pilot:
        pane = app.query_one(FindingsPane)
        await until(pilot, lambda: app.observations.get("services") is not None, "the first poll")
        demo.inject("kill_compute", host=host)
        demo.advance(25)
        await until(pilot, lambda: pane.table is not None and key in pane.table.shown_keys, "the down finding")
        assert pane.table is not None
        app._activate(app.panes.index(pane))
        pane.table.move_cursor(row=pane.table.get_row_index(key))
        await pilot.press("enter")
        screen = await until(pilot, lambda: isinstance(app.screen, FindingScreen) and app.screen, "the finding screen")
        finding = screen.finding
        assert finding is not None and finding.key == ("nova.service_enabled_but_down", host)
        body = " ".join(plain(screen.query_one("#finding-body")).split())
        command = f"openstack compute service set --disable {host} nova-compute"
        assert "CRITICAL nova.service_enabled_but_down" in body
        assert f"summary {finding.summary}" in body, "the whole summary"
        assert f"owner nova-compute on {host}" in body and f"log to open nova-compute on {host}" in body
        assert f"next step {' '.join(finding.next_step.split())}" in body
        diagnostic = f"openstack compute service list --host {host} --service nova-compute"
        assert f"command {diagnostic} (read-only; y copies it) {command} (WRITE: changes the cloud; y again copies " \
               "it)" in body
        assert "Evidence" in body and "heartbeat_age_s" in body and "binary nova-compute" in body
        obs = app.observations["services"]
        assert obs.ok_at is not None and screen.read_at_text.startswith(f"read {utc_clock_time(obs.ok_at)}")

        await pilot.press("y")
        assert app.clipboard == diagnostic, "the read-only command first"
        await pilot.press("y")
        assert app.clipboard == command
        assert any(n.message == f"copied a WRITE command (it changes the cloud): {command}"
                   for n in app._notifications)

        # nova-compute comes back: the next poll no longer reports it, the screen says when it cleared
        demo.inject("start_compute", host=host)
        demo.advance(5)
        cleared = screen.query_one("#finding-cleared")
        await until(pilot, lambda: screen.cleared_at is not None, "the finding to clear")
        await pilot.pause()
        assert not cleared.has_class("-hidden")
        assert plain(cleared).startswith(f"CLEARED at {utc_clock_time(screen.cleared_at)}")
        assert screen.cleared_at == app.observations["services"].ok_at
        assert f"command {diagnostic} (read-only; y copies it) {command}" in \
            " ".join(plain(screen.query_one("#finding-body")).split()), "kept as last seen"
