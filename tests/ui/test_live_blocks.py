"""Every block of the host and instance screens is live (the simulated cloud on a manual clock, driven with
Pilot): the host screen's nova services, hypervisor and agents blocks follow the same services observation as
its table, every block says when its data was read and STALE beside it, the screens read their own parts again
on a timer and on `r`, and the instance screen re-reads when its source sees the server go to ERROR."""

from __future__ import annotations

import io
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
from tui.models.services import ServicesSnapshot
from tui.openstack import connect
from tui.screens.host import HostScreen
from tui.screens.instance import InstanceScreen
from tui.screens.live import OWN_READ_EVERY_S
from tui.sim import start_demo
from tui.sim.demo import Demo


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
    out = io.StringIO()
    Console(file=out, width=400, color_system=None).print(widget.render())
    return out.getvalue()


def services_app(demo: Demo) -> StacktopApp:
    cfg = demo.config()
    services = ServicesCollector(cfg.openstack, cfg.thresholds, client_factory=lambda: connect(cfg.openstack),
                                 interval=0.2, timeout=10)
    return StacktopApp(cfg, collectors=[services], clock=lambda: demo.clock.time())


def title_line(text: str, title: str) -> str:
    """The line of a block's title (its read time and STALE stand beside it)."""
    return next(ln for ln in text.splitlines() if ln.startswith(title))


def table_state(app: StacktopApp, screen: HostScreen, binary: str) -> str | None:
    """The state cell the host screen's table shows for `binary` on its host."""
    obs = app.observations.get("services")
    snap = obs.snapshot if obs is not None else None
    if not isinstance(snap, ServicesSnapshot) or screen.table is None:
        return None
    row = next((r for s in snap.sections for r in s.rows if r.binary == binary and r.host == screen.host), None)
    if row is None or row.key not in screen.table.shown_keys:
        return None
    return str(screen.table.get_row(row.key)[2])


async def test_host_blocks_follow_a_compute_killed_then_restarted_never_down_beside_an_up_table(
        demo: Demo) -> None:
    host = demo.engine.hosts[1].name
    app = services_app(demo)
    async with app.run_test(size=(180, 60)) as pilot:
        await until(pilot, lambda: app.observations.get("services") is not None, "the first poll")
        demo.inject("kill_compute", host=host)
        demo.inject("kill_agent", host=host)
        demo.advance(25)  # past the down times (20 s)
        app.run_command(f"host {host}")
        screen = await until(pilot, lambda: isinstance(app.screen, HostScreen) and app.screen.detail is not None
                             and app.screen, "the host screen's read")
        body = screen.query_one("#host-detail")
        await until(pilot, lambda: table_state(app, screen, "nova-compute") == "DOWN"
                    and "nova-compute  DOWN" in plain(body), "the table and the blocks saying down")
        text = plain(body)
        assert "state down  status enabled" in text and "Open vSwitch agent  neutron-openvswitch-agent  DEAD" in text
        reads = screen.reads

        # the compute and its agent come back; the top table follows the next poll, and so does every block
        demo.inject("start_compute", host=host)
        demo.inject("start_agent", host=host)
        demo.advance(5)
        contradictions: list[str] = []

        def all_up() -> bool:
            text = plain(body)
            up = table_state(app, screen, "nova-compute") == "up"
            if up and ("nova-compute  DOWN" in text or "state down" in text or "DEAD" in text):
                contradictions.append(text)
            return up and table_state(app, screen, "neutron-openvswitch-agent") == "up" and "nova-compute  up" in text \
                and "state up  status enabled" in text and "neutron-openvswitch-agent  alive" in text

        await until(pilot, all_up, "every block up with the table")
        assert not contradictions, contradictions[0]
        assert screen.reads == reads, "the blocks followed the source's observation, not a read of their own"
        obs = app.observations["services"]
        assert obs.ok_at is not None
        text = plain(body)
        read = f"control plane read {utc_clock_time(obs.ok_at)}"
        assert read in title_line(text, "Nova services on this host")
        assert read in title_line(text, "Network agents")
        assert f"state, status: {read}" in title_line(text, "Hypervisor")
        await pilot.press("escape")


