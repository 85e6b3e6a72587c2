"""KeyedTable renders one-line plain cells straight to segments (tui.widgets.cell_render): what the terminal
shows must be exactly what DataTable's own rendering shows, cell by cell, style and meta included (the meta
carries the row and column a click lands on)."""

from __future__ import annotations

from typing import Any

import pytest
from rich.segment import Segment
from rich.style import Style
from rich.text import Text
from textual.app import App, ComposeResult
from textual.widgets import DataTable

from tui.widgets import cell_render
from tui.widgets.keyed_table import KeyedTable

PLAIN = ["web-1", "", "  lead and trail  ", "[/]", "[bold]not markup[/bold]", "名前サーバー", "ok 👍", "é", "x" * 14,
         "a" * 40]
STYLED = [Text("ERROR", style="red"), Text("!! stuck", style="bold red"), Text("dim", style=Style(dim=True)),
          Text("", style="green"), Text("null", style=Style.null())]
FALLBACK = [Text.assemble(("two", "red"), " spans"), Text("right", justify="right"), "far too long for the column"]


class TableApp(App[None]):
    def compose(self) -> ComposeResult:
        yield KeyedTable(("one", "two", "three"), id="t")


def _cells(lines: list[list[Segment]]) -> list[tuple[str, Style | None]]:
    """What a terminal shows: one (character, style) per character, meta included in the style."""
    return [(ch, seg.style) for line in lines for seg in line if not seg.control for ch in seg.text]


def _rows() -> list[tuple[str, tuple[Any, ...]]]:
    cells = PLAIN + STYLED + FALLBACK
    return [(f"r{i}", (cells[i], cells[(i + 5) % len(cells)], cells[(i + 11) % len(cells)])) for i in range(len(cells))]


@pytest.mark.parametrize(("zebra", "priority"), [(False, "css"), (True, "css"), (False, "renderable")])
async def test_direct_cells_show_exactly_what_datatable_renders(zebra: bool, priority: str) -> None:
    app = TableApp()
    async with app.run_test(size=(120, 40)) as pilot:
        table = app.query_one(KeyedTable)
        table.zebra_stripes = zebra
        table.cursor_foreground_priority = table.cursor_background_priority = priority  # type: ignore[assignment]
        table.focus()
        table.sync(_rows())
        await pilot.pause()
        table.move_cursor(row=3)
        await pilot.pause()
        direct = 0
        calls: list[Any] = []
        one_line = cell_render.one_line

        def counting(*args: Any, **kwargs: Any) -> Any:
            got = one_line(*args, **kwargs)
            calls.append(got is not None)
            return got

        for row in range(table.row_count):
            base = table.rich_style + (table.get_component_rich_style("datatable--even-row") if zebra and row % 2
                                       else Style.null())
            for column, width in enumerate(table.fitted):
                for cursor, hover in ((False, False), (True, False), (False, True), (True, True)):
                    table._cell_render_cache.clear()
                    calls.clear()
                    with pytest.MonkeyPatch.context() as mp:
                        mp.setattr("tui.widgets.keyed_table.one_line", counting)
                        ours = table._render_cell(row, column, base, width + 2, cursor, hover)
                    table._cell_render_cache.clear()
                    theirs = DataTable._render_cell(table, row, column, base, width + 2, cursor, hover)
                    assert _cells(ours) == _cells(theirs), (row, column, cursor, hover)
                    assert len(ours) == len(theirs) == 1
                    direct += sum(calls)
        # the plain and styled cells went the direct way, the others DataTable's
        assert direct >= 4 * (len(PLAIN) + len(STYLED))


def test_only_one_line_plain_cells_that_fit_go_the_direct_way() -> None:
    from rich.console import Console

    console, pre, post = Console(), Style(bgcolor="blue"), Style.null()
    assert cell_render.one_line(Text("fits"), 10, 1, pre, post, console) is not None
    assert cell_render.one_line(Text("x" * 9), 10, 1, pre, post, console) is None  # wider than 8
    assert cell_render.one_line(Text("a\tb"), 10, 1, pre, post, console) is None
    assert cell_render.one_line(Text("a\nb"), 10, 1, pre, post, console) is None
    assert cell_render.one_line(Text.assemble(("a", "red"), "b"), 10, 1, pre, post, console) is None
    assert cell_render.one_line(Text("a", justify="center"), 10, 1, pre, post, console) is None
    assert cell_render.one_line("a str", 10, 1, pre, post, console) is None  # DataTable makes it a Text first
    assert cell_render.one_line(Text("a"), 2, 1, pre, post, console) is None  # no room inside the padding
    (line,) = cell_render.one_line(Text("ab", style="red"), 6, 1, pre, post, console)  # type: ignore[misc]
    assert "".join(s.text for s in line) == " ab   " and sum(len(s.text) for s in line) == 6
