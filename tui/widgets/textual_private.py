"""Every private Textual internal stacktop relies on, in one place, with a check that they are still there.

Textual is pinned to 8.2.x because a few speed-ups reach into its internals (a frame counter, a footer that
does not recompose on every tab, a screen that does not repaint on every focus change, a table updated in
place, an input thread that sleeps). A Textual upgrade that renames or reshapes one of them would not fail at
import: it would misbehave quietly (a table out of order, frames not counted). `PRIVATE` names each item, who
uses it and why; `check()` returns what no longer matches, and tests/unit/test_textual_private.py fails with
those lines on an upgrade.

The overrides stay with their class (StacktopApp in tui/app.py, StableFooter and DashboardScreen in
dashboard_screen.py, KeyedTable in keyed_table.py, QuietLinuxDriver in input_driver.py). Nothing imports this
module at run time: building the inventory is for the test, not for the dashboard's start-up.
"""

from __future__ import annotations

import importlib
import inspect
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from textual.reactive import Reactive

# ------------------------------------------------------------------------------------------ the inventory
Check = Callable[[], str | None]  # None when the item still has the expected shape, else what is wrong


@dataclass(frozen=True)
class Private:
    """One private Textual item: where it lives, who in stacktop relies on it and why, and its check."""

    owner: str  # module or module:Class
    name: str
    used_by: str
    why: str
    check: Check

    @property
    def label(self) -> str:
        return f"{self.owner}.{self.name}"


def _resolve(owner: str) -> Any:
    module, _, qualname = owner.partition(":")
    obj: Any = importlib.import_module(module)
    for part in filter(None, qualname.split(".")):
        obj = getattr(obj, part)
    return obj


def _method(owner: str, name: str, params: tuple[str, ...]) -> Check:
    """A function attribute of `owner` taking exactly these parameters (self included)."""
    def check() -> str | None:
        fn = getattr(_resolve(owner), name, None)
        if not callable(fn):
            return "missing (not a method any more)"
        got = tuple(inspect.signature(fn).parameters)
        return None if got == params else f"parameters are now {got}, expected {params}"
    return check


def _attribute(owner: str, name: str, kind: type | tuple[type, ...] | None = None,
               has: tuple[str, ...] = ()) -> Check:
    """An attribute of `owner` (a module or a class), of `kind`, with the attributes `has`."""
    def check() -> str | None:
        value = getattr(_resolve(owner), name, _MISSING)
        return _shape(value, kind, has)
    return check


def _instance(make: Callable[[], Any], name: str, kind: type | tuple[type, ...] | None = None,
              has: tuple[str, ...] = ()) -> Check:
    """An attribute a fresh instance has (set in __init__), of `kind`, with the attributes `has`."""
    def check() -> str | None:
        return _shape(getattr(make(), name, _MISSING), kind, has)
    return check


def _set_in_init(owner: str, name: str) -> Check:
    """An instance attribute `owner.__init__` assigns (for classes a test cannot build, like a driver)."""
    def check() -> str | None:
        source = inspect.getsource(_resolve(owner).__init__)
        return None if f"self.{name} =" in source or f"self.{name}:" in source else "no longer set in __init__"
    return check


_MISSING = object()


def _shape(value: Any, kind: type | tuple[type, ...] | None, has: tuple[str, ...]) -> str | None:
    if value is _MISSING:
        return "missing"
    if kind is not None and not isinstance(value, kind):
        return f"is a {type(value).__name__} now, expected {kind}"
    lacking = [a for a in has if not hasattr(value, a)]
    return f"lacks {', '.join(lacking)}" if lacking else None


def _app() -> Any:
    from textual.app import App

    return App()


def _table() -> Any:
    from textual.widgets import DataTable

    return DataTable()


def _parser() -> Any:
    from textual._xterm_parser import XTermParser

    return XTermParser(False)


