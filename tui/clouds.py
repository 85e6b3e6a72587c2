"""Several clouds in one session: each cloud's runners and latest observations, and its health badge.

No Textual here. The app keeps one CloudState per `[[clouds]]` entry; the panes show the active one's
observations, the others keep polling at `[ui] inactive_cloud_interval` and are summed up in the top bar as
`name LEVEL` (worst finding severity, STALE when a source's data is old or failing, ... before any poll).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import TYPE_CHECKING

from tui.config import Config
from tui.models.finding import Finding
from tui.models.observation import Observation
from tui.records import record
from tui.safetext import escape

if TYPE_CHECKING:  # runners are made once the sources start, after the first paint
    from tui.models.silence import Silences
    from tui.runner import CollectorRunner

LEVEL_WORD = {"critical": "CRIT", "warning": "WARN", "ok": "ok", "waiting": "..."}
LEVEL_STYLE = {"critical": "bold red", "warning": "yellow", "ok": "green", "waiting": "dim"}
DEFAULT_INTERVAL = 10.0


class CloudState:
    """One cloud of the session: its config (its sections active), its runners and latest observations, and
    its silences (findings acknowledged for a while, `x`)."""

    def __init__(self, name: str, config: Config) -> None:
        self.name = name
        self.config = config
        self.runners: dict[str, CollectorRunner] = {}
        self.observations: dict[str, Observation] = {}
        self.silences: Silences = _silences()

    def intervals(self, slow: float | None = None) -> dict[str, float]:
        """Each running source's poll interval (no faster than `slow` for a cloud not on screen)."""
        return {name: max(float(r.collector.interval), slow or 0.0) for name, r in self.runners.items()}


def _silences() -> Silences:
    from tui.models.silence import Silences  # here: model modules load after the first paint

    return Silences()


@record
class Badge:
    """A cloud's health in the top bar: its worst finding's level, and whether some source is stale."""

    name: str
    level: str  # critical | warning | ok | waiting
    stale: bool  # some source's data is old or its last poll failed
    active: bool

    @property
    def text(self) -> str:
        word = LEVEL_WORD[self.level]
        if self.stale:
            word = "STALE" if self.level in ("ok", "waiting") else f"{word} STALE"
        return f"{self.name} {word}"

    def markup(self) -> str:
        style = "bold red" if self.stale and self.level == "ok" else LEVEL_STYLE[self.level]
        name = f"[b reverse] {escape(self.name)} [/]" if self.active else escape(self.name)
        word = self.text[len(self.name) + 1:]
        return f"{name} [{style}]{escape(word)}[/]"


def badge(name: str, observations: Mapping[str, Observation], now: float, intervals: Mapping[str, float],
          *, active: bool = False, silences: Silences | None = None) -> Badge:
    """The cloud's worst severity over the findings its latest judged poll shows (the triage hints included,
    silenced findings left out), and whether any source is stale."""
    level = "waiting" if not observations else "ok"
    stale = False
    from tui.models.judged import latest_view  # with the first poll's badge, after the first paint

    view = latest_view(observations)  # the findings the cloud's latest poll judged shown, hints included
    shown = view.shown if view is not None else [f for obs in observations.values() for f in obs.findings]
    for source, obs in observations.items():
        if obs.is_stale(now, intervals.get(source, DEFAULT_INTERVAL)) or obs.ok_at is None:
            stale = True
    if observations:
        for finding in shown:
            if silences is not None and _quiet(finding, silences, now):
                continue
            if finding.severity == "critical":
                level = "critical"
            elif finding.severity == "warning" and level != "critical":
                level = "warning"
    return Badge(name, level, stale, active)


def _quiet(finding: Finding, silences: Silences, now: float) -> bool:
    """Silenced, or a triage hint derived only from silenced findings (their cause, acknowledged with them)."""
    if silences.silenced(finding, now):
        return True
    derived = [tuple(k) for k in finding.evidence.get("derived_from", ())] if finding.kind.startswith("triage.") \
        else []
    active = silences.active(now)
    return bool(derived) and all(key in active for key in derived)


def badges_markup(badges: Iterable[Badge]) -> str:
    return "  ".join(b.markup() for b in badges)


def next_name(names: list[str], current: str, step: int = 1) -> str:
    """The cloud after (step=-1: before) `current`, wrapping around."""
    if current not in names:
        return names[0]
    return names[(names.index(current) + step) % len(names)]


def match_name(names: Iterable[str], typed: str) -> list[str]:
    """Clouds named `typed`, else those starting with it (for :cloud and its tab completion)."""
    names = list(names)
    if typed in names:
        return [typed]
    return [n for n in names if n.startswith(typed)]
