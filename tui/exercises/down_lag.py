"""Compute-down lag (a number worth remembering): how long the cloud takes to notice a dead service.

Pure: `DownLag.observe(sample)` is fed each poll of the service's row (GET /os-services?host=&binary=) with
the local time the answer arrived; `observe_server(server, at)` each server seen on that host.

What it measures (nova's rule, nova/servicegroup/drivers/db.py: up while `now - last_seen_up <= service_down_time`):
- failure time: the operator's mark ("I stopped it now") or, without one, the last heartbeat (`updated_at`
  stops moving when the service dies);
- the API's flip: the first poll answering `down` (the flip happened after the last poll answering `up`), and
  the moment nova's rule predicts (last heartbeat + service_down_time): a prediction outside the observed
  window means nova's service_down_time differs from the one stacktop was given;
- the report interval as observed (the step between successive heartbeats while the service was up);
- servers on that host: the sequence of states each went through (a BootTrace each), where it stopped, and
  the fault once nova gives up.
"""

from __future__ import annotations

import itertools
import statistics
from dataclasses import dataclass, field
from typing import Any

from tui.exercises import ExerciseResult, iso, md_cell, md_code, md_table, stamp
from tui.exercises.boot_trace import BootTrace
from tui.models.instances import Server

CLOCK_TOLERANCE_S = 1.5  # API Date header resolution (1 s) plus scheduling noise


@dataclass(frozen=True)
class ServiceSample:
    """One poll of the service. at: local epoch when the answer arrived; updated_at: the heartbeat (epoch);
    api_date: the answer's Date header (epoch, 1 s resolution) when there was one."""

    at: float
    state: str
    status: str = "enabled"
    updated_at: float | None = None
    forced_down: bool = False
    api_date: float | None = None
    found: bool = True


