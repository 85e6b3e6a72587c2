"""The breadcrumb line at the top of the dashboard and of every drill-down screen (tui.breadcrumb), which is
also the status line: the newest notice on its right (tui.notices), never over a pane's rows."""

from __future__ import annotations

from rich.cells import cell_len
from rich.text import Text
from textual.widgets import Static

from tui import breadcrumb, notices
from tui.dashboard import dashboard
from tui.safetext import clean


class Breadcrumb(Static):
    DEFAULT_CSS = "Breadcrumb { height: 1; padding: 0 1; color: $text-muted; }"

    def on_mount(self) -> None:
        self.refresh_crumbs()

    def parts(self) -> list[str]:
        """The crumbs of the screens from the dashboard up to (and including) the one this line is on."""
        stack = list(self.app.screen_stack)
        mine = self.screen
        stack = stack[: stack.index(mine) + 1] if mine in stack else [*stack, mine]
        dash = dashboard(self.app)
        main = None if dash is None else dash.main_crumb
        parts = [main() if callable(main) else ""]
        parts += [str(getattr(s, "crumb", "") or "") for s in stack[1:]]
        return [p for p in parts if p]

    @property
    def text(self) -> str:
        return breadcrumb.join(self.parts())

    @property
    def notice(self) -> tuple[str, str]:
        """(the notice shown on this line, its severity); ("", "") when none."""
        dash = dashboard(self.app)
        shown = None if dash is None else dash.shown_notice()
        return shown or ("", "")

    def refresh_crumbs(self) -> None:
        shown = (self.text, self.notice)
        if shown != getattr(self, "_shown", None):  # Static.update repaints even the same text
            self._shown = shown
            # one line whatever the text (height: 1): no layout of the whole screen for it (each tab changes it)
            self.refresh(layout=False)

    @property
    def shown_text(self) -> str:
        """The line as drawn at its width: crumbs, then the notice on the right."""
        return self.render().plain

    def render(self) -> Text:
        crumbs, (notice, severity) = clean(self.text), self.notice
        width = max(self.content_region.width or self.size.width, 1)
        left, right = notices.fit(crumbs, notice, width)
        line = Text(left, no_wrap=True, overflow="crop")
        if right:
            line.append(" " * max(width - cell_len(left) - cell_len(right), notices.GAP))
            line.append(right, style=notices.STYLES.get(severity, "bold"))
        return line
