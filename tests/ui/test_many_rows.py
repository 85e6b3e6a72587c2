"""10,000 rows: `a`, the filter typed key by key, sort, esc and `a` back give exactly the rows they should, keys
typed after `/` land in the filter, and rows never drawn still read as safe cells. (How fast is the
benchmark's business: `python -m bench --only keys`.)"""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any

from rich.text import Text
from textual.app import App, ComposeResult

from tests.testbed.wait import until_pilot
from tui.app import StacktopApp
from tui.collectors.base import BaseCollector
from tui.config import Config
from tui.models.instances import InstancesSnapshot, Server
from tui.widgets.instances_pane import InstancesPane
from tui.widgets.keyed_table import KeyedTable

N = 10_000
NOW = datetime(2026, 3, 1, 12, 0, tzinfo=UTC)


def table_rows(n: int = N) -> list[tuple[str, tuple[Any, ...]]]:
    kinds = ("web", "api", "db", "k8s-node")
    return [(f"id-{i:05d}", (f"{kinds[i % 4]}-{i:05d}", f"compute-{i % 500:03d}", Text("ACTIVE", style="green")))
            for i in range(n)]


class TableApp(App[None]):
    def compose(self) -> ComposeResult:
        yield KeyedTable(("name", "host", "status"), id="t")


async def test_ten_thousand_rows_come_and_go_exactly() -> None:
    app = TableApp()
    async with app.run_test(size=(100, 30)) as pilot:
        table = app.query_one(KeyedTable)
        rows = table_rows()
        rows[9_999] = ("id-09999", ("web-\x1b[31mred", "compute-999-with-a-long-name", Text("ERROR")))
        table.sync(rows[:2])
        await pilot.pause()
        table.sync(rows)  # `a`: every row
        await pilot.pause()
        assert table.row_count == N and table.shown_keys == [k for k, _ in rows]
        far = table.get_row("id-09999")  # never drawn: its cells are made as it is read, safe
        assert all(isinstance(c, Text) for c in far) and far[0].plain == "web-\\x1b[31mred"
        host = list(table.columns.values())[1]
        assert host.width >= len("compute-999-with-a-long-name"), "a far row's width counts"

        table.set_filter("web")
        await pilot.pause()
        webs = [k for k, cells in rows if "web" in cells[0]]
        assert table.shown_keys == webs and table.row_count == len(webs) == 2_501
        table.set_filter("!web")
        assert table.shown_keys == [k for k, cells in rows if "web" not in cells[0]]
        table.set_filter("")
        assert table.shown_keys == [k for k, _ in rows], "every row back, in the pane's order"

        table.set_sort("host")
        await pilot.pause()
        hosts = [str(table.get_row(k)[1]) for k in table.shown_keys]
        assert hosts == sorted(hosts, key=str.casefold)
        table.set_sort("host", reverse=True)
        assert [str(table.get_row(k)[1]) for k in table.shown_keys] == sorted(hosts, key=str.casefold,
                                                                              reverse=True)
        table.set_sort(None)
        assert table.shown_keys == [k for k, _ in rows]

        table.move_cursor(row=5_000)
        table.sync(rows[:2])  # `a` back
        await pilot.pause()
        assert table.shown_keys == ["id-00000", "id-00001"] and table.cursor_row in (0, 1)
        assert table.get_row("id-00001")[0].plain == "api-00001"


