"""`/(L+)+X` on a cloud with a server named 255 L's: the filter takes exponential time with Python's regex engine.
The dashboard searches it literally at once, says so in one line (the toast, and the pane's title), and keeps
answering keys. Under a watchdog (120 s): without the guard the search runs for hours and the test fails."""

from __future__ import annotations

import pytest

from tests.testbed.watchdog import watchdog
from tui.gallery import GalleryApp, Tour, make_demo
from tui.widgets.instances_pane import InstancesPane

pytestmark = pytest.mark.slow


async def test_a_costly_filter_regex_is_searched_literally_and_said_once() -> None:
    demo = make_demo(hostile=True)
    try:
        app = GalleryApp(demo)
        async with app.run_test(size=(160, 48)) as pilot:
            tour = Tour(app, pilot)
            await tour.walk(5)
            await tour.command("instances")
            pane = app.active_pane()
            assert isinstance(pane, InstancesPane) and pane.table is not None
            await pilot.press("a")  # every server, the 255 L's among them
            await tour.until(lambda: pane.table is not None and any(
                "L" * 255 in " ".join(str(c) for c in cells) for _, cells in pane.table._all_rows), "the L's listed")
            total = pane.table.row_count
            with watchdog(120, "the dashboard with the filter (L+)+X"):
                await pilot.press("slash", "left_parenthesis", "L", "plus", "right_parenthesis", "plus", "X",
                                  "enter")
                await tour.until(lambda: "too costly" in str(pane.border_title), "the title says: literal")
            assert str(pane.border_title) == (f"instances · 0 of {total:,} match /(L+)+X, too costly a regex: "
                                              "searched literally")
            toasts = [str(n.message) for n in app._notifications if "too costly" in str(n.message)]
            assert toasts == ["/(L+)+X: too costly a regex (a repeat inside a repeat, or too slow on these rows), "
                              "searching literally"]
            await pilot.press("escape")
            await tour.until(lambda: str(pane.border_title) == "instances", "the filter cleared: keys answered")
    finally:
        demo.stop()
