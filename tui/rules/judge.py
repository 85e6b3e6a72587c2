"""Builds the poll's judgement (tui.models.judged): once per source per poll, once per cloud per poll.

The runner calls these in its worker thread after a poll: `judge_source` judges the source's rows (a service's
state as of the poll and the findings about it; a server's phase, owner and stuck finding), `CloudJudge.judge`
the cloud (the cross-source hints, the findings shown, the triage row, the badge level). Views read the result;
no rule runs again in a widget, a screen or the snapshot. Nothing here keeps a memo between calls: a judgement
is computed once and carried by the observation.
"""

from __future__ import annotations

import threading
from collections.abc import Collection, Iterable, Mapping
from dataclasses import replace
from datetime import UTC, datetime
from typing import Any

from tui.models.finding import SEVERITY_ORDER, Finding, Severity, is_group
from tui.models.galera import GaleraSnapshot
from tui.models.instances import InstancesSnapshot
from tui.models.judged import DEFAULT_INTERVAL, CloudView, GaleraVerdict, JudgedQueue, JudgedRow, SourceView
from tui.models.observation import Observation
from tui.models.rabbitmq import RabbitSnapshot
from tui.models.services import SectionRead, ServiceRow, ServicesSnapshot
from tui.models.triage import TRIAGE_SOURCES
from tui.rules.finding_detail import finding_detail
from tui.rules.grouping import GROUP_AT, group_floods, group_jump
from tui.rules.liveness import Liveness, assess_section, down_time_for, row_rank
from tui.rules.queue_groups import GROUP_KIND, group_key
from tui.rules.queue_names import classify_queue, queue_subject
from tui.rules.queues import queue_sort_key
from tui.rules.quorum import NO_QUORUM_VERDICT, arbitrator_view, verdict
from tui.rules.stuck import instance_owner, owner_cell
from tui.rules.triage import jump_target, triage_hints, triage_summary, without_absorbed

# one section judged as of the poll: (the section, its down time, every row with its verdict then)
SectionAtPoll = tuple[SectionRead, float, tuple[tuple[ServiceRow, Liveness], ...]]


def assess_services(snapshot: ServicesSnapshot, now: datetime, thresholds: Any) -> tuple[SectionAtPoll, ...]:
    """Every section's rows judged as of the poll (rows of a stale section as of their read)."""
    return tuple((section, down_time_for(section.name, thresholds), tuple(assess_section(section, now, thresholds)))
                 for section in snapshot.sections if section.deployed or section.rows)


def _worst(severities: Iterable[Severity]) -> Severity | None:
    found = list(severities)
    if not found:
        return None
    return min(found, key=lambda s: SEVERITY_ORDER[s])


def _service_key(binary: str, host: str) -> tuple[str, str]:
    return (binary, host.split("@")[0])


def _about_services(findings: Iterable[Finding]) -> dict[tuple[str, str], list[Finding]]:
    """(binary, host) -> the findings about that process (a fleet finding: about each host it names)."""
    out: dict[tuple[str, str], list[Finding]] = {}
    for f in findings:
        binary = f.evidence.get("binary") or f.evidence.get("service")
        hosts = [f.evidence["host"]] if f.evidence.get("host") else list(f.evidence.get("hosts") or ())
        if not binary:
            continue
        for host in hosts:
            out.setdefault(_service_key(str(binary), str(host)), []).append(f)
    return out


def service_rows(sections: Iterable[SectionAtPoll], findings: Iterable[Finding]) -> dict[str, JudgedRow]:
    about = _about_services(findings)
    rows: dict[str, JudgedRow] = {}
    for _section, _down_time, judged in sections:
        for row, live in judged:
            told = about.get(_service_key(row.binary, row.host), [])
            worst = _worst(f.severity for f in told)
            step = next((f.next_step for f in told if f.severity == worst), "")
            rows[row.key] = JudgedRow(row.key, row.host.split("@")[0], live.label, row.binary, worst, step)
    return rows


def services_status(sections: Iterable[SectionAtPoll]) -> str:
    """The services pane's status line: down and late counts over the enabled services."""
    total = down = late = 0
    for _section, _down_time, judged in sections:
        for row, live in judged:
            total += 1
            down += int(live.down and row.enabled)
            late += int(live.late)
    parts = [f"{total} services"]
    if down:
        parts.append(f"{down} down")
    if late:
        parts.append(f"{late} late")
    return ", ".join(parts)


