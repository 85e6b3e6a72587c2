"""KeyedTable keeps its rendered rows across focus changes (tab), and they stay exactly what a fresh render
shows: the focused cursor style when focused, the blurred one when not, the new colours after a theme change."""

from __future__ import annotations

from rich.style import Style
from textual.app import App, ComposeResult
from textual.geometry import Region

from tui.widgets.keyed_table import KeyedTable


class TwoTables(App[None]):
    def compose(self) -> ComposeResult:
        yield KeyedTable(("name", "state"), id="a")
        yield KeyedTable(("name", "state"), id="b")


ROWS = [("one", ("row-one", "up")), ("two", ("row-two", "up"))]


def cursor_style(table: KeyedTable) -> Style | None:
    """The style of the cursor row's first cell as the table renders it now (the cursor is on row one)."""
    strips = table.render_lines(Region(0, 0, table.size.width, table.size.height))
    for strip in strips:
        for segment in strip:
            if "row-one" in segment.text:
                return segment.style
    raise AssertionError("row-one was not rendered")


def fresh_cursor_style(table: KeyedTable) -> Style | None:
    """The same with every render cache emptied first: what the table must show."""
    table._clear_caches()
    return cursor_style(table)


async def test_focus_back_shows_the_focused_cursor_and_a_theme_change_renders_anew() -> None:
    app = TwoTables()
    async with app.run_test(size=(60, 16)) as pilot:
        a, b = app.query_one("#a", KeyedTable), app.query_one("#b", KeyedTable)
        a.sync(ROWS)
        b.sync(ROWS)
        a.focus()
        await pilot.pause()
        focused = cursor_style(a)
        assert focused == fresh_cursor_style(a)

        b.focus()  # tab away: the blurred cursor
        await pilot.pause()
        blurred = cursor_style(a)
        assert blurred != focused, "the cursor must look different without the focus"
        assert blurred == fresh_cursor_style(a)

        a.focus()  # and back: served from the kept renders, and still the focused style
        await pilot.pause()
        assert cursor_style(a) == focused
        b.focus()
        await pilot.pause()
        assert cursor_style(a) == blurred

        app.theme = "textual-light" if app.theme != "textual-light" else "nord"
        await pilot.pause()
        a.focus()
        await pilot.pause()
        themed = cursor_style(a)
        assert themed != focused, "a theme change must not show the old theme's cached rows"
        assert themed == fresh_cursor_style(a)