async def test_a_and_back_measure_and_make_nothing_again(monkeypatch: Any) -> None:
    """`a` to the few rows worth attention and back to every row: what the table keeps per row (widths, sort
    values, row records) is kept for the other view's rows too, so the way back measures no row again; rows no
    longer given in either view are dropped."""
    import tui.widgets.keyed_table as keyed

    measured: list[Any] = []
    real = keyed.cell_width
    monkeypatch.setattr(keyed, "cell_width", lambda value: measured.append(value) or real(value))
    app = TableApp()
    async with app.run_test(size=(100, 30)) as pilot:
        table = app.query_one(KeyedTable)
        every = table_rows()
        few = every[:20]
        table.set_sort("host")
        table.sync(every)
        await pilot.pause()
        meta = {key: table._row_meta[key] for key in ("id-00000", "id-09999")}
        table.sync(few)  # `a`: the attention view
        await pilot.pause()
        measured.clear()
        table.sync(every)  # `a` back
        await pilot.pause()
        assert measured == [], "no row measured again"
        assert all(table._row_meta[key] is row for key, row in meta.items()), "the same row records"
        assert table.row_count == N and table.sort_label == "sort: host ▲"
        others = [(f"new-{i:05d}", cells) for i, (_, cells) in enumerate(few)]
        table.sync(others)
        table.sync(few)  # neither view holds the 10,000 rows now
        await pilot.pause()
        assert len(table._measured) <= 2 * (len(few) + len(others)) + 64, "the rows gone are forgotten"


async def test_a_sort_measures_nothing_and_a_changed_cell_still_widens_its_column(monkeypatch: Any) -> None:
    """A new order (each `s`) keeps the columns' widths without walking 10,000 rows' widths again; rows whose
    cells change, come or go are measured (a longer name widens its column, its going narrows it again)."""
    import tui.widgets.keyed_table as keyed

    app = TableApp()
    async with app.run_test(size=(160, 30)) as pilot:
        table = app.query_one(KeyedTable)
        rows = table_rows()
        table.sync(rows)
        await pilot.pause()
        name = next(iter(table.columns.values()))
        narrow = name.width
        calls: list[Any] = []
        real = keyed.cell_width
        monkeypatch.setattr(keyed, "cell_width", lambda value: calls.append(value) or real(value))
        looked_up: list[str] = []

        class Widths(dict):  # type: ignore[type-arg]
            def get(self, key: Any, default: Any = None) -> Any:
                looked_up.append(key)
                return super().get(key, default)

        table._measured = Widths(table._measured)
        for column in ("name", "host", "status", None):
            table.set_sort(column)
        assert calls == [] and looked_up == [], "no row's widths measured or walked for a sort"
        assert table.shown_keys == [k for k, _ in rows] and name.width == narrow
        longer = list(rows)
        longer[5_000] = ("id-05000", ("web-05000-" + "x" * 30, *rows[5_000][1][1:]))
        table.sync(longer)
        await pilot.pause()
        assert name.width > narrow, "the longer name widens its column"
        table.sync(rows)
        await pilot.pause()
        assert name.width == narrow


async def test_a_row_changed_while_never_drawn_shows_its_new_cells() -> None:
    app = TableApp()
    async with app.run_test(size=(100, 30)) as pilot:
        table = app.query_one(KeyedTable)
        rows = table_rows(3_000)
        table.sync(rows)
        await pilot.pause()
        changed = list(rows)
        changed[2_999] = ("id-02999", ("web-02999", "compute-007", Text("SHUTOFF", style="dim")))
        assert table.sync(changed)
        assert [str(c) for c in table.get_row("id-02999")] == ["web-02999", "compute-007", "SHUTOFF"]
        assert table.sync(rows), "and back"
        assert [str(c) for c in table.get_row("id-02999")] == ["k8s-node-02999", "compute-499", "ACTIVE"]


def snapshot() -> InstancesSnapshot:
    servers = [Server(id=f"{i:08x}-0000-4000-8000-000000000000", name=f"{('web', 'db')[i % 2]}-{i:05d}",
                      status="ACTIVE", project_id="p" * 32, host=f"compute-{i % 500:03d}") for i in range(N)]
    servers[0] = Server(id="f" * 8 + "-0000-4000-8000-000000000000", name="web-building", status="BUILD",
                        task_state="spawning", task_since=NOW - timedelta(seconds=30), task_since_basis="updated_at",
                        project_id="p" * 32, host="compute-001")
    return InstancesSnapshot(taken_at=NOW, servers=tuple(servers))


