"""The app shell, driven by Pilot: sizes, help, pause, quit, stale panes, filter."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest

from tests.unit.fakes import ScriptedCollector
from tui.app import StacktopApp
from tui.config import Config
from tui.screens.help import HelpScreen
from tui.widgets.findings_pane import FindingsPane
from tui.widgets.source_pane import SourcePane

FROZEN = 1_790_000_000.0


async def wait_until(pilot, predicate, timeout: float = 15.0) -> None:  # type: ignore[no-untyped-def]
    """Poll the app until predicate() holds (shared, noisy machines: never a fixed sleep)."""
    import time

    deadline = time.monotonic() + timeout
    while not predicate():
        assert time.monotonic() < deadline, "condition not reached in time"
        await pilot.pause(0.02)


def visible_panes(app: StacktopApp) -> list[str]:
    return [p.SOURCE for p in app.panes if p.display and p.region.width > 0]


@pytest.mark.parametrize("size", [(80, 24), (160, 48), (200, 60)])
async def test_starts_at_size(size: tuple[int, int]) -> None:
    app = StacktopApp(Config(), collectors=[])
    async with app.run_test(size=size) as pilot:
        await pilot.pause()
        assert app.size == size
        shown = visible_panes(app)
        if size == (80, 24):
            assert shown == ["findings"], "narrow terminals show one pane at a time, the findings first"
            await pilot.press("tab")
            await pilot.pause()
            assert visible_panes(app) == ["services"]
        else:
            assert set(shown) == {"services", "instances", "rabbitmq", "galera", "findings"}


async def test_question_mark_shows_help_and_escape_closes() -> None:
    app = StacktopApp(Config(), collectors=[])
    async with app.run_test(size=(160, 48)) as pilot:
        await pilot.press("question_mark")
        await pilot.pause()
        assert isinstance(app.screen, HelpScreen)
        text = str(app.screen.query_one("#help-text").render())
        assert "pause / resume refresh" in text
        assert "sort by the next column" in text and "reverse the sort order" in text
        await pilot.press("escape")
        await pilot.pause()
        assert not isinstance(app.screen, HelpScreen)


async def test_q_quits() -> None:
    app = StacktopApp(Config(), collectors=[])
    async with app.run_test(size=(80, 24)) as pilot:
        await pilot.press("q")
        await pilot.pause()
    assert app.return_code == 0
    assert not app.is_running


async def test_q_quits_from_help() -> None:
    app = StacktopApp(Config(), collectors=[])
    async with app.run_test(size=(80, 24)) as pilot:
        await pilot.press("question_mark")
        await pilot.press("q")
        await pilot.pause()
    assert not app.is_running


async def test_p_pauses_polling_and_r_refreshes_once() -> None:
    collector = ScriptedCollector("services", [1], interval=0.05)
    app = StacktopApp(Config(), collectors=[collector])
    async with app.run_test(size=(160, 48)) as pilot:
        for _ in range(100):
            if collector.calls >= 2:
                break
            await pilot.pause(0.02)
        await pilot.press("p")
        await pilot.pause(0.1)
        assert app.paused and "PAUSED" in str(app.query_one("#topbar").render())
        calls = collector.calls
        await pilot.pause(0.3)
        assert collector.calls == calls, "no polling while paused"
        await pilot.press("r")
        await pilot.pause(0.2)
        assert collector.calls == calls + 1
        await pilot.press("p")
        await pilot.pause(0.3)
        assert not app.paused and collector.calls > calls + 2


async def test_failing_source_keeps_last_data_marked_error_others_unaffected() -> None:
    bad = ScriptedCollector("rabbitmq", [1, "fail"], interval=0.05)
    good = ScriptedCollector("galera", [5], interval=0.05, severity="warning")
    app = StacktopApp(Config(), collectors=[bad, good])
    async with app.run_test(size=(160, 48)) as pilot:
        rabbit = app.query_one("#pane-rabbitmq", SourcePane)
        galera = app.query_one("#pane-galera", SourcePane)
        findings = app.query_one(FindingsPane)
        await wait_until(pilot, lambda: bad.calls >= 3 and good.calls >= 2 and rabbit.has_class("-error")
                         and findings.table is not None and findings.table.row_count == 1)
        assert rabbit.observation is not None and rabbit.observation.snapshot.value == 1
        assert str(rabbit.border_subtitle).startswith("ERROR rabbitmq at http://example.invalid: 401")
        assert "last ok" in str(rabbit.border_subtitle)
        assert rabbit.has_class("-error")
        assert str(galera.border_subtitle).startswith("ok ")
        assert findings.table is not None and findings.table.row_count == 1
        assert "sources failing: rabbitmq" in str(findings.border_subtitle)


async def test_slash_filters_focused_table() -> None:
    collector = ScriptedCollector("x", [1], interval=0.05, severity="warning")
    app = StacktopApp(Config(), collectors=[collector])
    async with app.run_test(size=(160, 48)) as pilot:
        for _ in range(100):
            if collector.calls >= 1:
                break
            await pilot.pause(0.02)
        await pilot.pause(0.1)
        findings = app.query_one(FindingsPane)
        assert findings.table is not None and findings.table.row_count == 1
        app._activate(app.panes.index(findings))
        await pilot.press("slash")
        await pilot.press(*"nomatch")
        await pilot.pause()
        assert findings.table.row_count == 0
        await pilot.press("escape")
        await pilot.pause()
        assert findings.table.row_count == 1


def test_shell_snapshot(snap_compare) -> None:  # type: ignore[no-untyped-def]
    app = StacktopApp(Config(), collectors=[], clock=lambda: FROZEN)
    assert snap_compare(app, terminal_size=(160, 48))


async def test_n_writes_a_note_on_the_selected_row(tmp_path) -> None:  # type: ignore[no-untyped-def]
    from tui.recorder import Journal, Recorder, read_journal

    recorder = Recorder(Journal(tmp_path, name="j.jsonl"))
    collector = ScriptedCollector("x", [3], interval=0.05, severity="critical")
    app = StacktopApp(Config(), collectors=[collector], recorder=recorder)
    async with app.run_test(size=(160, 48)) as pilot:
        for _ in range(100):
            if collector.calls >= 1:
                break
            await pilot.pause(0.02)
        await pilot.pause(0.1)
        findings = app.query_one(FindingsPane)
        app._activate(app.panes.index(findings))
        await pilot.press("n")
        await pilot.press(*"restarted by hand", "enter")
        await pilot.pause()
    events = read_journal(tmp_path / "j.jsonl")
    notes = [e for e in events if e["type"] == "note"]
    assert notes and notes[0]["text"] == "restarted by hand"
    assert notes[0]["subject"] == "findings:x.test|thing-3"
    assert any(e["type"] == "finding_raised" for e in events)


async def test_palette_screenshot_is_kept_beside_the_journal_and_exported(tmp_path, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    """ctrl+p -> Screenshot: saved in [recorder] dir, entered in the journal, so `stacktop export --markdown`
    links it; the toast says where it went (never "Failed to save screenshot" for a saved file)."""
    import textual.app

    from tui.export import to_markdown
    from tui.recorder import Journal, Recorder, read_journal

    downloads = tmp_path / "downloads"
    downloads.mkdir()
    monkeypatch.setattr(textual.app, "user_downloads_path", lambda: downloads)
    folder = tmp_path / "recorder"
    recorder = Recorder(Journal(folder, name="j.jsonl"))
    app = StacktopApp(Config(), collectors=[], clock=lambda: FROZEN, recorder=recorder)
    async with app.run_test(size=(160, 48)) as pilot:
        await pilot.press("ctrl+p")
        await pilot.press(*"screenshot")
        await pilot.pause(0.3)
        await pilot.press("enter")
        await wait_until(pilot, lambda: any(folder.glob("*.svg")))
        await pilot.pause(0.5)
        messages = [str(n.message) for n in app._notifications]
    saved = next(folder.glob("*.svg"))
    assert f"screenshot saved to {saved}" in messages, messages
    assert not any("Failed" in m for m in messages), messages
    events = read_journal(folder / "j.jsonl")
    shots = [e for e in events if e["type"] == "screenshot"]
    assert len(shots) == 1
    copy = Path(shots[0]["path"])
    assert copy == saved and "<svg" in copy.read_text()
    assert f"({copy})" in to_markdown(folder / "j.jsonl")


async def test_screenshot_without_a_recorder_goes_to_the_downloads_folder_and_says_so(tmp_path, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    import textual.app

    monkeypatch.setattr(textual.app, "user_downloads_path", lambda: tmp_path)
    app = StacktopApp(Config(), collectors=[], clock=lambda: FROZEN)
    async with app.run_test(size=(160, 48)) as pilot:
        saved = app.deliver_screenshot()
        await pilot.pause()
        messages = [str(n.message) for n in app._notifications]
    assert saved is not None and Path(saved).parent == tmp_path and "<svg" in Path(saved).read_text()
    assert messages == [f"screenshot saved to {saved}"]


async def _settled_footer(pilot: Any, app: StacktopApp) -> list[Any]:
    """The footer's keys once start-up has settled (the table focused, the same FooterKeys over two pauses):
    in full unit+ui runs one pause was sometimes not enough (no focus yet, or the footer's deferred first
    recompose still to come), and the test then saw start-up's rebuild, not tab's."""
    from textual.widgets._footer import FooterKey

    keys: list[Any] = []
    for _ in range(40):
        await pilot.pause()
        now = list(app.screen.query(FooterKey))
        if app.focused is not None and now and now == keys:
            break
        keys = now
    return keys


async def test_tab_does_not_rebuild_the_footer() -> None:
    """Textual's Footer re-mounts its keys on every focus change (restyle + a full repaint: most of a tab's
    cost); the footer's keys are the same in every pane, so tab must leave it alone."""
    from textual.widgets._footer import FooterKey

    collectors = [ScriptedCollector(name, [1], interval=60.0) for name in ("services", "instances", "rabbitmq")]
    app = StacktopApp(Config(), collectors=collectors)
    async with app.run_test(size=(160, 48)) as pilot:
        await wait_started(pilot, app)
        before = await _settled_footer(pilot, app)
        assert app.focused is not None, "the active pane's table has focus"
        assert any(k.key == "a" for k in before), "a (all / attention) is an app key, shown in every pane"
        for key in ("tab", "tab", "shift+tab", "tab"):
            await pilot.press(key)
            await pilot.pause()
        assert app.active_index == 2 and app.focused is app.panes[2].table
        assert list(app.screen.query(FooterKey)) == before, "the very same FooterKey widgets"


