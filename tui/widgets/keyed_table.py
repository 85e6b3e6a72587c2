"""A DataTable updated in place by key, keeping the cursor on the same row across polls."""

from __future__ import annotations

from collections import deque
from collections.abc import Sequence
from typing import Any, ClassVar

from rich.cells import cell_len
from rich.style import Style
from rich.text import Text
from textual import events
from textual._two_way_dict import TwoWayDict
from textual.binding import Binding, BindingType
from textual.geometry import Region
from textual.strip import Strip
from textual.widget import Widget
from textual.widgets import DataTable
from textual.widgets._data_table import RowKey

from tui.safetext import cell, clean
from tui.tablediff import Row, RowFilter, diff_rows, sort_rows
from tui.widgets.column_fit import ColumnRule, fit_widths, rules_for

_COMPONENTS = tuple(sorted(DataTable.COMPONENT_CLASSES))
SORT_MARK = {False: " ▲", True: " ▼"}  # after the label of the column the table is sorted by


def shown_cell(value: Any) -> Any:
    """What the table holds for a cell: safe text (tui.safetext.cell), on one line, cut with "…" when its
    column is narrower than it (tui.widgets.column_fit)."""
    value = cell(value)
    if isinstance(value, Text) and (value.overflow != "ellipsis" or not value.no_wrap):
        value = value.copy()
        value.overflow, value.no_wrap = "ellipsis", True
    return value


def cell_width(value: Any) -> int:
    """Terminal cells the value takes on one line (as shown_cell shows it)."""
    if isinstance(value, Text):
        return value.cell_len if not value.plain.count("\n") else max(map(cell_len, value.plain.split("\n")))
    return cell_len(clean(value))


