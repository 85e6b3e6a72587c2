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
stale}]}. The JSON keeps its documented shape: {generated_at, sources, findings, data}.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any

from tui.jsonable import to_jsonable
from tui.models.finding import SEVERITY_ORDER, Finding, sort_findings, worst_severity
from tui.models.observation import Observation

if TYPE_CHECKING:  # the command line imports this module for its exit codes: the dashboard needs neither yet
    from tui.collectors.base import Collector

EXIT_OK, EXIT_WARNING, EXIT_CRITICAL, EXIT_UNKNOWN = 0, 1, 2, 3


LATE = "late:"


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
    from tui.runner import CollectorRunner

    runners = [CollectorRunner(c, clock=clock) for c in collectors]
    start, began = clock(), time.monotonic()
    tasks = [asyncio.ensure_future(r.run_once()) for r in runners]
    if not tasks:
        return []
    _, pending = await asyncio.wait(tasks, timeout=deadline)
    if not pending:
        await asyncio.gather(*(c.aclose() for c in collectors), return_exceptions=True)
        return [t.result() for t in tasks]
    for task in pending:
        task.cancel()
    await asyncio.wait(pending, timeout=1.0)
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
    return out


def late_sources(observations: list[Observation]) -> list[str]:
    """The sources a snapshot reported late (still running at its deadline)."""
    return [obs.source for obs in observations if (obs.error or "").startswith(LATE)]


def run_snapshot(collectors: list[Collector], deadline: float | None, named: float | None = None,
                 clock: Callable[[], float] = time.time) -> tuple[list[Observation], bool]:
    """collect_once on an event loop of its own: (observations, whether worker threads are still reading).
    asyncio.run would wait, on the way out, for every worker thread: a read the runner gave up on (its timeout)
    or a late source's would hold the answer until it ends. Here they get half a second; past that the loop is
    left as it is and the caller exits without them."""
    loop = asyncio.new_event_loop()
    observations = loop.run_until_complete(collect_once(collectors, deadline, named=named, clock=clock))
    if late_sources(observations):
        return observations, True
    try:
        loop.run_until_complete(loop.shutdown_asyncgens())
        loop.run_until_complete(asyncio.wait_for(loop.shutdown_default_executor(), 0.5))
    except TimeoutError:
        return observations, True
    loop.close()
    return observations, False


TRIAGE_SOURCES = ("services", "rabbitmq", "galera")


def all_findings(observations: list[Observation]) -> list[Finding]:
    """Every source's findings plus the triage hints derived from them, most severe first."""
    from tui.rules.triage import triage_hints, without_absorbed

    by_source = {obs.source: obs for obs in observations}
    hints = triage_hints(by_source)
    found = sort_findings(without_absorbed([f for obs in observations for f in obs.findings], hints) + hints)
    return sorted(found, key=lambda f: (SEVERITY_ORDER[f.severity], not f.kind.startswith("triage.")))


def triage_row(observations: list[Observation], thresholds: Any = None, now: float | None = None) -> Any:
    """The triage row (tui.models.triage.TriageSummary) for these observations, or None when none of its
    sources is configured."""
    if not any(obs.source in TRIAGE_SOURCES for obs in observations):
        return None
    from tui.config import Thresholds
    from tui.rules.triage import triage_summary

    at = datetime.fromtimestamp(time.time() if now is None else now, UTC)
    by_source = {obs.source: obs for obs in observations}
    return triage_summary(by_source, at, thresholds or Thresholds(), configured=set(by_source))


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
    }


def render_text(observations: list[Observation], thresholds: Any = None, now: float | None = None) -> Any:
    """A rich renderable: the triage row (judged at `now`, default the wall clock's), one line per source, then
    the findings (hints first)."""
    from rich.console import Group
    from rich.table import Table
    from rich.text import Text

    from tui.safetext import clean, text

    parts: list[Any] = []
    if not observations:
        parts.append(Text("No source is configured: see config.example.toml, or try --demo.", style="yellow"))
    row = triage_row(observations, thresholds, now)
    if row is not None:
        styles_by_level = {"ok": "green", "warning": "yellow", "critical": "bold red", "unknown": "dim"}
        line = Text("triage  ", style="bold")
        for i, cell in enumerate(row.cells):
            if i:
                line.append("  |  ", style="dim")
            line.append(clean(cell.label) + " ", style="bold")
            line.append(clean(cell.text), style=styles_by_level.get(cell.level, ""))
        parts.append(line)
    src = Table(title="Sources", show_edge=False, expand=False)
    for col in ("source", "status", "took"):
        src.add_column(col)
    for obs in observations:
        status = Text("ok", style="green") if obs.ok else text(f"ERROR {obs.error}", style="bold red")
        took = "" if obs.duration_s is None else f"{obs.duration_s:.2f}s"
        src.add_row(text(obs.source), status, took)
    parts.append(src)
    findings = all_findings(observations)
    if findings:
        table = Table(title="Findings", show_edge=False, expand=True)
        for col in ("severity", "kind", "subject", "summary", "next step"):
            table.add_column(col, overflow="fold")
        styles = {"critical": "bold red", "warning": "yellow", "info": "cyan"}
        for f in findings:
            table.add_row(Text(f.severity.upper(), style=styles[f.severity]), text(f.kind), text(f.subject),
                          text(f.summary), text(f.next_step))
        parts.append(table)
    elif observations:
        parts.append(Text("No findings.", style="green"))
    return Group(*parts)
