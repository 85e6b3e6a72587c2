"""Which pane widget shows which source (tui.sources): PANES binds a source to its pane class. A source without
its own pane gets a plain summary pane."""

from __future__ import annotations

from tui import sources
from tui.widgets.galera_pane import GaleraPane
from tui.widgets.instances_pane import InstancesPane
from tui.widgets.rabbitmq_pane import RabbitMQPane
from tui.widgets.services_pane import ServicesPane
from tui.widgets.source_pane import SourcePane

PANES: dict[str, type[SourcePane]] = {  # source name -> its pane class
    "services": ServicesPane,
    "instances": InstancesPane,
    "rabbitmq": RabbitMQPane,
    "galera": GaleraPane,
}


def pane_order() -> tuple[tuple[str, str], ...]:
    """(source, title) in grid order (the findings pane is added by the app)."""
    return tuple((s.name, s.title) for s in sources.SOURCES if s.has_pane)



def pane_class(source: str, title: str) -> type[SourcePane]:
    cls = PANES.get(source)
    if cls is not None:
        return cls
    return type(f"{source.title()}Pane", (SourcePane,), {"SOURCE": source, "TITLE": title})