class KeyedTable(DataTable):
    """DataTable fed with complete row lists; applies only the difference.

    Every cell goes through tui.safetext.cell on its way in: a `str` is shown as text, never parsed as markup,
    and controls are made visible (cells hold names, faults and reasons from the cloud).

    Column widths follow tui.widgets.column_fit, recomputed when the table is resized and when its rows change:
    natural widths where they fit, else the columns `fit` marks shrinkable are cut with "…". The column the
    table is sorted by is marked in its header (▲ / ▼).

    Re-ordering writes the row order the way DataTable.sort does (textual is pinned to 8.2.x for this; the
    private DataTable items used are listed and checked in tui.widgets.textual_private).
    """

    DEFAULT_CSS = """
    KeyedTable { height: 1fr; }
    """

    FLASH_SECONDS = 1.5

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
        self._widths: dict[str, tuple[int, ...]] = {}  # row key -> each cell's width (the shown rows)
        self.fitted: list[int] = []  # the widths the columns were given last (tests, the curious)
        self._shown: dict[str, tuple[Any, ...]] = {}
        self._all_rows: list[Row] = []
        self.row_filter = RowFilter()
        self._highlight = {i for i, label in enumerate(columns) if label in set(highlight)}
        self.flashes = 0  # how many cells flashed (for tests and the curious)
        self.recent_flashes: deque[tuple[str, str]] = deque(maxlen=64)  # (row key, column) of the last ones
        self.sort_column: int | None = None  # None: the order the pane gives (worst first)
        self.sort_reverse = False
        self._style_seen: dict[Any, tuple[Any, ...]] = {}  # focus state -> the styles its renders were made with
        self._restyled = False

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
        signature = (app.theme, getattr(app, "_css_update_count", None), self.rich_style,
                     tuple(self.get_component_rich_style(name, default=Style.null()) for name in _COMPONENTS))
        state = self.get_pseudo_class_state()
        seen = self._style_seen
        if seen.get(state, signature) != signature:
            seen.clear()
            self._clear_caches()  # DataTable's own: every render cache
        seen[state] = signature

    def render_lines(self, crop: Region) -> list[Strip]:
        if self._restyled:
            self._check_restyle()
        return super().render_lines(crop)

    def on_mount(self) -> None:
        for label in self._column_labels:
            self.add_column(label, key=label)

    def on_resize(self, event: events.Resize) -> None:
        self.refit()

    # ----- column widths (tui.widgets.column_fit) -----------------------------------------------------
    def _header_label(self, index: int) -> str:
        label = self._column_labels[index]
        return label + SORT_MARK[self.sort_reverse] if index == self.sort_column else label

    def _available(self) -> int:
        """Cells of width for the columns: the table's width less the vertical scrollbar (when the rows
        overflow)."""
        width = self.size.width
        if self.row_count + 1 > self.size.height:
            width -= self.styles.scrollbar_size_vertical
        return width

    def refit(self) -> None:
        """Give each column its width for the table's size and rows (natural where it fits, see column_fit)."""
        if not self.columns or self.size.width <= 0:
            return
        natural = [cell_len(self._header_label(i)) for i in range(len(self._column_labels))]
        if self._widths:
            widest = zip(*self._widths.values(), strict=True)
            natural = [max(n, *column) for n, column in zip(natural, widest, strict=False)]
        widths = fit_widths(natural, self._rules, self._available(), 2 * self.cell_padding)
        if widths == self.fitted:
            return
        self.fitted = widths
        for column, width in zip(self.ordered_columns, widths, strict=False):
            column.auto_width, column.width = False, width
        self._update_count += 1  # rendered cells are cached without their width
        self._require_update_dimensions = True  # the virtual width (sideways scrolling) follows on idle
        self.refresh()

    def _relabel(self) -> None:
        """The header marks the sort column (▲ ascending, ▼ descending)."""
        for index, column in enumerate(self.ordered_columns):
            column.label = Text(self._header_label(index))
        self.fitted = []  # the label's width counts
        self.refit()
        self._update_count += 1
        self.refresh()

    @property
    def shown_keys(self) -> list[str]:
        return [str(k.value) for k in self._ordered_row_keys()]

    def set_filter(self, text: str) -> None:
        self.row_filter = RowFilter(text)
        self.sync(self._all_rows)

    def reset(self) -> None:
        """Forget every row (another cloud's rows follow: nothing flashes, the cursor starts at the top)."""
        self.clear()
        self._shown = {}
        self._widths = {}
        self._all_rows = []

    # ----- sort ---------------------------------------------------------------------------------------
    @property
    def sort_label(self) -> str:
        """What the footer says: `sort: state ▲`, `sort: default` (the pane's worst-first order)."""
        name = "default" if self.sort_column is None else self._column_labels[self.sort_column]
        if self.sort_reverse:
            return f"sort: {name} ▼" if self.sort_column is not None else f"sort: {name}, reversed"
        return f"sort: {name} ▲" if self.sort_column is not None else f"sort: {name}"

    def set_sort(self, column: int | str | None, *, reverse: bool = False) -> None:
        if isinstance(column, str):
            column = self._column_labels.index(column)
        self.sort_column, self.sort_reverse = column, reverse
        self._show_sort_in_footer()
        if self.columns:
            self._relabel()
        self.sync(self._all_rows)

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
        """Show exactly `rows` (after the filter). Returns True when anything changed."""
        self._all_rows = list(rows)
        wanted = self.row_filter.apply(rows)
        self._count(len(wanted), len(rows))
        if self.sort_column is not None or self.sort_reverse:
            wanted = sort_rows(wanted, self.sort_column, reverse=self.sort_reverse)
        order = [str(k.value) for k in self._ordered_row_keys()]
        diff = diff_rows(self._shown, order, wanted)
        if diff.empty:
            return False
        # the cursor on the first row stays on the first row (rows worth more attention may have arrived
        # above it); anywhere else it was put on purpose and follows its row
        keep = self.cursor_key() if self.cursor_row > 0 else None
        column_keys = list(self.columns)
        with self.app.batch_update():
            for key in diff.remove:
                self.remove_row(key)
                self._shown.pop(key, None)
                self._widths.pop(key, None)
            for key, index, value in diff.update:
                if index in self._highlight:
                    self._flash(key, column_keys[index], value)
                else:
                    self.update_cell(key, column_keys[index], shown_cell(value))
            for key, cells in diff.add:
                self.add_row(*map(shown_cell, cells), key=key)
            changed = {key for key, _, _ in diff.update} | {key for key, _ in diff.add}
            for key, cells in wanted:
                self._shown[key] = tuple(cells)
                if key in changed:
                    self._widths[key] = tuple(map(cell_width, cells))
            self.refit()
            if diff.order is not None:
                self._row_locations = TwoWayDict({RowKey(key): i for i, key in enumerate(diff.order)})
                self._update_count += 1
                self.refresh()
            if keep is not None and keep in self._shown:
                self.move_cursor(row=self.get_row_index(keep), animate=False)
            elif keep is None and self.row_count:
                self.move_cursor(row=0, animate=False)
                self.scroll_to(y=0, animate=False)  # the top rows in view, not only the cursor's
        return True

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
        self.update_cell(key, column, shown_cell(Text(plain, style=f"{style} reverse".strip())))

        def restore() -> None:
            current = self._shown.get(key)
            if current is not None and key in self._shown:
                index = list(self.columns).index(column)
                if current[index] == value:
                    self.update_cell(key, column, shown_cell(value))

        self.set_timer(self.FLASH_SECONDS, restore)

    def _ordered_row_keys(self) -> list[RowKey]:
        locations = self._row_locations
        return sorted(self.rows, key=lambda k: locations.get(k) or 0)
