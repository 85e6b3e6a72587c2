"""The panes on the dashboard: the active one, moving between them, the breadcrumb."""

from __future__ import annotations

from typing import TYPE_CHECKING

from textual.css.query import NoMatches

from tui.appparts.pieces import command_input_class
from tui.widgets.breadcrumb import Breadcrumb
from tui.widgets.source_pane import SourcePane
from tui.widgets.triage_row import TriageRow

if TYPE_CHECKING:  # these load after the first paint, where they are used
    from textual.widgets import DataTable


class PanesPart:
    """The panes: which one is active, the breadcrumb, tab / shift+tab, `a`, `enter`."""

    pane_chosen = False  # a pane was chosen (tab, :instances, ...): a resize keeps it on screen

    @property
    def panes(self) -> list[SourcePane]:
        if not self.screen_stack:  # shutting down
            return []
        screen = self.screen_stack[0]
        try:  # the grid's children: a CSS query walks the whole DOM, and this runs a few times a second
            grid = screen.get_child_by_id("panes")
        except NoMatches:
            return list(screen.query(SourcePane))
        return [child for child in grid.children if isinstance(child, SourcePane)]

    def _triage_row(self) -> TriageRow | None:
        """The dashboard's triage row, by id: a CSS query walked the whole DOM on every observation."""
        if not self.screen_stack:
            return None
        try:
            row = self.screen_stack[0].get_child_by_id("triage")
        except NoMatches:
            return None
        return row if isinstance(row, TriageRow) else None

    def _activate(self, index: int) -> None:
        panes = self.panes
        if not panes:
            return
        self.active_index = index % len(panes)
        changed = [pane for i, pane in enumerate(panes) if pane.has_class("-active") != (i == self.active_index)]
        for pane in changed:
            pane.set_class(not pane.has_class("-active"), "-active", update=False)
        if changed:
            # only the two panes themselves: set_class restyles each pane's whole subtree at once, and a
            # table's restyle walks its dozen component classes (~40 % of a tab's CPU with the focus-within
            # restyle, now gone). No rule under a pane depends on -active (app.tcss: border, narrow display)
            self.stylesheet.update_nodes(changed, animate=True)
        active = panes[self.active_index]
        screen = self.screen_stack[0]
        if isinstance(screen.maximized, SourcePane) and screen.maximized is not active:
            screen.maximized = active  # zoomed: tab zooms the next pane
            if active.table is not None:
                self.call_after_refresh(active.table.refit)
        if active.table is not None:
            # now, not after the keys already queued (Widget.focus waits for them): one of them may open a line
            self.screen_stack[0].set_focus(active.table)
            if self.screen_stack[0].focused is not active.table:
                active.table.focus()
        else:
            self.screen_stack[0].set_focus(None)
        self.refresh_breadcrumb()

    def main_crumb(self) -> str:
        """The dashboard's part of the breadcrumb: the cloud on screen (with several clouds), the focused pane
        and its filter."""
        from tui.breadcrumb import join, pane_crumb

        cloud = self.active_cloud if len(self.clouds) > 1 else None
        pane = self.active_pane()
        if pane is None:
            return cloud or ""
        return join((cloud, pane_crumb(pane.SOURCE, pane.table.row_filter.text if pane.table is not None else "")))

    def refresh_breadcrumb(self) -> None:
        for crumb in self.screen_stack[0].query("#breadcrumb").results(Breadcrumb):
            crumb.refresh_crumbs()

    def action_next_pane(self) -> None:
        if isinstance(self.focused, command_input_class()):
            self.focused.complete()
            return
        if len(self.screen_stack) > 1:
            self.screen.focus_next()
            return
        self.pane_chosen = True
        self._activate(self.active_index + 1)

    def action_previous_pane(self) -> None:
        if len(self.screen_stack) > 1:
            self.screen.focus_previous()
            return
        self.pane_chosen = True
        self._activate(self.active_index - 1)

    def active_pane(self) -> SourcePane | None:
        panes = self.panes
        return panes[self.active_index] if panes else None

    def action_zoom(self) -> None:
        """The active pane over the whole screen (its columns fitted to it), or back to the grid."""
        if len(self.screen_stack) > 1:
            return
        screen = self.screen_stack[0]
        pane = self.active_pane()
        if screen.maximized is not None or pane is None:
            screen.minimize()
        else:
            screen.maximized = pane
        if pane is not None and pane.table is not None:
            self.call_after_refresh(pane.table.refit)

    def action_toggle_all(self) -> None:
        pane = self.active_pane()
        toggle = getattr(pane, "action_toggle_all", None)
        if callable(toggle):
            toggle()
        else:
            self.notify("this pane always shows every row", timeout=2)

    def action_drill_down(self) -> None:
        pane = self.active_pane()
        if pane is not None:
            pane.drill_down()

    def on_data_table_row_selected(self, event: DataTable.RowSelected) -> None:
        for pane in self.panes:
            if pane.table is event.data_table:
                pane.drill_down()

    def show_source(self, source: str) -> None:
        while len(self.screen_stack) > 1:
            self.pop_screen()
        for index, pane in enumerate(self.panes):
            if source == pane.SOURCE:
                self.pane_chosen = True
                self._activate(index)
                return