def footer_keys(app: StacktopApp) -> list[tuple[str, str, str, bool]]:
    """What the footer shows, key by key: (key, what it says, action, disabled), the palette's key and the
    hidden spare keys apart."""
    from textual.widgets._footer import FooterKey

    return [(k.key, str(k.description), k.action, k._disabled) for k in app.screen.query(FooterKey)
            if k.display and not k.has_class("-command-palette")]


def composed_keys(app: StacktopApp) -> list[tuple[str, str, str, bool]]:
    """What Textual's Footer would compose for the screen's bindings now (the first binding of each action)."""
    by_action: dict[str, tuple[str, str, str, bool]] = {}
    for _, binding, enabled, _tooltip in app.screen.active_bindings.values():
        if binding.show:
            by_action.setdefault(binding.action, (binding.key, binding.description, binding.action, not enabled))
    return list(by_action.values())


async def test_the_footer_follows_sort_filter_and_esc_in_place() -> None:
    """`s` renames the table's sort key, `/` takes the table's keys away, esc brings them back: the footer
    shows what Textual's Footer would compose each time, written into the FooterKeys it has (the sort key is
    the very same widget: no re-mount and restyle of every key; the keys `/` takes away are hidden, and esc
    shows them again)."""
    from textual.widgets._footer import FooterKey

    collectors = [ScriptedCollector(name, [1], interval=60.0) for name in ("services", "instances", "rabbitmq")]
    app = StacktopApp(Config(), collectors=collectors)
    async with app.run_test(size=(160, 48)) as pilot:
        await wait_started(pilot, app)
        before = await _settled_footer(pilot, app)
        sort_key = next(k for k in before if k.key == "s")
        await pilot.press("s")
        await pilot.pause()
        assert ("s", "sort: binary ▲") in [(k, d) for k, d, _, _ in footer_keys(app)], footer_keys(app)
        assert footer_keys(app) == composed_keys(app)
        assert list(app.screen.query(FooterKey)) == before, "the same FooterKey widgets"
        assert sort_key.description == "sort: binary ▲"
        await pilot.press("slash")
        await pilot.pause()
        assert app.focused is not None and app.focused.id == "filter"
        assert "s" not in [k for k, _, _, _ in footer_keys(app)] and footer_keys(app) == composed_keys(app)
        await pilot.press("escape")
        await pilot.pause()
        await pilot.pause()
        assert footer_keys(app) == composed_keys(app)
        assert ("s", "sort: binary ▲") in [(k, d) for k, d, _, _ in footer_keys(app)], footer_keys(app)
        assert list(app.screen.query(FooterKey)) == before, "/ and esc hid and showed keys: none mounted"
        for keys in (("slash", "escape"), ("slash", "escape", "slash"), ("s", "slash", "escape", "tab")):
            await pilot.press(*keys)  # a key the footer is removing is not written into
            await pilot.pause()
            await pilot.pause()
            assert footer_keys(app) == composed_keys(app), keys
        # changes faster than the removals they cause: a key being removed is not written into
        from tui.widgets.dashboard_screen import StableFooter

        footer = app.screen.query_one(StableFooter)
        table, line = app.panes[app.active_index].table, app.screen.query_one("#filter")
        await pilot.press("slash")
        await pilot.pause()

        for focus in (table, line, table):  # Screen.refresh_bindings calls it at once, from any node's context
            app.screen.set_focus(focus)
            footer.bindings_changed(app.screen)
        await pilot.pause()
        await pilot.pause()
        assert app.focused is table and footer_keys(app) == composed_keys(app)


