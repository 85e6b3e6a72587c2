"""Arbitrary text (any code point: markup, controls, surrogate-free unicode) in every column of every table of
the dashboard, through the real render path: KeyedTable.sync -> DataTable's cell rendering -> the compositor's
segments. The app stays up, nothing rendered carries a control, link or action, and short values are shown
exactly (controls written out as escapes)."""

from __future__ import annotations

import asyncio

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.testbed.render import rendered
from tui.gallery import GalleryApp, make_demo
from tui.safetext import clean
from tui.widgets.keyed_table import KeyedTable

MARKUP = st.sampled_from(["[", "]", "[/]", "[b]", "[@click=app.quit]", "[link=http://x]", "\\", "\x1b", "\x07",
                          "\x9b", "\u202e", "\u200b", "\n", "\t", "\r", ":", "=", "/"])
TEXT = st.lists(MARKUP | st.text(min_size=1, max_size=3), max_size=8).map("".join) | st.text(max_size=20)


async def test_any_text_in_any_cell_renders_inert() -> None:
    demo = make_demo()  # every source configured, so every pane has its table; the sources never poll here
    try:
        await run(GalleryApp(demo))
    finally:
        demo.stop()


async def run(app: GalleryApp) -> None:
    async with app.run_test(size=(240, 70)) as pilot:
        for _ in range(100):
            if all(p.table is not None for p in app.panes):
                break
            await pilot.pause(0.1)
        tables = list(app.query(KeyedTable))
        assert len(tables) >= 5, "every pane's table is mounted"
        loop = asyncio.get_running_loop()

        async def show(values: list[str]) -> str:
            for table in tables:
                width = len(table.columns)
                table.sync([(f"k{i}", tuple(values[(i + c) % len(values)] for c in range(width)))
                            for i in range(2)])
            await pilot.pause()
            return rendered(app)

        @settings(max_examples=40, deadline=None, derandomize=True, database=None,
                  suppress_health_check=[HealthCheck.too_slow])
        @given(st.lists(TEXT, min_size=1, max_size=4))
        def check(values: list[str]) -> None:
            screen = asyncio.run_coroutine_threadsafe(show(values), loop).result(timeout=60)
            for value in values:
                shown = clean(value)
                if 0 < len(shown) <= 8:
                    assert shown in screen, f"{value!r} is shown as {shown!r}"

        await asyncio.to_thread(check)
        assert app.is_running
