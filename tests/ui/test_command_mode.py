"""`:` command mode: each command opens its view; history; errors are one line."""

from __future__ import annotations

import pytest

from tui.app import StacktopApp
from tui.config import Config
from tui.screens.help import HelpScreen
from tui.screens.host import HostScreen


@pytest.mark.slow
async def test_colon_commands_open_their_views() -> None:
    app = StacktopApp(Config(), collectors=[])
    async with app.run_test(size=(80, 24)) as pilot:
        for line, source in (("galera", "galera"), ("queues", "rabbitmq"), ("findings", "findings"),
                             ("instances", "instances"), ("services", "services")):
            await pilot.press("colon", *line, "enter")
            await pilot.pause()
            active = app.active_pane()
            assert active is not None and source == active.SOURCE, line
        await pilot.press("colon", *"host compute-02", "enter")
        await pilot.pause()
        assert isinstance(app.screen, HostScreen) and app.screen.host == "compute-02"
        await pilot.press("escape")
        await pilot.press("colon", *"help", "enter")
        await pilot.pause()
        assert isinstance(app.screen, HelpScreen)
        await pilot.press("escape")
        await pilot.pause()
        # history: up recalls the last command
        await pilot.press("colon", "up")
        assert app.query_one("#command").value == "help"  # type: ignore[attr-defined]
        await pilot.press("escape")
        # completion: tab extends a unique prefix
        await pilot.press("colon", *"gal", "tab")
        assert app.query_one("#command").value == "galera "  # type: ignore[attr-defined]
        await pilot.press("escape")
        await pilot.press("colon", "q", "enter")
        await pilot.pause()
    assert not app.is_running


async def test_unknown_command_is_a_one_line_warning() -> None:
    app = StacktopApp(Config(), collectors=[])
    async with app.run_test(size=(160, 48)) as pilot:
        assert app.run_command("hots x") is False
        await pilot.pause()
        assert any("did you mean :host?" in str(n.message) for n in app._notifications)


@pytest.mark.slow
async def test_server_audit_fit_and_trace_commands_open_their_views_on_the_demo_cloud() -> None:
    """The commands that need a cloud, on the simulated one (sources polled only when the test says so)."""
    from collections import Counter

    from tui.gallery import SIZE, GalleryApp, Tour, make_demo
    from tui.screens.audit import AuditScreen
    from tui.screens.fit import FitScreen
    from tui.screens.instance import InstanceScreen
    from tui.screens.trace import TraceScreen

    demo = make_demo()
    try:
        app = GalleryApp(demo)
        async with app.run_test(size=SIZE) as pilot:
            tour = Tour(app, pilot)
            await tour.walk(10)
            servers = app.observations["instances"].snapshot.servers
            names = Counter(s.name for s in servers)
            server = next(s for s in servers if names[s.name] == 1)
            cases = [
                (f"server {server.id[:8]}", InstanceScreen, lambda s: s.server_id == server.id),
                (f"server {server.name}", InstanceScreen, lambda s: s.server_id == server.id),
                ("audit", AuditScreen, lambda s: s.report is not None and len(s.report.providers) > 0),
                ("fit m1.small", FitScreen, lambda s: s.flavor == "m1.small" and s.report is not None),
                ("trace-boot", TraceScreen, lambda s: s.crumb == "trace-boot"),
                ("trace-down compute-01", TraceScreen, lambda s: s.crumb == "trace-down compute-01"),
                ("trace-request req-00000000-0000-0000-0000-000000000000", TraceScreen,
                 lambda s: s.crumb.startswith("trace-request req-")),
            ]
            for line, kind, check in cases:
                await pilot.press("colon", *line, "enter")
                await tour.until(lambda kind=kind, check=check: isinstance(app.screen, kind) and check(app.screen),
                                 f":{line} opens its view")
                await pilot.press("escape")
                await tour.until(lambda: len(app.screen_stack) == 1, f"back from :{line}")
    finally:
        demo.stop()


