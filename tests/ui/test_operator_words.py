"""What the dashboard says to the operator: pause in the footer and the borders, unknown hosts, a trace's result
said once, one verb for `r`, the drill-down keys in help."""

from __future__ import annotations

import time
from typing import Any

import tui.app
from tests.testbed.render import rendered
from tests.unit.fakes import ScriptedCollector
from tui.app import StacktopApp
from tui.config import Config

FROZEN = 1_790_000_000.0


async def until(pilot: Any, predicate: Any, what: str, timeout: float = 30.0) -> None:
    deadline = time.monotonic() + timeout
    while not predicate():
        assert time.monotonic() < deadline, f"{what}: not reached"
        await pilot.pause(0.05)


def footer_keys(app: StacktopApp) -> dict[str, str]:
    from textual.widgets._footer import FooterKey

    return {key.key: key.description for key in app.screen.query(FooterKey) if key.display}


async def test_pause_says_resume_in_the_footer_and_read_time_in_the_borders(utc: None) -> None:
    collector = ScriptedCollector("services", [1], interval=0.05)
    app = StacktopApp(Config(), collectors=[collector], clock=lambda: FROZEN)
    async with app.run_test(size=(160, 48)) as pilot:
        pane = next(p for p in app.panes if p.SOURCE == "services")
        await until(pilot, lambda: pane.observation is not None and collector.calls >= 2, "a first poll")
        await until(pilot, lambda: footer_keys(app).get("p") == "Pause", "the footer's p Pause")
        assert str(pane.border_subtitle).startswith("ok · every")
        await pilot.press("p")
        await until(pilot, lambda: footer_keys(app).get("p") == "Resume", "the footer's p Resume")
        read = time.strftime("%H:%M:%S", time.gmtime(FROZEN))
        assert str(pane.border_subtitle) == f"PAUSED · read {read}"
        assert "every" not in str(pane.border_subtitle)
        await pilot.press("p")
        await until(pilot, lambda: footer_keys(app).get("p") == "Pause", "the footer's p Pause again")
        assert not app.paused and str(pane.border_subtitle).startswith("ok · every")


async def test_unknown_host_is_refused_with_close_matches() -> None:
    """`:host nosuchhost` and `:trace-down nosuchhost`: one warning naming the closest known hosts; no screen
    opens and no exercise starts (nothing is recorded)."""
    from tui.gallery import GalleryApp, Tour, make_demo
    from tui.screens.host import HostScreen
    from tui.screens.trace import TraceScreen

    demo = make_demo()
    try:
        app = GalleryApp(demo)
        async with app.run_test(size=(160, 48)) as pilot:
            tour = Tour(app, pilot)
            await tour.walk(5)
            for command, name in (("host", "nosuchhost"), ("trace-down", "nosuchhost"), ("host", "compute-2"),
                                  ("trace-down", "compute-2")):
                app.clear_notifications()
                await tour.command(f"{command} {name}")
                await pilot.pause(0.2)
                assert len(app.screen_stack) == 1, f":{command} {name} opened {app.screen!r}"
                messages = [str(n.message) for n in app._notifications]
                assert any(f"unknown host '{name}'" in m for m in messages), messages
                if name == "compute-2":
                    assert any("(did you mean compute-02" in m for m in messages), messages
            await tour.command("host compute-02")
            await tour.until(lambda: isinstance(app.screen, HostScreen), "a known host opens its screen")
            await pilot.press("escape")
            await tour.until(lambda: len(app.screen_stack) == 1, "back")
            await tour.command("trace-down compute-02")
            await tour.until(lambda: isinstance(app.screen, TraceScreen), "a known host's trace")
    finally:
        demo.stop()


async def test_trace_request_says_its_summary_once() -> None:
    from tui.gallery import GalleryApp, Tour, make_demo
    from tui.screens.trace import TraceScreen

    demo = make_demo()
    try:
        app = GalleryApp(demo)
        async with app.run_test(size=(160, 48)) as pilot:
            tour = Tour(app, pilot)
            await tour.walk(5)
            rid = "req-00000000-0000-0000-0000-000000000000"
            await tour.command(f"trace-request {rid}")
            await tour.until(lambda: isinstance(app.screen, TraceScreen) and app.screen.result is not None,
                             "the request trace's result")
            await pilot.pause(0.2)
            screen = app.screen
            assert isinstance(screen, TraceScreen) and screen.result is not None
            shown = rendered(app)
            assert screen.result.summary.startswith(f"request {rid}: no trace anywhere")
            assert shown.count(f"{rid}: no trace anywhere") == 1, shown
    finally:
        demo.stop()


