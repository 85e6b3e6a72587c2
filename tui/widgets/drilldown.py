"""A pane asks for a drill-down screen by message; the app, which knows the screens, opens it.

Widgets sit below screens: a pane never imports a screen. `enter` on a row posts DrillDown, which bubbles to the
app (StacktopApp.on_drill_down).
"""

from __future__ import annotations

from typing import Literal

from textual.message import Message

Target = Literal["host", "server", "finding"]


class DrillDown(Message):
    """Open the drill-down for a host (its name), a server (its id, id prefix or name) or a finding (its row key
    in the findings pane, `kind|subject`)."""

    def __init__(self, target: Target, name: str) -> None:
        super().__init__()
        self.target: Target = target
        self.name = name