async def test_trace_boot_runs_on_the_apps_clock() -> None:
    """`:trace-boot SERVER` times its polls with the app's clock (here the demo's manual sim clock, months away
    from the wall clock), the one its screen renders ages with."""
    import time

    from tui.gallery import GalleryApp, Tour, make_demo
    from tui.models.instances import InstancesSnapshot
    from tui.screens.trace import TraceScreen

    demo = make_demo()
    try:
        app = GalleryApp(demo)
        async with app.run_test(size=(160, 48)) as pilot:
            tour = Tour(app, pilot)
            await tour.walk(5)
            snap = app.observations["instances"].snapshot
            assert isinstance(snap, InstancesSnapshot)
            active = next(s for s in snap.servers if s.status == "ACTIVE")
            await tour.command(f"trace-boot {active.id}")
            await tour.until(lambda: isinstance(app.screen, TraceScreen) and app.screen.exercise is not None
                             and app.screen.exercise.done, "the trace of an ACTIVE server (done at its first poll)")
            trace = app.screen.exercise
            now = app.clock()
            assert abs(now - time.time()) > 86400, "the sim clock is not the wall clock"
            assert trace.outcome == "ACTIVE" and trace.started_at == now and trace.finished_at == now
    finally:
        demo.stop()


async def test_trace_down_runs_on_the_apps_clock() -> None:
    """`:trace-down HOST` times its polls with the app's clock too: its mark (`m`) and the dashboard's own
    "saw it down" time come from that clock, so the lag figures must not mix it with the wall clock."""
    import time

    from tui.gallery import GalleryApp, Tour, make_demo
    from tui.screens.trace import TraceScreen

    demo = make_demo()
    try:
        app = GalleryApp(demo)
        async with app.run_test(size=(160, 48)) as pilot:
            tour = Tour(app, pilot)
            await tour.walk(5)
            await tour.command("trace-down compute-02")
            await tour.until(lambda: isinstance(app.screen, TraceScreen) and app.screen.exercise is not None
                             and app.screen.exercise.started_at is not None, "the down-lag exercise to start")
            lag = app.screen.exercise
            now = app.clock()
            assert abs(now - time.time()) > 86400, "the sim clock is not the wall clock"
            assert lag.started_at is not None and abs(lag.started_at - now) < 60, (lag.started_at, now)
    finally:
        demo.stop()


def _burst(app: StacktopApp, text: str) -> None:
    """Post `text` as key events in one go, as the terminal's input thread does with one read: nothing of the
    app runs between them (Pilot.press waits for the app after each key)."""
    from textual import events
    from textual.keys import _character_to_key

    driver = app._driver
    assert driver is not None
    for char in text:
        event = events.Key("enter" if char == "\r" else _character_to_key(char), char)
        event.set_sender(app)
        driver.send_message(event)


async def test_a_burst_of_keys_after_colon_or_slash_is_typed_into_the_line(tmp_path) -> None:  # type: ignore[no-untyped-def]
    """`:instances<enter>` read in one go: every key after `:` lands in the command line (no `n` note, no
    `s` sort, no `c` cloud switch), and so for `/` and the filter line."""
    from tui.gallery import GalleryApp, Tour, make_demo
    from tui.recorder import Journal, Recorder

    demo = make_demo()
    try:
        recorder = Recorder(Journal(tmp_path, name="j.jsonl"))
        app = GalleryApp(demo, recorder=recorder)
        async with app.run_test(size=(160, 48)) as pilot:
            tour = Tour(app, pilot)
            await tour.walk(3)
            await tour.command("queues")  # rows there: `n` would note the selected one
            _burst(app, ":instances\r")
            await tour.until(lambda: app.active_pane().SOURCE == "instances"  # type: ignore[union-attr]
                             and not app.query_one("#command").has_class("-shown"), ":instances ran")
            table = app.active_pane().table  # type: ignore[union-attr]
            assert table is not None
            _burst(app, "/BUILD\r")
            await tour.until(lambda: table.row_filter.text == "BUILD"
                             and not app.query_one("#filter").has_class("-shown"), "/BUILD applied and closed")
            assert app.active_pane().SOURCE == "instances"  # type: ignore[union-attr]
            _burst(app, ":host compute-02\r")
            await tour.until(lambda: isinstance(app.screen, HostScreen), ":host opened")
            assert app.screen.host == "compute-02"  # type: ignore[attr-defined]
        recorder.close()
        journal = (tmp_path / "j.jsonl").read_text(encoding="utf-8")
        assert '"type": "note"' not in journal and '"type":"note"' not in journal
    finally:
        demo.stop()