async def test_host_blocks_say_stale_when_their_sources_stop_and_are_read_again_on_a_timer_and_on_r(
        demo: Demo) -> None:
    host = demo.engine.hosts[0].name
    app = services_app(demo)
    async with app.run_test(size=(180, 60)) as pilot:
        await until(pilot, lambda: app.observations.get("services") is not None, "the first poll")
        app.run_command(f"host {host}")
        screen = await until(pilot, lambda: isinstance(app.screen, HostScreen) and app.screen.detail is not None
                             and app.screen, "the host screen's read")
        body = screen.query_one("#host-detail")
        servers_title = screen.query_one("#host-servers-title")
        first = screen.read_at
        assert first is not None
        text = plain(body) + plain(servers_title)
        for title in ("Nova services on this host", "Hypervisor", "Network agents", "Ports bound to this host",
                      "Servers on this host", "Migrations in progress", "Placement provider", "Placement audit"):
            assert "STALE" not in title_line(text, title), title
        own = f"read {utc_clock_time(first)} (<1m ago)"
        assert own in title_line(text, "Ports bound to this host")
        assert own in title_line(text, "Placement provider")

        # `r` reads the blocks again: each says the new time
        demo.advance(7)
        await pilot.press("r")
        await until(pilot, lambda: screen.read_at == first + 7, "the refresh")
        await until(pilot, lambda: f"read {utc_clock_time(first + 7)}"
                    in title_line(plain(servers_title), "Servers on this host"), "the refreshed block's time")

        # the screen reads its own blocks again once they are OWN_READ_EVERY_S old, without `r`
        reads = screen.reads
        demo.advance(OWN_READ_EVERY_S + 1)
        await until(pilot, lambda: screen.reads > reads and screen.read_at == first + 7 + OWN_READ_EVERY_S + 1,
                    "the timed re-read")

        # nova stops answering: the services-fed blocks say STALE at once; the screen's own nova parts once
        # their re-read fails, keeping what they last read; the parts read from neutron stay fresh
        demo.set_refusing("compute", True)
        await until(pilot, lambda: "STALE" in title_line(plain(body), "Nova services on this host"),
                    "the nova services block STALE")
        assert "STALE" in title_line(plain(body), "Hypervisor")
        last = screen.read_at
        assert last is not None
        assert screen.servers is not None
        servers = screen.servers.shown_keys[:3]
        assert servers
        reads = screen.reads
        demo.advance(OWN_READ_EVERY_S + 1)
        await until(pilot, lambda: screen.reads > reads, "the timed re-read")
        await until(pilot, lambda: "STALE" in title_line(plain(servers_title), "Servers on this host"),
                    "the servers block STALE")
        text = plain(body)
        line = title_line(plain(servers_title), "Servers on this host")
        assert f"STALE · read {utc_clock_time(last)} ({OWN_READ_EVERY_S + 1:.0f}s ago)" in line, line
        assert "connection refused" in line, line
        assert screen.servers.shown_keys[:3] == servers, "the servers last read stay on screen"
        ports = title_line(text, "Ports bound to this host")
        assert "STALE" not in ports and f"read {utc_clock_time(last + OWN_READ_EVERY_S + 1)}" in ports, ports
        demo.set_refusing("compute", False)


async def test_instance_blocks_follow_a_server_going_to_error_while_the_screen_is_open(demo: Demo) -> None:
    with demo.engine.lock:
        sid = demo.engine.boot("doomed", demo.engine.projects[0], "m1.small", fail="novalidhost",
                               durations=(20.0, 1.0, 1.0, 1.0)).id
    demo.advance(5)  # still scheduling; no valid host at +20 s
    app = StacktopApp(Config(), collectors=[sim_instances(demo)], clock=lambda: demo.clock.time())
    async with app.run_test(size=(160, 48)) as pilot:
        def listed() -> bool:
            obs = app.observations.get("instances")
            snap = obs.snapshot if obs is not None else None
            return isinstance(snap, InstancesSnapshot) and not snap.partial and snap.server(sid) is not None

        await until(pilot, listed, "the build in the instances source")
        app.run_command(f"server {sid}")
        screen = await until(pilot, lambda: isinstance(app.screen, InstanceScreen) and app.screen.detail is not None
                             and app.screen, "the instance screen's read")
        body = screen.query_one("#instance-body")
        text = plain(body)
        assert "What does the fault say? no fault recorded" in text
        assert "conductor_schedule_and_build_instances" not in text
        first = screen.detail_at
        assert first is not None
        assert f"read {utc_clock_time(first)} (<1m ago)" in title_line(text, "Actions and events")

        demo.advance(16)  # the scheduler finds no host: ERROR with a fault, and an Error event; no timer is due
        assert OWN_READ_EVERY_S > 16

        def followed() -> bool:
            text = plain(body)
            return ("What does the fault say? No valid host was found." in text
                    and "conductor_schedule_and_build_instances" in text)

        await until(pilot, followed, "the fault and the failed event on screen")
        text = plain(body)
        event = next(ln for ln in text.splitlines() if "conductor_schedule_and_build_instances" in ln)
        assert "Error" in event
        assert "no fault recorded" not in text
        assert screen.detail_at == first + 16, "read again when the source saw the server change"
        assert f"read {utc_clock_time(first + 16)}" in title_line(text, "Actions and events")
        assert "STALE" not in text
