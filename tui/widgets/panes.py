"""Which pane widget shows which source: the pane class its SourceSpec holds (tui.sources), else a plain
summary pane."""

from __future__ import annotations

from tui import sources
from tui.widgets.source_pane import SourcePane


def pane_order() -> tuple[tuple[str, str], ...]:
    """(source, title) in grid order (the findings pane is added by the app)."""
    return tuple((s.name, s.title) for s in sources.SOURCES if s.has_pane)


def pane_class(source: str, title: str) -> type[SourcePane]:
    spec = sources.spec(source)
    if spec is not None and spec.pane is not None:
        return spec.pane()
    return type(f"{source.title()}Pane", (SourcePane,), {"SOURCE": source, "TITLE": title})
