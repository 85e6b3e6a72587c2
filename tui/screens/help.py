"""`?`: what every key does."""

from __future__ import annotations

from typing import ClassVar

from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Vertical
from textual.screen import ModalScreen
from textual.widgets import Static

HELP_TEXT = """\
[b]stacktop[/b] - the control plane at a glance. Read-only: it never changes the cloud.

[b]?[/b]          this help                [b]q[/b] / [b]ctrl+q[/b]   quit
[b]p[/b]          pause / resume refresh   [b]r[/b]            refresh now
[b]/[/b]          filter the focused table (regex; a leading ! inverts; esc clears)
[b]tab[/b]        next pane                [b]shift+tab[/b]    previous pane
[b]enter[/b]      drill down               [b]esc[/b]          back
[b]ctrl+p[/b]     command palette (themes, screenshot)

Pane borders say how fresh their data is: [green]ok 4s[/green], [yellow]STALE 47s[/yellow],
[red]ERROR <reason> - last ok 2m ago[/red]. A failing source keeps its last rows, dimmed.

Press esc or ? to close."""


class HelpScreen(ModalScreen[None]):
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("escape", "dismiss", "Close"),
        Binding("question_mark", "dismiss", "Close"),
    ]

    DEFAULT_CSS = """
    HelpScreen { align: center middle; }
    HelpScreen > Vertical { width: 86; max-width: 100%; height: auto; max-height: 100%;
                            border: round $accent; background: $surface; padding: 0 1; }
    HelpScreen #help-text { width: 100%; height: auto; }
    """

    def compose(self) -> ComposeResult:
        with Vertical():
            yield Static(HELP_TEXT, id="help-text")

    async def action_dismiss(self, result: None = None) -> None:
        self.dismiss(result)
