from __future__ import annotations

from rich.text import Text

from tui.tablediff import RowFilter, diff_rows, sort_rows, sort_value


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


def test_same_cells_in_another_order_is_a_reorder_only() -> None:
    a, b, c = ("1", "x"), ("2", "y"), ("3", "z")
    current = {"a": a, "b": b, "c": c}
    diff = diff_rows(current, ["a", "b", "c"], [("c", c), ("a", a), ("b", b)])
    assert diff.order == ["c", "a", "b"] and not (diff.add or diff.remove or diff.update)
    assert diff_rows(current, ["a", "b", "c"], [("a", a), ("b", b), ("c", c)]).empty
    # as many rows, one of them another: not a reorder
    diff = diff_rows(current, ["a", "b", "c"], [("c", c), ("a", a), ("d", b)])
    assert diff.remove == ["b"] and diff.add == [("d", b)] and diff.order == ["c", "a", "d"]


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


# ---- sort by a chosen column (`s` / `S` on a focused table)

def test_sort_value_orders_durations_numbers_and_text_naturally() -> None:
    cells = ["2h05m", "9s", "~4m", "59s", "3d"]
    assert sorted(cells, key=sort_value) == ["9s", "59s", "~4m", "2h05m", "3d"]
    assert sorted(["1,204", "45", "3/3", "100%"], key=sort_value) == ["3/3", "45", "100%", "1,204"]
    # hex ids are text, not the number they start with; the stuck marks do not count; case-insensitive
    assert sorted(["4fd43443", "2d661445", "35b592e5"], key=sort_value) == ["2d661445", "35b592e5", "4fd43443"]
    ids = ["4fd43443-8e08-463d-ac05-b609f07d2a62", "2d661445-1c14-49e6-ae21-cb0beb51a5fe",
           "a1b2c3d4-0000-4000-8000-000000000000"]
    assert [sort_value(i) for i in ids] == [(2, i) for i in ids]  # whole uuids: text
    assert sort_value("12s · down in 4s") == (0, 12.0) and sort_value("~<1m") == (2, "~<1m")
    assert [sort_value(t) for t in ("-", "?", " ", "! 3m", "!! 45%")] == [(3, ""), (3, ""), (3, ""), (0, 180.0),
                                                                           (1, 45.0)]
    assert sorted([Text("!! web-2"), Text("Api-1"), "db-0"], key=lambda c: sort_value(c)[1]) == \
        [Text("Api-1"), "db-0", Text("!! web-2")]


def test_sort_rows_by_column_stable_reverse_and_empty_last() -> None:
    rows = [("a", ("a", "9s")), ("b", ("b", "")), ("c", ("c", "2m")), ("d", ("d", "9s"))]
    assert [k for k, _ in sort_rows(rows, 1)] == ["a", "d", "c", "b"]  # ties keep the given (worst-first) order
    assert [k for k, _ in sort_rows(rows, 1, reverse=True)] == ["c", "a", "d", "b"]  # empty stays last
    assert [k for k, _ in sort_rows(rows, None)] == ["a", "b", "c", "d"]  # default: the pane's own order
    assert [k for k, _ in sort_rows(rows, None, reverse=True)] == ["d", "c", "b", "a"]


def test_sort_rows_keeps_group_headers_and_sorts_within_groups() -> None:
    rows = [("hdr:compute", ("compute",)), ("c2", ("z",)), ("c1", ("a",)),
            ("hdr:network", ("network",)), ("n2", ("y",)), ("n1", ("b",))]
    assert [k for k, _ in sort_rows(rows, 0)] == ["hdr:compute", "c1", "c2", "hdr:network", "n1", "n2"]
