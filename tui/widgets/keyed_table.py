"""A DataTable updated in place by key, keeping the cursor on the same row across polls."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from rich.text import Text
from textual._two_way_dict import TwoWayDict
from textual.widgets import DataTable
from textual.widgets._data_table import RowKey

from tui.tablediff import Row, RowFilter, diff_rows


class KeyedTable(DataTable):
    """DataTable fed with complete row lists; applies only the difference.

    Re-ordering writes the row order the way DataTable.sort does (textual is pinned to 8.2.x for this).
    """

    DEFAULT_CSS = """
    KeyedTable { height: 1fr; }
    """

    FLASH_SECONDS = 1.5

    def __init__(self, columns: Sequence[str], *, highlight: Sequence[str] = (), **kwargs: Any) -> None:
        """highlight: labels of the columns whose change is *semantic* (state, task_state, consumers...):
        a changed cell there flashes once. Ticking ages are never listed, so they never flash."""
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
        self._shown: dict[str, tuple[Any, ...]] = {}
        self._all_rows: list[Row] = []
        self.row_filter = RowFilter()
        self._highlight = {i for i, label in enumerate(columns) if label in set(highlight)}
        self.flashes = 0  # how many cells flashed (for tests and the curious)

    def on_mount(self) -> None:
        for label in self._column_labels:
            self.add_column(label, key=label)

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
        self._all_rows = []

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
        order = [str(k.value) for k in self._ordered_row_keys()]
        diff = diff_rows(self._shown, order, wanted)
        if diff.empty:
            return False
        keep = self.cursor_key()
        column_keys = list(self.columns)
        with self.app.batch_update():
            for key in diff.remove:
                self.remove_row(key)
                self._shown.pop(key, None)
            for key, index, value in diff.update:
                if index in self._highlight:
                    self._flash(key, column_keys[index], value)
                else:
                    self.update_cell(key, column_keys[index], value)
            for key, cells in diff.add:
                self.add_row(*cells, key=key)
            for key, cells in wanted:
                self._shown[key] = tuple(cells)
            if diff.order is not None:
                self._row_locations = TwoWayDict({RowKey(key): i for i, key in enumerate(diff.order)})
                self._update_count += 1
                self.refresh()
            if keep is not None and keep in self._shown:
                self.move_cursor(row=self.get_row_index(keep), animate=False)
        return True

    def _flash(self, key: str, column: Any, value: Any) -> None:
        self.flashes += 1
        plain = value.plain if isinstance(value, Text) else str(value)
        style = value.style if isinstance(value, Text) else ""
        self.update_cell(key, column, Text(plain, style=f"{style} reverse".strip()))

        def restore() -> None:
            current = self._shown.get(key)
            if current is not None and key in self._shown:
                index = list(self.columns).index(column)
                if current[index] == value:
                    self.update_cell(key, column, value)

        self.set_timer(self.FLASH_SECONDS, restore)

    def _ordered_row_keys(self) -> list[RowKey]:
        locations = self._row_locations
        return sorted(self.rows, key=lambda k: locations.get(k) or 0)
