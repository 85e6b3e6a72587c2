"""The running dashboard as widgets and screens see it, typed: `dashboard(app)`.

StacktopApp (and ReplayApp, which is one) implement Dashboard: the cloud on screen's config, observations,
runners and silences, every cloud, pause, the clock, the recorder, and the few services a widget asks of the
app (which pane to show, what a border says, whether a key waits). Widgets and screens read the app through
this protocol only, so what they depend on is written down once and the layer check sees it; an app that is
not a dashboard (a bare test app holding one widget) gives None, and the caller shows "nothing yet".

No Textual here: the panes are the app's widgets, typed as objects at this layer.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import TYPE_CHECKING, Protocol, runtime_checkable

if TYPE_CHECKING:
    from tui.clouds import CloudState
    from tui.config import Config
    from tui.models.observation import Observation
    from tui.models.silence import Silences
    from tui.recorder import Recorder
    from tui.runner import CollectorRunner


@runtime_checkable
class Dashboard(Protocol):
    """What widgets and screens may read of the running dashboard."""

    config: Config  # the cloud on screen's
    clock: Callable[[], float]  # the dashboard's time (a replay's recorded time)
    paused: bool  # refresh paused (`p`)
    show_ages: bool  # the tables' moments as ages (`5m ago`), not times (`t` toggles)
    replaying: bool  # a replay of a journal: nothing is read live
    recorder: Recorder | None
    clouds: Mapping[str, CloudState]
    active_cloud: str

    @property
    def runners(self) -> Mapping[str, CollectorRunner]: ...

    @property
    def observations(self) -> Mapping[str, Observation]: ...

    @property
    def silences(self) -> Silences: ...

    @property
    def starting(self) -> bool: ...

    @property
    def panes(self) -> Sequence[object]: ...

    def key_pending(self) -> bool: ...

    async def keys_first(self) -> None: ...  # wait while a key is pending: its frame before a render

    def main_crumb(self) -> str: ...

    def command_choices(self, command: str) -> list[str]: ...

    def shown_notice(self) -> tuple[str, str] | None: ...  # the status line's notice: (text, severity)

    def show_source(self, source: str) -> None: ...

    def border_freshness(self, obs: Observation | None, now: float, interval: float,
                         configured: bool) -> tuple[str, str]: ...


@runtime_checkable
class KeysFirst(Protocol):
    """An app that knows whether a key waits for its frame (the dashboard; a table's own test app may too):
    background work in a widget yields to the key."""

    def key_pending(self) -> bool: ...


def key_pending(app: object) -> bool:
    """A key waits for its frame in `app` (False for an app that does not tell)."""
    return isinstance(app, KeysFirst) and bool(app.key_pending())


_DASHBOARD_TYPES: set[type] = set()  # classes seen to be dashboards: the protocol check once per class


def show_ages(app: object) -> bool:
    """Whether the tables show how long ago (`t`), not the time; False outside a dashboard."""
    dash = dashboard(app)
    return dash is not None and dash.show_ages


def dashboard(app: object) -> Dashboard | None:
    """The app as a Dashboard, or None when it is not one (a bare Textual app in a test)."""
    if type(app) in _DASHBOARD_TYPES:
        return app  # type: ignore[return-value]
    if isinstance(app, Dashboard):
        _DASHBOARD_TYPES.add(type(app))
        return app
    return None