def bottom_line(app: StacktopApp) -> str:
    """The screen's last line as the terminal is sent it (what each widget last drew)."""
    return "".join(segment.text for segment in app.screen._compositor.render_strips()[-1])

def three_sources() -> list[ScriptedCollector]:
    return [ScriptedCollector(name, [1], interval=60.0) for name in ("services", "instances", "rabbitmq")]


async def focused_table(pilot: Any, app: StacktopApp) -> Any:
    """The active pane's table, focused, once start-up and the footer have settled."""
    await wait_started(pilot, app)
    await _settled_footer(pilot, app)
    table = app.panes[app.active_index].table
    assert table is not None and app.focused is table
    return table


async def test_the_sort_key_keeps_its_widest_so_sorting_lays_nothing_out(monkeypatch: Any) -> None:
    """`s` through every column and back: once the sort key has said its longest `sort: ...`, it keeps that
    width, also after `/` and esc moved the keys; the keys after it stay where they are, every new label shows
    as drawn, and no press asks the footer for a layout (a layout of the footer redraws the whole screen,
    twice)."""
    from textual.widgets._footer import FooterKey

    app = StacktopApp(Config(), collectors=three_sources())
    async with app.run_test(size=(160, 48)) as pilot:
        table = await focused_table(pilot, app)
        presses = len(table.columns) + 1  # every column, then the default order again
        for _ in range(presses):
            await pilot.press("s")
            await pilot.pause()
        for key in ("slash", "escape"):  # the filter takes the table's keys away and brings them back
            await pilot.press(key)
            await pilot.pause()
            await pilot.pause()
        assert app.focused is table
        keys = [k for k in app.screen.query(FooterKey) if k.display and not k.has_class("-command-palette")]
        sort_key = next(k for k in keys if k.key == "s")
        after = keys[keys.index(sort_key) + 1]
        where = after.region
        widths = set()
        layouts: list[Any] = []
        refresh = FooterKey.refresh

        def spy(self: FooterKey, *args: Any, layout: bool = False, **kwargs: Any) -> Any:
            if layout:
                layouts.append(self)
            return refresh(self, *args, layout=layout, **kwargs)

        monkeypatch.setattr(FooterKey, "refresh", spy)
        for _ in range(presses):
            await pilot.press("s")
            await pilot.pause()
            await pilot.pause()
            assert sort_key.description == table.sort_label
            drawn = bottom_line(app)
            assert re.search(f" s {re.escape(table.sort_label)} +tab Next pane ", drawn), ("as drawn", drawn)
            assert after.region == where, table.sort_label
            widths.add(len(table.sort_label))
        assert layouts == [], "nothing in the footer was laid out again"
        assert len(widths) > 1, "labels of several widths were shown"
        await pilot.press("tab")  # another table's keys: laid out for them, as ever
        await pilot.pause()
        assert footer_keys(app) == composed_keys(app)