class FixedInstances(BaseCollector):
    """The instances source answering the same 10,000 servers."""

    name = "instances"
    interval = 3600.0

    def __init__(self) -> None:
        self.snapshot = snapshot()

    async def collect(self) -> Any:
        return self.snapshot


async def attention_view(pilot: Any, app: StacktopApp) -> tuple[InstancesPane, KeyedTable]:
    """The instances pane once it shows its attention view (one server) of FixedInstances' 10,000."""
    pane = app.query_one(InstancesPane)
    await until_pilot(pilot, lambda: pane.table is not None and pane.table.row_count == 1, "the attention view")
    assert pane.table is not None
    return pane, pane.table


async def test_keys_over_ten_thousand_instances_land_where_they_were_typed() -> None:
    app = StacktopApp(Config(), collectors=[FixedInstances()])
    async with app.run_test(size=(160, 48)) as pilot:
        pane, table = await attention_view(pilot, app)
        app.show_source("instances")
        await pilot.press("a")
        await until_pilot(pilot, lambda: table.row_count == N, "`a`: every server")
        await until_pilot(pilot, lambda: f"all {N:,}" in pane._message_text, "the count")
        await pilot.press("slash", "w", "e")  # typed at once, after `/`: both letters are the filter's
        await until_pilot(pilot, lambda: table.row_filter.text == "we", "the filter")
        assert table.row_count == N // 2 and all(k for k in table.shown_keys)
        assert f"{N // 2:,} of {N:,} match /we" in str(pane.border_title)
        assert "filtered: " in pane._message_text and f"all {N // 2:,} of {N:,}" in pane._message_text
        await pilot.press("escape")
        await until_pilot(pilot, lambda: table.row_count == N and not table.row_filter.text, "esc clears")
        await pilot.press("s")
        await until_pilot(pilot, lambda: table.sort_column == 0, "sorted by name")
        names = [str(table.get_row(k)[0]) for k in table.shown_keys[:3]]
        assert names == ["db-00001", "db-00003", "db-00005"]
        await pilot.press("a")
        await until_pilot(pilot, lambda: table.row_count == 1, "`a` back: the one worth attention")
        assert table.shown_keys == [pane.observation.snapshot.servers[0].id]


async def test_a_big_snapshots_rows_are_made_in_a_thread_and_shown_as_the_loop_would(monkeypatch: Any) -> None:
    """A new poll of 10,000 servers: its rows (both views) are made off the UI thread, the pane shows exactly
    instance_rows' rows, and `a` afterwards makes no row on the loop."""
    import threading
    import time

    import tui.widgets.instances_pane as instances
    from tui.app import ObservationMessage
    from tui.models.observation import Observation

    made: list[tuple[bool, bool]] = []  # (on the UI thread, show_all) of every instance_rows call
    real = instances.instance_rows

    def recording(*args: Any, **kwargs: Any) -> Any:
        made.append((threading.current_thread() is threading.main_thread(), kwargs.get("show_all", False)))
        return real(*args, **kwargs)

    monkeypatch.setattr(instances, "instance_rows", recording)
    app = StacktopApp(Config(), collectors=[FixedInstances()])
    async with app.run_test(size=(160, 48)) as pilot:
        pane, table = await attention_view(pilot, app)
        app.show_source("instances")
        await pilot.press("a")
        await until_pilot(pilot, lambda: table.row_count == N, "`a`: every server")
        await pilot.press("a")
        await until_pilot(pilot, lambda: table.row_count == 1, "`a` back")

        servers = list(snapshot().servers)
        servers[1] = Server(id=servers[1].id, name=servers[1].name, status="ERROR", project_id="p" * 32,
                            host=servers[1].host)
        polled = InstancesSnapshot(taken_at=NOW + timedelta(seconds=10), servers=tuple(servers))
        made.clear()
        now = time.time()
        app.post_message(ObservationMessage(Observation("instances", snapshot=polled, ok_at=now, tried_at=now)))
        await until_pilot(pilot, lambda: table.row_count == 2, "the new ERROR server in the attention view")
        assert sorted(made) == [(False, False), (False, True)], "both views made, neither on the UI thread"
        assert table.shown_keys == [key for key, _ in real(polled, (), show_all=False)]

        made.clear()
        await pilot.press("a")
        await until_pilot(pilot, lambda: table.row_count == N, "`a`: every server of the new poll")
        assert made == [], "`a` found the rows the thread made"
        assert table.shown_keys == [key for key, _ in real(polled, (), show_all=True)]
        assert f"all {N:,}" in pane._message_text

        given = table._all_rows
        again = InstancesSnapshot(taken_at=polled.taken_at, servers=polled.servers)  # nothing changed
        app.post_message(ObservationMessage(Observation("instances", snapshot=again, ok_at=now, tried_at=now)))
        await until_pilot(pilot, lambda: pane._rendered_snapshot is again, "the unchanged poll shown")
        assert table._all_rows is given, "an unchanged poll gives the table the very same rows"


