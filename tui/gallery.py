"""The screenshot gallery: the demo storyline walked to the moments worth showing, deterministically.

Used by `scripts/screenshots.py` (writes screenshots/*.svg) and by the snapshot tests (tests/ui/test_gallery.py),
so the README's pictures and the tests show the same thing. Deterministic: a fixed seed and sim start, a
manual sim clock that the app also reads, and sources polled only when the tour says so (one poll of every
source per step, waited for), never on a wall-clock timer. Times on screen are local: run with TZ=UTC.

Storyline (tui/sim/README.md): the victim's nova-compute stops at 15 s (its queue loses its consumer, reported
down at 65-75 s), a stale allocation appears at 30 s, a RabbitMQ memory alarm 45-75 s, Galera without quorum
60-90 s; churn boots a new server every ~10 s.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Awaitable, Callable
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import tui.app
from tui.app import ObservationMessage, StacktopApp
from tui.recorder import Recorder
from tui.sim import Demo, start_demo
from tui.widgets.keyed_table import KeyedTable

START = 1_790_000_000.0  # sim epoch of the tour (2026-09-21 14:13:20 UTC)
SEED = 0
SIZE = (160, 48)
STEP = 5.0  # sim seconds between two polls of every source while walking the storyline


def make_demo(*, hostile: bool = False) -> Demo:
    return start_demo(manual=True, seed=SEED, start=START, hostile=hostile)


def demo_for(scene_name: str) -> Demo:
    """The demo a scene is shown on: the hostile-names scene's cloud speaks tui.sim.hostile."""
    return make_demo(hostile=scene_name in HOSTILE_SCENES)


class GalleryApp(StacktopApp):
    """The dashboard on the demo cloud; its sources poll only when the tour asks (Tour.poll)."""

    CSS_PATH = str(Path(tui.app.__file__).with_name("app.tcss"))

    def __init__(self, demo: Demo, *, recorder: Recorder | None = None) -> None:
        super().__init__(demo.config(), clock=lambda: demo.now().timestamp(), recorder=recorder,
                         galera_connector=demo.galera_connector)
        self.demo = demo
        self.polls: dict[str, int] = {}

    def _start_sources(self) -> None:
        from tui.collectors.registry import build_collectors

        collectors = build_collectors(self.config, galera_connector=self.demo.galera_connector)
        for collector in collectors:
            # the collectors' own clocks (stuck-since stamps, changes-since cursors, flow-control intervals,
            # backoffs): the sim's, so that what they show depends on sim time only
            if hasattr(collector, "_clock"):
                collector._clock = self.demo.now
            if hasattr(collector, "_monotonic"):
                collector._monotonic = self.clock
        self._given_collectors = collectors
        super()._start_sources()
        for runner in self.runners.values():
            runner.paused = True  # not app.paused: the top bar stays "live"; Tour.poll refreshes them
        self._end_triage_hold()  # no first reads to wait for: they come when the tour asks

    def on_observation_message(self, message: ObservationMessage) -> None:
        super().on_observation_message(message)
        source = message.observation.source
        self.polls[source] = self.polls.get(source, 0) + 1


class Tour:
    """Drives a GalleryApp through the storyline with a Pilot."""

    def __init__(self, app: GalleryApp, pilot: Any) -> None:
        self.app = app
        self.pilot = pilot
        self.demo = app.demo

    @property
    def elapsed(self) -> float:
        return self.demo.now().timestamp() - START

    async def until(self, predicate: Callable[[], bool], what: str, timeout: float = 60.0) -> None:
        deadline = time.monotonic() + timeout
        while not predicate():
            if time.monotonic() > deadline:
                raise TimeoutError(f"gallery: {what} not reached in {timeout:g} s")
            await self.pilot.pause(0.05)

    async def poll(self) -> None:
        """Every source polls once at the current sim time; wait until each one's observation is shown."""
        await self.until(lambda: len(self.app.runners) >= 4, "sources started")
        before = {name: self.app.polls.get(name, 0) for name in self.app.runners}
        self.app.action_refresh_now()
        await self.until(lambda: all(self.app.polls.get(n, 0) > c for n, c in before.items()), "a poll of every source")
        await self.pilot.pause()  # the panes render in their own message queues: before the sim clock moves on

    async def walk(self, until: float) -> None:
        """Advance sim time to `until` seconds after the start, polling every STEP."""
        if self.elapsed == 0:
            await self.poll()
        while self.elapsed < until:
            self.demo.advance(min(STEP, until - self.elapsed))
            await self.poll()

    async def settle(self) -> None:
        """No flash, toast or pending refresh left: what a screenshot should see."""
        await self.pilot.pause(KeyedTable.FLASH_SECONDS + 0.3)  # a changed cell's flash ends by itself
        self.app.clear_notifications()
        await self.pilot.pause(0.1)
        for _ in range(20):  # a widget still composing (the footer after a focus change) cannot be exported yet
            try:
                self.app.export_screenshot()
                return
            except TypeError:
                await self.pilot.pause(0.2)

    async def command(self, line: str) -> None:
        self.app.run_command(line)
        await self.pilot.pause(0.1)

    def story_detail(self, event: str, key: str) -> str:
        for _, name, details in self.demo.story():
            if name == event:
                return str(details[key])
        raise LookupError(f"gallery: the storyline has no {event} yet")


