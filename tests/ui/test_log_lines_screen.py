"""`l` on the finding screen: the lines that matter from the owner's log on the finding's host, read through a
per-host log source (a `{host}` path template), inert; the other hosts' logs are not shown, and ERROR lines
far from when the finding began give way to those around it."""

from __future__ import annotations

import io
from pathlib import Path

from rich.console import Console

from tests.testbed.wait import until_pilot
from tests.ui.test_finding_screen import FROZEN, Scripted, open_finding
from tui.app import StacktopApp
from tui.config import Config, LogSource, RecorderConfig
from tui.screens.loglines import LogLinesScreen, blocks_body

# the finding (nova-compute down on compute-02) says its heartbeat stopped at 14:12:05 UTC
COMPUTE_02 = """\
2026-09-21T12:00:00Z 7 ERROR nova.compute.manager [-] an old error, two hours before
2026-09-21T14:11:58Z 7 INFO nova.compute.manager [-] Running periodic task
2026-09-21T14:12:01Z 7 ERROR oslo.messaging._drivers.impl_rabbit [-] [b]AMQP server[/b] unreachable \x1b[31m
2026-09-21T14:12:02Z 7 WARNING nova.servicegroup.drivers.db [-] Lost connection to nova-conductor
"""
COMPUTE_01 = "2026-09-21T14:12:01Z 9 ERROR nova.compute.manager [-] compute-01's own error\n"


async def test_l_on_the_finding_screen_shows_the_owners_lines_on_its_host(tmp_path: Path) -> None:
    for host, text in (("compute-01", COMPUTE_01), ("compute-02", COMPUTE_02)):
        (tmp_path / host).mkdir()
        (tmp_path / host / "nova-compute.log").write_text(text)
    source = LogSource("nova-compute", path=str(tmp_path / "{host}" / "nova-compute.log"),
                       hosts=("compute-01", "compute-02"), timeout=10)
    config = Config(recorder=RecorderConfig(log_sources=(source,)))
    app = StacktopApp(config, collectors=[Scripted()], clock=lambda: FROZEN)
    async with app.run_test(size=(140, 40)) as pilot:
        await open_finding(app, pilot)
        await pilot.press("l")
        screen = await until_pilot(pilot, lambda: isinstance(app.screen, LogLinesScreen)
                                   and app.screen.blocks is not None and app.screen, "the log lines", 20,
                                   interval=0.05)
        assert isinstance(screen, LogLinesScreen) and screen.blocks is not None
        [block] = screen.blocks  # compute-02 only: the finding's host
        assert (block.service, block.host, block.error) == ("nova-compute", "compute-02", None)
        assert [ln.split()[0] for ln in block.lines] == ["2026-09-21T14:12:01Z", "2026-09-21T14:12:02Z"]
        assert block.chosen_by.startswith("ERROR/WARNING lines within 10 min of 14:12:05")
        console = Console(width=200, record=True, file=io.StringIO())
        console.print(blocks_body(screen.query_, screen.blocks, True))
        text = console.export_text()
        assert "[b]AMQP server[/b] unreachable" in text, text  # inert: markup shown as typed
        assert "\x1b" not in text
        assert "compute-01's own error" not in text and "an old error" not in text
        await pilot.press("escape")
        await until_pilot(pilot, lambda: not isinstance(app.screen, LogLinesScreen), "back", 10, interval=0.05)


async def test_l_on_the_instance_screen_reads_the_owner_on_its_host_and_says_when_no_source_is_for_it(
        utc: None) -> None:
    """The stuck build of the demo: `l` asks for nova-compute on its host, with the instance and request ids;
    the demo configures no log source, which the screen says in one line with where to add one."""
    from tui.gallery import GalleryApp, Tour, instance_stuck, make_demo
    from tui.screens.instance import InstanceScreen

    demo = make_demo()
    try:
        app = GalleryApp(demo)
        async with app.run_test(size=(160, 48)) as pilot:
            tour = Tour(app, pilot)
            await instance_stuck(tour)
            instance = app.screen
            assert isinstance(instance, InstanceScreen) and instance.detail is not None
            server = instance.detail.server
            await pilot.press("l")
            screen = await until_pilot(pilot, lambda: isinstance(app.screen, LogLinesScreen)
                                       and app.screen.blocks is not None and app.screen, "the log lines", 20,
                                       interval=0.05)
            assert isinstance(screen, LogLinesScreen)
            assert (screen.query_.owner, screen.query_.host) == ("nova-compute", server.host)
            assert server.id in screen.query_.ids
            assert any(i.startswith("req-") for i in screen.query_.ids), screen.query_.ids
            assert screen.blocks == []
            console = Console(width=200, record=True, file=io.StringIO())
            console.print(blocks_body(screen.query_, screen.blocks, False))
            assert "No [[recorder.log_sources]] entry is for nova-compute." in console.export_text()
    finally:
        demo.stop()