@dataclass
class DownLag:
    host: str
    service_down_time: float
    interval: float
    binary: str = "nova-compute"
    started_at: float | None = None
    marked_at: float | None = None
    samples: int = 0
    heartbeats: list[float] = field(default_factory=list)  # distinct updated_at values, in order seen
    last_up_poll: float | None = None
    first_down_poll: float | None = None
    down_at_start: bool = False
    back_up_poll: float | None = None
    skews: list[float] = field(default_factory=list)
    servers: dict[str, BootTrace] = field(default_factory=dict)
    stopped_at: float | None = None
    stop_reason: str | None = None
    forced_down: bool = False
    missing: bool = False
    dashboard_seen_at: float | None = None  # the dashboard's services source first raised the host's down finding
    dashboard_finding: str | None = None
    named_at: float | None = None  # stacktop first named the process as failing (any source: the bus, the heartbeat)
    named_by: str | None = None
    notes: list[str] = field(default_factory=list)

    # ------------------------------------------------------------------------------------------ input
    def mark(self, at: float) -> None:
        """The operator stopped the service at `at` (pressed the key right after stopping it)."""
        self.marked_at = at

    def observe(self, s: ServiceSample) -> None:
        if self.started_at is None:
            self.started_at = s.at
        self.samples += 1
        if not s.found:
            self.missing = True
            return
        if s.api_date is not None:
            self.skews.append(s.at - s.api_date)
        if s.updated_at is not None and (not self.heartbeats or s.updated_at > self.heartbeats[-1]):
            self.heartbeats.append(s.updated_at)
        down = s.state == "down" or s.forced_down
        if down:
            self.forced_down = self.forced_down or s.forced_down
            if self.first_down_poll is None:
                self.first_down_poll = s.at
                self.down_at_start = self.last_up_poll is None
        else:
            if self.first_down_poll is None:
                self.last_up_poll = s.at
            elif self.back_up_poll is None:
                self.back_up_poll = s.at

    def observe_server(self, server: Server, at: float, latency_s: float = 0.0) -> None:
        trace = self.servers.get(server.id)
        if trace is None:
            trace = self.servers[server.id] = BootTrace(interval=self.interval, server_id=server.id,
                                                        started_at=at)
        trace.observe(server, at, latency_s)

    def server_gone(self, server_id: str, at: float) -> None:
        if server_id in self.servers:
            self.servers[server_id].gone(at)

    def dashboard_saw(self, at: float, kind: str) -> None:
        """The dashboard's own services poll raised `kind` about this host at `at` (first time only)."""
        if self.dashboard_seen_at is None:
            self.dashboard_seen_at, self.dashboard_finding = at, kind

    def dashboard_named(self, at: float, kind: str) -> None:
        """A finding of the dashboard named this process on this host as failing at `at` (first time only): a
        lost consumer on its queue, a late heartbeat, or its down finding."""
        if self.named_at is None:
            self.named_at, self.named_by = at, kind

    @property
    def named_lag_s(self) -> float | None:
        failure, _ = self.failure_at
        if failure is None or self.named_at is None:
            return None
        return self.named_at - failure

    def stop(self, at: float, reason: str) -> None:
        if self.stopped_at is None:
            self.stopped_at = at
            self.stop_reason = reason
            for trace in self.servers.values():
                trace.finish("stopped", at)

    # -------------------------------------------------------------------------------------- measures
    @property
    def down_seen(self) -> bool:
        return self.first_down_poll is not None

    @property
    def last_heartbeat(self) -> float | None:
        """The last heartbeat before the service went down (the newest one seen before the first down)."""
        if not self.heartbeats:
            return None
        if self.first_down_poll is None:
            return self.heartbeats[-1]
        before = [h for h in self.heartbeats if h <= self.first_down_poll]
        return before[-1] if before else self.heartbeats[0]

    @property
    def report_interval(self) -> float | None:
        """Median step between successive heartbeats seen while up (None with fewer than two)."""
        beats = [h for h in self.heartbeats if self.first_down_poll is None or h <= self.first_down_poll]
        steps = [b - a for a, b in itertools.pairwise(beats) if b - a > 0.5]
        return round(statistics.median(steps), 1) if steps else None

    @property
    def failure_at(self) -> tuple[float | None, str]:
        if self.marked_at is not None:
            return self.marked_at, "operator's mark"
        return self.last_heartbeat, "last heartbeat"

    @property
    def predicted_flip(self) -> float | None:
        hb = self.last_heartbeat
        return None if hb is None else hb + self.service_down_time

    @property
    def lag_s(self) -> float | None:
        """From the failure (mark, else last heartbeat) to the first poll that saw `down`."""
        failure, _ = self.failure_at
        if failure is None or self.first_down_poll is None or self.down_at_start:
            return None
        return self.first_down_poll - failure

    @property
    def lag_from_heartbeat_s(self) -> float | None:
        hb = self.last_heartbeat
        if hb is None or self.first_down_poll is None or self.down_at_start:
            return None
        return self.first_down_poll - hb

    @property
    def flip_window(self) -> tuple[float | None, float | None]:
        """(last poll answering up, first poll answering down): the API flipped in between."""
        return self.last_up_poll, self.first_down_poll

    @property
    def skew_s(self) -> float | None:
        return round(statistics.median(self.skews), 1) if self.skews else None

    def timers_consistent(self) -> bool | None:
        """Does nova's flip agree with stacktop's service_down_time? None when it cannot be told."""
        pred = self.predicted_flip
        lo, hi = self.flip_window
        if pred is None or lo is None or hi is None:
            return None
        return lo - CLOCK_TOLERANCE_S <= pred <= hi + CLOCK_TOLERANCE_S

    def stopped_in(self, trace: BootTrace) -> str:
        """The state a server stopped in: its last state before it settled (ACTIVE/ERROR) or the trace ended."""
        if not trace.steps:
            return "-"
        unsettled = [s for s in trace.steps if not (s.status in ("ACTIVE", "ERROR", "DELETED") and not s.task_state)]
        return (unsettled or trace.steps)[-1].label

    # ---------------------------------------------------------------------------------------- report
    def timers_text(self) -> str:
        ri = self.report_interval
        ri_text = f"report_interval ~{ri:g} s (observed between heartbeats)" if ri else \
            "report_interval not observed (fewer than two heartbeats seen)"
        return (f"service_down_time {self.service_down_time:g} s (stacktop's [thresholds] service_down_time; "
                f"nova uses its own nova.conf value), {ri_text}, polled every {self.interval:g} s")

    def summary(self) -> str:
        who = f"{self.binary} on {self.host}"
        if self.missing and not self.down_seen:
            return f"{who}: no such service in the API"
        if not self.down_seen:
            return f"{who}: not seen down (stopped: {self.stop_reason or 'running'}); {self.timers_text()}"
        if self.down_at_start:
            return f"{who} was already down when the trace started; {self.timers_text()}"
        basis = self.failure_at[1]
        lag = self.lag_s
        lag_text = f"{lag:.1f} s after the {basis}" if lag is not None else "lag unknown"
        bits = [f"{who}: the API reported down {lag_text}"]
        if self.named_lag_s is not None:
            bits.append(f"stacktop named it {self.named_lag_s:.1f} s after the {basis} ({self.named_by})")
        if self.marked_at is not None and self.lag_from_heartbeat_s is not None:
            bits.append(f"{self.lag_from_heartbeat_s:.1f} s after the last heartbeat")
        bits.append(self.timers_text())
        stuck = [f"{t.name or t.server_id[:8] if t.server_id else '?'} stopped in {self.stopped_in(t)}"
                 for t in self.servers.values()]
        if stuck:
            bits.append("; ".join(stuck))
        return "; ".join(bits)

    def markdown(self) -> str:
        failure, basis = self.failure_at
        lo, hi = self.flip_window
        rows: list[tuple[Any, ...]] = [
            ("operator's mark (service stopped)", stamp(self.marked_at), "-" if self.marked_at is None else "0.0 s"),
            ("last heartbeat (updated_at)", stamp(self.last_heartbeat), _rel(self.last_heartbeat, failure)),
            ("last poll answering up", stamp(lo), _rel(lo, failure)),
            ("nova's rule: last heartbeat + service_down_time", stamp(self.predicted_flip),
             _rel(self.predicted_flip, failure)),
            ("API first reported down (first poll answering down)", stamp(hi), _rel(hi, failure)),
            (f"stacktop named the process ({self.named_by or 'no finding yet'})", stamp(self.named_at),
             _rel(self.named_at, failure)),
            (f"dashboard raised {self.dashboard_finding or 'its down finding'} (services pane poll)",
             stamp(self.dashboard_seen_at), _rel(self.dashboard_seen_at, failure)),
            ("back up (first poll answering up again)", stamp(self.back_up_poll), _rel(self.back_up_poll, failure)),
        ]
        lines = [f"{md_code(self.binary)} on {md_code(self.host)}; times relative to the **{basis}** "
                 f"({stamp(failure)}).", ""]
        lines += md_table(("moment", "time (UTC)", "after failure"), rows)
        lines.append("")
        if self.down_at_start:
            lines.append("The service was already down at the first poll: the lag cannot be measured.")
        elif self.lag_s is not None:
            lines.append(f"**Lag: {self.lag_s:.1f} s** from the {basis} to the API reporting `down` "
                         f"(the flip happened between {_rel(lo, failure)} and {_rel(hi, failure)}; "
                         f"resolution {self.interval:g} s).")
            if self.marked_at is not None and self.lag_from_heartbeat_s is not None:
                lines.append(f"From the last heartbeat: {self.lag_from_heartbeat_s:.1f} s.")
        elif not self.down_seen:
            reason = md_cell(self.stop_reason or 'not stopped')
            lines.append(f"The API never reported `down` during the trace ({reason}).")
        lines += ["", f"Timers in force: {self.timers_text()}."]
        ok = self.timers_consistent()
        if ok is False:
            lines.append(f"**The flip does not match service_down_time = {self.service_down_time:g} s**: nova's "
                         "service_down_time differs from stacktop's [thresholds] service_down_time; align them.")
        elif ok:
            lines.append("The flip matches nova's rule with that service_down_time.")
        if self.skew_s is not None and abs(self.skew_s) >= 2:
            lines.append(f"Clock: the API's Date header differs from stacktop's clock by {self.skew_s:+.0f} s.")
        if self.forced_down:
            lines.append("The service was *forced down* (forced_down=true): that is immediate, not a timeout.")
        if self.servers:
            lines += ["", f"Servers on {md_cell(self.host)} during the trace:", ""]
            srows = []
            for t in self.servers.values():
                fault = " ".join(t.fault.message.split()) if t.fault and t.fault.message else "-"
                srows.append((t.server_id, t.name, " -> ".join(t.sequence()), self.stopped_in(t),
                              t.outcome or "still running", fault))
            lines += md_table(("server", "name", "states seen", "stopped in", "outcome", "fault"), srows)
            if any(not t.host for t in self.servers.values()):
                lines += ["", "A server created during the trace stayed in BUILD without a host: nova shows the "
                          "host only once a nova-compute claims the build, and until then the task_state can stay "
                          "`scheduling` although the scheduler is done: a build cast to the dead compute (queue "
                          f"compute.{md_cell(self.host)}) waits there until it returns. nova-scheduler's log names the "
                          "host it chose."]
        for note in self.notes:
            lines += ["", md_cell(note)]
        return "\n".join(lines)

    def result(self) -> ExerciseResult:
        failure, basis = self.failure_at
        data = {"host": self.host, "binary": self.binary, "service_down_time": self.service_down_time,
                "report_interval_observed": self.report_interval, "interval_s": self.interval,
                "marked_at": iso(self.marked_at), "failure_at": iso(failure), "failure_basis": basis,
                "last_heartbeat": iso(self.last_heartbeat), "last_heartbeat_epoch": self.last_heartbeat,
                "last_up_poll": iso(self.last_up_poll), "first_down_poll": iso(self.first_down_poll),
                "first_down_poll_epoch": self.first_down_poll, "predicted_flip": iso(self.predicted_flip),
                "lag_s": _round(self.lag_s), "lag_from_heartbeat_s": _round(self.lag_from_heartbeat_s),
                "down_at_start": self.down_at_start, "back_up": iso(self.back_up_poll),
                "dashboard_seen": iso(self.dashboard_seen_at), "dashboard_finding": self.dashboard_finding,
                "named": iso(self.named_at), "named_by": self.named_by, "named_lag_s": _round(self.named_lag_s),
                "timers_consistent": self.timers_consistent(), "skew_s": self.skew_s,
                "servers": {sid: {"name": t.name, "states": t.sequence(), "stopped_in": self.stopped_in(t),
                                  "outcome": t.outcome,
                                  "fault": t.fault.message if t.fault else None}
                            for sid, t in self.servers.items()}}
        return ExerciseResult("down-lag", self.summary(), self.markdown(), data)


def _rel(value: float | None, base: float | None) -> str:
    if value is None or base is None:
        return "-"
    return f"{value - base:+.1f} s"


def _round(value: float | None) -> float | None:
    return None if value is None else round(value, 3)