def instance_rows(snapshot: InstancesSnapshot, findings: Iterable[Finding]) -> dict[str, JudgedRow]:
    """The servers worth attention (the snapshot's attention subset and every server a finding names): each
    one's state (its phase, else its status), owner and worst finding. A server in no phase and not ERROR owns
    nothing: it has no row here, and every view shows no owner for it."""
    about: dict[str, list[Finding]] = {}
    for f in findings:
        if f.kind.startswith("instance."):
            about.setdefault(f.subject, []).append(f)
    wanted = {s.id: s for s in snapshot.attention}
    if about.keys() - wanted.keys():
        wanted.update({s.id: s for s in snapshot.servers if s.id in about})
    rows: dict[str, JudgedRow] = {}
    for server in wanted.values():
        told = about.get(server.id, [])
        worst = _worst(f.severity for f in told)
        step = next((f.next_step for f in told if f.severity == worst), "")
        owned = instance_owner(server)
        rows[server.id] = JudgedRow(server.id, server.id, server.phase or server.status, owner_cell(server), worst,
                                    step, owned.label if owned is not None else "")
    return rows


QUEUE_KINDS = ("rabbitmq.queue_no_consumer", "rabbitmq.quorum_lost", "rabbitmq.queue_down")


def judge_queues(snapshot: RabbitSnapshot, findings: Iterable[Finding] = ()) -> tuple[JudgedQueue, ...]:
    """Every queue in pane order (zero-consumer first, fullest first), with what its name says, the severity
    of the finding about it (or its group's, for a queue of a group finding) and whether it is worth attention."""
    findings = list(findings)
    severity = {f.subject: f.severity for f in findings if f.kind in QUEUE_KINDS}
    grouped = {group_key(f.evidence): f.severity for f in findings if f.kind == GROUP_KIND}
    flagged = {f.subject for f in findings}
    out = []
    for q in sorted(snapshot.queues, key=queue_sort_key):
        kind = classify_queue(q.name)
        subject = queue_subject(q)
        sev = severity.get(subject)
        if sev is None and grouped and q.no_consumer_with_messages:  # one of a group's queues
            sev = grouped.get((q.vhost, kind.cls, (kind.topic or "") if kind.cls == "fanout" else ""))
        label = f"service {kind.service}" if kind.cls == "service" and kind.service else kind.cls
        attention = (q.messages or 0) > 0 or subject in flagged or (q.consumers == 0 and kind.cls == "service")
        out.append(JudgedQueue(q, subject, label, sev, attention))
    return tuple(out)


def _table_order(judged: tuple[ServiceRow, Liveness]) -> tuple[int, str, str]:
    row, live = judged
    return (row_rank(live, row), row.binary, row.host)


def judge_source(obs: Observation, thresholds: Any, sections: tuple[SectionAtPoll, ...] | None = None
                 ) -> SourceView:
    """The source's view of this poll. sections: the services rows already judged for this poll's findings
    (assess_services), so they are judged once."""
    snap = obs.snapshot
    at = datetime.fromtimestamp(obs.ok_at if obs.ok_at is not None else obs.tried_at or 0.0, UTC)
    if isinstance(snap, ServicesSnapshot):
        if sections is None:
            sections = assess_services(snap, at, thresholds)
        ordered = tuple((section, down_time, tuple(sorted(rows, key=_table_order)))
                        for section, down_time, rows in sections)
        return SourceView(obs.source, obs.ok_at, obs.findings, service_rows(sections, obs.findings),
                          services_status(sections), ordered)
    if isinstance(snap, InstancesSnapshot):
        return SourceView(obs.source, obs.ok_at, obs.findings, instance_rows(snap, obs.findings))
    if isinstance(snap, RabbitSnapshot):
        return SourceView(obs.source, obs.ok_at, obs.findings, detail=judge_queues(snap, obs.findings))
    if isinstance(snap, GaleraSnapshot):
        judged = galera_verdict(snap)
        return SourceView(obs.source, obs.ok_at, obs.findings, status=judged.text, detail=judged)
    return SourceView(obs.source, obs.ok_at, obs.findings)


def galera_verdict(snap: GaleraSnapshot) -> GaleraVerdict:
    text = verdict(snap)
    arbitrator = arbitrator_view(snap)
    present = arbitrator.name if arbitrator is not None and not arbitrator.missing else None
    return GaleraVerdict(text, text.startswith((NO_QUORUM_VERDICT, "NO DATA")), present)


def sort_shown(findings: Iterable[Finding]) -> list[Finding]:
    """Most severe first, hints first within a severity, then kind and subject; one per (kind, subject)."""
    best: dict[tuple[str, str], Finding] = {}
    for f in findings:
        have = best.get(f.key)
        if have is None or SEVERITY_ORDER[f.severity] < SEVERITY_ORDER[have.severity]:
            best[f.key] = f
    return sorted(best.values(), key=lambda f: (SEVERITY_ORDER[f.severity], not f.kind.startswith("triage."),
                                                f.kind, f.subject))


Grouped = dict[int, tuple[tuple[Finding, ...], list[Finding]]]  # id(a source's findings) -> (them, grouped)


