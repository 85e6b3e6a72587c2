"""Pure diff between what a keyed table shows and what it should show (no Textual here).

Tables are updated in place from this diff: vanished keys removed, changed cells updated, new rows added,
and re-ordered only when the order really changed. clear() on every poll would reset the cursor and
scroll position and cost ~21x the CPU (facts.md, performance).
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

Row = tuple[str, tuple[Any, ...]]


@dataclass
class TableDiff:
    remove: list[str] = field(default_factory=list)
    add: list[Row] = field(default_factory=list)
    update: list[tuple[str, int, Any]] = field(default_factory=list)  # (key, column index, new value)
    order: list[str] | None = None  # the new order when it differs from the current one after add/remove

    @property
    def empty(self) -> bool:
        return not (self.remove or self.add or self.update or self.order)


def diff_rows(current: dict[str, tuple[Any, ...]], current_order: Sequence[str], wanted: Sequence[Row]) -> TableDiff:
    diff = TableDiff()
    wanted_keys = [key for key, _ in wanted]
    wanted_set = set(wanted_keys)
    if len(wanted_set) != len(wanted_keys):
        raise ValueError("duplicate row keys")
    diff.remove = [key for key in current_order if key not in wanted_set]
    for key, cells in wanted:
        old = current.get(key)
        if old is None:
            diff.add.append((key, cells))
            continue
        for index, (before, after) in enumerate(zip(old, cells, strict=False)):
            if _identity(before) != _identity(after):
                diff.update.append((key, index, after))
    after_ops = [k for k in current_order if k in wanted_set] + [k for k, _ in diff.add]
    if after_ops != wanted_keys:
        diff.order = list(wanted_keys)
    return diff


@dataclass(frozen=True)
class RowFilter:
    """k9s-style filter: a case-insensitive regex; a leading '!' inverts it. Invalid regex -> literal."""

    text: str = ""

    @property
    def active(self) -> bool:
        return bool(self.text.strip("!"))

    def _pattern(self) -> tuple[re.Pattern[str], bool]:
        invert = self.text.startswith("!")
        body = self.text[1:] if invert else self.text
        try:
            return re.compile(body, re.IGNORECASE), invert
        except re.error:
            return re.compile(re.escape(body), re.IGNORECASE), invert

    def apply(self, rows: Sequence[Row]) -> list[Row]:
        if not self.active:
            return list(rows)
        pattern, invert = self._pattern()
        return [row for row in rows if bool(pattern.search(_plain(row[1]))) != invert]


def _identity(cell: Any) -> Any:
    """What makes two cells the same. Rich Text compares equal on its text alone; a colour-only change
    (a row turning red) must still count, so styled text is compared with its style and spans."""
    plain = getattr(cell, "plain", None)
    if plain is None:
        return cell
    return (plain, str(getattr(cell, "style", "")), tuple(map(repr, getattr(cell, "spans", ()))))


def _plain(cells: tuple[Any, ...]) -> str:
    return " ".join(getattr(c, "plain", None) or str(c) for c in cells)
