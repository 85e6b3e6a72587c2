"""The triage row under the top bar: the five triage commands at a glance, coloured by level.

It paints the triage row the runner judged with the cloud's latest poll (tui.models.judged.CloudView). The app's
1 s tick marks a cell STALE once its source's data is older than its staleness mark (ages move between polls;
the verdicts are the poll's) and it repaints only when the text changed. The tick, not a timer of its own: one
wake-up a second fewer for an app that idles all day.
"""

from __future__ import annotations

import time
from typing import TYPE_CHECKING, Any

from rich.text import Text
from textual.widgets import Static

from tui.dashboard import dashboard
from tui.models.observation import Observation
from tui.safetext import clean
from tui.widgets.observed import AllObserved, keys_first, latest_observations
from tui.widgets.source_pane import SourcePane, lines_needed

if TYPE_CHECKING:
    from tui.models.triage import TriageSummary
# tui.models.judged and tui.models.triage load with the first poll's row (refresh_summary), after the first paint

LEVEL_STYLE = {"ok": "green", "warning": "yellow", "critical": "bold red", "unknown": "dim"}
SEPARATOR = "  │  "
BRIEF_SEPARATOR = " │ "
FULL_LINES = 3  # the whole row in up to this many lines; else the brief form (up to BRIEF_LINES)
BRIEF_LINES = 5


def render_summary(summary: TriageSummary, *, brief: bool = False) -> Text:
    """The row; brief: ok cells in a word, reassurances left out, narrower separators (tui.models.triage.brief_text)."""
    from tui.models.triage import brief_text

    text = Text(no_wrap=False, overflow="fold")
    same = {c.text for c in summary.cells}
    if len(same) == 1 and summary.worst == "unknown":  # nothing to tell apart: say it once
        text.append("triage ", style="bold")
        text.append(f"{clean(same.pop())}: catalog, services, RabbitMQ, Galera", style="dim")
        return text
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
        from tui.models.judged import latest_view, summary_at
        from tui.models.triage import TRIAGE_SOURCES, not_configured

        view = latest_view(self.observations)
        configured, intervals = self._sources()
        if view is None or view.summary is None:
            if configured is None or any(source in configured for source in TRIAGE_SOURCES):
                return  # a poll is coming: its judgement fills the row
            summary = not_configured()
        else:
            summary = summary_at(view.summary, self.observations, self._now(), intervals)
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