async def test_a_sort_keeps_the_row_records_and_the_cursor_reads_the_new_order() -> None:
    """`s` over 10,000 rows writes only their order (DataTable's row records stay, as DataTable.sort keeps
    them); the cursor, the row indexes and the rows drawn follow the new order, and rows that come or go
    afterwards are written as before."""
    app = TableApp()
    async with app.run_test(size=(160, 30)) as pilot:
        table = app.query_one(KeyedTable)
        rows = table_rows()
        table.sync(rows)
        await pilot.pause()
        records = table.rows
        table.set_sort("name", reverse=True)
        await pilot.pause()
        assert table.rows is records, "no row record written again"
        names = sorted((cells[0] for _, cells in rows), key=str.casefold, reverse=True)
        assert [str(table.get_row_at(i)[0]) for i in range(3)] == names[:3]
        assert table.cursor_key() == table.shown_keys[0] and table.get_row_index(table.shown_keys[-1]) == N - 1
        assert [str(table.get_row(k)[0]) for k in table.shown_keys] == names
        table.sync(rows[:5])
        await pilot.pause()
        assert table.row_count == 5 and len(table.rows) == 5
        assert [str(table.get_row_at(i)[0]) for i in range(5)] == sorted(
            (cells[0] for _, cells in rows[:5]), key=str.casefold, reverse=True)


async def test_esc_and_the_default_sort_put_back_the_view_they_had(monkeypatch: Any) -> None:
    """esc (the filter cleared) and `s` back to the default order show the rows every row in the order they
    had, from the view kept when it was written: nothing sorted, measured or written into DataTable again;
    the cursor and the row indexes read that order."""
    import tui.widgets.keyed_table as keyed

    app = TableApp()
    async with app.run_test(size=(160, 30)) as pilot:
        table = app.query_one(KeyedTable)
        rows = table_rows()
        table.sync(rows)
        await pilot.pause()
        default = (table.rows, table._row_locations)
        table.set_sort("host")
        await pilot.pause()
        by_host, locations = table.shown_keys, table._row_locations
        table.set_filter("web")
        await pilot.pause()
        assert table.row_count == N // 4
        sorts: list[Any] = []
        measured: list[Any] = []
        real_sort, real_width = keyed.sort_rows, keyed.cell_width
        monkeypatch.setattr(keyed, "sort_rows", lambda *a, **k: sorts.append(a) or real_sort(*a, **k))
        monkeypatch.setattr(keyed, "cell_width", lambda value: measured.append(value) or real_width(value))
        table.set_filter("")  # esc
        await pilot.pause()
        assert sorts == [] and measured == [], "esc sorts and measures nothing again"
        assert table._row_locations is locations and table.shown_keys == by_host
        assert [table.get_row_index(k) for k in by_host[:3]] == [0, 1, 2]
        assert table.cursor_key() == by_host[0]
        table.set_sort(None)  # `s` after the last column: the pane's own order
        await pilot.pause()
        assert (table.rows, table._row_locations) == default and table.shown_keys == [k for k, _ in rows]
        assert str(table.get_row_at(N - 1)[0]) == rows[-1][1][0]


