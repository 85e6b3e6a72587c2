"""The dashboard's state below Textual: every cloud (its config, runners, observations and silences), the cloud
on screen, pause, the clock and the recorder, and what is read from them (badges, a border's freshness, the
`:cloud` choices). StacktopApp is one (it implements tui.dashboard.Dashboard with it); no Textual here."""

from __future__ import annotations

from collections.abc import Callable
from datetime import UTC, datetime
from typing import TYPE_CHECKING

from tui import clouds as cloudset
from tui.config import Config
from tui.freshness import freshness
from tui.models.observation import Observation

if TYPE_CHECKING:
    from tui.models.silence import Silences
    from tui.recorder import Recorder
    from tui.runner import CollectorRunner


class DashboardCore:
    """The clouds and what the dashboard reads of them (StacktopApp sets these in its __init__)."""

    clouds: dict[str, cloudset.CloudState]
    active_cloud: str  # the cloud on screen
    config: Config  # the cloud on screen's
    paused: bool  # refresh paused (`p`)
    clock: Callable[[], float]  # the dashboard's time (the demo's sim time, a replay's recorded time)
    recorder: Recorder | None

    @property
    def runners(self) -> dict[str, CollectorRunner]:
        """The active cloud's runners, by source."""
        return self.clouds[self.active_cloud].runners

    @property
    def observations(self) -> dict[str, Observation]:
        """The active cloud's latest observations, by source."""
        return self.clouds[self.active_cloud].observations

    @property
    def silences(self) -> Silences:
        """The silenced findings of the cloud on screen."""
        return self.clouds[self.active_cloud].silences

    def now_utc(self) -> datetime:
        """The app's clock (the demo's sim time, a replay's recorded time) as an aware UTC datetime."""
        return datetime.fromtimestamp(self.clock(), UTC)

    def cloud_badges(self) -> list[cloudset.Badge]:
        """Every cloud's health (worst finding severity, STALE), in file order; the one on screen marked active."""
        now = self.clock()
        slow = self.config.ui.inactive_cloud_interval
        return [cloudset.badge(s.name, s.observations, now, s.intervals(None if s.name == self.active_cloud else slow),
                               active=s.name == self.active_cloud, silences=s.silences) for s in self.clouds.values()]

    def border_freshness(self, obs: Observation | None, now: float, interval: float,
                         configured: bool) -> tuple[str, str]:
        """What a pane's border says about its data (tui.freshness): while paused, when it was read."""
        return freshness(obs, now, interval, configured=configured, paused=self.paused)

