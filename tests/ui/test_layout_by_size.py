"""Layout by size: a terminal that shows one pane at a time starts on the findings (focused); every pane keeps
its identifying columns on screen, whole or cut with "…"; `z` zooms the focused pane over the whole screen and
fits its columns to it (z again: back)."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from tui.app import StacktopApp
from tui.config import Config
from tui.gallery import GalleryApp, Tour, make_demo
from tui.sim import Demo
from tui.widgets.breadcrumb import Breadcrumb
from tui.widgets.findings_pane import FindingsPane
from tui.widgets.keyed_table import KeyedTable
from tui.widgets.source_pane import SourcePane

README_SIZES = [(80, 24), (100, 30), (120, 34), (160, 48)]


@pytest.fixture
def demo() -> Iterator[Demo]:
    d = make_demo()
    try:
        yield d
    finally:
        d.stop()


def crumb(app: StacktopApp) -> str:
    return app.screen.query_one(Breadcrumb).text


@pytest.mark.parametrize("size", [(80, 24), (100, 30), (130, 30)])
async def test_one_pane_at_a_time_starts_on_the_findings_focused(size: tuple[int, int]) -> None:
    app = StacktopApp(Config(), collectors=[])
    async with app.run_test(size=size) as pilot:
        await pilot.pause()
        findings = app.screen.query_one(FindingsPane)
        assert crumb(app) == "findings"
        assert findings.display and findings.has_class("-active")
        assert app.focused is findings.table
        shown = [pane for pane in app.screen.query(SourcePane) if pane.display]
        assert shown == [findings], "the findings are the one pane on screen"


async def test_the_grid_starts_on_the_control_plane() -> None:
    app = StacktopApp(Config(), collectors=[])
    async with app.run_test(size=(160, 48)) as pilot:
        await pilot.pause()
        assert crumb(app) == "services"


async def test_shrunk_before_a_pane_was_chosen_shows_the_findings_chosen_pane_stays() -> None:
    app = StacktopApp(Config(), collectors=[])
    async with app.run_test(size=(160, 48)) as pilot:
        await pilot.pause()
        await pilot.resize_terminal(80, 24)
        await pilot.pause()
        assert crumb(app) == "findings"
        await pilot.resize_terminal(160, 48)
        await pilot.press("colon", *"queues", "enter")
        await pilot.pause()
        await pilot.resize_terminal(80, 24)
        await pilot.pause()
        assert crumb(app) == "queues", "a pane the engineer chose stays on screen"


# each pane's identifying columns: what says which thing a row is, and its state
IDENTIFYING = {"services": {"binary", "host", "state"}, "instances": {"name", "status", "host", "owner"},
               "queues": {"queue"}, "galera": {"node", "status", "state"}, "findings": {"severity", "subject"}}


def identifying_off_screen(table: KeyedTable, wanted: set[str]) -> list[str]:
    """The identifying columns not wholly inside the table's width (cut without "…" by the edge, or off it)."""
    padding = 2 * table.cell_padding
    width = table.size.width - (table.styles.scrollbar_size_vertical if table.row_count + 1 > table.size.height
                                else 0)
    missing, right = [], 0
    for label, fitted in zip(table._column_labels, table.fitted, strict=True):
        right += fitted + padding
        if label in wanted and right > width:
            missing.append(label)
    return missing


@pytest.mark.parametrize("size", README_SIZES)
async def test_every_pane_keeps_its_identifying_columns(demo: Demo, size: tuple[int, int]) -> None:
    app = GalleryApp(demo)
    async with app.run_test(size=size) as pilot:
        tour = Tour(app, pilot)
        await tour.walk(80)
        for command, wanted in IDENTIFYING.items():
            await tour.command(command)
            await pilot.press("a")  # every row: the longest names
            await pilot.pause(0.2)
            pane = app.active_pane()
            assert pane is not None and pane.table is not None
            assert identifying_off_screen(pane.table, wanted) == [], f"{command} at {size}"
        instances = app.screen.query_one("#pane-instances", SourcePane).table
        assert instances is not None
        assert {"name", "status", "host", "owner"} <= set(instances._column_labels)


async def test_z_zooms_the_pane_and_fits_its_columns_again(demo: Demo) -> None:
    app = GalleryApp(demo)
    async with app.run_test(size=(120, 34)) as pilot:
        tour = Tour(app, pilot)
        await tour.walk(80)
        await tour.command("instances")
        await pilot.pause()
        pane = app.active_pane()
        assert pane is not None and pane.table is not None
        before = list(pane.table.fitted)
        await pilot.press("z")
        await pilot.pause(0.2)
        assert app.screen.maximized is pane
        assert pane.table.size.width > 100
        assert pane.table.fitted != before and sum(pane.table.fitted) > sum(before), "columns fitted to the room"
        await pilot.press("z")
        await pilot.pause(0.2)
        assert app.screen.maximized is None
        assert pane.table.fitted == before


async def test_tab_while_zoomed_zooms_the_next_pane() -> None:
    app = StacktopApp(Config(), collectors=[])
    async with app.run_test(size=(160, 48)) as pilot:
        await pilot.pause()
        first = app.active_pane()
        await pilot.press("z")
        await pilot.pause()
        assert app.screen.maximized is first
        await pilot.press("tab")
        await pilot.pause()
        assert app.active_pane() is not first and app.screen.maximized is app.active_pane()
        assert app.focused is app.active_pane().table
