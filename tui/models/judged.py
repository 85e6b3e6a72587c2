"""The judgement of one poll: what every view of a source, and of a cloud, shows.

The runner builds it in its worker thread once per poll (tui.rules.judge): a SourceView per source (its
findings, its judged rows, its pane's status line) and, once per cloud per poll, a CloudView (the cross-source
triage hints, the findings shown, the triage row and the badge level). Panes, the triage row, drill-down
screens, `snapshot` and export read it; nothing judges again. Ages that tick between polls are formatted at
paint time from the judged timestamps; the verdicts (late, down, owner, severity) are the poll's.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from tui.freshness import human_age
from tui.models.finding import Finding, FindingDetail, Severity
from tui.models.observation import Observation
from tui.models.rabbitmq import QueueInfo
from tui.models.triage import TriageCell, TriageSummary

DEFAULT_INTERVAL = 10.0


@dataclass(frozen=True, slots=True)
class JudgedRow:
    """One row of a pane as judged at the poll. key: the pane's row key; subject: what findings about it name
    (a service's host, a server's id); state: "up" / "late" / "down" (a service), the phase or status (a
    server); owner: the pane's owner cell (a service's binary, "nova-compute@compute-01" for a server);
    severity: its worst finding's, None when none; owner_label: the owner as the finding words it ("nova-compute
    on compute-01")."""

    key: str
    subject: str
    state: str
    owner: str
    severity: Severity | None = None
    next_step: str = ""
    owner_label: str = ""


@dataclass(frozen=True, slots=True)
class SourceView:
    """One source's poll judged: findings, rows (by key, where the pane has rows), the pane's status line.
    detail: the source's own judged structure its pane paints from (the services pane: every section's rows
    with their verdicts as of the poll)."""

    source: str
    judged_at: float | None
    findings: tuple[Finding, ...] = ()
    rows: Mapping[str, JudgedRow] = field(default_factory=dict)
    status: str = ""
    detail: Any = None


@dataclass(frozen=True, slots=True)
class JudgedQueue:
    """One RabbitMQ queue as the poll judged it (SourceView.detail of the rabbitmq source: every queue, in pane
    order). subject: the findings' name for it; kind_label: what its name says ("service nova-compute", "reply",
    "fanout"...); severity: of the finding about it (or about its group, for a queue of the group); attention:
    worth the default view (messages waiting, a service queue nobody consumes, a finding)."""

    queue: QueueInfo
    subject: str
    kind_label: str
    severity: Severity | None
    attention: bool


@dataclass(frozen=True, slots=True)
class GaleraVerdict:
    """The Galera pane's verdict as the poll judged it (SourceView.detail of the galera source)."""

    text: str
    no_quorum: bool  # no Primary component, or no node answers: the line is red whatever the findings say
    arbitrator: str | None = None  # a configured arbitrator (garbd, no SQL row) counted in the Primary component


@dataclass(frozen=True, slots=True)
class CloudView:
    """One cloud judged after a poll of one of its sources. seq orders the views of one cloud (a later poll's
    is higher); hints: the cross-source triage hints; shown: the findings every view lists (the sources'
    findings minus those a hint absorbs, plus the hints, most severe first); summary: the triage row as of the
    poll (None when none of its sources runs); level: the badge's level before silences; details: every finding
    of the cloud (the sources' and the hints) read for the finding screen (owner, host, log, command), by key."""

    seq: int
    judged_at: float
    hints: tuple[Finding, ...] = ()
    shown: tuple[Finding, ...] = ()
    summary: TriageSummary | None = None
    level: str = "waiting"
    jumps: Mapping[tuple[str, str], tuple[str, str]] = field(default_factory=dict)
    details: Mapping[tuple[str, str], FindingDetail] = field(default_factory=dict)


def stale_text(obs: Observation, now: float) -> str:
    if obs.ok_at is None:
        return "ERROR (never read)"
    return f"STALE {human_age(obs.age(now))}"


def mark_stale(cell: TriageCell, obs: Observation, now: float) -> TriageCell:
    """The cell of a source whose data is older than its staleness mark: its last text, marked, level unknown."""
    return TriageCell(cell.name, cell.label, f"{cell.text} · {stale_text(obs, now)}", "unknown", cell.source,
                      stale=True)


def is_stale(obs: Observation, now: float, interval: float) -> bool:
    return obs.error is not None or obs.is_stale(now, interval)


def summary_at(summary: TriageSummary, observations: Mapping[str, Observation], now: float,
               intervals: Mapping[str, float]) -> TriageSummary:
    """The judged row as it reads at `now`: a cell whose source went stale since the poll says so (ages tick
    between polls; the verdicts are the poll's)."""
    cells = []
    changed = False
    for cell in summary.cells:
        obs = observations.get(cell.source)
        if (not cell.stale and obs is not None and obs.snapshot is not None
                and is_stale(obs, now, intervals.get(cell.source, DEFAULT_INTERVAL))):
            cell = mark_stale(cell, obs, now)
            changed = True
        cells.append(cell)
    return TriageSummary(tuple(cells)) if changed else summary


def latest_view(observations: Mapping[str, Observation]) -> CloudView | None:
    """The newest cloud view among a cloud's latest observations (each carries the view of its poll)."""
    views = [obs.cloud_view for obs in observations.values() if obs.cloud_view is not None]
    return max(views, key=lambda v: v.seq) if views else None