# ---- the scenes: each walks to its moment and leaves the app showing it -------------------------------------
async def main_view(tour: Tour) -> None:
    """80 s: compute down with a build stuck on it, its queue without consumer, Galera without quorum."""
    await tour.walk(80)
    await tour.settle()


async def rabbitmq_zero_consumer(tour: Tour) -> None:
    """50 s: the dead compute's queue fills with no consumer, during the memory alarm."""
    await tour.walk(50)
    await tour.command("queues")
    await tour.settle()


async def galera_no_quorum(tour: Tour) -> None:
    await tour.walk(80)
    await tour.command("galera")
    await tour.settle()


async def instance_stuck(tour: Tour) -> None:
    """The build stuck in spawning on the dead compute: the instance screen's five questions."""
    from tui.screens.instance import InstanceScreen

    await tour.walk(80)
    await tour.command("instances")
    await tour.command(f"server {tour.story_detail('stuck_boot', 'server')}")
    await tour.until(lambda: isinstance(tour.app.screen, InstanceScreen) and tour.app.screen.detail is not None,
                     "the instance screen's read")
    await tour.settle()


async def finding_detail(tour: Tour) -> None:
    """enter on the stuck build's finding: the whole finding, its owner, the log to open and the command."""
    from tui.screens.finding import FindingScreen
    from tui.widgets.findings_pane import FindingsPane

    await tour.walk(80)
    await tour.command("findings")
    pane = tour.app.query_one(FindingsPane)
    key = f"instance.stuck|{tour.story_detail('stuck_boot', 'server')}"
    assert pane.table is not None
    pane.table.move_cursor(row=pane.table.get_row_index(key), animate=False)
    await tour.pilot.press("enter")
    await tour.until(lambda: isinstance(tour.app.screen, FindingScreen), "the finding screen")
    await tour.settle()


GALLERY_LOGS = Path("/tmp/stacktop-gallery")  # a fixed path: it is shown in the picture


def _compute_log(host: str, server: str, name: str, request: str, began: datetime) -> str:
    """nova-compute's log on the victim host up to its stop: the build's lines (one naming the server as its
    tenant typed it), then the service going away."""
    def at(seconds: float) -> str:
        return (began + timedelta(seconds=seconds)).strftime("%Y-%m-%d %H:%M:%S.%f")[:-3]

    ctx = f"[{request} 5c0f1b2e4d7a4f0e9b1c3d5e7f9a1b2c 8e6d4c2a0b9f4e1d8c7b6a5f4e3d2c1b - default default]"
    return "\n".join([
        f"{at(-40)} 4121 INFO nova.compute.resource_tracker [-] Final resource view: phys_ram=65536MB used_ram=6656MB",
        f"{at(-3)} 4121 INFO nova.compute.manager {ctx} [instance: {server}] Building server {name}",
        f"{at(-2)} 4121 INFO nova.compute.claims {ctx} [instance: {server}] Claim successful on node {host}",
        f"{at(-1.5)} 4121 INFO nova.virt.libvirt.driver {ctx} [instance: {server}] Creating image(s)",
        f"{at(0)} 4121 INFO nova.compute.manager {ctx} [instance: {server}] Took 1.42 seconds to build block "
        "device mappings",
        f"{at(1)} 4121 WARNING nova.compute.manager {ctx} [instance: {server}] Timeout waiting for "
        "[('network-vif-plugged', 'b7e2...')] for instance with vm_state building and task_state spawning",
        f"{at(2)} 4121 INFO oslo_service.service [-] Caught SIGTERM, stopping children",
        f"{at(3)} 4121 ERROR oslo.messaging._drivers.impl_rabbit [-] Connection failed: [Errno 111] "
        "ECONNREFUSED (retrying in 2.0 seconds)",
    ]) + "\n"


