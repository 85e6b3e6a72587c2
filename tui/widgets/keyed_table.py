"""A DataTable updated in place by key, keeping the cursor on the same row across polls."""

from __future__ import annotations

import contextlib
import time
from collections import deque
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass
from typing import Any, ClassVar, Self

from rich.style import Style
from rich.text import Text
from textual import events
from textual._two_way_dict import TwoWayDict
from textual.binding import Binding, BindingType
from textual.geometry import Region
from textual.strip import Strip
from textual.widget import Widget
from textual.widgets import DataTable
from textual.widgets._data_table import Row as TableRow
from textual.widgets._data_table import RowKey

from tui.dashboard import key_pending
from tui.safetext import cell, clean
from tui.tablediff import Row, RowFilter, TableDiff, diff_rows, sort_rows, sort_value
from tui.widgets.cell_render import one_line
from tui.widgets.column_fit import ColumnRule, fit_widths, rules_for
from tui.widgets.lazy_rows import LazyRows, cell_width

_COMPONENTS = tuple(sorted(DataTable.COMPONENT_CLASSES))
SORT_MARK = {False: " ▲", True: " ▼"}  # after the label of the column the table is sorted by
MARK_WIDTH = 2  # the cells SORT_MARK takes, kept in every header where the table has room (refit)


def shown_cell(value: Any) -> Any:
    """What the table holds for a cell: safe text (tui.safetext.cell), on one line, cut with "…" when its
    column is narrower than it (tui.widgets.column_fit)."""
    value = cell(value)
    if isinstance(value, Text) and (value.overflow != "ellipsis" or not value.no_wrap):
        value = value.copy()
        value.overflow, value.no_wrap = "ellipsis", True
    return value


class RowLines(Sequence[tuple[RowKey, int]]):
    """DataTable's line index (`_y_offsets`: line y -> (row key, line within the row)) over rows one line
    high each, read from the row order itself: no list of every line made after each sort or filter."""

    __slots__ = ("_rows",)

    def __init__(self, rows: list[TableRow]) -> None:
        self._rows = rows

    def __len__(self) -> int:
        return len(self._rows)

    def __getitem__(self, y: Any) -> Any:
        if isinstance(y, slice):
            return [(row.key, 0) for row in self._rows[y]]
        return (self._rows[y].key, 0)

    def clear(self) -> None:
        """DataTable.clear empties its line index; the rows this one reads are replaced by then."""


@dataclass
class Written:
    """An unfiltered view as written into DataTable (the given rows, in a sort order), kept so that esc
    (the filter cleared), `a` back and the sort back to default find it without sorting or writing again."""

    given: list[Row]  # the rows the pane gave (the same list: the same rows and cells)
    wanted: list[Row]  # those rows in the view's order
    rows: dict[RowKey, TableRow]  # DataTable's rows, its row locations and its order
    locations: TwoWayDict[RowKey, int]
    ordered: list[TableRow]
    widest: list[int] | None = None  # each column's widest cell over these rows, once measured