async def test_the_sort_key_takes_its_widest_name_at_the_first_sort(monkeypatch: Any) -> None:
    """The table tells the footer every name its `s` key may give: the first `s` takes the widest's width
    (a layout), and the presses after it, through every column and back, lay nothing out."""
    from textual.widgets._footer import FooterKey

    app = StacktopApp(Config(), collectors=three_sources())
    async with app.run_test(size=(160, 48)) as pilot:
        table = await focused_table(pilot, app)
        widest = max(len(name) for name in table.footer_descriptions("cycle_sort"))
        assert widest > len(table.sort_label) and len(table.footer_descriptions("cycle_sort")) == 2 * (
            len(table.columns) + 1)
        layouts: list[str] = []
        refresh = FooterKey.refresh

        def spy(self: FooterKey, *args: Any, layout: bool = False, **kwargs: Any) -> Any:
            if layout:
                layouts.append(str(self.description))
            return refresh(self, *args, layout=layout, **kwargs)

        monkeypatch.setattr(FooterKey, "refresh", spy)
        labels = []
        for _ in range(len(table.columns) + 1):
            await pilot.press("s")
            await pilot.pause()
            await pilot.pause()
            labels.append(table.sort_label)
            drawn = bottom_line(app)
            assert re.search(f" s {re.escape(table.sort_label)} +tab Next pane ", drawn), ("as drawn", drawn)
        assert set(layouts) <= {labels[0]}, f"only the first `s` laid the footer out: {layouts}"
        assert len({len(label) for label in labels}) > 1, "labels of several widths were shown"


