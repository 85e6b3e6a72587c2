"""The filter's regex cannot freeze the dashboard: a repeat inside a repeat (`(L+)+X`, exponential on a row of
L's) is searched for literally at once, and any other regex that runs over FILTER_BUDGET_S on the rows is stopped
and searched for literally from then on (RowFilter.costly says so). Ordinary regexes work as before.

Each test runs under a watchdog (60 s): the unbounded search takes minutes to hours, so without the budget the
test fails instead of hanging. The bound asserted (< 10 s) is loose for a loaded 2-core machine."""

from __future__ import annotations

import time

from tests.testbed.watchdog import watchdog
from tui import tablediff
from tui.tablediff import RowFilter

ROWS = [(f"r{i}", (f"server-{i}", "L" * 255, "ACTIVE")) for i in range(50)]
LITERAL = ("literal", ("someone named it (L+)+X", "ACTIVE"))
AS = [(f"a{i}", ("a" * 40, "BUILD")) for i in range(20)]


def keys(rows: list[tuple[str, tuple[object, ...]]]) -> list[str]:
    return [key for key, _ in rows]


def test_a_repeat_inside_a_repeat_is_searched_literally_at_once() -> None:
    f = RowFilter("(L+)+X")
    with watchdog(60, "the filter (L+)+X"):
        began = time.monotonic()
        assert keys(f.apply([*ROWS, LITERAL])) == ["literal"]
        assert keys(RowFilter("!(L+)+X").apply([*ROWS, LITERAL])) == keys(ROWS)
        assert time.monotonic() - began < 10
    assert tablediff.nested_repeat("(L+)+X") and f.costly and not f.invalid


def test_a_regex_over_the_budget_is_stopped_and_searched_literally_from_then_on() -> None:
    text = "(a|a)*X"  # exponential as well, with no repeat inside a repeat: only the budget stops it
    with watchdog(60, f"the filter {text}"):
        began = time.monotonic()
        assert RowFilter(text).apply([*AS, ("lit", ("(a|a)*X",))]) == [("lit", ("(a|a)*X",))]
        assert time.monotonic() - began < 10
    assert not tablediff.nested_repeat(text), "the budget stopped it, not the static check"
    assert RowFilter(text).costly, "said so (the pane title and the toast read it)"


def test_ordinary_regexes_still_work() -> None:
    rows = [("a", ("compute-01", "ERROR")), ("b", ("compute-02", "BUILD")), ("c", ("compute-03", "ACTIVE"))]
    for text, want in (("compute-0[12]", ["a", "b"]), ("!active", ["a", "b"]), ("(ERROR|BUILD)+", ["a", "b"]),
                       (r"(\d{1,3}\.){3}\d+", []), ("^compute-03", ["c"]), ("[", [])):
        f = RowFilter(text)
        assert keys(f.apply(rows)) == want, text
        assert not f.costly, text