class KeyedTable(DataTable):
    """DataTable fed with complete row lists; applies only the difference.

    Every cell goes through tui.safetext.cell on its way in: a `str` is shown as text, never parsed as markup,
    and controls are made visible (cells hold names, faults and reasons from the cloud).

    Column widths follow tui.widgets.column_fit, recomputed when the table is resized and when its rows change:
    natural widths where they fit, else the columns `fit` marks shrinkable are cut with "…". The column the
    table is sorted by is marked in its header (▲ / ▼); where the table has room, every header keeps room for
    the mark, so a sort moves no column.

    Re-ordering writes the row order the way DataTable.sort does (textual is pinned to 8.2.x for this; the
    private DataTable items used are listed and checked in tui.widgets.textual_private).
    """

    DEFAULT_CSS = """
    KeyedTable { height: 1fr; }
    """

    FLASH_SECONDS = 1.5
    # a table of this many rows works out every column's sort values between keys (_warm_step), so that the
    # first sort by a column does not make 10,000 of them while the engineer waits
    WARM_FROM = 2_000
    WARM_STEP_S = 0.003  # one step holds the event loop about this long
    WARM_PAUSE_S = 0.01  # between two steps
    WARM_CHUNK = 256  # rows worked on between two looks at the clock
    KEEP_VIEWS = 3  # unfiltered views kept written (Written): ~2 MB each at 10,000 rows
    # (the row locations written by _write_rows, their rows in order); read from DataTable's __init__ on
    _ordered: tuple[Any, list[TableRow]] = (None, ())  # type: ignore[assignment]
    _sizing = False  # in _update_dimensions (refresh)

    # k9s-like: `s` picks the next sort column (after the last one: back to the pane's own order, worst first),
    # `S` reverses. The footer shows the current sort of the focused table in the `s` key's description.
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("s", "cycle_sort", "sort: default", tooltip="sort by the next column (after the last: default)"),
        Binding("S", "reverse_sort", "Reverse sort", key_display="shift+s", show=False,
                tooltip="reverse the sort order"),
        # DataTable's home / end scroll sideways in a row-cursor table; here (and k9s's g / G) they go to the
        # first / last row
        Binding("home,g", "scroll_top", "Top", show=False, tooltip="first row"),
        Binding("end,G", "scroll_bottom", "Bottom", show=False, tooltip="last row"),
        Binding("j", "cursor_down", "Down", show=False, tooltip="next row (as down)"),
        Binding("k", "cursor_up", "Up", show=False, tooltip="previous row (as up)"),
    ]

    def __init__(self, columns: Sequence[str], *, highlight: Sequence[str] = (),
                 fit: dict[str, ColumnRule] | None = None, **kwargs: Any) -> None:
        """highlight: labels of the columns whose change is *semantic* (state, task_state, consumers...):
        a changed cell there flashes once. Ticking ages are never listed, so they never flash.
        fit: the columns that may be cut when the table is too narrow (column_fit), by label."""
        kwargs.setdefault("cursor_type", "row")
        kwargs.setdefault("zebra_stripes", False)
        super().__init__(**kwargs)
        # DataTable caches up to 10,000 rendered cells and 1,000 rendered rows/lines per table; every changed
        # cell renders under a new key, so in a dashboard that runs all day each cache fills to its maximum
        # (~10 MB a table, most of the growth of a long run). A pane shows ~50 rows: keep a few screens' worth.
        for cache, size in ((self._cell_render_cache, 2000), (self._row_render_cache, 200),
                            (self._row_renderable_cache, 200), (self._line_cache, 200)):
            cache.maxsize = size
        self._column_labels = list(columns)
        self._rules = rules_for(self._column_labels, fit or {})
        self.fitted: list[int] = []  # the widths the columns were given last (tests, the curious)
        self._filled_to = 0  # the room the last column was widened to fill (refit)
        self._shown: dict[str, tuple[Any, ...]] = {}  # key -> cells as the pane gave them, in no order
        self._order: list[str] = []  # the shown keys, top to bottom
        self._data = LazyRows(self._shown, (), make=shown_cell)  # DataTable reads a row's cells through this
        self._sort_values: dict[int, dict[str, tuple[tuple[Any, ...], Any]]] = {}  # column -> key -> (cells, value)
        self._measured: dict[str, tuple[tuple[Any, ...], tuple[int, ...]]] = {}  # key -> (cells, their widths)
        self._plain: dict[str, tuple[tuple[Any, ...], str]] = {}  # key -> (cells, the text the filter searches)
        self._row_meta: dict[str, TableRow] = {}  # key -> DataTable's row (kept while the row may come back)
        self._all_rows: list[Row] = []
        self._previous_rows: list[Row] = []  # the rows given before these (`a` and back: the other view's)
        self._widest: list[int] | None = None  # each column's widest cell over the shown rows (None: to measure)
        self.matched = 0  # how many of the given rows the filter lets through
        self.row_filter = RowFilter()
        self._highlight = {i for i, label in enumerate(columns) if label in set(highlight)}
        self.flashes = 0  # how many cells flashed (for tests and the curious)
        self.recent_flashes: deque[tuple[str, str]] = deque(maxlen=64)  # (row key, column) of the last ones
        self.sort_column: int | None = None  # None: the order the pane gives (worst first)
        self.sort_reverse = False
        self._style_seen: dict[Any, tuple[Any, ...]] = {}  # focus state -> the styles its renders were made with
        self._restyled = False
        self._written: dict[tuple[Any, ...], Written] = {}  # (sort column, reverse) -> the unfiltered view
        self._current: Written | None = None  # the kept view on screen (its widths are kept with it)
        self._prepared: dict[tuple[Any, ...], Written] = {}  # the next sorts' views, written between keys
        self._cell_styles: dict[tuple[Any, ...], Style] = {}  # _cell_style
        self._warm_timer: Any = None  # the next _warm_step, when one is due
        # (its rows, the sort it prepares the next sorts of, the work left)
        self._warm_job: tuple[tuple[list[Row], ...], tuple[Any, ...], Iterator[None]] | None = None
        self.warmed_for: tuple[list[Row], ...] | None = None  # (given rows, *expected) whose work is done
        self.warmed_sort: tuple[Any, ...] = ()  # the sort whose next sorts (`s`, `S`) are written, with warmed_for
        self._expected: tuple[list[Row], ...] = ()  # rows the pane may give next (expect)
        self._widest_of: dict[int, tuple[list[Row], list[int]]] = {}  # id(expected) -> (it, its columns' widest)
        self.warm_steps = 0  # steps taken (tests, the curious)
        self._last_row_cells: tuple[Any, Any] = (None, ())  # _row_cells: ((update, row index), cells)
        self._synced: tuple[Any, ...] | None = None  # (the rows, the filter, the sort) of the last sync

    @property
    def ordered_rows(self) -> list[TableRow]:
        """The rows in order, as written by _write_rows (DataTable works them out again from the row locations,
        a pass over every row, after every update of any cell)."""
        locations, ordered = self._ordered
        if locations is self._row_locations and len(ordered) == len(self.rows):
            return ordered
        return super().ordered_rows

    @property
    def _y_offsets(self) -> Any:
        """Every row written by _write_rows is one line high: line y is row y (RowLines)."""
        locations, ordered = self._ordered
        if locations is self._row_locations and len(ordered) == len(self.rows):
            return RowLines(ordered)
        return DataTable._y_offsets.fget(self)  # type: ignore[attr-defined]

    def notify_style_update(self) -> None:
        """Every tab moves the focus between two tables, and Textual restyles both: DataTable then drops all of
        its rendered rows, cells and lines and re-renders every visible cell (~50 rows a table: most of a tab's
        time, ~70 ms on a slow host). Those caches are keyed by the focus state (the pseudo-class state)
        already, so when only the focus changed they stay valid and tabbing back finds that state's renders.
        Whether only the focus changed is known at the next render (Textual updates the parts' styles, such
        as the cursor's, after this call): _check_restyle."""
        Widget.notify_style_update(self)
        self._styles_cache.clear()
        self._get_styles_to_render_cell.cache_clear()  # not keyed by the focus state
        self._restyled = True
        self.refresh()

    def _check_restyle(self) -> None:
        """After a restyle: anything but the focus (a theme, the CSS, a style of the table or of its parts)
        changes this focus state's signature, and the render caches are cleared as DataTable does."""
        self._restyled = False
        app = self.app
        signature = (app.theme, vars(app).get("_css_update_count"), self.rich_style,
                     tuple(self.get_component_rich_style(name, default=Style.null()) for name in _COMPONENTS))
        state = self.get_pseudo_class_state()
        seen = self._style_seen
        if seen.get(state, signature) != signature:
            seen.clear()
            self._clear_caches()  # DataTable's own: every render cache
        seen[state] = signature

    def _update_dimensions(self, new_rows: Iterable[RowKey]) -> None:
        """DataTable's idle pass, which sets the scrollable size (a reactive that lays the screen out): where
        only the height changed (another row count: `a`, the filter) and the scrollbars stay as they are, the
        table's scrollbar and scroll bounds are updated and the table repainted, and the screen is not laid
        out again (a layout of the screen redraws all of it: 20-30 ms at 160x48 on a 2-core host)."""
        self._sizing = True
        try:
            super()._update_dimensions(new_rows)
        finally:
            self._sizing = False

    def refresh(self, *regions: Region, repaint: bool = True, layout: bool = False,
                recompose: bool = False) -> Self:
        if layout and self._sizing and not recompose and self._scrollbars_stay():
            self._scroll_update(self.virtual_size)
            layout = False
        return super().refresh(*regions, repaint=repaint, layout=layout, recompose=recompose)

    def _scrollbars_stay(self) -> bool:
        """The scrollbars shown are the ones the table's scrollable size wants (Widget._refresh_scrollbars's
        rule for `auto` overflow), and the table has been laid out."""
        styles = self.styles
        width, height = self.container_size
        if not width or not height or styles.overflow_x != "auto" or styles.overflow_y != "auto":
            return False
        virtual = self.virtual_size
        vertical, horizontal = virtual.height > height, virtual.width > width
        if vertical and not horizontal:
            horizontal = virtual.width > width - styles.scrollbar_size_vertical
        if horizontal and not vertical:
            vertical = virtual.height > height - styles.scrollbar_size_horizontal
        return (vertical, horizontal) == (self.show_vertical_scrollbar, self.show_horizontal_scrollbar)

    def render_lines(self, crop: Region) -> list[Strip]:
        if self._restyled:
            self._check_restyle()
        return super().render_lines(crop)

    def _render_cell(self, row_index: int, column_index: int, base_style: Style, width: int,
                     cursor: bool = False, hover: bool = False) -> Any:
        """A body cell of one line of plain text is rendered straight to its segments (cell_render.one_line: a
        sort or a filter over a big table re-renders every visible cell, and a 160x48 table took 55 ms that
        way, 22 ms this way); any other cell, the header and the fixed ones as DataTable renders them. Cached
        under DataTable's own key."""
        if row_index < self.fixed_rows or column_index < self.fixed_columns:  # the header, row labels, fixed
            return super()._render_cell(row_index, column_index, base_style, width, cursor, hover)
        row_key = self._row_locations.get_key(row_index)
        cache_key = (row_key, self._column_locations.get_key(column_index), base_style, cursor, hover,
                     self._show_hover_cursor, self._update_count, self._pseudo_class_state)
        cache = self._cell_render_cache
        lines = cache.get(cache_key)
        if lines is not None:
            return lines
        row = self.rows.get(row_key) if row_key is not None else None
        if row is not None and row.height == 1:
            cells = self._row_cells(row_index)
            if column_index < len(cells):
                component, post = self._get_styles_to_render_cell(
                    False, False, False, hover, cursor, self.show_cursor, self._show_hover_cursor,
                    self.cursor_foreground_priority == "css", self.cursor_background_priority == "css")
                pre = self._cell_style(base_style, row_index, column_index, component)
                lines = one_line(cells[column_index], width, self.cell_padding, pre, post, self.app.console)
                if lines is not None:
                    cache[cache_key] = lines
                    return lines
        return super()._render_cell(row_index, column_index, base_style, width, cursor, hover)

    def _row_cells(self, row_index: int) -> Any:
        """The row's cells as DataTable renders them: fetched once per row and update, not once per cell."""
        key = (self._update_count, row_index)
        last = self._last_row_cells
        if last[0] != key:
            last = self._last_row_cells = (key, self._get_row_renderables(row_index).cells)
        return last[1]

    def _cell_style(self, base_style: Style, row_index: int, column_index: int, component: Style) -> Style:
        """The style a cell's segments start with: the row's style, the cell's place (its meta, which mouse
        clicks read) and the component's style. The places in view are the same from one render to the next
        (the top rows after a sort or a filter are rows 0..n again), so the combinations are kept, a few
        screens' worth."""
        key = (base_style, row_index, column_index, component)
        styles = self._cell_styles
        style = styles.get(key)
        if style is None:
            if len(styles) >= 4096:
                styles.clear()
            style = styles[key] = base_style + Style.from_meta({"row": row_index, "column": column_index}) + component
        return style

    def on_mount(self) -> None:
        for label in self._column_labels:
            self.add_column(label, key=label)
        self._data.set_columns(list(self.columns))

    def on_resize(self, event: events.Resize) -> None:
        self.refit()

    # ----- column widths (tui.widgets.column_fit) -----------------------------------------------------
    def _header_label(self, index: int, width: int | None = None) -> str:
        """The column's header: its label, and the sort mark on the sort column; where the column is narrower
        than that (a narrow table squeezes its columns), the label is cut with "…" (a squeezed column says it
        is cut) and the mark stays."""
        label = self._column_labels[index]
        mark = SORT_MARK[self.sort_reverse] if index == self.sort_column else ""
        if width is not None and len(label) + len(mark) > width:
            label = label[: max(0, width - len(mark) - 1)] + "…"
        return label + mark

    def _fit_labels(self, widths: Sequence[int]) -> None:
        """Each header as _header_label gives it for the column's width."""
        for index, (column, width) in enumerate(zip(self.ordered_columns, widths, strict=False)):
            label = self._header_label(index, width)
            if column.label.plain != label:
                column.label = Text(label)

    def _available(self) -> int:
        """Cells of width for the columns: the table's width less the vertical scrollbar (when the rows
        overflow)."""
        width = self.size.width
        if self.row_count + 1 > self.size.height:
            width -= self.styles.scrollbar_size_vertical
        return width

    def _natural(self) -> list[int]:
        """Each column's widest cell over the shown rows and its header (a row's widths are measured again
        only when its cells change: the filter and `a` bring the same rows back; the columns' widest are
        worked out again only when rows came, went or changed: not for a sort)."""
        widest = self._widest
        if widest is None and not self.row_filter.active:
            expected = self._widest_of.get(id(self._all_rows))
            if expected is not None and expected[0] is self._all_rows and len(self._order) == len(self._all_rows):
                widest = self._widest = expected[1]  # measured between keys (expect)
                if self._current is not None:
                    self._current.widest = widest
        if widest is None:
            measured = self._measured
            shown = self._shown
            widths = []
            for key in self._order:
                cells = shown[key]
                kept = measured.get(key)
                if kept is None or kept[0] is not cells:
                    kept = measured[key] = (cells, tuple(cell_width(c) for c in cells))
                widths.append(kept[1])
            self._prune(measured)
            widest = self._widest = [max(column) for column in zip(*widths, strict=False)]
            if self._current is not None:  # the shown rows are a kept view's: its widths are these
                self._current.widest = widest
        natural = [len(self._header_label(i)) for i in range(len(self._column_labels))]
        if self._order:
            natural = [max(n, w) for n, w in zip(natural, widest, strict=False)]
        return natural

    def refit(self) -> None:
        """Give each column its width for the table's size and rows (natural where it fits, see column_fit)."""
        if not self.columns or self.size.width <= 0:
            return
        natural, available, padding = self._natural(), self._available(), 2 * self.cell_padding
        # where there is room, every header keeps room for the sort mark: a sort moves no column (nor lays the
        # screen out again); where there is not, the cells' width comes first
        roomy = [max(n, len(label) + MARK_WIDTH) for n, label in zip(natural, self._column_labels, strict=True)]
        if sum(roomy) + padding * len(roomy) <= available:
            widths = roomy
        else:
            widths = fit_widths(natural, self._rules, available, padding)
        relabelled = self._cut_labels(widths)
        if widths == self.fitted and available == self._filled_to:
            if relabelled:
                self._update_count += 1
                self.refresh()
            return
        self.fitted, self._filled_to = widths, available
        # the last column takes the table's spare width (blank either way): the table is as wide as its room
        # whatever the columns' widths, so a new width (a sort mark, a longer name) changes no scrollable size
        # and lays nothing out again
        spare = available - (sum(widths) + padding * len(widths))
        given = [*widths[:-1], widths[-1] + spare] if widths and spare > 0 else widths
        for column, width in zip(self.ordered_columns, given, strict=False):
            column.auto_width, column.width = False, width
        self._fit_labels(given)
        self._update_count += 1  # rendered cells are cached without their width
        self._require_update_dimensions = True  # the virtual width (sideways scrolling) follows on idle
        self.refresh()

    def _cut_labels(self, widths: Sequence[int]) -> bool:
        """Each header cut with "…" to its column's width (a squeezed column says it is cut); True when a label
        changed."""
        changed = False
        for index, (column, width) in enumerate(zip(self.ordered_columns, widths, strict=False)):
            label = self._header_label(index, width)
            if column.label.plain != label:
                column.label = Text(label)
                changed = True
        return changed

    def _relabel(self) -> None:
        """The header marks the sort column (▲ ascending, ▼ descending)."""
        self.refit()
        columns = self.ordered_columns
        if self.fitted:
            self._fit_labels([column.width for column in columns])
        else:  # not laid out yet: refit gives the widths later
            for index, column in enumerate(columns):
                column.label = Text(self._header_label(index))
        self._update_count += 1
        self.refresh()

    @property
    def shown_keys(self) -> list[str]:
        return list(self._order)

    def set_filter(self, text: str) -> None:
        self.row_filter = RowFilter(text)
        self.sync(self._all_rows)

    def reset(self) -> None:
        """Forget every row (another cloud's rows follow: nothing flashes, the cursor starts at the top)."""
        self._written.clear()
        self._prepared.clear()
        self._current = None
        self.clear()  # DataTable's: clears _data (the shown rows) too
        self._order = []
        self._sort_values.clear()
        self._measured.clear()
        self._plain.clear()
        self._row_meta.clear()
        self._all_rows = []
        self._previous_rows = []
        self._widest = None
        self._warm_job = self.warmed_for = self._synced = None
        self._expected = ()
        self._widest_of = {}

    # ----- sort ---------------------------------------------------------------------------------------
    @property
    def sort_label(self) -> str:
        """What the footer says: `sort: state ▲`, `sort: default` (the pane's worst-first order)."""
        return self._sort_label(self.sort_column, self.sort_reverse)

    def _sort_label(self, column: int | None, reverse: bool) -> str:
        if column is None:
            return "sort: default, reversed" if reverse else "sort: default"
        return f"sort: {self._column_labels[column]}{SORT_MARK[reverse]}"

    def footer_descriptions(self, action: str) -> list[str]:
        """Every name the footer's `s` key may give (StableFooter keeps the widest's width from the first)."""
        if action != "cycle_sort":
            return []
        columns = [None, *range(len(self._column_labels))]
        return [self._sort_label(column, reverse) for column in columns for reverse in (False, True)]

    def set_sort(self, column: int | str | None, *, reverse: bool = False) -> None:
        if isinstance(column, str):
            column = self._column_labels.index(column)
        self.sort_column, self.sort_reverse = column, reverse
        self._show_sort_in_footer()
        if self.columns:
            self._relabel()
        self.sync(self._all_rows)
        self._show_sort_column()

    def _show_sort_column(self) -> None:
        """A table wider than its room scrolls sideways, if need be, so that the sort column (its marked header)
        is in view; back to the left edge for the pane's own order."""
        if not self.columns or self.size.width <= 0:
            return
        if self.sort_column is None:
            if self.scroll_x:
                self.scroll_to(x=0, animate=False, immediate=True)
            return
        region = self._get_column_region(self.sort_column)
        room = self.scrollable_content_region.width
        x = self.scroll_x
        if region.x < x:
            self.scroll_to(x=region.x, animate=False, immediate=True)
        elif region.right > x + room:
            self.scroll_to(x=region.right - room, animate=False, immediate=True)

    def action_cycle_sort(self) -> None:
        column = self.sort_column
        column = 0 if column is None else column + 1
        self.set_sort(None if column >= len(self._column_labels) else column)

    def action_reverse_sort(self) -> None:
        self.set_sort(self.sort_column, reverse=not self.sort_reverse)

    def _show_sort_in_footer(self) -> None:
        """Rewrite this table's own `s` binding so the footer names the current sort (bindings are per node)."""
        old = self._bindings.key_to_bindings.get("s", [])
        self._bindings.key_to_bindings["s"] = [
            Binding(b.key, b.action, self.sort_label, show=b.show, tooltip=b.tooltip) for b in old]
        self.refresh_bindings()

    def cursor_key(self) -> str | None:
        if not self.row_count:
            return None
        try:
            return str(self.coordinate_to_cell_key(self.cursor_coordinate).row_key.value)
        except Exception:
            return None

    def sync(self, rows: Sequence[Row]) -> bool:
        """Show exactly `rows` (after the filter). Returns True when anything changed.

        The rows stay plain data: a row's Rich cells are made when it is drawn or read (LazyRows), rows that
        come and go (the filter, `a`) are written into DataTable in one pass, and the filter searches text
        kept per row. So a key over 10,000 rows costs a few passes over plain data, not 10,000 renders."""
        synced = self._synced
        if synced is not None and synced[0] is rows and synced[1:] == self._view_state():
            return False  # the same list again (the pane's rows did not change), the same filter and sort
        if rows is not self._all_rows:
            self._previous_rows = self._all_rows
        self._all_rows = rows if isinstance(rows, list) else list(rows)
        kept = None if self.row_filter.active else self._kept_view((self.sort_column, self.sort_reverse))
        if kept is not None:
            wanted = kept.wanted  # the same rows in the same order: neither filtered nor sorted again
        else:
            kept = None
            wanted = self._filtered(self._all_rows)
            if self.sort_column is not None or self.sort_reverse:
                wanted = self._sorted(wanted)
        self.matched = len(wanted)
        self._synced = (self._all_rows, *self._view_state())
        self._warm_later()
        self._count(len(wanted), len(self._all_rows))
        shown_view = self._current
        reorder = (kept is not None and shown_view is not None and shown_view is not kept
                   and shown_view.given is kept.given)
        # both views every given row, unfiltered (their cells are those shown): only the order differs
        diff = TableDiff(order=[key for key, _ in wanted]) if reorder else diff_rows(self._shown, self._order, wanted)
        self._current = kept  # the kept view shown, if any (_write_rows keeps a new one)
        if diff.empty:
            return False
        if diff.remove or diff.add or diff.update:
            # other rows or cells: measured again (a new order alone keeps the widths), or a kept view's
            self._widest = kept.widest if kept is not None and not diff.update else None
        # the cursor on the first row stays on the first row (rows worth more attention may have arrived
        # above it); anywhere else it was put on purpose and follows its row
        keep = self.cursor_key() if self.cursor_row > 0 else None
        column_keys = list(self.columns)
        data = self._data
        with self.app.batch_update():
            if diff.remove or diff.add or diff.order is not None:
                for key in diff.remove:
                    del self._shown[key]
                    data.forget(key)
                self._write_rows(wanted, diff.add, kept)
            shown = self._shown
            if not reorder:
                for key, cells in wanted:  # the new cells of every row, before the changed ones are redrawn
                    if shown.get(key) is not cells:
                        shown[key] = cells
            for key, index, value in diff.update:
                if index in self._highlight:
                    self._flash(key, column_keys[index], value)
                elif data.built(key):
                    self.update_cell(key, column_keys[index], shown_cell(value))
                # else never drawn: its cells are made from the new ones when it is
            self.refit()
            if keep is not None and keep in self._shown:
                self.move_cursor(row=self.get_row_index(keep), animate=False)
            elif keep is None and self.row_count:
                self.move_cursor(row=0, animate=False)
                self.scroll_to(y=0, animate=False)  # the top rows in view, not only the cursor's
        return True

    def _view_state(self) -> tuple[Any, ...]:
        return self.row_filter, self.sort_column, self.sort_reverse

    def _sorted(self, rows: list[Row], state: tuple[int | None, bool] | None = None) -> list[Row]:
        """sort_rows with each row's sort value kept (made again when its cells change). state: (column, reverse)
        to sort by (default: the table's own)."""
        column, reverse = state if state is not None else (self.sort_column, self.sort_reverse)
        if column is None:
            return sort_rows(rows, None, reverse=reverse)
        cache = self._sort_values.setdefault(column, {})
        get = cache.get
        values = []
        for key, cells in rows:
            kept = get(key)
            if kept is None or kept[0] is not cells:
                kept = cache[key] = (cells, sort_value(cells[column] if column < len(cells) else ""))
            values.append(kept[1])
        self._prune(cache)
        return sort_rows(rows, column, reverse=reverse, values=values)

    def expect(self, *views: list[Row]) -> None:
        """Rows the pane may give next (the instances pane's other view, which `a` shows): between keys their
        widths are measured and their row records made, so the key that shows them finds that work done."""
        if not same_views(self._expected, views):
            self._expected = views
            self._widest_of = {id(v): w for v in views if (w := self._widest_of.get(id(v))) and w[0] is v}
            self._warm_later()

    def _prune(self, cache: dict[str, Any]) -> None:
        prune(cache, self._all_rows, self._previous_rows, *self._expected)

    def _warm_target(self) -> tuple[list[Row], tuple[list[Row], ...]]:
        return self._all_rows, self._expected

    def _warm_later(self) -> None:
        if self._warm_timer is not None:
            return
        rows, expected = self._warm_target()
        if len(rows) < self.WARM_FROM and all(len(view) < self.WARM_FROM for view in expected):
            return
        view = (self.sort_column, self.sort_reverse)
        if not same_views(self.warmed_for, (rows, *expected)) or self.warmed_sort != view:
            self._warm_timer = self.set_timer(self.WARM_PAUSE_S, self._warm_step)

    def _warm_step(self) -> None:
        """Work, a few milliseconds at a time and never while a key waits for its frame, on what the next keys
        would otherwise do while the engineer waits: every column's sort values of the given rows (the first
        sort by a column), the text the filter searches in each (the first letter typed) and the rows the pane
        may give next (`a`). Rows whose cells did not change since cost a lookup; new rows (a poll) start the
        work again from the beginning."""
        self._warm_timer = None
        rows, expected = self._warm_target()
        if len(rows) < self.WARM_FROM and all(len(view) < self.WARM_FROM for view in expected):
            return
        if key_pending(self.app):
            self._warm_later()
            return
        target, view = (rows, *expected), (self.sort_column, self.sort_reverse)
        if self._warm_job is None or not same_views(self._warm_job[0], target) or self._warm_job[1] != view:
            self._warm_job = (target, view, self._warm_work(rows, expected))
        self.warm_steps += 1
        job = self._warm_job[2]
        deadline = time.perf_counter() + self.WARM_STEP_S
        for _ in job:
            if time.perf_counter() > deadline:
                self._warm_later()
                return
        self._warm_job = None
        self.warmed_for, self.warmed_sort = target, view

    def _warm_work(self, rows: list[Row], expected: tuple[list[Row], ...]) -> Iterator[None]:
        """_warm_step's work, yielding every WARM_CHUNK rows."""
        chunk = self.WARM_CHUNK
        for column in range(len(self._column_labels)):
            cache = self._sort_values.setdefault(column, {})
            get = cache.get
            for start in range(0, len(rows), chunk):
                for key, cells in rows[start:start + chunk]:
                    kept = get(key)
                    if kept is None or kept[0] is not cells:
                        cache[key] = (cells, sort_value(cells[column] if column < len(cells) else ""))
                yield
        # a row given now and in a view expected, with other cells there (the instances pane's rows worth
        # attention): what is kept for it is the given row's, the other is made when that view is shown
        given = dict(rows) if expected else {}
        for view in (rows, *expected):
            plain = self._plain
            for start in range(0, len(view), chunk):
                for key, cells in view[start:start + chunk]:
                    kept = plain.get(key)
                    if (kept is None or kept[0] is not cells) and given.get(key, cells) is cells:
                        plain[key] = (cells, row_text(cells))
                yield
        for view in expected:
            measured, meta = self._measured, self._row_meta
            widths: list[tuple[int, ...]] = []
            for start in range(0, len(view), chunk):
                for key, cells in view[start:start + chunk]:
                    kept = measured.get(key)
                    if kept is None or kept[0] is not cells:
                        kept = (cells, tuple(cell_width(c) for c in cells))
                        if given.get(key, cells) is cells:
                            measured[key] = kept
                    widths.append(kept[1])
                    if key not in meta:
                        meta[key] = TableRow(RowKey(key), 1)
                yield
            self._widest_of[id(view)] = (view, [max(column) for column in zip(*widths, strict=False)])
        for state in self._next_sorts():
            self._prepare_view(state)
            yield

    def _kept_view(self, state: tuple[int | None, bool]) -> Written | None:
        """The view of the given rows in this sort order, kept or prepared between keys (then kept from now)."""
        rows = self._all_rows
        kept = self._written.get(state)
        if kept is not None and kept.given is rows:
            return kept
        prepared = self._prepared.pop(state, None)
        if prepared is None or prepared.given is not rows:
            return None
        self._remember(state, prepared)
        return prepared

    def _next_sorts(self) -> list[tuple[int | None, bool]]:
        """The sort orders the next `s` and `S` give."""
        column = 0 if self.sort_column is None else self.sort_column + 1
        return [(None if column >= len(self._column_labels) else column, False),
                (self.sort_column, not self.sort_reverse)]

    def _prepare_view(self, state: tuple[int | None, bool]) -> None:
        """Between keys, while the table shows every given row unfiltered: those rows in the order `state` gives,
        written as DataTable's row order and locations and kept (Written), so that the key that asks for it
        (`s`, `S`) sorts and writes nothing."""
        current, rows = self._current, self._all_rows
        if self.row_filter.active or current is None or current.given is not rows or self.rows is not current.rows:
            return
        nexts = self._next_sorts()
        self._prepared = {s: w for s, w in self._prepared.items() if s in nexts and w.given is rows}
        if state in self._prepared or ((kept := self._written.get(state)) is not None and kept.given is rows):
            return
        wanted = self._sorted(rows, state)
        meta = self._row_meta
        try:
            ordered = [meta[key] for key, _ in wanted]
        except KeyError:
            return
        self._prepared[state] = Written(rows, wanted, self.rows, row_locations([key for key, _ in wanted], ordered),
                                        ordered, current.widest)

    def _filtered(self, rows: list[Row]) -> list[Row]:
        """The rows the filter lets through, searched in text kept per row (made again when its cells change)."""
        row_filter = self.row_filter
        if not row_filter.active:
            return rows
        cache = self._plain
        texts = []
        for key, cells in rows:
            kept = cache.get(key)
            if kept is None or kept[0] is not cells:
                kept = cache[key] = (cells, row_text(cells))
            texts.append(kept[1])
        self._prune(cache)
        return row_filter.select(rows, texts)

    def _write_rows(self, wanted: list[Row], added: Sequence[Row], kept: Written | None = None) -> None:
        """Rows added, removed or re-ordered: DataTable's rows and their order written in one pass (its
        add_row / remove_row cost a pass over every row each); the columns' widths follow in refit.
        kept: the unfiltered view these rows are, written before: its rows and order are put back as they were.
        An unfiltered view written here is kept (_keep)."""
        for key, cells in added:
            self._shown[key] = cells
        count = len(self.rows)
        keys = [key for key, _ in wanted]
        if kept is not None:
            self.rows, self._row_locations, ordered = kept.rows, kept.locations, kept.ordered
        else:
            meta = self._row_meta
            written: list[TableRow] | None = None
            if not added and len(keys) == count:
                # the same rows in another order (a sort): DataTable's rows stay, only their order is written (as
                # in DataTable.sort)
                with contextlib.suppress(KeyError):
                    written = [meta[key] for key in keys]
            if written is None:
                rows: dict[RowKey, TableRow] = {}
                for key in keys:
                    row = meta.get(key)
                    if row is None:
                        row = meta[key] = TableRow(RowKey(key), 1)
                    rows[row.key] = row
                self._prune(meta)
                self.rows = rows
                written = list(rows.values())
            ordered = written
            self._row_locations = row_locations(keys, ordered)
            kept = self._keep(wanted, ordered)
        self._current = kept
        self._order = keys
        # DataTable's row order (ordered_rows) and line index (_y_offsets) read from this
        self._ordered = (self._row_locations, ordered)
        self._update_count += 1
        self._require_update_dimensions = True  # DataTable's idle pass: the scrollable size of every row
        self.cursor_coordinate = self.cursor_coordinate  # back inside the rows when they got fewer
        self.check_idle()
        # another row count changes the scrollable height, which DataTable's idle pass sets (_update_dimensions)
        self.refresh()

    def _keep(self, wanted: list[Row], ordered: list[TableRow]) -> Written | None:
        """Keep the view just written when it is unfiltered (at most one per sort order, of the rows given now
        or just before: `a` and back)."""
        if self.row_filter.active:
            return None
        written = self._written
        for state in [s for s, w in written.items() if w.given is not self._all_rows
                      and w.given is not self._previous_rows]:
            del written[state]
        kept = Written(self._all_rows, wanted, self.rows, self._row_locations, ordered)
        self._remember((self.sort_column, self.sort_reverse), kept)
        return kept

    def _remember(self, state: tuple[Any, ...], view: Written) -> None:
        """Keep a view shown, the oldest kept one going when KEEP_VIEWS are."""
        written = self._written
        written.pop(state, None)
        while len(written) >= self.KEEP_VIEWS:
            del written[next(iter(written))]
        written[state] = view

    def _count(self, shown: int, total: int) -> None:
        """Tell the pane how many rows the filter lets through (it says `12 of 203` in its title)."""
        counts = (self.row_filter, shown, total)
        if counts != getattr(self, "_counts", None):
            self._counts = counts
            report = getattr(self.parent, "filter_counted", None)
            if callable(report):
                report(self.row_filter, shown, total)

    def _flash(self, key: str, column: Any, value: Any) -> None:
        self.flashes += 1
        self.recent_flashes.append((key, str(getattr(column, "value", column))))
        plain = clean(value.plain if isinstance(value, Text) else str(value))
        style = value.style if isinstance(value, Text) else ""
        self.update_cell(key, column, Text(plain, style=f"{style} reverse".strip()))

        def restore() -> None:
            current = self._shown.get(key)
            if current is not None and key in self._shown:
                index = list(self.columns).index(column)
                if current[index] == value:
                    self.update_cell(key, column, shown_cell(value))

        self.set_timer(self.FLASH_SECONDS, restore)


