"""`s` and `S` over 10,000 instances: the frame the terminal receives with the footer's new sort shows the
header's mark on the same column and the rows in that order. The frames are read as a terminal shows them (every
update Textual would write, fed into a pyte screen), not re-rendered from the widgets. And the order those keys
ask for is written between keys, not while the engineer waits (how fast: `python -m bench --only keys`)."""

from __future__ import annotations

import re
from typing import Any

import pyte
from textual._compositor import CompositorUpdate
from textual.geometry import Region

from tests.testbed.wait import until_pilot
from tests.ui.test_many_rows import FixedInstances, N, TableApp, attention_view, table_rows
from tui.app import StacktopApp
from tui.config import Config
from tui.widgets.keyed_table import KeyedTable

COLS, ROWS = 160, 48
FOOTER_SORT = re.compile(r"sort: (default(?:, reversed)?|[\w ]+? [▲▼])")
HEADER_MARK = re.compile(r"(\w+(?: \w+)*…?) ([▲▼])")  # labels are one space apart inside, two between


class Terminal:
    """What the terminal shows: every update the app writes, applied in order; each frame's lines kept."""

    def __init__(self, app: StacktopApp) -> None:
        self.screen = pyte.Screen(COLS, ROWS)
        self.stream = pyte.Stream(self.screen)
        self.frames: list[list[str]] = []
        real = app._display

        def display(screen: Any, renderable: Any) -> None:
            if isinstance(renderable, CompositorUpdate) and not app._batch_count:
                self.stream.feed(renderable.render_segments(app.console))
                self.frames.append(list(self.screen.display))
            real(screen, renderable)

        app._display = display  # type: ignore[method-assign]

    def first_showing(self, since: int, sort: str) -> list[str] | None:
        """The first frame from frame `since` on whose footer names this sort."""
        return next((f for f in self.frames[since:] if footer_sort(f) == sort), None)


def footer_sort(lines: list[str]) -> str | None:
    found = FOOTER_SORT.search(lines[-1])
    return found.group(1) if found else None


def table_lines(table: KeyedTable, lines: list[str], count: int) -> list[str]:
    """The table's first `count` lines (its header, then rows) as they stand in a frame."""
    region, width = table.region, table.scrollable_content_region.width
    return [lines[region.y + i][region.x : region.x + width] for i in range(count)]


def drawn_now(table: KeyedTable, count: int) -> list[str]:
    """The same lines as the table draws them now (its header, its rows in its order)."""
    width = table.scrollable_content_region.width
    return ["".join(segment.text for segment in strip)[:width]
            for strip in table.render_lines(Region(0, 0, table.size.width, count))]


def same_name(shown: str, name: str) -> bool:
    return shown == name or (shown.endswith("…") and name.startswith(shown[:-1]))


async def test_sort_keys_paint_header_rows_and_footer_in_one_frame() -> None:
    app = StacktopApp(Config(), collectors=[FixedInstances()])
    async with app.run_test(size=(COLS, ROWS)) as pilot:
        terminal = Terminal(app)
        _pane, table = await attention_view(pilot, app)
        app.show_source("instances")
        await pilot.press("a")
        await until_pilot(pilot, lambda: table.row_count == N, "`a`: every server")
        await pilot.pause()
        # every column, each reversed on the way, back to the pane's own order (and that reversed)
        for key in ("s", "s", "S", "s", "S", "s", "s", "s", "s", "s", "s", "S"):
            before = len(terminal.frames)
            await pilot.press(key)
            label = table.sort_label.removeprefix("sort: ")
            first = await until_pilot(pilot, lambda b=before, sort=label: terminal.first_showing(b, sort),
                                      f"the footer's `sort: {label}` on the terminal after `{key}`")
            shown = table_lines(table, first, 6)
            mark = HEADER_MARK.search(shown[0])
            if table.sort_column is None:
                assert mark is None, f"`{key}` ({label}): no mark in the header: {shown[0]!r}"
            else:  # the mark on the footer's column (its label cut with "…" where the column is narrow)
                marked = f"{mark.group(1)} {mark.group(2)}" if mark else ""
                assert marked[-1:] == label[-1] and same_name(marked[:-2], label[:-2]), (
                    f"`{key}` ({label}): the header's mark is {marked!r}: {shown[0]!r}")
            assert shown == drawn_now(table, 6), f"`{key}` ({label}): the header and rows the table has now"


def counted(real: Any, name: str, calls: list[str]) -> Any:
    def call(*args: Any, **kwargs: Any) -> Any:
        calls.append(name)
        return real(*args, **kwargs)

    return call


async def test_s_and_shift_s_find_their_order_written_between_keys(monkeypatch: Any) -> None:
    """10,000 rows: between keys the table sorts and writes the orders the next `s` and `S` give, so those keys
    sort nothing, compare no rows and write no row order while the engineer waits; the rows are in the order
    asked for."""
    import tui.widgets.keyed_table as keyed

    app = TableApp()
    async with app.run_test(size=(160, 30)) as pilot:
        table = app.query_one(KeyedTable)
        rows = table_rows()
        table.sync(rows)
        table.focus()
        keys = {"s": table.action_cycle_sort, "S": table.action_reverse_sort}  # what the keys run
        for key, column, reverse in (("s", 0, False), ("S", 0, True), ("s", 1, False), ("S", 1, True)):
            await until_pilot(pilot, lambda: table.warmed_for is not None and table.warmed_for[0] is rows
                              and table.warmed_sort == (table.sort_column, table.sort_reverse),
                              "the next sorts written between keys")
            work: list[str] = []
            for name in ("sort_rows", "diff_rows", "row_locations", "sort_value"):
                monkeypatch.setattr(keyed, name, counted(getattr(keyed, name), name, work))
            keys[key]()
            monkeypatch.undo()
            assert (table.sort_column, table.sort_reverse) == (column, reverse)
            assert work == [], f"`{key}` ({column}, {reverse}) did {work[:3]} while the engineer waited"
            shown = [str(table.get_row(k)[column]) for k in table.shown_keys]
            assert shown == sorted((cells[column] for _, cells in rows), key=str.casefold, reverse=reverse)


async def test_views_written_between_keys_keep_the_views_shown() -> None:
    """The orders prepared for the next keys do not push out the views shown before: `s` and, once the table
    has prepared what follows, `s` back to the pane's own order finds that order as it was written."""
    app = TableApp()
    async with app.run_test(size=(160, 30)) as pilot:
        table = app.query_one(KeyedTable)
        rows = table_rows()
        table.sync(rows)

        async def prepared() -> None:
            await until_pilot(pilot, lambda: table.warmed_for is not None and table.warmed_for[0] is rows
                              and table.warmed_sort == (table.sort_column, table.sort_reverse),
                              "the next sorts written between keys")

        await prepared()
        default = table._row_locations
        table.set_sort("name")
        await prepared()
        table.set_sort(None)
        assert table._row_locations is default and table.shown_keys == [k for k, _ in rows]