_APP, _SCREEN, _FOOTER = "textual.app:App", "textual.screen:Screen", "textual.widgets:Footer"
_FOOTER_KEY = "textual.widgets._footer:FooterKey"
_TABLE, _DRIVER = "textual.widgets:DataTable", "textual.drivers.linux_driver:LinuxDriver"
_CACHE = ("maxsize", "clear")

PRIVATE: tuple[Private, ...] = (
    # StacktopApp (tui/app.py)
    Private(_APP, "_display", "StacktopApp._display", "every frame handed to the terminal passes here: counted "
            "(app.frames), so tests see that a still cloud leaves the terminal alone",
            _method(_APP, "_display", ("self", "screen", "renderable"))),
    Private(_APP, "_batch_count", "StacktopApp._display", "a frame inside batch_update is not drawn yet: not counted",
            _instance(_app, "_batch_count", int)),
    Private(_APP, "post_message", "StacktopApp.post_message", "notes when a key arrives, so observation renders "
            "wait for the key's frame (keys_first)", _method(_APP, "post_message", ("self", "message"))),
    Private(_APP, "_fatal_error", "StacktopApp._fatal_error", "an unhandled error goes to the log file without "
            "Textual's locals (they may hold a password)", _method(_APP, "_fatal_error", ("self",))),
    Private(_APP, "_exception", "StacktopApp._fatal_error, tui.cli", "the unhandled error, to log and to report",
            _instance(_app, "_exception")),
    Private(_APP, "_close_messages_no_wait", "StacktopApp._fatal_error", "what Textual's own _fatal_error ends with",
            _method(_APP, "_close_messages_no_wait", ("self",))),
    Private(_APP, "_on_key", "StacktopApp._on_key", "a key typed just before a line opened, back from the table "
            "after the line took the focus, runs its binding for that table (Textual's own handler, which looks "
            "from the line, runs only when this one did not)", _method(_APP, "_on_key", ("self", "event"))),
    Private(_APP, "_refresh_notifications", "StacktopApp._refresh_notifications", "where Textual shows its "
            "notifications as toasts: stacktop writes the newest on the status line instead",
            _method(_APP, "_refresh_notifications", ("self",))),
    Private(_APP, "_notifications", "StacktopApp.shown_notice", "the notifications not expired, newest shown on "
            "the status line", _instance(_app, "_notifications")),
    Private(_APP, "_css_update_count", "KeyedTable._check_restyle", "a CSS reload changes the table's style "
            "signature (read with a default)", _instance(_app, "_css_update_count", int)),
    # DashboardScreen, StableFooter (tui/widgets/dashboard_screen.py)
    Private(_SCREEN, "focused", "DashboardScreen.focused", "redeclared as a reactive that does not repaint the "
            "whole screen on every focus change", _attribute(_SCREEN, "focused", Reactive)),
    Private(_FOOTER, "bindings_changed", "StableFooter.bindings_changed", "recompose only when the shown keys "
            "change", _method(_FOOTER, "bindings_changed", ("self", "screen"))),
    *(Private(_FOOTER_KEY, name, "StableFooter._update_in_place", "a shown key rewritten in place (its key, "
              "what it shows, its action, whether it is disabled)", _set_in_init(_FOOTER_KEY, name))
      for name in ("key", "key_display", "description", "action", "_disabled")),
    Private("textual.widget:Widget", "_pruning", "StableFooter._update_in_place", "set at once on a widget being "
            "removed (the removal itself comes later): a key removed by the last change is not written into",
            _instance(_table, "_pruning", bool)),
    Private(_FOOTER, "_bindings_ready", "StableFooter.bindings_changed", "Footer composes no keys until it is set",
            _attribute(_FOOTER, "_bindings_ready", Reactive)),
    Private("textual.messages", "Update", "StableFooter._update_in_place", "a key rewritten in place is posted to "
            "the screen as dirty, as its own idle would post it (a region refresh of the screen instead drops the "
            "other widgets waiting for their repaint: a sorted table stayed off the terminal)",
            _attribute("textual.messages", "Update", type)),
    # KeyedTable (tui/widgets/keyed_table.py)
    Private(_TABLE, "_get_column_region", "KeyedTable._show_sort_column", "where the sort column lies, to scroll "
            "it into view", _method(_TABLE, "_get_column_region", ("self", "column_index"))),
    Private("textual._two_way_dict", "TwoWayDict", "KeyedTable.sync", "the row order is written as DataTable.sort "
            "writes it", _attribute("textual._two_way_dict", "TwoWayDict", type)),
    *(Private("textual._two_way_dict:TwoWayDict", name, "keyed_table.row_locations", "the two maps of DataTable's "
              "row locations, written directly (the forward one keyed by the rows' key strings)",
              _instance(lambda: __import__("textual._two_way_dict", fromlist=["TwoWayDict"]).TwoWayDict({}), name,
                        dict)) for name in ("_forward", "_reverse")),
    Private("textual.widgets._data_table", "RowKey", "KeyedTable", "keys of _row_locations",
            _attribute("textual.widgets._data_table", "RowKey", type)),
    Private(_TABLE, "_row_locations", "KeyedTable._write_rows", "the row order, written in one pass",
            _instance(_table, "_row_locations", None, ("get", "get_key"))),
    Private(_TABLE, "_update_count", "KeyedTable._write_rows, refit", "bumped after rows came, went or moved, as "
            "DataTable.sort does, and after the column widths change (rendered cells are cached without their "
            "width)", _instance(_table, "_update_count", int)),
    Private(_TABLE, "_data", "KeyedTable (LazyRows)", "every row's cells by key, read as a mapping (get, [], "
            "len, in): replaced by one that makes a row's cells when it is first read",
            _instance(_table, "_data", dict)),
    Private(_TABLE, "rows", "KeyedTable._write_rows", "the shown rows by key (public, but only add_row / "
            "remove_row write it): written in one pass", _instance(_table, "rows", dict)),
    Private("textual.widgets._data_table", "Row", "KeyedTable._write_rows", "the row records of `rows`, "
            "Row(key, height)", _attribute("textual.widgets._data_table", "Row", type)),
    Private(_TABLE, "ordered_rows", "KeyedTable.ordered_rows", "the row order DataTable works out from "
            "_row_locations after every update: read from the order written instead",
            _attribute(_TABLE, "ordered_rows", property)),
    Private(_TABLE, "_y_offsets", "KeyedTable._y_offsets", "DataTable's line index (line -> (row key, line in "
            "the row)), a list of every line made after every update: read from the order written (RowLines)",
            _attribute(_TABLE, "_y_offsets", property)),
    Private(_TABLE, "_require_update_dimensions", "KeyedTable._write_rows, refit", "DataTable's idle pass then "
            "works out the scrollable size (the virtual width too, after the column widths change)",
            _instance(_table, "_require_update_dimensions", bool)),
    Private(_TABLE, "_update_dimensions", "KeyedTable._update_dimensions", "DataTable's idle pass that sets the "
            "scrollable size: a new height alone lays nothing out while the scrollbars stay",
            _method(_TABLE, "_update_dimensions", ("self", "new_rows"))),
    Private("textual.widget:Widget", "_scroll_update", "KeyedTable.refresh", "the scrollbars' sizes and the "
            "scroll position's bounds after a new scrollable height (what a layout would do for the table)",
            _method("textual.widget:Widget", "_scroll_update", ("self", "virtual_size"))),
    Private(_TABLE, "_clear_caches", "KeyedTable._check_restyle", "drop every render cache when more than the "
            "focus changed", _method(_TABLE, "_clear_caches", ("self",))),
    *(Private(_TABLE, cache, "KeyedTable.__init__", "render caches bounded to a few screens' worth (memory of a "
              "day-long run)", _instance(_table, cache, None, _CACHE))
      for cache in ("_cell_render_cache", "_row_render_cache", "_row_renderable_cache", "_line_cache")),
    Private(_TABLE, "_render_cell", "KeyedTable._render_cell", "a one-line plain cell rendered straight to its "
            "segments (cell_render), cached under DataTable's own key; any other cell goes to DataTable's",
            _method(_TABLE, "_render_cell", ("self", "row_index", "column_index", "base_style", "width", "cursor",
                                             "hover"))),
    Private(_TABLE, "_get_row_renderables", "KeyedTable._render_cell", "a row's cells as DataTable renders "
            "them (its label and cells)", _method(_TABLE, "_get_row_renderables", ("self", "row_index"))),
    *(Private(_TABLE, name, "KeyedTable._render_cell", "part of DataTable's key for a rendered cell",
              _instance(_table, name)) for name in ("_column_locations", "_show_hover_cursor",
                                                    "_pseudo_class_state")),
    Private(_TABLE, "_styles_cache", "KeyedTable.notify_style_update", "cleared on a restyle, as DataTable does",
            _instance(_table, "_styles_cache", None, ("clear",))),
    Private(_TABLE, "_get_styles_to_render_cell", "KeyedTable.notify_style_update", "an lru_cache not keyed by "
            "the focus state: cleared on a restyle", _instance(_table, "_get_styles_to_render_cell", None,
                                                                ("cache_clear",))),
    Private("textual.widget:Widget", "_bindings", "KeyedTable._show_sort_in_footer, StacktopApp._on_key, "
            "StacktopApp.action_close_screen", "the table's own `s` binding is rewritten to name the current sort; a "
            "key typed before a line opened is looked up in the bindings of the widget it was typed at; q on a "
            "drill-down runs what that screen's esc runs", _instance(_table, "_bindings", None,
                                                                     ("key_to_bindings",))),
    # QuietLinuxDriver (tui/widgets/input_driver.py)
    Private(_DRIVER, "run_input_thread", "QuietLinuxDriver.run_input_thread", "the input thread, replaced by "
            "input_loop (no 100 ms wake-ups)", _method(_DRIVER, "run_input_thread", ("self",))),
    Private(_DRIVER, "_key_thread", "QuietLinuxDriver.close", "the input thread, to close the wake pipe after it",
            _set_in_init(_DRIVER, "_key_thread")),
    Private(_DRIVER, "_debug", "input_loop", "passed to the XTermParser as LinuxDriver does",
            _set_in_init("textual.driver:Driver", "_debug")),
    Private(_DRIVER, "exit_event", "QuietLinuxDriver", "replaced by a WakingEvent the input thread waits on",
            _set_in_init(_DRIVER, "exit_event")),
    Private("textual._xterm_parser", "XTermParser", "input_loop", "the key parser LinuxDriver feeds",
            _instance(_parser, "tick")),
    Private("textual._xterm_parser:XTermParser", "_timeout_time", "input_loop", "when a pending escape sequence "
            "is due: the input thread sleeps until then, and brings it forward for a lone ESC that ended a read",
            _instance(_parser, "_timeout_time")),
    Private("textual._loop", "loop_last", "input_loop", "as in LinuxDriver.run_input_thread",
            _attribute("textual._loop", "loop_last")),
    Private("textual._time", "get_time", "input_loop", "the clock _timeout_time is measured by",
            _attribute("textual._time", "get_time")),
)


def check() -> list[str]:
    """One line per item that no longer has the shape stacktop relies on (empty: all is well)."""
    problems = []
    for item in PRIVATE:
        try:
            problem = item.check()
        except Exception as exc:  # an import or a constructor that changed is a finding too
            problem = f"check failed: {type(exc).__name__}: {exc}"
        if problem:
            problems.append(f"{item.label}: {problem} (used by {item.used_by}: {item.why})")
    return problems