async def test_the_row_order_and_lines_are_read_from_the_order_written(monkeypatch: Any) -> None:
    """After a sort, a changed cell (a new update count) does not make DataTable work out the order of
    10,000 rows again, key by key: the order and the line index are the ones written, and say the same as
    DataTable's own would."""
    from textual._two_way_dict import TwoWayDict
    from textual.widgets import DataTable

    app = TableApp()
    async with app.run_test(size=(160, 30)) as pilot:
        table = app.query_one(KeyedTable)
        rows = table_rows()
        table.sync(rows)
        table.set_sort("name", reverse=True)
        await pilot.pause()
        looked_up: list[Any] = []
        real = TwoWayDict.get_key
        monkeypatch.setattr(TwoWayDict, "get_key", lambda self, v: looked_up.append(v) or real(self, v))
        changed = list(table._all_rows)
        first = table.shown_keys[0]  # a row on screen: its cell is updated in DataTable
        at = next(i for i, (key, _) in enumerate(changed) if key == first)
        changed[at] = (first, (changed[at][1][0], "compute-999", changed[at][1][2]))
        table.sync(changed)
        await pilot.pause()
        ordered = table.ordered_rows
        lines = table._y_offsets
        assert len(looked_up) < N, "keys looked up for the rows drawn, not for every row"
        monkeypatch.setattr(TwoWayDict, "get_key", real)
        own = DataTable.ordered_rows.fget(table)  # type: ignore[attr-defined]
        assert ordered == own and [row.key for row in ordered] == table.shown_keys
        assert list(lines) == [(row.key, 0) for row in own] and table._total_row_height == N
        assert table.virtual_size.height == N + table.header_height


async def test_sort_values_are_made_between_keys_not_at_the_first_sort(monkeypatch: Any) -> None:
    """10,000 rows given: the table works out every column's sort values a few milliseconds at a time, so a
    sort by any column then makes none while the engineer waits; a changed row is worked out again, and
    nothing is worked out while a key waits for its frame."""
    import tui.widgets.keyed_table as keyed

    app = TableApp()
    async with app.run_test(size=(160, 30)) as pilot:
        table = app.query_one(KeyedTable)
        waiting = [True]
        monkeypatch.setattr(app, "key_pending", lambda: waiting[0], raising=False)
        rows = table_rows()
        table.sync(rows)
        await pilot.pause(0.3)
        assert table.warm_steps == 0, "a key waits: nothing worked out"
        waiting[0] = False
        await until_pilot(pilot, lambda: table.warmed_for is not None and table.warmed_for[0] is rows,
                          "every column's sort values")
        assert table.warm_steps > 1, "in several steps"
        made: list[Any] = []
        real = keyed.sort_value
        monkeypatch.setattr(keyed, "sort_value", lambda cell: made.append(cell) or real(cell))
        for column in ("name", "status", "host"):
            table.set_sort(column)
        assert made == [], "no sort value made at the sort"
        assert [str(table.get_row(k)[1]) for k in table.shown_keys] == sorted(
            (cells[1] for _, cells in rows), key=str.casefold)
        changed = list(rows)
        changed[7] = ("id-00007", ("web-00007", "compute-000-a", Text("ACTIVE", style="green")))
        table.sync(changed)
        await until_pilot(pilot, lambda: table.warmed_for is not None and table.warmed_for[0] is changed,
                          "the changed row worked out again")
        assert sorted(map(str, made)) == sorted(["web-00007", "compute-000-a", "ACTIVE"])


