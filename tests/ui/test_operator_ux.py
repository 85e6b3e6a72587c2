"""Operator UX on the simulated cloud, driven by Pilot: sort (row order and footer), `/` with `!`, the meaningful
change highlight on a real pane, the breadcrumb. The demo is walked like the gallery (tui/gallery.py):
manual sim clock, sources polled only when the test says so."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from textual.widgets._footer import FooterKey

from tui.app import StacktopApp
from tui.config import Config
from tui.gallery import SIZE, GalleryApp, Tour, make_demo
from tui.screens.audit import AuditScreen
from tui.screens.fit import FitScreen
from tui.screens.host import HostScreen
from tui.screens.instance import InstanceScreen
from tui.sim import Demo
from tui.tablediff import sort_value
from tui.widgets.breadcrumb import Breadcrumb
from tui.widgets.keyed_table import KeyedTable


@pytest.fixture
def demo() -> Iterator[Demo]:
    d = make_demo()
    try:
        yield d
    finally:
        d.stop()


def footer_says(app: StacktopApp, key: str) -> str | None:
    for item in app.screen.query(FooterKey):
        if item.display and item.key == key:
            return str(item.description)
    return None


def crumb(app: StacktopApp) -> str:
    return app.screen.query_one(Breadcrumb).text


def headers(table: KeyedTable) -> list[str]:
    return [str(c.label) for c in table.columns.values()]


def column(table: KeyedTable, label: str) -> list[str]:
    index = [str(key.value) for key in table.columns].index(label)
    return [str(getattr(table.get_row(k)[index], "plain", table.get_row(k)[index])) for k in table.shown_keys]


@pytest.mark.slow
async def test_sort_changes_row_order_and_footer_and_survives_polls(demo: Demo) -> None:
    app = GalleryApp(demo)
    async with app.run_test(size=SIZE) as pilot:
        tour = Tour(app, pilot)
        await tour.walk(80)
        await tour.command("instances")
        table = app.screen.query_one("#instances-table", KeyedTable)
        default = table.shown_keys
        assert len(default) >= 4
        await tour.until(lambda: footer_says(app, "s") == "sort: default", "the footer")
        await pilot.press("s")  # first column: name
        await pilot.pause(0.2)
        names = column(table, "name")
        assert names == sorted(names, key=sort_value) and table.shown_keys != default
        await tour.until(lambda: footer_says(app, "s") == "sort: name ▲", "the footer")
        assert headers(table)[:2] == ["name ▲", "status"], "the sort column is marked in its header"
        await pilot.press("S")
        await pilot.pause(0.2)
        assert column(table, "name") == sorted(names, key=sort_value, reverse=True)
        await tour.until(lambda: footer_says(app, "s") == "sort: name ▼", "the footer")
        assert headers(table)[0] == "name ▼"
        cursor = table.cursor_key()
        demo.advance(5)
        await tour.poll()  # the next poll goes through the keyed update, still sorted, cursor on its row
        now = column(table, "name")
        assert now == sorted(now, key=sort_value, reverse=True)
        assert table.cursor_key() == cursor
        await pilot.press("S")
        for _ in range(len(table.columns) - 1):
            await pilot.press("s")
        await pilot.pause(0.2)
        last = str(list(table.columns)[-1].value)
        await tour.until(lambda: footer_says(app, "s") == f"sort: {last} ▲", "the footer")
        await pilot.press("s")  # past the last column: the pane's own order again (worst first)
        await pilot.pause(0.2)
        await tour.until(lambda: footer_says(app, "s") == "sort: default", "the footer")
        assert not any("▲" in h or "▼" in h for h in headers(table)), headers(table)
        assert table.shown_keys[0] == default[0], "the stuck build on the dead compute leads again"


async def test_slash_bang_inverts_the_filter_and_esc_clears_it(demo: Demo) -> None:
    app = GalleryApp(demo)
    async with app.run_test(size=SIZE) as pilot:
        tour = Tour(app, pilot)
        await tour.walk(5)
        table = app.screen.query_one("#services-table", KeyedTable)
        everything = column(table, "binary")
        await pilot.press("slash", *"nova-compute")
        await pilot.pause()
        only = column(table, "binary")
        assert only and set(only) == {"nova-compute"}
        assert crumb(app) == "services /nova-compute"
        await pilot.press("escape", "slash", *"!nova-compute")
        await pilot.pause()
        inverted = column(table, "binary")
        assert inverted and "nova-compute" not in inverted and "nova-conductor" in inverted
        assert len(inverted) + len(only) == len(everything)
        assert crumb(app) == "services /!nova-compute"
        await pilot.press("escape")
        await pilot.pause()
        assert column(table, "binary") == everything and crumb(app) == "services"


async def test_enter_applies_the_filter_and_returns_to_the_table(demo: Demo) -> None:
    """Enter closes the filter line and gives the focus back to the table; the filter stays applied (breadcrumb);
    esc on the table clears it; `/` again shows the pane's current filter to edit."""
    from textual.widgets import Input

    app = GalleryApp(demo)
    async with app.run_test(size=SIZE) as pilot:
        tour = Tour(app, pilot)
        await tour.walk(5)
        table = app.screen.query_one("#services-table", KeyedTable)
        everything = column(table, "binary")
        await pilot.press("slash", *"nova-compute", "enter")
        await pilot.pause()
        box = app.screen.query_one("#filter", Input)
        assert app.focused is table, f"the focus is on {app.focused!r}"
        assert not box.display, "the filter line is closed"
        assert set(column(table, "binary")) == {"nova-compute"}
        assert crumb(app) == "services /nova-compute"
        await pilot.press("down")  # keys reach the table, not the filter line
        await pilot.pause()
        assert box.value == "nova-compute" and set(column(table, "binary")) == {"nova-compute"}
        await pilot.press("slash")
        await pilot.pause()
        assert box.display and app.focused is box and box.value == "nova-compute"
        await pilot.press("enter", "escape")
        await pilot.pause()
        assert column(table, "binary") == everything and crumb(app) == "services"
        assert app.focused is table and not box.display