async def finding_log_lines(tour: Tour) -> None:
    """`l` on the stuck build's finding: nova-compute's lines of that build on its host, from a per-host
    log source (a `{host}` path template)."""
    from tui.config import LogSource
    from tui.exercises.hostlogs import finding_query
    from tui.screens.finding import FindingScreen
    from tui.screens.loglines import LogLinesScreen

    await finding_detail(tour)
    screen = tour.app.screen
    assert isinstance(screen, FindingScreen) and screen.finding is not None
    query = finding_query(screen.finding)
    assert query.host is not None
    began = query.began or datetime.fromtimestamp(START, UTC)
    folder = GALLERY_LOGS / query.host
    folder.mkdir(parents=True, exist_ok=True)
    request = next((i for i in query.ids if i.startswith("req-")), "req-6f1d2c3b-4a5e-4f60-8a7b-9c0d1e2f3a4b")
    name = tour.story_detail("stuck_boot", "server_name")
    log = _compute_log(query.host, screen.finding.subject, name, request, began.astimezone())
    (folder / "nova-compute.log").write_text(log)
    source = LogSource("nova-compute", path=str(GALLERY_LOGS / "{host}" / "nova-compute.log"),
                       hosts=(query.host,), timeout=10)
    lines = LogLinesScreen(query, [source])
    await tour.app.push_screen(lines)
    await tour.until(lambda: lines.blocks is not None, "the log lines")
    await tour.settle()


async def host_drilldown(tour: Tour) -> None:
    """The host holding the stale allocation: placement's consumers judged by the audit."""
    from rich.text import Text

    from tui.screens.host import HostScreen, detail_text

    await tour.walk(40)
    await tour.command(f"host {tour.story_detail('stale_allocation', 'host')}")
    await tour.until(lambda: isinstance(tour.app.screen, HostScreen) and tour.app.screen.reads > 0,
                     "the host screen's read")
    screen = tour.app.screen
    assert isinstance(screen, HostScreen) and screen.detail is not None
    await tour.settle()  # the blocks drawn with their read times, as the screen shows them
    # the placement half (the stale allocation) lies below the host's ports: scroll it to the top of what is shown
    lines = Text.from_markup(screen.shown_detail or detail_text(screen.detail, screen.live)).plain.splitlines()
    at = next((i for i, line in enumerate(lines) if line.startswith("Placement provider")), 0)
    detail = screen.query_one("#host-detail")
    screen.query_one("#host-scroll").scroll_to(y=detail.virtual_region.y + at, animate=False)
    await tour.settle()


async def boot_trace(tour: Tour) -> None:
    """`:trace-boot` on the next new server, followed to ACTIVE (sim time steps one trace interval per poll)."""
    from tui.exercises.boot_trace import BootTrace
    from tui.exercises.live import run_boot_trace
    from tui.screens.host import client_getter
    from tui.screens.trace import TraceScreen, render_boot

    await tour.walk(10)
    getter = client_getter(tour.app)
    assert getter is not None
    trace = BootTrace(interval=tour.app.config.recorder.trace_interval)

    async def driver(update: Callable[[Any], None], stop: asyncio.Event) -> Any:
        client = await asyncio.to_thread(getter)

        def step(t: Any) -> None:  # after each poll: the next one happens one interval later, in sim time
            tour.demo.advance(trace.interval)
            update(t)

        return await run_boot_trace(client, trace, on_update=step, stop=stop, clock=tour.app.clock)

    screen = TraceScreen("boot trace of the next new server", driver, render_boot, lambda t: t.result(),
                         crumb="trace-boot")
    await tour.app.push_screen(screen)
    await tour.until(lambda: screen.result is not None or screen.error is not None, "the boot trace's end", 120)
    await tour.settle()


async def hostile_names(tour: Tour) -> None:
    """80 s on a cloud whose tenants name things to break a terminal UI: hosts, servers, queues, a disabled
    reason and a fault carrying markup and terminal controls, shown as typed with the controls written out."""
    await tour.walk(80)
    await tour.command("queues")
    await tour.pilot.press("a")
    await tour.settle()


Scene = Callable[[Tour], Awaitable[None]]
# file name -> scene, in the README's order
SCENES: dict[str, Scene] = {
    "demo.svg": main_view,
    "instance-stuck.svg": instance_stuck,
    "finding-detail.svg": finding_detail,
    "finding-log-lines.svg": finding_log_lines,
    "host-drilldown.svg": host_drilldown,
    "rabbitmq-zero-consumer.svg": rabbitmq_zero_consumer,
    "galera-no-quorum.svg": galera_no_quorum,
    "boot-trace.svg": boot_trace,
    "hostile-names.svg": hostile_names,
}
HOSTILE_SCENES = {"hostile-names.svg"}
