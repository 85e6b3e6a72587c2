"""KeyedTable keeps the cursor on the same row across polls, and only touches what changed."""

from __future__ import annotations

from typing import Any

import pytest
from textual.app import App, ComposeResult

from tui.widgets.keyed_table import KeyedTable


class TableApp(App[None]):
    def compose(self) -> ComposeResult:
        yield KeyedTable(("name", "state"), id="t")


def rows(*pairs: tuple[str, str]) -> list[tuple[str, tuple[str, str]]]:
    return [(name, (name, state)) for name, state in pairs]


async def test_in_place_updates_keep_cursor_on_the_same_row() -> None:
    app = TableApp()
    async with app.run_test() as pilot:
        table = app.query_one(KeyedTable)
        assert table.sync(rows(("a", "up"), ("b", "up"), ("c", "up")))
        table.focus()
        await pilot.press("down")  # cursor on "b"
        assert table.cursor_key() == "b"
        assert not table.sync(rows(("a", "up"), ("b", "up"), ("c", "up"))), "no change, no work"
        # "c" goes down and sorts first; "a" vanishes; "d" appears
        assert table.sync(rows(("c", "down"), ("b", "up"), ("d", "up")))
        await pilot.pause()
        assert table.shown_keys == ["c", "b", "d"]
        assert [str(c) for c in table.get_row("c")] == ["c", "down"]  # cells are shown as Text
        assert table.cursor_key() == "b", "the cursor follows its row, not its index"


async def test_filter_hides_and_restores_rows() -> None:
    app = TableApp()
    async with app.run_test() as pilot:
        table = app.query_one(KeyedTable)
        table.sync(rows(("compute-01", "up"), ("compute-02", "down")))
        table.set_filter("down")
        await pilot.pause()
        assert table.shown_keys == ["compute-02"]
        table.sync(rows(("compute-01", "down"), ("compute-02", "down")))
        assert table.shown_keys == ["compute-01", "compute-02"]
        table.set_filter("")
        assert table.row_count == 2


class FlashApp(App[None]):
    def compose(self) -> ComposeResult:
        yield KeyedTable(("name", "state", "age"), highlight=("state",), id="t")


async def test_semantic_change_flashes_once_ticking_age_never() -> None:
    app = FlashApp()
    async with app.run_test() as pilot:
        table = app.query_one(KeyedTable)
        table.FLASH_SECONDS = 0.2
        table.sync([("a", ("a", "up", "1s"))])
        table.sync([("a", ("a", "up", "2s"))])
        table.sync([("a", ("a", "up", "3s"))])
        assert table.flashes == 0, "an age tick is not a meaningful change"
        table.sync([("a", ("a", "down", "4s"))])
        assert table.flashes == 1
        cell = table.get_row("a")[1]
        assert getattr(cell, "style", "") == "reverse" and cell.plain == "down"
        await pilot.pause(0.4)
        restored = table.get_row("a")[1]
        assert str(restored) == "down" and "reverse" not in str(restored.style), "the flash ends by itself"
        table.sync([("a", ("a", "down", "5s"))])
        assert table.flashes == 1


class FitApp(App[None]):
    def compose(self) -> ComposeResult:
        from tui.widgets.column_fit import name

        yield KeyedTable(("queue", "messages", "consumers"), fit={"queue": name(8)}, id="t")


def shown_line(table: KeyedTable, row: int) -> str:
    """The text of a table line as drawn (header: line 0)."""
    return "".join(segment.text for segment in table.render_line(row))


async def test_column_widths_follow_the_rows_and_the_size() -> None:
    """A long queue name widens its column and the name shrinks back when that row goes (widths are not
    frozen at the widest row ever seen); when the table is narrow the name is cut with "…" so the numbers stay
    on screen; when it widens again nothing is cut. Where there is room, every header keeps room for the sort
    mark (` ▲`); where there is not, the cells come first."""
    app = FitApp()
    long = "versioned_notifications.info.with.a.very.long.suffix"
    async with app.run_test(size=(60, 10)) as pilot:
        table = app.query_one(KeyedTable)
        table.sync([("a", ("compute.c1", "3", "0"))])
        await pilot.pause()
        assert table.fitted == [10, 10, 11]
        table.sync([("a", ("compute.c1", "3", "0")), ("b", (long, "12", "1"))])
        await pilot.pause()
        assert table.fitted[1:] == [8, 9] and sum(table.fitted) + 6 == 60, "the name is cut to fit"
        line = shown_line(table, 2)
        assert "…" in line and "12" in line and line.rstrip().endswith("1"), line
        table.sync([("a", ("compute.c1", "3", "0"))])
        await pilot.pause()
        assert table.fitted == [10, 10, 11], "the long row went: the column shrinks back"
        table.sync([("a", ("compute.c1", "3", "0")), ("b", (long, "12", "1"))])
        await pilot.resize_terminal(120, 10)
        await pilot.pause()
        assert table.fitted == [len(long), 10, 11], "room again: nothing cut"
        assert long in shown_line(table, 2)


async def test_sort_column_is_marked_in_its_header() -> None:
    app = TableApp()
    async with app.run_test() as pilot:
        table = app.query_one(KeyedTable)
        table.sync(rows(("b", "up"), ("a", "down")))

        def headers() -> list[str]:
            return [str(c.label) for c in table.columns.values()]

        await pilot.pause()
        widths = list(table.fitted)
        table.set_sort("state")
        await pilot.pause()
        assert headers() == ["name", "state ▲"] and table.shown_keys == ["a", "b"]
        assert table.fitted == widths, "the header had room for the mark: no column moved"
        assert "state ▲" in shown_line(table, 0)
        table.set_sort("state", reverse=True)
        assert headers() == ["name", "state ▼"]
        table.set_sort(None)
        assert headers() == ["name", "state"], "the pane's own order: no mark"


@pytest.mark.parametrize(("width", "moves"), [(34, True), (60, False)])
async def test_a_sort_changes_no_scrollable_width_so_nothing_is_laid_out_again(width: int, moves: bool) -> None:
    """Whether the headers have room for the sort mark (at 60: nothing moves) or not (at 34: the widths move),
    the table is as wide as its room (its last column takes the spare width, blank either way): a sort that
    widens a column changes no scrollable size, which would lay the whole screen out again."""
    app = FitApp()
    async with app.run_test(size=(width, 10)) as pilot:
        table = app.query_one(KeyedTable)
        table.sync([("a", ("compute.c1", "3", "0")), ("b", ("compute.c2", "12", "1"))])
        await pilot.pause()
        before = table.virtual_size
        layouts: list[bool] = []
        refresh = table.refresh

        def spy(*args: Any, layout: bool = False, **kwargs: Any) -> Any:
            layouts.append(layout)
            return refresh(*args, layout=layout, **kwargs)

        table.refresh = spy  # type: ignore[method-assign]
        moved = False
        for column in ("messages", "consumers", None):
            fitted = list(table.fitted)
            table.set_sort(column)
            await pilot.pause()
            moved = moved or table.fitted != fitted
            assert table.virtual_size == before, column
            assert "12" in shown_line(table, 1) + shown_line(table, 2)
        assert True not in layouts
        assert moved == moves, "the columns move only where the headers have no room"