async def test_state_change_flashes_once_ticking_countdown_never(demo: Demo) -> None:
    """The services pane: the victim's compute stops heartbeating at 15 s. While LATE its heartbeat cell counts
    down at every poll (no flash); when it turns DOWN its state cell flashes."""
    app = GalleryApp(demo)
    async with app.run_test(size=SIZE) as pilot:
        tour = Tour(app, pilot)
        await tour.walk(20)
        table = app.screen.query_one("#services-table", KeyedTable)
        labels = [str(c.label) for c in table.columns.values()]
        state, beat = labels.index("state"), labels.index("heartbeat")
        victim = tour.story_detail("compute_dies", "host")
        key = next(k for k in table.shown_keys if [str(c) for c in table.get_row(k)[:2]] == ["nova-compute", victim])

        def cell(index: int) -> str:
            return str(table.get_row(key)[index])

        def flashed() -> list[tuple[str, str]]:
            return [f for f in table.recent_flashes if f[0] == key]

        while cell(state) != "LATE":
            assert tour.elapsed < 70, "the victim's compute was never late"
            await tour.walk(tour.elapsed + 5)
        assert flashed() == [(key, "state")], "up -> LATE is a meaningful change"
        countdown = cell(beat)
        await tour.walk(tour.elapsed + 5)
        assert cell(state) == "LATE" and cell(beat) != countdown, "the countdown ticked"
        assert flashed() == [(key, "state")], "a ticking countdown is not a meaningful change"
        while cell(state) != "DOWN":
            assert tour.elapsed < 120, "the victim's compute was never reported down"
            await tour.walk(tour.elapsed + 5)
        assert flashed() == [(key, "state"), (key, "state")]
        assert "reverse" in str(table.get_row(key)[state].style), "the DOWN cell flashes"


async def test_breadcrumb_follows_screens_and_the_filter() -> None:
    app = StacktopApp(Config(), collectors=[])
    async with app.run_test(size=SIZE) as pilot:
        assert crumb(app) == "services"
        await pilot.press("colon", *"queues", "enter")
        await pilot.pause()
        assert crumb(app) == "queues"
        await pilot.press("colon", *"findings", "enter", "slash", *"BUILD", "enter")
        await pilot.pause()
        assert crumb(app) == "findings /BUILD"
        app.push_screen(InstanceScreen("7f01ec30-1111-2222-3333-444455556666"))
        await pilot.pause()
        assert crumb(app) == "findings /BUILD > 7f01ec30"
        app.push_screen(HostScreen("compute-02"))
        await pilot.pause()
        assert crumb(app) == "findings /BUILD > 7f01ec30 > compute-02"
        await pilot.press("escape")
        await pilot.pause()
        assert isinstance(app.screen, InstanceScreen) and crumb(app) == "findings /BUILD > 7f01ec30"
        await pilot.press("escape")
        await pilot.pause()
        assert crumb(app) == "findings /BUILD"
        await pilot.press("colon", *"audit", "enter")
        await pilot.pause()
        assert isinstance(app.screen, AuditScreen) and crumb(app) == "findings /BUILD > audit"
        await pilot.press("colon", *"fit m1.tiny", "enter")
        await pilot.pause()
        assert isinstance(app.screen, FitScreen) and crumb(app) == "findings /BUILD > fit m1.tiny"
