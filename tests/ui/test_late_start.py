"""`stacktop --demo` paints before its simulator exists: the first frame is drawn from the shell config (the same
clouds and sources, every pane waiting), the set-up runs after it in a thread while keys still work, then the
sources start on the set-up's config and the panes fill as they always did. A set-up that fails says so in every
pane instead of leaving them loading for ever."""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterator
from typing import Any

import pytest

from tests.testbed.wait import until_pilot
from tui.app import LateStart, StacktopApp
from tui.screens.help import HelpScreen
from tui.sim.demo import DemoClouds, start_demo_clouds
from tui.sim.shell import CLOUDS, shell_config
from tui.widgets.findings_pane import FindingsPane


async def until(pilot: Any, probe: Callable[[], Any], what: str, timeout: float = 40.0) -> Any:
    return await until_pilot(pilot, probe, what, timeout, interval=0.05)


@pytest.fixture
def built() -> Iterator[list[DemoClouds]]:
    demos: list[DemoClouds] = []
    yield demos
    for demo in demos:
        demo.stop()


def small_demo_after(release: threading.Event, built: list[DemoClouds]) -> LateStart:
    """The set-up of these tests: a small simulated pair of clouds, built once `release` is set."""
    release.wait(30)
    demo = start_demo_clouds(instances=12, hosts=2, queues=5, churn=0)
    built.append(demo)
    return LateStart(demo.config(), demo.galera_connectors)


def source_panes(app: StacktopApp) -> list[Any]:
    return [p for p in app.panes if not isinstance(p, FindingsPane)]


async def test_first_frame_before_the_setup_then_the_sources_on_its_config(built: list[DemoClouds]) -> None:
    release = threading.Event()
    frames_when_setup_ran: list[int] = []

    def setup() -> LateStart:
        frames_when_setup_ran.append(app.frames)
        return small_demo_after(release, built)

    app = StacktopApp(shell_config(), setup=setup)
    try:
        async with app.run_test(size=(160, 48)) as pilot:
            await until(pilot, lambda: frames_when_setup_ran, "the set-up to run")
            assert frames_when_setup_ran[0] >= 1, "the set-up ran before the first frame"
            assert list(app.clouds) == list(CLOUDS)
            # while it runs: every source pane configured and waiting, nothing polled
            assert all(not state.runners for state in app.clouds.values())
            for pane in source_panes(app):
                assert pane.configured and pane.has_class("-loading"), pane
                assert "loading" in str(pane.border_subtitle), pane.border_subtitle
            await pilot.press("question_mark")  # keys work meanwhile
            await until(pilot, lambda: isinstance(app.screen, HelpScreen), "the help screen")
            await pilot.press("escape")
            release.set()
            await until(pilot, lambda: all(
                len(state.runners) == 5 for state in app.clouds.values()), "the sources of both clouds")
            east = app.clouds[CLOUDS[0]]
            await until(pilot, lambda: {"services", "instances", "rabbitmq", "galera"} <= set(east.observations)
                        and all(east.observations[s].ok for s in ("services", "instances", "rabbitmq", "galera")),
                        "every source of the cloud on screen read")
            # the sources poll the set-up's simulator, not the shell's placeholders
            real = built[0].config()
            assert app.config.rabbitmq.management_url == real.clouds[0].rabbitmq.management_url
            assert app.config.openstack.clouds_file == real.clouds[0].openstack.clouds_file
            assert app.config.thresholds == real.thresholds
            # each pane shows its first read once its message is handled, which may follow the observation
            await until(pilot, lambda: not [p for p in source_panes(app) if p.has_class("-loading")],
                        "every source pane out of its loading frame")
    finally:
        release.set()


async def test_a_failed_setup_is_said_in_every_pane() -> None:
    def setup() -> LateStart:
        raise OSError("no port to listen on")

    app = StacktopApp(shell_config(), setup=setup)
    async with app.run_test(size=(160, 48)) as pilot:
        await until(pilot, lambda: all("no port to listen on" in str(getattr(p, "_message_text", ""))
                                       for p in source_panes(app)), "the error in every pane")
        assert all(not state.runners for state in app.clouds.values())


async def test_a_host_screen_opened_before_the_sources_reads_once_they_run(built: list[DemoClouds]) -> None:
    from tui.screens.host import HostScreen

    release = threading.Event()
    app = StacktopApp(shell_config(), setup=lambda: small_demo_after(release, built))
    try:
        async with app.run_test(size=(160, 48)) as pilot:
            app.open_host("compute-01")
            screen = await until(pilot, lambda: isinstance(app.screen, HostScreen) and app.screen.is_mounted
                                 and app.screen, "the host screen")
            body = screen.query_one("#host-detail")
            await until(pilot, lambda: "sources are starting" in str(body.render()), "the starting notice")
            assert screen.detail is None and "no OpenStack cloud configured" not in str(body.render())
            release.set()
            await until(pilot, lambda: screen.detail is not None or screen.error, "the host read on the simulator")
            assert screen.detail is not None, screen.error
            assert "compute-01" in str(body.render())
    finally:
        release.set()
