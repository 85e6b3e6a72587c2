"""Pure diff between what a keyed table shows and what it should show (no Textual here).

Tables are updated in place from this diff: vanished keys removed, changed cells updated, new rows added,
and re-ordered only when the order really changed. clear() on every poll would reset the cursor and
scroll position and cost ~21x the CPU (docs/performance.md).
"""

from __future__ import annotations

import functools
import re
import signal
import threading
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from rich.text import Text

Row = tuple[str, tuple[Any, ...]]
FILTER_BUDGET_S = 0.5  # one filtering of every row; a regex over it is searched for literally from then on
_TOO_COSTLY: set[str] = set()  # filter texts whose regex ran over the budget (this process)


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
    if len(current_order) == len(wanted_keys) and all(current.get(key) is cells for key, cells in wanted):
        # the rows shown, with the very same cells (a sort, or a poll where nothing changed): at most the order
        if wanted_keys != current_order:
            diff.order = wanted_keys
        return diff
    diff.remove = [key for key in current_order if key not in wanted_set]
    for key, cells in wanted:
        old = current.get(key)
        if old is None:
            diff.add.append((key, cells))
            continue
        if old is cells or (old == cells and _same_styles(old, cells)):
            continue
        for index, (before, after) in enumerate(zip(old, cells, strict=False)):
            if _identity(before) != _identity(after):
                diff.update.append((key, index, after))
    after_ops = [k for k in current_order if k in wanted_set] + [k for k, _ in diff.add]
    if after_ops != wanted_keys:
        diff.order = list(wanted_keys)
    return diff


class _OverBudget(Exception):
    pass


@functools.lru_cache(maxsize=64)
def nested_repeat(pattern: str) -> bool:
    """Whether the regex repeats a repeat, one of the two unbounded (`(L+)+X`, `(a*b?)*`): Python's
    backtracking takes exponential time on a text that almost matches, and cannot be stopped from outside."""
    try:
        from re import _constants as c  # type: ignore[attr-defined]  # the stdlib's own parser: no stubs
        from re import _parser  # type: ignore[attr-defined]

        tree = _parser.parse(pattern)
    except Exception:  # an invalid regex is searched for literally anyway
        return False
    repeats = (c.MAX_REPEAT, c.MIN_REPEAT, c.POSSESSIVE_REPEAT)

    def children(op: Any, av: Any) -> list[Any]:
        if op == c.SUBPATTERN:
            return [av[3]]
        if op == c.BRANCH:
            return list(av[1])
        if op in (c.ASSERT, c.ASSERT_NOT):
            return [av[1]]
        if op == c.ATOMIC_GROUP:
            return [av]
        if op == c.GROUPREF_EXISTS:
            return [p for p in av[1:] if p is not None]
        return []

    def walk(items: Any, outer: bool | None) -> bool:
        """outer: None outside any repeat; else whether one of the enclosing repeats is unbounded."""
        for op, av in items:
            if op in repeats:
                _, high, body = av
                unbounded = high == c.MAXREPEAT
                if high > 1 and outer is not None and (outer or unbounded):
                    return True
                if walk(body, (unbounded or bool(outer)) if high > 1 else outer):
                    return True
            elif any(walk(child, outer) for child in children(op, av)):
                return True
        return False

    return walk(tree, None)


def budgeted(search: Callable[[str], Any], texts: Sequence[str], budget_s: float) -> list[bool] | None:
    """Each text searched, or None when the searches together take over budget_s. The budget holds on the main
    thread (the event loop's: Python's regex engine stops on a signal), when no one else uses SIGALRM;
    elsewhere the searches run unbounded (tui.tablediff.nested_repeat keeps the known explosive forms out)."""
    if (not hasattr(signal, "setitimer") or threading.current_thread() is not threading.main_thread()
            or signal.getsignal(signal.SIGALRM) not in (signal.SIG_DFL, signal.SIG_IGN, None)):
        return [search(text) is not None for text in texts]

    def expire(signum: int, frame: Any) -> None:
        raise _OverBudget

    previous = signal.signal(signal.SIGALRM, expire)
    try:
        try:
            signal.setitimer(signal.ITIMER_REAL, budget_s)
            return [search(text) is not None for text in texts]
        finally:
            signal.setitimer(signal.ITIMER_REAL, 0)
    except _OverBudget:
        return None
    finally:
        signal.signal(signal.SIGALRM, previous)


@dataclass(frozen=True)
class RowFilter:
    """k9s-style filter: a case-insensitive regex; a leading '!' inverts it. Invalid regex -> literal; a regex
    too costly to run (a nested repeat, or over FILTER_BUDGET_S on the rows) -> literal too."""

    text: str = ""

    @property
    def active(self) -> bool:
        return bool(self.text.strip("!"))

    @property
    def invalid(self) -> bool:
        """The text is not a valid regex: it is searched for literally."""
        body = self.text[1:] if self.text.startswith("!") else self.text
        try:
            re.compile(body)
        except re.error:
            return True
        return False

    @property
    def costly(self) -> bool:
        """The regex is too costly to run (a nested repeat, or it ran over the budget): searched literally."""
        if self.invalid:
            return False
        return self.text in _TOO_COSTLY or nested_repeat(self.text[1:] if self.text.startswith("!") else self.text)

    def _pattern(self, literal: bool = False) -> tuple[re.Pattern[str], bool]:
        invert = self.text.startswith("!")
        body = self.text[1:] if invert else self.text
        if not literal and not self.costly:
            try:
                return re.compile(body, re.IGNORECASE), invert
            except re.error:
                pass
        return re.compile(re.escape(body), re.IGNORECASE), invert

    def apply(self, rows: Sequence[Row]) -> list[Row]:
        if not self.active:
            return list(rows)
        return self.select(rows, [_plain(row[1]) for row in rows])

    def select(self, rows: Sequence[Row], texts: Sequence[str]) -> list[Row]:
        """The rows whose text (texts[i] for rows[i], as _plain makes it) the filter lets through."""
        if not self.active:
            return list(rows)
        pattern, invert = self._pattern()
        found = budgeted(pattern.search, texts, FILTER_BUDGET_S)
        if found is None:
            _TOO_COSTLY.add(self.text)
            pattern, invert = self._pattern(literal=True)
            found = [pattern.search(text) is not None for text in texts]
        return [row for row, hit in zip(rows, found, strict=True) if hit != invert]


