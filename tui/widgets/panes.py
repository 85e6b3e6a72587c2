"""Which pane widget shows which source (tui.sources). A source without its own pane gets a plain summary pane."""

from __future__ import annotations

import importlib

from tui import sources
from tui.widgets.source_pane import SourcePane


def pane_order() -> tuple[tuple[str, str], ...]:
    """(source, title) in grid order (the findings pane is added by the app)."""
    return tuple((s.name, s.title) for s in sources.SOURCES if s.has_pane)



def pane_class(source: str, title: str) -> type[SourcePane]:
    found = sources.spec(source)
    if found is not None and found.pane:
        module, _, name = found.pane.partition(":")
        cls = getattr(importlib.import_module(module), name)
        assert issubclass(cls, SourcePane), f"{found.pane} is not a SourcePane"
        return cls
    return type(f"{source.title()}Pane", (SourcePane,), {"SOURCE": source, "TITLE": title})
