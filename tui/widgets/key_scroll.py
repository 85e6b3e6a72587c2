"""A vertical scroll that also moves with j / k (the habit of k9s, htop, less and vi users)."""

from __future__ import annotations

from typing import ClassVar

from textual.binding import Binding, BindingType
from textual.containers import VerticalScroll


class KeyScroll(VerticalScroll):
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("j", "scroll_down", "Down", show=False, tooltip="scroll down a line"),
        Binding("k", "scroll_up", "Up", show=False, tooltip="scroll up a line"),
    ]
