"""The messages that hand observations from the app to the widgets that render them.

Why messages and not direct calls: every Textual widget has its own message queue and task, and a key sits in
the app's. Rendered in each widget's own queue, an observation (a pane's rows, the findings, the triage row)
never makes a key wait for more than the render in progress; an older observation still queued for a widget is
replaced by a newer one (can_replace). And a render about to start while a key is pending waits for the key's
frame (StacktopApp.keys_first).
"""

from __future__ import annotations

from collections.abc import Mapping

from textual.message import Message
from textual.widget import Widget

from tui.dashboard import dashboard
from tui.models.observation import Observation


class Observed(Message, bubble=False):
    """A source's latest observation, for the pane that shows that source."""

    def __init__(self, observation: Observation) -> None:
        super().__init__()
        self.observation = observation

    def can_replace(self, message: Message) -> bool:
        return isinstance(message, Observed) and message.observation.source == self.observation.source


class AllObserved(Message, bubble=False):
    """Every source's latest observation (the findings pane and the triage row read them all)."""

    def __init__(self, observations: Mapping[str, Observation]) -> None:
        super().__init__()
        self.observations = dict(observations)

    def can_replace(self, message: Message) -> bool:
        return isinstance(message, AllObserved)


async def keys_first(widget: Widget) -> None:
    """Wait while a key is pending (StacktopApp.keys_first): its frame before this render."""
    dash = dashboard(widget.app)
    if dash is not None:
        await dash.keys_first()


def superseded(widget: Widget, observation: Observation) -> bool:
    """The app's latest observation of this source (of the cloud on screen) is another one: the message
    waited in the widget's queue while the cloud switched or a newer poll arrived."""
    dash = dashboard(widget.app)
    latest = None if dash is None else dash.observations
    return isinstance(latest, Mapping) and latest.get(observation.source) is not observation


def latest_observations(widget: Widget, message: AllObserved) -> dict[str, Observation]:
    """What the app holds now (of the cloud on screen), not what it held when the message was posted."""
    dash = dashboard(widget.app)
    latest = None if dash is None else dash.observations
    return dict(latest) if isinstance(latest, Mapping) else message.observations