async def test_the_first_a_and_the_first_letter_typed_find_their_work_done_between_keys(monkeypatch: Any) -> None:
    """10,000 servers, the attention view shown: between keys the table measures every server's row (the
    other view, which `a` shows) and makes its row records and the text the filter searches, so the first
    `a` measures no cell and makes no row record, and the first letter typed in the filter makes no row's
    text."""
    import tui.widgets.keyed_table as keyed

    app = StacktopApp(Config(), collectors=[FixedInstances()])
    async with app.run_test(size=(160, 48)) as pilot:
        _pane, table = await attention_view(pilot, app)
        await until_pilot(pilot, lambda: table.warmed_for is not None and len(table.warmed_for) == 2
                          and len(table.warmed_for[1]) == N, "every server's row measured between keys")
        measured: list[Any] = []
        records: list[Any] = []
        texts: list[Any] = []
        real_width, real_row, real_text = keyed.cell_width, keyed.TableRow, keyed.row_text
        monkeypatch.setattr(keyed, "cell_width", lambda value: measured.append(value) or real_width(value))
        monkeypatch.setattr(keyed, "TableRow", lambda *a: records.append(a) or real_row(*a))
        monkeypatch.setattr(keyed, "row_text", lambda cells: texts.append(cells) or real_text(cells))
        app.show_source("instances")
        attention = {id(cell) for _, cells in table._all_rows for cell in cells}
        few = {id(cells) for _, cells in table._all_rows}
        attention_keys = {key for key, _ in table._all_rows}
        await pilot.press("a")
        await until_pilot(pilot, lambda: table.row_count == N, "`a`: every server")
        # (a row worth attention has other cells in each view: it is measured in this one now)
        assert len(measured) <= len(attention) * 2, "the first `a` measured no other row"
        assert records == [], "and made no row record"
        name = next(iter(table.columns.values()))
        assert name.width >= max(len(s.name) for s in snapshot().servers), "the widths of every server's row"
        await pilot.press("slash", "w")
        await until_pilot(pilot, lambda: table.row_filter.active and table.row_count < N, "the filter typed")
        # (a row in both views has other cells in each: its text in this one is made now, as its width was)
        both = few | {id(cells) for key, cells in table._all_rows if key in attention_keys}
        assert all(id(cells) in both for cells in texts), "the first letter found every other row's text made"
        assert len(texts) <= len(attention_keys)
        assert table.shown_keys == [key for key, cells in table._all_rows if "w" in keyed.row_text(cells)]


async def test_another_row_count_lays_nothing_out_while_the_scrollbars_stay(monkeypatch: Any) -> None:
    """`a` and the filter change the row count, so the table's scrollable height: where the scrollbars stay as
    they are, the scrollbar and the scroll bounds follow the new height and the screen is not laid out again;
    where a scrollbar comes or goes, it is."""
    from textual.screen import Screen

    app = TableApp()
    async with app.run_test(size=(100, 30)) as pilot:
        table = app.query_one(KeyedTable)
        rows = table_rows()
        table.sync(rows)
        await pilot.pause()
        await pilot.pause()
        assert table.show_vertical_scrollbar and not table.show_horizontal_scrollbar
        layouts: list[bool] = []
        real = Screen._refresh_layout

        def spy(self: Screen[Any], size: Any = None, scroll: bool = False) -> None:
            layouts.append(scroll)
            real(self, size, scroll)

        monkeypatch.setattr(Screen, "_refresh_layout", spy)
        table.move_cursor(row=N - 1, animate=False)
        await pilot.pause()
        await pilot.pause()
        table.sync(rows[:5_000])
        await pilot.pause()
        await pilot.pause()
        assert table.virtual_size.height == 5_000 + table.header_height
        assert table.vertical_scrollbar.window_virtual_size == table.virtual_size.height
        assert table.scroll_y <= table.max_scroll_y < 5_000, "the scroll position within the new height"
        assert False not in layouts, "no layout of the screen"
        table.sync(rows[:3])
        await pilot.pause()
        await pilot.pause()
        assert False in layouts, "the scrollbar went: laid out"
        assert not table.show_vertical_scrollbar and table.virtual_size.height == 3 + table.header_height
        assert table.scroll_y == 0
