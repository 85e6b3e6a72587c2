from __future__ import annotations

from tui.tablediff import RowFilter, diff_rows


def test_no_change_is_empty() -> None:
    current = {"a": ("1", "x"), "b": ("2", "y")}
    assert diff_rows(current, ["a", "b"], [("a", ("1", "x")), ("b", ("2", "y"))]).empty


def test_add_remove_update_and_order() -> None:
    current = {"a": ("1", "x"), "b": ("2", "y"), "c": ("3", "z")}
    diff = diff_rows(current, ["a", "b", "c"], [("c", ("3", "Z")), ("a", ("1", "x")), ("d", ("4", "w"))])
    assert diff.remove == ["b"]
    assert diff.add == [("d", ("4", "w"))]
    assert diff.update == [("c", 1, "Z")]
    assert diff.order == ["c", "a", "d"]


def test_append_only_needs_no_reorder() -> None:
    diff = diff_rows({"a": ("1",)}, ["a"], [("a", ("1",)), ("b", ("2",))])
    assert diff.order is None and diff.add == [("b", ("2",))]


def test_filter_regex_invert_and_bad_regex() -> None:
    rows = [("1", ("compute-01", "up")), ("2", ("compute-02", "down")), ("3", ("ctl[1", "up"))]
    assert [k for k, _ in RowFilter("down").apply(rows)] == ["2"]
    assert [k for k, _ in RowFilter("!down").apply(rows)] == ["1", "3"]
    assert [k for k, _ in RowFilter("COMPUTE-0[12]").apply(rows)] == ["1", "2"]
    assert [k for k, _ in RowFilter("ctl[1").apply(rows)] == ["3"]
    assert len(RowFilter("").apply(rows)) == 3 and len(RowFilter("!").apply(rows)) == 3


def test_colour_only_change_counts() -> None:
    from rich.text import Text

    current = {"a": (Text("compute-02", style="green"),)}
    diff = diff_rows(current, ["a"], [("a", (Text("compute-02", style="bold red"),))])
    assert len(diff.update) == 1
    same = diff_rows(current, ["a"], [("a", (Text("compute-02", style="green"),))])
    assert same.empty
