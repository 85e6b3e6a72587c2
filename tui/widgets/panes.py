"""Which pane widget shows which source. A source without its own pane gets a plain summary pane."""

from __future__ import annotations

from tui.widgets.source_pane import SourcePane

# Pane order in the grid (the findings pane is added by the app).
PANE_ORDER: tuple[tuple[str, str], ...] = (
    ("services", "control plane"),
    ("instances", "instances"),
    ("rabbitmq", "RabbitMQ"),
    ("galera", "Galera"),
)


def pane_class(source: str, title: str) -> type[SourcePane]:
    specific = _specific_panes().get(source)
    if specific is not None:
        return specific
    return type(f"{source.title()}Pane", (SourcePane,), {"SOURCE": source, "TITLE": title})


def _specific_panes() -> dict[str, type[SourcePane]]:
    from tui.widgets.galera_pane import GaleraPane
    from tui.widgets.instances_pane import InstancesPane
    from tui.widgets.rabbitmq_pane import RabbitMQPane
    from tui.widgets.services_pane import ServicesPane

    panes: dict[str, type[SourcePane]] = {"rabbitmq": RabbitMQPane, "services": ServicesPane,
                                           "instances": InstancesPane}
    panes["galera"] = GaleraPane
    return panes
