"""The triage row under the top bar: the five triage commands at a glance, coloured by level.

It renders tui.rules.triage.triage_summary over the app's latest observations. The app's 1 s tick re-evaluates
it (no I/O: heartbeat ages and STALE marks move between polls) and it repaints only when the text changed. The
tick, not a timer of its own: one wake-up a second fewer for an app that idles all day.
"""

from __future__ import annotations

import time
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any

from rich.text import Text
from textual.widgets import Static

from tui.config import Thresholds
from tui.dashboard import dashboard
from tui.models.observation import Observation
from tui.safetext import clean
from tui.widgets.observed import AllObserved, keys_first, latest_observations
from tui.widgets.source_pane import SourcePane, lines_needed

if TYPE_CHECKING:  # the rules are imported where used: ~20 ms of CPU before the first paint otherwise
    from tui.models.triage import TriageSummary

LEVEL_STYLE = {"ok": "green", "warning": "yellow", "critical": "bold red", "unknown": "dim"}
SEPARATOR = "  │  "
BRIEF_SEPARATOR = " │ "
FULL_LINES = 3  # the whole row in up to this many lines; else the brief form (up to BRIEF_LINES)
BRIEF_LINES = 5


def render_summary(summary: TriageSummary, *, brief: bool = False) -> Text:
    """The row; brief: ok cells in a word, reassurances left out, narrower separators (rules.triage.brief_text)."""
    text = Text(no_wrap=False, overflow="fold")
    same = {c.text for c in summary.cells}
    if len(same) == 1 and summary.worst == "unknown":  # nothing to tell apart: say it once
        text.append("triage ", style="bold")
        text.append(f"{clean(same.pop())}: catalog, services, RabbitMQ, Galera", style="dim")
        return text
    if brief:
        from tui.rules.triage import brief_text
    for i, cell in enumerate(summary.cells):
        if i:
            text.append(BRIEF_SEPARATOR if brief else SEPARATOR, style="dim")
        text.append(clean(cell.label) + " ", style="bold")
        text.append(clean(brief_text(cell) if brief else cell.text), style=LEVEL_STYLE.get(cell.level, ""))
    return text


class TriageRow(Static):
    """Feed it with show_all(app.observations), or post AllObserved, after every observation."""

    DEFAULT_CSS = "TriageRow { height: auto; max-height: 5; padding: 0 1; background: $boost; }"

    def __init__(self, **kwargs: Any) -> None:
        super().__init__("triage: waiting for the first poll", **kwargs)
        self.observations: dict[str, Observation] = {}
        self.summary: TriageSummary | None = None
        self._shown: tuple[tuple[str, str], ...] | None = None

    def on_mount(self) -> None:
        self.call_after_refresh(self.refresh_summary)  # once the sibling panes are mounted

    async def on_all_observed(self, message: AllObserved) -> None:
        await keys_first(self)
        self.show_all(latest_observations(self, message))

    def show_all(self, observations: dict[str, Observation]) -> None:
        self.observations = dict(observations)
        if self.is_mounted:
            self.refresh_summary()

    def _now(self) -> float:
        dash = dashboard(self.app)
        clock = None if dash is None else dash.clock
        return clock() if callable(clock) else time.time()

    def _sources(self) -> tuple[set[str] | None, dict[str, float]]:
        """Which sources are configured and their intervals, as the sibling panes were told by the app."""
        try:
            dash = dashboard(self.app)
            given = None if dash is None else dash.panes  # the app's list is cheaper than a query every second
            panes = list(given) if isinstance(given, list) else list(self.screen.query(SourcePane))
        except Exception:
            return None, {}
        if not panes:
            return None, {}
        configured = {p.SOURCE for p in panes if p.configured}
        return configured, {p.SOURCE: float(p.interval) for p in panes}

    def refresh_summary(self) -> None:
        from tui.rules.triage import DEFAULT_INTERVAL, triage_summary

        dash = dashboard(self.app)
        config = None if dash is None else dash.config
        thresholds = getattr(config, "thresholds", None) or Thresholds()
        configured, intervals = self._sources()
        now = self._now()
        # between polls only staleness moves the row (services are judged as of their poll): with the same
        # observations and no source stale, the summary (over 1,500 services at 500 hosts) need not be redone
        stale = tuple(sorted(src for src, obs in self.observations.items()
                             if obs.error is not None or obs.is_stale(now, intervals.get(src, DEFAULT_INTERVAL))))
        key = (tuple(sorted((src, id(obs)) for src, obs in self.observations.items())),
               tuple(sorted(configured or ())), tuple(sorted(intervals.items())), stale)
        if key == getattr(self, "_summary_key", None) and not stale and self.summary is not None:
            return
        self._summary_key = key
        summary = triage_summary(self.observations, datetime.fromtimestamp(now, UTC), thresholds,
                                 configured=configured, intervals=intervals)
        self.summary = summary
        shown = tuple((c.line, c.level) for c in summary.cells)
        if shown != self._shown:
            self._shown = shown
            self._render_fitting()

    def on_resize(self) -> None:
        if self.summary is not None:
            self._render_fitting(only_if_changed=True)

    def _render_fitting(self, *, only_if_changed: bool = False) -> None:
        """The whole row when it fits in FULL_LINES at this width, else its brief form: never cut."""
        assert self.summary is not None
        text = render_summary(self.summary)
        width = self.size.width
        brief = bool(width) and lines_needed(text, width) > FULL_LINES
        if only_if_changed and brief == getattr(self, "brief", None):
            return
        self.brief = brief
        self.update(render_summary(self.summary, brief=True) if brief else text)