@pytest.mark.parametrize(("size", "overlaid"), [((160, 48), True), ((80, 24), False)])
async def test_the_filter_line_floats_over_the_panes_unless_one_pane_is_shown(size: tuple[int, int],
                                                                             overlaid: bool) -> None:
    """`/` and esc with every pane shown: the filter line lies over the bottom of the findings pane, above the
    footer, and no pane is resized (a resize laid out and repainted every pane and table). With one pane shown
    (a narrow terminal) the line takes its room from the pane, whose last rows it would hide."""
    collectors = [ScriptedCollector(name, [1], interval=60.0) for name in ("services", "instances", "rabbitmq")]
    app = StacktopApp(Config(), collectors=collectors)
    async with app.run_test(size=size) as pilot:
        await wait_started(pilot, app)
        grid = app.screen.query_one("#panes")
        before = grid.region
        await pilot.press("slash")
        await pilot.pause()
        line = app.screen.query_one("#filter")
        assert app.focused is line and line.region.height > 0
        assert line.region.bottom == app.screen.region.bottom - 1, "right above the footer"
        if overlaid:
            assert grid.region == before and grid.region.contains_region(line.region)
        else:
            assert grid.region.bottom <= line.region.y and grid.region.height < before.height
        await pilot.press("escape")
        await pilot.pause()
        assert grid.region == before and not line.display


async def wait_started(pilot, app: StacktopApp) -> None:  # type: ignore[no-untyped-def]
    """Start-up over, before a test spies on what one key does: the filter / note / command lines mounted on the
    screen after the first paint (a layout of the whole screen) and every source's first observation rendered.
    Under load (CI, stop 17's first try) one pause was not enough: that start-up layout landed after the tab."""

    def started() -> bool:
        lines = app.screen.query("#command")
        return (bool(lines) and lines.first().is_mounted
                and set(app.observations) >= {"services", "instances", "rabbitmq"})

    await wait_until(pilot, started)
    await pilot.pause()
    await pilot.pause()


