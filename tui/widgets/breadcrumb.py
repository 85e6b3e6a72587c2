"""The breadcrumb line at the top of the dashboard and of every drill-down screen (tui.breadcrumb)."""

from __future__ import annotations

from textual.widgets import Static

from tui import breadcrumb
from tui.dashboard import dashboard
from tui.safetext import escape


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

    def refresh_crumbs(self) -> None:
        text = self.text
        if text != getattr(self, "_shown_text", None):  # Static.update repaints even the same text
            self._shown_text = text
            # one line whatever the text (height: 1): no layout of the whole screen for it (each tab changes it)
            self.update(escape(text), layout=False)