async def test_r_is_refresh_on_every_screen_and_help_lists_the_drill_down_keys() -> None:
    from textual.binding import Binding

    from tui.screens.audit import AuditScreen
    from tui.screens.fit import FitScreen
    from tui.screens.help import HelpScreen
    from tui.screens.host import HostScreen
    from tui.screens.instance import InstanceScreen

    for screen in (StacktopApp, AuditScreen, FitScreen, HostScreen, InstanceScreen):
        names = [b.description for b in screen.BINDINGS if isinstance(b, Binding) and b.key == "r"]
        assert names == ["Refresh"], (screen.__name__, names)
    app = StacktopApp(Config(), collectors=[])
    async with app.run_test(size=(160, 48)) as pilot:
        await pilot.press("question_mark")
        await pilot.pause()
        assert isinstance(app.screen, HelpScreen)
        text = str(app.screen.query_one("#help-text").render())
        lines = text.splitlines()
        assert any(line.split()[:1] == ["h"] and "host screen" in line for line in lines), text
        assert any(line.split()[:1] == ["m"] and "mark" in line for line in lines), text
        assert any(line.split()[:1] == ["p"] for line in lines), text


async def test_filter_says_how_many_rows_match_and_when_it_searches_literally() -> None:
    """`/[` is not a regex: searched literally, and said so; every filter shows `N of M` in the pane's title,
    and the instances status line counts the filtered rows, not all of them."""
    from tui.gallery import GalleryApp, Tour, make_demo
    from tui.widgets.instances_pane import InstancesPane

    demo = make_demo()
    try:
        app = GalleryApp(demo)
        async with app.run_test(size=(160, 48)) as pilot:
            tour = Tour(app, pilot)
            await tour.walk(5)
            await tour.command("instances")
            pane = app.active_pane()
            assert isinstance(pane, InstancesPane) and pane.table is not None
            await pilot.press("a")  # every server
            await tour.until(lambda: pane.table is not None and pane.table.row_count > 10, "every server listed")
            total = pane.table.row_count
            await pilot.press("slash", "left_square_bracket", "enter")
            await tour.until(lambda: "invalid regex" in str(pane.border_title), "the title says: literal")
            assert str(pane.border_title).startswith(f"instances · 0 of {total:,} match /[")
            assert any("invalid regex, searching literally" in str(n.message) for n in app._notifications)
            await pilot.press("escape")
            await pilot.press("slash", *"BUILD", "enter")
            await tour.until(lambda: "match /BUILD" in str(pane.border_title), "the title counts /BUILD")
            shown = pane.table.row_count
            assert 0 < shown < total
            assert str(pane.border_title) == f"instances · {shown:,} of {total:,} match /BUILD"
            message = str(pane.query_one(".pane-message").render())
            assert f"filtered: showing all {shown:,} of {total:,}" in message, message
            await pilot.press("escape")
            await tour.until(lambda: str(pane.border_title) == "instances", "no filter, the plain title")
    finally:
        demo.stop()


async def test_a_note_on_a_rabbitmq_row_names_the_queue(tmp_path: Any) -> None:
    """A RabbitMQ row's key joins vhost and queue with a unit separator: the note names the queue instead."""
    from tui.gallery import GalleryApp, Tour, make_demo
    from tui.recorder import Journal, Recorder, read_journal

    demo = make_demo()
    recorder = Recorder(Journal(tmp_path, name="j.jsonl"))
    try:
        app = GalleryApp(demo, recorder=recorder)
        async with app.run_test(size=(160, 48)) as pilot:
            tour = Tour(app, pilot)
            await tour.walk(5)
            await tour.command("queues")
            pane = app.active_pane()
            assert pane is not None and pane.SOURCE == "rabbitmq" and pane.table is not None
            await tour.until(lambda: pane.table is not None and pane.table.cursor_key() is not None, "a queue row")
            key = pane.table.cursor_key()
            assert key is not None and "\x1f" in key
            await pilot.press("n", *"known", "enter")
            await pilot.pause(0.2)
    finally:
        demo.stop()
    recorder.close()
    notes = [e for e in read_journal(tmp_path / "j.jsonl") if e["type"] == "note"]
    vhost, _, queue = key.partition("\x1f")
    named = queue if vhost == "/" else f"{queue} (vhost {vhost})"
    assert [n["subject"] for n in notes] == [f"rabbitmq:{named}"]


async def test_notices_go_to_the_status_line_not_over_the_panes() -> None:
    """A notice is written on the breadcrumb line (its right side), newest first, never as a toast over a pane;
    it goes when it expires."""
    from textual.widgets._toast import Toast

    from tui.widgets.breadcrumb import Breadcrumb

    app = StacktopApp(Config(), collectors=[])
    async with app.run_test(size=(160, 48), notifications=True) as pilot:
        app.notify("cloud west turned critical: nova.service_down compute-07", severity="error", timeout=15)
        app.notify("refresh paused: p resumes", timeout=4)
        line = app.query_one("#breadcrumb", Breadcrumb)
        await until(pilot, lambda: "refresh paused: p resumes" in line.shown_text, "the newest on the line")
        assert not list(app.screen.query(Toast)), "no toast over the panes"
        await until(pilot, lambda: "cloud west turned critical" in line.shown_text, "the one before, once it expired")
        assert max(n.timeout for n in app._notifications) <= tui.app.NOTICE_MAX_S
