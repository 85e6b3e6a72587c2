"""A keyed table's cells as plain data, turned into Rich cells only for the rows that are drawn or read.

A pane hands its table every row (10,000 instances with `a`); DataTable keeps each row's cells in its `_data`
mapping and reads them only to draw the rows in view or to answer get_row / get_cell. LazyRows stands in for
that mapping: it holds the rows as given (str or Text cells) and makes a row's safe cells (tui.safetext.cell)
the first time DataTable reads it. Column widths are worked out from the plain text (cell_widths), the way
DataTable measures a one-line Text cell.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from itertools import zip_longest
from typing import Any

from rich.cells import cell_len
from rich.text import Text

from tui.safetext import cell, clean


class LazyRows:
    """DataTable's `_data` (row key -> {column key: cell}) over `raw` (row key -> cells as the pane gave them).

    `raw` is the table's own dict of shown rows, keyed by str: DataTable's RowKey hashes and compares as its
    string, so both look each other up. A row read once keeps its cells until `forget` (its cells changed)."""

    __slots__ = ("_built", "_columns", "_make", "raw")

    def __init__(self, raw: dict[str, tuple[Any, ...]], columns: Sequence[Any],
                 make: Callable[[Any], Any] = cell) -> None:
        """make: a cell as the table shows it, from a cell as given (default: tui.safetext.cell)."""
        self.raw = raw
        self._columns = list(columns)
        self._make = make
        self._built: dict[Any, dict[Any, Any]] = {}

    def set_columns(self, columns: Sequence[Any]) -> None:
        if list(columns) != self._columns:
            self._columns = list(columns)
            self._built.clear()

    def built(self, key: Any) -> bool:
        """The row's cells were made (it was drawn or read): a change to it goes through DataTable."""
        return key in self._built

    def forget(self, key: Any) -> None:
        self._built.pop(key, None)

    def __getitem__(self, key: Any) -> dict[Any, Any]:
        row = self._built.get(key)
        if row is None:
            cells = self.raw[key]  # KeyError for a row that is not shown, as a dict
            make = self._make
            row = {column: None if value is None else make(value)
                   for column, value in zip_longest(self._columns, cells) if column is not None}
            self._built[key] = row
        return row

    def get(self, key: Any, default: Any = None) -> Any:
        return self[key] if key in self.raw else default

    def __setitem__(self, key: Any, row: dict[Any, Any]) -> None:
        self.raw[key] = tuple(row.values())
        self._built[key] = row

    def __delitem__(self, key: Any) -> None:
        del self.raw[key]
        self._built.pop(key, None)

    def __contains__(self, key: object) -> bool:
        return key in self.raw

    def __iter__(self) -> Iterator[Any]:
        return iter(list(self.raw))

    def __len__(self) -> int:
        return len(self.raw)

    def keys(self) -> list[Any]:
        return list(self.raw)

    def items(self) -> Iterator[tuple[Any, dict[Any, Any]]]:
        return ((key, self[key]) for key in list(self.raw))

    def values(self) -> Iterator[dict[Any, Any]]:
        return (self[key] for key in list(self.raw))

    def clear(self) -> None:
        self.raw.clear()
        self._built.clear()


def cell_width(value: Any) -> int:
    """The width DataTable measures for this cell once made safe (tui.safetext.cell): its longest line."""
    if value is None:
        return 0
    if isinstance(value, str):
        plain = value
    elif isinstance(value, Text):
        plain = value.plain
    else:
        return len(f"{value:.2f}") if isinstance(value, float) else len(str(value))
    if plain.isascii() and plain.isprintable():
        return len(plain)
    plain = clean(plain)  # controls written out: one line
    return cell_len(plain)


def widest(rows: Sequence[tuple[Any, ...]], columns: int) -> list[int]:
    """The widest cell of each of `columns` columns over these rows' cells. A column of plain printable ASCII
    (nearly every one) is measured by len() in one pass; any other by cell_width, cell by cell."""
    out = []
    for index in range(columns):
        plains = [c if type(c) is str else c.plain if type(c) is Text else None
                  for c in (cells[index] if index < len(cells) else "" for cells in rows)]
        if None not in plains:
            joined = "".join(plains)  # type: ignore[arg-type]
            if joined.isascii() and joined.isprintable():
                out.append(max(map(len, plains), default=0))  # type: ignore[arg-type]
                continue
        out.append(max((cell_width(cells[index]) for cells in rows if index < len(cells)), default=0))
    return out
