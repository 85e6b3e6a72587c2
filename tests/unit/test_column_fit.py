"""The column-width policy: natural widths where they fit, else names and free text cut (free text first, the
widest first), as many leading columns shown whole as fit, the rest off to the right."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from tui.widgets.column_fit import FIXED, ColumnRule, fit_widths, name, rules_for, secondary, text

FINDINGS = [FIXED, name(12), name(12), text(16), text(14), FIXED]  # severity kind subject summary next-step since
NATURAL = [8, 26, 36, 200, 150, 8]


def test_natural_widths_where_they_fit() -> None:
    assert fit_widths([10, 20, 5], [name(), text(), FIXED], 41, padding=2) == [10, 20, 5]
    assert fit_widths([10, 20, 5], [name(), text(), FIXED], 100, padding=2) == [10, 20, 5], "never widened"


def test_free_text_gives_first_and_two_texts_share_the_rest() -> None:
    widths = fit_widths(NATURAL, FINDINGS, 156, padding=2)  # the findings pane at 160 columns
    assert widths[:3] == [8, 26, 36] and widths[5] == 8, "names and fixed columns whole"
    assert sum(widths) + 2 * len(widths) == 156
    assert abs(widths[3] - widths[4]) <= 1 and widths[4] > 14, "summary and next step share the space"


def test_names_cut_only_once_text_is_at_its_floor() -> None:
    widths = fit_widths(NATURAL, FINDINGS, 100, padding=2)
    assert widths[3:5] == [16, 14]
    assert widths[1] < 26 and widths[2] < 36 and sum(widths) + 12 == 100
    assert widths[1] >= 12 and widths[2] >= 12


def test_columns_that_cannot_fit_whole_go_off_to_the_right_uncut() -> None:
    widths = fit_widths(NATURAL, FINDINGS, 76, padding=2)  # 80 columns
    shown = widths[:5]
    assert sum(shown) + 10 == 76, "the first five columns fill the width exactly"
    assert widths[5] == 8, "since: off to the right, whole"
    # a fixed column that cannot fit: the names before it are not cut for nothing
    galera = fit_widths([22, 9, 4, 7, 6, 5, 9, 11, 7], [name(12), *[FIXED] * 8], 74, padding=2)
    assert galera[0] == 20 and galera[1:] == [9, 4, 7, 6, 5, 9, 11, 7]


def test_floors_hold_when_nothing_fits() -> None:
    assert fit_widths([40, 30], [name(12), text(10)], 5, padding=2) == [12, 10]
    assert fit_widths([5, 30], [name(12), text(10)], 20, padding=2) == [5, 11], "a floor never widens a column"


def test_give_order() -> None:
    rules = [name(10), secondary(6), text(10)]
    assert fit_widths([30, 20, 30], rules, 50) == [30, 10, 10], "text, then secondary, then names"
    assert fit_widths([30, 20, 30], rules, 40) == [24, 6, 10]


def test_rules_by_label() -> None:
    assert rules_for(["queue", "messages"], {"queue": name(12)}) == [name(12), FIXED]


@given(st.lists(st.tuples(st.integers(0, 120), st.booleans(), st.integers(1, 20), st.integers(1, 3)),
                min_size=1, max_size=9), st.integers(0, 300))
def test_properties(columns: list[tuple[int, bool, int, int]], width: int) -> None:
    natural = [n for n, _, _, _ in columns]
    rules = [ColumnRule(shrink=s, floor=f, give=g) for _, s, f, g in columns]
    widths = fit_widths(natural, rules, width, padding=2)
    assert len(widths) == len(natural)
    for w, n, r in zip(widths, natural, rules, strict=True):
        assert w <= n, "never wider than natural"
        assert w == n or (r.shrink and w >= min(n, r.floor)), "only shrinkable columns are cut, never below the floor"
    if sum(natural) + 2 * len(natural) <= width:
        assert widths == natural
    else:
        # the shown prefix fills the width exactly unless every column in it is at its floor
        used = 0
        for w in widths:
            if used + w + 2 > width:
                break
            used += w + 2
        cut = [w < n for w, n in zip(widths, natural, strict=True)]
        assert used == width or not any(cut) or all(
            w == min(n, r.floor) for w, n, r in zip(widths, natural, rules, strict=True) if r.shrink and w < n)


def test_identifying_columns_are_shown_the_others_squeezed_first() -> None:
    from tui.widgets.instances_pane import COLUMNS, FIT

    rules = rules_for(COLUMNS, FIT)
    # name, status, task_state, in state for, host, owner, id, project: the instances pane at 120x34
    natural = [14, 6, 10, 12, 10, 30, 36, 32]
    widths = fit_widths(natural, rules, 56, padding=2)
    shown = widths[:6]
    assert sum(shown) + 2 * 6 <= 56, "name, status, host and owner all on screen"
    assert widths[1] == 6 and widths[4] == 10, "status and host whole"
    assert widths[2] < 10 and widths[3] < 12, "task_state and its age squeezed first"
    assert widths[0] >= 10 and widths[5] >= 10


def test_hosts_are_not_cut_to_look_alike() -> None:
    from tui.widgets.instances_pane import COLUMNS, FIT

    # 10,000 servers on 500 hosts (compute-0001...), the instances pane at 160x48
    natural = [16, 7, 10, 12, 12, 40, 36, 32]
    widths = fit_widths(natural, rules_for(COLUMNS, FIT), 76, padding=2)
    assert widths[4] == 12, "compute-0123 whole, not compute-0…"


def test_an_identifying_column_is_never_half_off_the_edge() -> None:
    rules = [name(12, keep=True), FIXED, FIXED, name(10, keep=True)]
    widths = fit_widths([20, 10, 10, 10], rules, 40, padding=2)
    assert sum(widths) + 8 <= 40 and widths[3] == 10
    assert widths[1] < 10 and widths[2] < 10, "the fixed columns between are squeezed"