def _findings_grouped(observations: Mapping[str, Observation], hints: Iterable[Finding],
                      kept_groups: Grouped | None) -> list[Finding]:
    """Every source's findings, a source's flood already grouped (tui.rules.grouping), each source's grouped
    once per observation: a flood of one source costs each later judgement (a poll of any source) what its
    group is, not a pass over its thousands of findings. When a hint absorbs findings, they are taken one by
    one (a hint stands in for findings by their subjects). kept_groups: the judge's memo (None: none)."""
    if any(h.evidence.get("absorbs") for h in hints):
        return [f for obs in observations.values() for f in obs.findings]
    out: list[Finding] = []
    for obs in observations.values():
        found = obs.findings
        if len(found) < GROUP_AT:
            out.extend(found)
            continue
        kept = kept_groups.get(id(found)) if kept_groups is not None else None
        if kept is None or kept[0] is not found:
            kept = (found, group_floods(found))
            if kept_groups is not None:
                if len(kept_groups) >= 4 * len(observations):  # the groups of observations no longer latest
                    kept_groups.clear()
                kept_groups[id(found)] = kept
        out.extend(kept[1])
    return out


def _judged_services(obs: Observation | None) -> dict[str, Any] | None:
    """The services rows the services poll judged (its view), by section name."""
    if obs is None:
        return None
    detail = getattr(obs.view, "detail", None)
    if not isinstance(detail, tuple) or obs.view.judged_at != obs.ok_at:
        return None
    return {section.name: judged for section, _down_time, judged in detail}


def badge_level(shown: Iterable[Finding], observations: Mapping[str, Observation]) -> str:
    if not observations:
        return "waiting"
    worst = _worst(f.severity for f in shown)
    return worst if worst in ("critical", "warning") else "ok"


def judge_cloud(observations: Mapping[str, Observation], now: float, thresholds: Any, *,
                configured: Collection[str] | None = None, intervals: Mapping[str, float] | None = None,
                seq: int = 0, kept_groups: Grouped | None = None) -> CloudView:
    """The cloud's view at `now` over its sources' latest observations. kept_groups: the cloud judge's memo
    of each source's grouped findings (a flood is grouped once per observation, not at every judgement)."""
    hints = triage_hints(observations)
    shown = group_floods(sort_shown(without_absorbed(_findings_grouped(observations, hints, kept_groups), hints)
                                    + hints))
    summary = None
    if configured is None or any(s in configured for s in TRIAGE_SOURCES) or \
            any(s in observations for s in TRIAGE_SOURCES):
        summary = triage_summary(observations, datetime.fromtimestamp(now, UTC), thresholds,
                                 configured=configured, intervals=intervals,
                                 judged_rows=_judged_services(observations.get("services")))
    # the finding screen's reading of each finding shown (the most severe of a key); one inside a group is read
    # when its screen opens (tui.drilldowns.finding_reading), so a flood costs what is shown, not what exists
    details: dict[tuple[str, str], Any] = {}
    for f in shown:
        if f.key not in details:
            details[f.key] = finding_detail(f)
    return CloudView(seq, now, tuple(hints), tuple(shown), summary, badge_level(shown, observations),
                     {f.key: group_jump(f) if is_group(f) else jump_target(f) for f in shown}, details)


class CloudJudge:
    """One cloud's judge: the latest observation of each of its sources, and the cloud view after each poll.
    Runners of the cloud call `judge` from their worker threads; the views it returns are numbered in the
    order they were judged (CloudView.seq), so the newest is known whatever order they arrive in."""

    def __init__(self, thresholds: Any, *, configured: Collection[str] | None = None,
                 intervals: Mapping[str, float] | None = None) -> None:
        self.thresholds = thresholds
        self.configured = set(configured) if configured is not None else None
        self.intervals = dict(intervals or {})
        self._lock = threading.Lock()
        self._latest: dict[str, Observation] = {}
        self._seq = 0
        self._groups: Grouped = {}

    def judge(self, obs: Observation, now: float) -> CloudView:
        with self._lock:
            self._latest[obs.source] = obs
            self._seq += 1
            return judge_cloud(dict(self._latest), now, self.thresholds, configured=self.configured,
                               intervals=self.intervals or {s: DEFAULT_INTERVAL for s in self._latest},
                               seq=self._seq, kept_groups=self._groups)


def judged(obs: Observation, thresholds: Any, judge: CloudJudge | None, now: float,
           sections: tuple[SectionAtPoll, ...] | None = None) -> Observation:
    """The observation with its source view and (given the cloud's judge) its cloud view."""
    obs = replace(obs, view=judge_source(obs, thresholds, sections))
    if judge is not None:
        obs = replace(obs, cloud_view=judge.judge(obs, now))
    return obs
