"""The read-at line of a drill-down screen: when the data it shows was read, and STALE when its source stopped
answering (tui.freshness.read_at). Repainted only when its text changes."""

from __future__ import annotations

from textual.widgets import Static

from tui.safetext import escape


class ReadAtLine(Static):
    """One line: `read 14:13:20 UTC`, or `STALE · read 14:13:20 UTC (47s ago)` in the warning colour."""

    DEFAULT_CSS = """
    ReadAtLine { height: auto; padding: 0 1; color: $text-muted; }
    ReadAtLine.-stale { color: $warning; text-style: bold; }
    """

    def __init__(self, *, id: str | None = None) -> None:
        super().__init__("", id=id)
        self.shown = ""

    def show(self, parts: list[tuple[str, str]]) -> None:
        """parts: (text, level) of each source or read the screen shows, joined with ` · `; stale if any is."""
        text = "  ·  ".join(t for t, _ in parts if t)
        self.set_class(any(level == "stale" for _, level in parts), "-stale")
        if text != self.shown:
            self.shown = text
            self.update(escape(text))


def block_stamp(parts: list[tuple[str, str]]) -> str:
    """Markup put beside a block's title on a drill-down screen: when that block's data was read (parts as for
    ReadAtLine.show), dim while fresh; STALE, bold in the warning colour, when any part is stale."""
    text = "  ·  ".join(t for t, _ in parts if t)
    if not text:
        return ""
    stale = any(level == "stale" for _, level in parts)
    if stale and "STALE" not in text:
        text = f"STALE · {text}"
    return f"  [{'bold yellow' if stale else 'dim'}]{escape(text)}[/]"