def _identity(cell: Any) -> Any:
    """What makes two cells the same. Rich Text compares equal on its text alone; a colour-only change
    (a row turning red) must still count, so styled text is compared with its style and spans."""
    plain = getattr(cell, "plain", None)
    if plain is None:
        return cell
    return (plain, str(getattr(cell, "style", "")), tuple(map(repr, getattr(cell, "spans", ()))))


def _same_styles(old: tuple[Any, ...], new: tuple[Any, ...]) -> bool:
    """Equal rows (Rich Text compares its text and spans, not its style) whose styled cells keep their style."""
    for before, after in zip(old, new, strict=False):
        if isinstance(after, Text) and not (isinstance(before, Text) and before.style == after.style):
            return False
    return True


def _plain(cells: tuple[Any, ...]) -> str:
    return " ".join(getattr(c, "plain", None) or str(c) for c in cells)


_DURATION = re.compile(r"~?((?:\d+[smhd])+)")
_DURATION_PART = re.compile(r"(\d+)([smhd])")
_NUMBER = re.compile(r"^[-+]?\d[\d,]*(?:\.\d+)?")
_SECONDS = {"s": 1, "m": 60, "h": 3600, "d": 86400}
_MARKS = ("!! ", "! ")


def sort_value(cell: Any) -> tuple[int, Any]:
    """How a cell sorts when the engineer picks its column: durations ("12s", "~4m", "2h 5m") by seconds,
    numbers ("1,204", "3/3", "45%") by value, other text case-insensitively; empty cells ("", "-", "?") last.
    The stuck marks (`!! `, `! `) do not count."""
    text = cell if type(cell) is str else getattr(cell, "plain", None)
    text = str(cell) if text is None else text
    text = text.strip()
    if text[:1] == "!":
        for mark in _MARKS:
            if text.startswith(mark):
                text = text[len(mark):]
                break
    if text in ("", "-", "?"):
        return (3, "")
    if not (text[0].isdigit() or text[0] in "~+-") or (text[8:9] == "-" and len(text) >= 36):
        return (2, text.casefold())  # neither a duration nor a number (most cells; ids like 4fd43443-...)
    return _measured(text)


@functools.lru_cache(maxsize=65536)  # durations and numbers recur in a column ("~<1m", "12s", "3/3")
def _measured(text: str) -> tuple[int, Any]:
    """sort_value of a cell starting with a digit, `~`, `+` or `-` (a pure function of the text)."""
    duration = _DURATION.fullmatch(text.split(" ", 1)[0])  # "12s", "~4m", "2h05m", "3d", "9s · down in 4s"
    if duration:
        return (0, float(sum(int(n) * _SECONDS[unit] for n, unit in _DURATION_PART.findall(duration.group(1)))))
    number = _NUMBER.match(text)
    if number and text[number.end():number.end() + 1] in ("", " ", "%", "/"):  # not hex ids like 4fd43443
        return (1, float(number.group().replace(",", "")))
    return (2, text.casefold())


def sort_rows(rows: Sequence[Row], column: int | None, *, reverse: bool = False,
              anchor_prefix: str = "hdr:", values: Sequence[tuple[int, Any]] | None = None) -> list[Row]:
    """Rows ordered by `column` (stable: ties keep the given order, which is worst first), or in the given
    order when column is None (reversed with `reverse`). Rows keyed `anchor_prefix...` (group headers) stay
    where they are; the rows between two of them are sorted among themselves. Empty cells stay last either way.
    values: each row's sort_value of that column, in the order of `rows`, when the caller keeps them."""
    out: list[Row] = []
    if column is None:
        group: list[Row] = []
        for row in rows:
            if row[0].startswith(anchor_prefix):
                out.extend(reversed(group) if reverse else group)
                group.clear()
                out.append(row)
            else:
                group.append(row)
        out.extend(reversed(group) if reverse else group)
        return out
    vals = values if values is not None else [sort_value(_cell(r, column)) for r in rows]

    def flush(lo: int, hi: int) -> None:
        filled = [i for i in range(lo, hi) if vals[i][0] != 3]
        filled.sort(key=vals.__getitem__, reverse=reverse)
        out.extend([rows[i] for i in filled])
        out.extend([rows[i] for i in range(lo, hi) if vals[i][0] == 3])

    start = 0
    for index, row in enumerate(rows):
        if row[0].startswith(anchor_prefix):
            flush(start, index)
            out.append(row)
            start = index + 1
    flush(start, len(rows))
    return out


def _cell(row: Row, index: int) -> Any:
    cells = row[1]
    return cells[index] if index < len(cells) else ""
