"""`stacktop snapshot`: collect every configured source once, concurrently, and report.

Exit codes follow the Nagios/Icinga plugin convention: 0 OK, 1 WARNING, 2 CRITICAL (the worst finding),
3 UNKNOWN (a source could not be read, or a config/usage error).

Deadline: every read has its own (tui.deadline), and the whole collection has one more, `[snapshot] deadline`
/ `--deadline` (30 s): a source still running then is reported late (its error starts with LATE), the report
holds what came in, and the caller exits 3 without waiting for the late reads' threads (a Nagios check must
always get its answer).

The triage hints (tui.rules.triage: `triage.*` findings, source "triage", citing the findings they derive
from) are part of the findings list, and so of the exit code. When a source the triage row reads is present
(services, rabbitmq, galera), `data["triage"]` holds the row: {"cells": [{name, label, text, level, source,
stale}]}. `judged` holds each source's judged rows (state, owner, severity, next step per row) and status line.
The JSON keeps its documented shape: {generated_at, sources, findings, data, judged}. Every format reads the
judgement the runners made of the collection (tui.models.judged), computed once.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any

from tui.jsonable import to_jsonable
from tui.models.finding import Finding, worst_severity
from tui.models.observation import Observation

if TYPE_CHECKING:  # the command line imports this module for its exit codes: the dashboard needs neither yet
    from tui.collectors.base import Collector
    from tui.models.judged import CloudView

EXIT_OK, EXIT_WARNING, EXIT_CRITICAL, EXIT_UNKNOWN = 0, 1, 2, 3


LATE = "late:"
CLOSE_S = 0.5  # the collectors' aclose after every answer is in, at most


async def collect_once(collectors: list[Collector], deadline: float | None = None, *,
                       named: float | None = None, clock: Callable[[], float] = time.time) -> list[Observation]:
    """One attempt per collector, all at once, each under its own timeout, all within `deadline` seconds
    (None: no overall deadline). A collector still running at the deadline is cancelled and reported late
    (its error names the deadline `named`, default `deadline`); then the collectors are not closed (a close
    could wait on a read in flight). clock: the time the rules judge the answers at (the simulated cloud's
    for `snapshot --demo`)."""
    for collector in collectors:
        prepare = getattr(collector, "prepare_oneshot", None)
        if callable(prepare):
            prepare()
    from tui.config import Thresholds
    from tui.rules.judge import CloudJudge
    from tui.runner import CollectorRunner

    judge = CloudJudge(Thresholds(), configured={c.name for c in collectors})
    runners = [CollectorRunner(c, clock=clock, judge=judge) for c in collectors]
    start, began = clock(), time.monotonic()
    tasks = [asyncio.ensure_future(r.run_once()) for r in runners]
    if not tasks:
        return []
    _, pending = await asyncio.wait(tasks, timeout=deadline)
    if not pending:
        # bounded: a close that would wait on a read still in flight (given up on by its runner) is left undone
        left = CLOSE_S if deadline is None else min(CLOSE_S, deadline - (time.monotonic() - began))
        await asyncio.wait([asyncio.ensure_future(c.aclose()) for c in collectors], timeout=max(0.05, left))
        return [t.result() for t in tasks]
    for task in pending:
        task.cancel()
    await asyncio.wait(pending, timeout=0.2)
    out = []
    for runner, task in zip(runners, tasks, strict=True):
        if task in pending or task.cancelled():
            hint = getattr(runner.collector, "timeout_hint", None)
            error = f"{LATE} no answer within the {named or deadline:g}s deadline of stacktop snapshot" + \
                (f" - {hint}" if isinstance(hint, str) and hint else "")
            out.append(Observation(source=runner.name, error=error, tried_at=start,
                                   duration_s=time.monotonic() - began))
        else:
            out.append(task.result())
    return judged_once(out, clock())


def judged_once(observations: list[Observation], now: float, thresholds: Any = None) -> list[Observation]:
    """The observations with one cloud view over all of them (a late source's error included), as the
    dashboard's runner judges a cloud after a poll: every report format reads it."""
    import dataclasses

    from tui.config import Thresholds
    from tui.rules.judge import judge_cloud

    by_source = {obs.source: obs for obs in observations}
    seq = max((obs.cloud_view.seq for obs in observations if obs.cloud_view is not None), default=0) + 1
    view = judge_cloud(by_source, now, thresholds or Thresholds(), configured=set(by_source), seq=seq)
    return [dataclasses.replace(obs, cloud_view=view) for obs in observations]


def cloud_view(observations: list[Observation], thresholds: Any = None, now: float | None = None) -> CloudView:
    """The cloud view the observations carry (judged once, after the collection); observations made by other
    means (a test, a journal) are judged here, once."""
    from tui.models.judged import latest_view

    by_source = {obs.source: obs for obs in observations}
    view = latest_view(by_source)
    if view is not None and all(obs.cloud_view is view for obs in observations):
        return view
    judged = judged_once(observations, time.time() if now is None else now, thresholds)
    from tui.models.judged import CloudView

    return judged[0].cloud_view if judged else CloudView(0, time.time() if now is None else now)


def late_sources(observations: list[Observation]) -> list[str]:
    """The sources a snapshot reported late (still running at its deadline)."""
    return [obs.source for obs in observations if (obs.error or "").startswith(LATE)]


def run_snapshot(collectors: list[Collector], deadline: float | None, named: float | None = None,
                 clock: Callable[[], float] = time.time) -> tuple[list[Observation], bool]:
    """collect_once on an event loop of its own: (observations, whether the caller must exit without waiting:
    a late source's task or a close left undone, or a thread the interpreter would join). asyncio.run would
    wait on the way out for every worker thread, and a read the runner gave up on (its timeout) or a late
    source's may never end (a trickled answer): the loop's default executor is tui.abandon's, daemon threads
    that never hold the exit, and the loop is left as it is when anything is still running."""
    from tui.abandon import install, stuck_threads

    loop = asyncio.new_event_loop()
    install(loop)  # reads in daemon threads: one given up on never holds the exit
    observations = loop.run_until_complete(collect_once(collectors, deadline, named=named, clock=clock))
    if late_sources(observations):
        return observations, True
    try:
        loop.run_until_complete(loop.shutdown_asyncgens())
        loop.run_until_complete(asyncio.wait_for(loop.shutdown_default_executor(), 0.5))
    except TimeoutError:
        return observations, True
    if any(not task.done() for task in asyncio.all_tasks(loop)):  # a close left undone
        return observations, True
    loop.close()
    return observations, bool(stuck_threads())


TRIAGE_SOURCES = ("services", "rabbitmq", "galera")


def all_findings(observations: list[Observation]) -> list[Finding]:
    """Every source's findings (minus those a hint absorbs) plus the triage hints derived from them, most
    severe first: the judged cloud view's."""
    return list(cloud_view(observations).shown)


def triage_row(observations: list[Observation], thresholds: Any = None, now: float | None = None) -> Any:
    """The triage row (tui.models.triage.TriageSummary) for these observations as judged, marked STALE where
    a source's data is old at `now`, or None when none of its sources is configured."""
    if not any(obs.source in TRIAGE_SOURCES for obs in observations):
        return None
    from tui.models.judged import summary_at

    view = cloud_view(observations, thresholds, now)
    if view.summary is None:
        return None
    by_source = {obs.source: obs for obs in observations}
    return summary_at(view.summary, by_source, time.time() if now is None else now, {})


def judged_rows(observations: list[Observation]) -> dict[str, Any]:
    """Each source's judged rows and status line (tui.models.judged.SourceView), for the JSON report."""
    out: dict[str, Any] = {}
    for obs in observations:
        view = obs.view
        if view is None or not view.rows:
            continue
        out[obs.source] = {"status": view.status,
                           "rows": [{"key": r.key, "subject": r.subject, "state": r.state, "owner": r.owner,
                                     "owner_label": r.owner_label, "severity": r.severity,
                                     "next_step": r.next_step} for r in view.rows.values()]}
    return out


def exit_code(observations: list[Observation]) -> int:
    if not observations or any(not obs.ok for obs in observations):
        return EXIT_UNKNOWN
    worst = worst_severity(all_findings(observations))
    return {"critical": EXIT_CRITICAL, "warning": EXIT_WARNING}.get(worst or "", EXIT_OK)


def _iso(epoch: float | None) -> str | None:
    return None if epoch is None else datetime.fromtimestamp(epoch, UTC).isoformat()


def to_report(observations: list[Observation], generated_at: float | None = None,
              thresholds: Any = None) -> dict[str, Any]:
    """thresholds: tui.config.Thresholds the triage row judges heartbeats with (default: the defaults)."""
    generated_at = time.time() if generated_at is None else generated_at
    data = {obs.source: to_jsonable(obs.snapshot) for obs in observations}
    row = triage_row(observations, thresholds, generated_at)
    if row is not None:
        data["triage"] = to_jsonable(row)
    return {
        "generated_at": _iso(generated_at),
        "sources": {
            obs.source: {
                "ok": obs.ok,
                "error": obs.error,
                "last_ok": _iso(obs.ok_at),
                "duration_s": None if obs.duration_s is None else round(obs.duration_s, 3),
            }
            for obs in observations
        },
        "findings": [f.to_dict() for f in all_findings(observations)],
        "data": data,
        "judged": judged_rows(observations),
    }
