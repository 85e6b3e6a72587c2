"""How a table shares its width among its columns (pure: no Textual here).

Each column's natural width is its widest cell (its label included). When the natural widths fit, every
column gets its natural width: nothing is cut where space is free. When they do not:

- columns are listed in priority order (what the on-call engineer reads first, leftmost), and the table shows
  as many of them whole as fit once every shrinkable column is cut to its floor; the columns after those are
  reached by scrolling sideways;
- the shrinkable columns among those shown give up just the width needed, in the order of their `give` (free
  text such as summaries and reasons first, then secondary columns, then names: queues, servers, hosts), the
  widest first within one `give` (so two long texts end up sharing the space); their cells end with "…";
- a pane's identifying columns (`keep`: a name, a host, an owner, a state) are always among those shown, whole
  or cut with "…": when the run of columns up to the last of them does not fit at their floors, the other
  columns of that run are squeezed first (down to SQUEEZED cells, header and cells cut with "…"), then the
  identifying ones themselves (widest first, down to KEEP_FLOOR). No identifying column is ever left half off
  the right edge, cut without its "…".

The table (tui.widgets.keyed_table) recomputes the widths when it is resized and when its rows change.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from tui.records import record

TEXT, SECONDARY, NAME = 1, 2, 3  # the `give` order: free text gives up width first, names last
SQUEEZED = 3  # the narrowest a column that is not identifying is squeezed to, to keep the identifying ones shown
KEEP_FLOOR = 6  # the narrowest an identifying column is cut to when nothing else is left to squeeze


@record
class ColumnRule:
    """shrink: the column may be cut (with an ellipsis) to leave room for the others; floor: the narrowest it is
    cut to (never narrower than its natural width); give: when, among the shrinkable columns (lower first)."""

    shrink: bool = False
    floor: int = 8
    give: int = NAME
    keep: bool = False  # an identifying column: always shown, whole or cut with "…"


FIXED = ColumnRule()
KEPT = ColumnRule(keep=True)  # an identifying column that is never cut while the others can be (a state)


def text(floor: int = 12, *, keep: bool = False) -> ColumnRule:
    """Free text (a summary, a reason): the first to give up width. keep: identifying all the same (an
    owner)."""
    return ColumnRule(shrink=True, floor=floor, give=TEXT, keep=keep)


def secondary(floor: int = 8, *, keep: bool = False) -> ColumnRule:
    return ColumnRule(shrink=True, floor=floor, give=SECONDARY, keep=keep)


def name(floor: int = 12, *, keep: bool = False) -> ColumnRule:
    """A name (queue, server, host): cut last. keep: an identifying column (column_fit.fit_widths)."""
    return ColumnRule(shrink=True, floor=floor, give=NAME, keep=keep)


def rules_for(labels: Sequence[str], rules: Mapping[str, ColumnRule]) -> list[ColumnRule]:
    """The rule of each column by its label; a column without one keeps its natural width."""
    return [rules.get(label, FIXED) for label in labels]


def fit_widths(natural: Sequence[int], rules: Sequence[ColumnRule], width: int, padding: int = 0) -> list[int]:
    """The width of each column's content for a table `width` cells wide, each column taking `padding` more.

    Natural widths when they fit. Else the longest run of leading columns that fits with every shrinkable one at
    its floor is fitted into the width (see the module docstring); the columns after it keep their natural
    width, off to the right."""
    widths = [max(0, n) for n in natural]
    if sum(widths) + padding * len(widths) <= width:
        return widths
    floors = [min(w, max(1, r.floor)) if r.shrink else w for w, r in zip(widths, rules, strict=True)]
    shown, used = 0, 0
    while shown < len(widths) and used + floors[shown] + padding <= width:
        used += floors[shown] + padding
        shown += 1
    kept = [i for i, r in enumerate(rules) if r.keep]
    if kept and shown <= kept[-1]:
        return _squeezed(widths, floors, rules, kept[-1] + 1, width, padding)
    if shown == 0:
        return floors
    excess = sum(widths[:shown]) + padding * shown - width
    for give in sorted({r.give for r in rules[:shown] if r.shrink}):
        if excess <= 0:
            break
        group = [i for i in range(shown) if rules[i].shrink and rules[i].give == give]
        excess -= _level(widths, floors, group, excess)
    return widths


def _level(widths: list[int], floors: Sequence[int], group: Sequence[int], excess: int) -> int:
    """Cut the columns of `group` (in place), widest first, each at or above its floor, by up to `excess` cells
    in all; returns how many cells were freed."""
    room = sum(widths[i] - floors[i] for i in group)
    if room <= excess:
        for i in group:
            widths[i] = floors[i]
        return room

    def freed(level: int) -> int:
        return sum(widths[i] - max(floors[i], min(widths[i], level)) for i in group)

    level = max(widths[i] for i in group)
    while freed(level - 1) < excess:  # the highest level that frees enough
        level -= 1
    level -= 1
    over = freed(level) - excess  # one level frees a few cells too many: give them back, leftmost first
    cut = {i: max(floors[i], min(widths[i], level)) for i in group}
    for i in group:
        if over and cut[i] == level < widths[i]:
            cut[i] += 1
            over -= 1
    for i, value in cut.items():
        widths[i] = value
    return excess


def _squeezed(widths: list[int], floors: list[int], rules: Sequence[ColumnRule], run: int, width: int,
              padding: int) -> list[int]:
    """The first `run` columns (the last identifying one included) fitted into `width`: at their floors, then
    the others squeezed (widest first, down to SQUEEZED), then the identifying ones cut (widest first, down to
    KEEP_FLOOR). The columns after the run keep their natural width, off to the right."""
    out = list(widths)
    out[:run] = floors[:run]
    excess = sum(out[:run]) + padding * run - width
    for group, floor in (([i for i in range(run) if not rules[i].keep], SQUEEZED),
                         ([i for i in range(run) if rules[i].keep], KEEP_FLOOR)):
        if excess <= 0:
            break
        excess -= _level(out, [min(out[i], floor) for i in range(len(out))], group, excess)
    return out