async def test_tab_repaints_the_two_panes_not_the_screen() -> None:
    """Screen.focused repainted the whole screen on every focus change; the main screen's does not (the
    panes whose -active class changes, and their tables, repaint themselves)."""
    from tui.app import DashboardScreen

    collectors = [ScriptedCollector(name, [1], interval=60.0) for name in ("services", "instances", "rabbitmq")]
    app = StacktopApp(Config(), collectors=collectors)
    async with app.run_test(size=(160, 48)) as pilot:
        await wait_started(pilot, app)
        screen = app.screen
        assert isinstance(screen, DashboardScreen)
        repaints: list[object] = []
        original = screen.refresh

        def spy(*regions, **kw):  # type: ignore[no-untyped-def]
            repaints.append(regions)
            return original(*regions, **kw)

        screen.refresh = spy  # type: ignore[method-assign]
        await pilot.press("tab")
        await pilot.pause()
        assert app.focused is app.panes[1].table
        assert repaints == [], "no whole-screen repaint for a focus change"


async def test_tab_restyles_each_table_once_and_rebuilds_no_rows() -> None:
    """A focus change restyles the two panes and, once each, the two tables whose focus changed: the -active
    class of a pane restyled its whole subtree and :focus-within walked both panes again (each table restyled
    four times, each time with DataTable's dozen component classes). No rows are rebuilt for a focus change."""
    from collections import Counter

    from tui.widgets.keyed_table import KeyedTable

    collectors = [ScriptedCollector(name, [1], interval=60.0) for name in ("services", "instances", "rabbitmq")]
    app = StacktopApp(Config(), collectors=collectors)
    async with app.run_test(size=(160, 48)) as pilot:
        await wait_started(pilot, app)
        restyled: Counter[str] = Counter()
        synced: list[str] = []
        update_nodes = app.stylesheet.update_nodes

        def spy_restyle(nodes, animate=False):  # type: ignore[no-untyped-def]
            nodes = list(nodes)
            restyled.update(str(n.id) for n in nodes if isinstance(n, KeyedTable))
            return update_nodes(nodes, animate=animate)

        app.stylesheet.update_nodes = spy_restyle  # type: ignore[method-assign]
        for pane in app.panes:
            if pane.table is not None:
                table = pane.table
                table.sync = lambda rows, table=table: synced.append(str(table.id)) or False  # type: ignore[method-assign]
        await pilot.press("tab")
        await pilot.pause()
        assert app.focused is app.panes[1].table
        assert restyled == Counter({"services-table": 1, "instances-table": 1}), restyled
        assert synced == [], "a focus change rebuilds no rows"
        assert [p.id for p in app.panes if p.has_class("-active")] == ["pane-instances"]


async def test_start_up_builds_the_footer_once_with_the_focused_tables_keys() -> None:
    """At start-up the footer's keys change twice before its first recompose ran (the app's keys, then the
    focused table's `s`): one recompose must show the last keys (two cost ~80 ms in the first triage)."""
    from tui.app import StableFooter

    recomposes: list[int] = []
    original = StableFooter.recompose

    async def counting(self: StableFooter) -> None:
        recomposes.append(1)
        await original(self)

    collectors = [ScriptedCollector(name, [1], interval=60.0) for name in ("services", "instances", "rabbitmq")]
    app = StacktopApp(Config(), collectors=collectors)
    StableFooter.recompose = counting  # type: ignore[method-assign]
    try:
        async with app.run_test(size=(160, 48)) as pilot:
            await wait_started(pilot, app)
            keys = await _settled_footer(pilot, app)
            assert {k.key for k in keys} >= {"s", "tab", "question_mark", "q"}, "the table's keys and the app's"
            assert len(recomposes) == 1, f"the footer was built {len(recomposes)} times"
    finally:
        StableFooter.recompose = original  # type: ignore[method-assign]
