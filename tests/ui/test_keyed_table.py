"""KeyedTable keeps the cursor on the same row across polls, and only touches what changed."""

from __future__ import annotations

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
