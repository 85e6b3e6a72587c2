"""What a drill-down screen reads of the running dashboard, typed: `context(app)`.

Screens open on top of the dashboard (StacktopApp) and read its config, latest observations, running collectors,
clock and recorder through the typed Dashboard protocol (tui.dashboard), so what a screen depends on is written
down once; an app that is not a dashboard (a bare test app) reads as "nothing yet".
"""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping
from datetime import UTC, datetime
from typing import Any

from tui.config import Config
from tui.dashboard import Dashboard, dashboard
from tui.models.observation import Observation


class DashboardContext:
    """A typed view of the app for screens."""

    def __init__(self, app: object) -> None:
        self.app: Dashboard | None = dashboard(app)

    @property
    def config(self) -> Config:
        config = None if self.app is None else self.app.config
        return config if isinstance(config, Config) else Config()

    def observation(self, source: str) -> Observation | None:
        observations = None if self.app is None else self.app.observations
        found = observations.get(source) if isinstance(observations, Mapping) else None
        return found if isinstance(found, Observation) else None

    @property
    def observations(self) -> dict[str, Observation]:
        """Every source's latest observation (of the cloud on screen)."""
        observations = None if self.app is None else self.app.observations
        if not isinstance(observations, Mapping):
            return {}
        return {k: v for k, v in observations.items() if isinstance(v, Observation)}

    def interval(self, source: str) -> float:
        """How often the source polls (its collector's interval; a cloud not on screen polls slower)."""
        runners = None if self.app is None else self.app.runners
        runner = runners.get(source) if isinstance(runners, Mapping) else None
        interval = getattr(getattr(runner, "collector", None), "interval", None)
        slow = getattr(runner, "slow_interval", None)
        base = float(interval) if isinstance(interval, (int, float)) else 10.0
        return max(base, float(slow)) if isinstance(slow, (int, float)) else base

    def running(self, source: str) -> bool:
        runners = None if self.app is None else self.app.runners
        return isinstance(runners, Mapping) and source in runners

    @property
    def paused(self) -> bool:
        """Refresh is paused (`p`): the data is as old as it is on purpose."""
        return self.app is not None and self.app.paused is True

    def snapshot(self, source: str) -> Any:
        obs = self.observation(source)
        return None if obs is None else obs.snapshot

    def collector(self, source: str) -> Any:
        """The running collector of a source of the cloud on screen, else None."""
        runners = None if self.app is None else self.app.runners
        runner = runners.get(source) if isinstance(runners, Mapping) else None
        return getattr(runner, "collector", None)

    @property
    def clock(self) -> Callable[[], float]:
        clock = None if self.app is None else self.app.clock
        return clock if callable(clock) else time.time

    def now(self) -> float:
        return float(self.clock())

    def now_utc(self) -> datetime:
        return datetime.fromtimestamp(self.now(), UTC)

    @property
    def recorder(self) -> Any:
        return None if self.app is None else self.app.recorder

    @property
    def replaying(self) -> bool:
        """A replay of a journal: only what was recorded is shown, nothing is read from a cloud."""
        return self.app is not None and self.app.replaying is True

    @property
    def starting(self) -> bool:
        """The app's set-up before its sources (the demo's simulator) still runs: nothing can be read yet."""
        return self.app is not None and self.app.starting is True

    def cannot_read(self, what: str) -> str:
        """One line saying why a live read (`what` is not done) does not happen here."""
        if self.replaying:
            return f"{what}: this is a replay of a recording, and only a live session reads the cloud"
        if self.starting:
            return f"the sources are starting: {what} yet (read as soon as they run)"
        return f"no OpenStack cloud configured: {what}"


def context(app: object) -> DashboardContext:
    return DashboardContext(app)