def row_locations(keys: list[str], ordered: list[TableRow]) -> TwoWayDict[RowKey, int]:
    """DataTable's row locations (row key -> index, index -> row key) for the rows `ordered`, keyed `keys`.
    Looked up by key, the map holds the keys' strings: a RowKey hashes and compares as its string, so
    DataTable's lookups with a RowKey find them, and the map is made without hashing 10,000 RowKeys in Python
    (a third of a sort's own time at 10,000 rows). By index it gives DataTable's RowKeys, as ever."""
    locations: TwoWayDict[RowKey, int] = TwoWayDict({})
    locations._forward = dict(zip(keys, range(len(keys)), strict=True))  # type: ignore[arg-type]
    locations._reverse = dict(enumerate([row.key for row in ordered]))
    return locations


def row_text(cells: tuple[Any, ...]) -> str:
    """What the filter searches in a row: its cells' text, one space apart (as RowFilter.apply reads it)."""
    return " ".join([c if type(c) is str else getattr(c, "plain", None) or str(c) for c in cells])


def prune(cache: dict[str, Any], *views: Sequence[Row]) -> None:
    """Drop what is kept for rows no longer given: kept for every given row (the filter brings them back), for
    the rows given before these and for the rows expected next (`a` and back bring the other view's rows:
    10,000 of them measured again, their sort values and row records made again, cost ~50 ms a press)."""
    if len(cache) > 2 * sum(len(view) for view in views) + 64:
        live: set[str] = set()
        for view in views:
            live.update(key for key, _ in view)
        for key in [k for k in cache if k not in live]:
            del cache[key]


def same_views(a: Sequence[list[Row]] | None, b: Sequence[list[Row]]) -> bool:
    """The same row lists (the same objects), in the same order."""
    return a is not None and len(a) == len(b) and all(x is y for x, y in zip(a, b, strict=True))
