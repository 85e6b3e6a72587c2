"""Boot trace: the task_state sequence of one server, with the component owning each.

Pure: `BootTrace.observe(server, at)` is fed each poll's Server (parsed from GET /servers/{id}) and the local
time the answer arrived. A step is one (status, task_state) as long as consecutive polls see it; its
`first_seen` is the first poll that saw it, its duration runs to the first poll that saw the next step. A
state shorter than the poll interval can begin and end between two polls: the report says the resolution,
and `add_events()` lays nova's own action events (conductor, compute) beside the polled steps.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from tui.exercises import ExerciseResult, bars, iso, md_block, md_cell, md_code, md_table, seconds, stamp
from tui.models.instances import ActionEvent, Fault, Server
from tui.rules.stuck import fault_origin, owner_of

# nova's boot events (nova/compute/manager.py, nova/conductor/manager.py) -> the component that ran them
EVENT_OWNERS = {
    "conductor_schedule_and_build_instances": "nova-conductor",
    "compute__do_build_and_run_instance": "nova-compute",
    "conductor_migrate_server": "nova-conductor",
    "compute_prep_resize": "nova-compute",
    "compute_resize_instance": "nova-compute",
    "compute_finish_resize": "nova-compute",
}


def owner_for(status: str, task_state: str | None, host: str | None) -> tuple[str, str | None]:
    """(component, host it runs on or None) owning a (status, task_state)."""
    if task_state:
        owner = owner_of(task_state)
        return owner.component, host if owner.on_host else None
    if status == "BUILD":
        if host:  # the compute claimed it (host set) and has not started networking yet
            return "nova-compute", host
        # conductor cast the build to compute.<host>; nova shows the host only once that compute claims it
        return "nova-conductor -> nova-compute (host not shown until claimed)", None
    if status == "ERROR":
        return "(failed: read the fault)", None
    return "(none: settled)", None


def step_label(status: str, task_state: str | None) -> str:
    if task_state:
        return task_state
    if status == "BUILD":
        return "BUILD (no task_state)"
    return status or "?"


@dataclass
class Step:
    status: str
    task_state: str | None
    first_seen: float
    last_seen: float
    host: str | None = None
    polls: int = 1
    ended: float | None = None  # first_seen of the next step
    inferred: bool = False  # no poll saw it: nova's created .. the first poll (see BootTrace.observe)

    @property
    def label(self) -> str:
        return step_label(self.status, self.task_state)

    @property
    def owner(self) -> str:
        return owner_for(self.status, self.task_state, self.host)[0]

    @property
    def owner_host(self) -> str | None:
        return owner_for(self.status, self.task_state, self.host)[1]

    @property
    def duration(self) -> float | None:
        return None if self.ended is None else self.ended - self.first_seen

    def to_dict(self) -> dict[str, Any]:
        return {"state": self.label, "status": self.status, "task_state": self.task_state, "host": self.host,
                "first_seen": iso(self.first_seen), "first_seen_epoch": self.first_seen,
                "duration_s": None if self.duration is None else round(self.duration, 3),
                "owner": self.owner, "owner_host": self.owner_host, "polls": self.polls,
                "inferred": self.inferred}


TERMINAL = {"ACTIVE", "ERROR", "DELETED", "SHUTOFF"}
# a boot created at most this long before the trace started is one the trace watched from its start
INFER_WINDOW_S = 5.0


@dataclass
class BootTrace:
    """One server followed from its first poll to ACTIVE / ERROR (or until stopped)."""

    interval: float
    server_id: str | None = None
    started_at: float | None = None
    name: str = ""
    created: datetime | None = None
    steps: list[Step] = field(default_factory=list)
    fault: Fault | None = None
    outcome: str | None = None  # ACTIVE, ERROR, DELETED, SHUTOFF, "stopped", "timed out"
    finished_at: float | None = None
    polls: int = 0
    slowest_poll_s: float = 0.0
    events: tuple[ActionEvent, ...] = ()
    request_id: str | None = None
    notes: list[str] = field(default_factory=list)

    @property
    def done(self) -> bool:
        return self.outcome is not None

    def observe(self, server: Server, at: float, latency_s: float = 0.0) -> None:
        """One poll's answer. A server already settled at its first poll is recorded as such."""
        if self.done:
            return
        self.server_id = self.server_id or server.id
        self.name = server.name or self.name
        self.created = server.created or self.created
        self.polls += 1
        self.slowest_poll_s = max(self.slowest_poll_s, latency_s)
        if not self.steps:
            self._infer_scheduling(server, at)
        last = self.steps[-1] if self.steps else None
        if last is not None and (last.status, last.task_state) == (server.status, server.task_state):
            last.last_seen = at
            last.polls += 1
            last.host = server.host or last.host
        else:
            if last is not None:
                last.ended = at
            self.steps.append(Step(server.status, server.task_state, at, at, server.host))
        if server.status in TERMINAL and not server.task_state:
            self.fault = server.fault
            self.finish(server.status, at)

    def _infer_scheduling(self, server: Server, at: float) -> None:
        """A boot first seen past `scheduling` was in it before: nova-api creates every server with
        task_state=scheduling, and the conductor's pick hides the server from a changes-since listing until a
        compute claims it, so a fast scheduler ends it between two polls. Recorded as an inferred step from
        nova's `created` (1 s resolution, nova's clock) to this first poll: an upper bound of its duration."""
        if server.status != "BUILD" or server.task_state == "scheduling" or server.created is None:
            return
        created = server.created.timestamp()
        if created >= at:
            return  # clocks disagree: nothing sound to record
        if self.started_at is not None and created < self.started_at - INFER_WINDOW_S:
            return  # an older boot picked up mid-way: its scheduling is not part of what was watched
        self.steps.append(Step("BUILD", "scheduling", created, created, None, polls=0, ended=at, inferred=True))

    def gone(self, at: float) -> None:
        """The server vanished (404) while followed."""
        if not self.done:
            if self.steps:
                self.steps[-1].ended = at
            self.finish("DELETED", at)

    def finish(self, outcome: str, at: float) -> None:
        if not self.done:
            self.outcome = outcome
            self.finished_at = at

    def add_events(self, request_id: str | None, events: tuple[ActionEvent, ...]) -> None:
        self.request_id = request_id
        self.events = tuple(sorted(events, key=lambda e: e.start_time or datetime.max.astimezone()))

    # ---------------------------------------------------------------------------------------- report
    @property
    def host(self) -> str | None:
        return next((s.host for s in reversed(self.steps) if s.host), None)

    @property
    def total_s(self) -> float | None:
        first = self.first_polled
        if first is None or self.finished_at is None:
            return None
        return self.finished_at - first.first_seen

    @property
    def first_polled(self) -> Step | None:
        return next((s for s in self.steps if not s.inferred), None)

    def sequence(self) -> list[str]:
        return [s.label for s in self.steps]

    def missed(self) -> list[str]:
        """Build states nova's events prove happened but no poll saw (shorter than the resolution)."""
        seen = {s.task_state for s in self.steps if not s.inferred}
        out = [s.task_state for s in self.steps if s.inferred and s.task_state]
        if self.events and "scheduling" not in seen and "scheduling" not in out and any(
                e.event == "conductor_schedule_and_build_instances" for e in self.events):
            out.append("scheduling")
        return out

    def bars(self, now: float | None = None, width: int = 40) -> list[str]:
        """The steps as a text timeline (the settled end state is not a bar)."""
        rows = [(s.label + (" (inferred)" if s.inferred else ""), s.first_seen,
                 s.ended if s.ended is not None else (now or s.last_seen))
                for s in self.steps if not (s.status in TERMINAL and not s.task_state)]
        return bars(rows, width, now)

    def summary(self) -> str:
        label = f"{self.name} ({(self.server_id or '?')[:8]})" if self.name else (self.server_id or "?")
        chain = " -> ".join(
            (f"{s.label} <={s.duration:.1f}s (inferred)" if s.inferred else f"{s.label} {s.duration:.1f}s")
            if s.duration is not None else s.label for s in self.steps) or "nothing observed"
        where = f" on {self.host}" if self.host else ""
        total = f" after {self.total_s:.1f} s" if self.total_s is not None else ""
        end = {"ACTIVE": "ACTIVE", "ERROR": "ERROR", None: "still running"}.get(self.outcome, self.outcome)
        fault = f": {self.fault.message}" if self.fault and self.fault.message else ""
        return f"boot of {label}: {chain}; {end}{total}{where}{fault} (polled every {self.interval:g} s)"

    def markdown(self) -> str:
        lines = [f"Server {md_code(self.server_id)} {md_cell(self.name)}, polled every **{self.interval:g} s** "
                 f"({self.polls} polls, slowest answer {self.slowest_poll_s * 1000:.0f} ms): a state shorter than "
                 "that can begin and end between two polls. *First seen* is the first poll that saw the state; "
                 "the state began at or before it.", ""]
        first = self.first_polled
        if self.created is not None and first is not None:
            lag = first.first_seen - self.created.timestamp()
            lines += [f"Created {self.created.isoformat()} (nova's clock); first poll {stamp(first.first_seen)}"
                      f" ({lag:+.1f} s).", ""]
        rows = [(i, s.label + (" (inferred)" if s.inferred else ""), s.status,
                 ("created " if s.inferred else "") + stamp(s.first_seen),
                 ("<= " if s.inferred else "") + seconds(s.duration), s.owner,
                 s.owner_host or "-", s.host or "-", s.polls) for i, s in enumerate(self.steps, 1)]
        lines += md_table(("#", "state", "status", "first seen", "duration", "owner", "owner runs on",
                           "host", "polls"), rows)
        lines.append("")
        lines += [*md_block(self.bars()), ""]
        outcome = self.outcome or "not finished"
        total = f" after {self.total_s:.1f} s from the first poll" if self.total_s is not None else ""
        lines.append(f"**Outcome: {outcome}**{total}.")
        if self.fault is not None:
            origin = fault_origin(self.fault.message)
            lines += ["", f"Fault (code {md_cell(self.fault.code)}): {md_code(' '.join(self.fault.message.split()))}"
                      + (f" - names {md_cell(origin[0])}" if origin else "")]
        for step in (s for s in self.steps if s.inferred):
            lines += ["", f"{md_code(step.label)} was not seen by any poll: nova-api creates every server in it and "
                      "the first poll already saw the next state, so it ran between nova's `created` and that poll "
                      "(its duration is an upper bound; a changes-since listing cannot see a server between the "
                      "scheduler's pick and the compute's claim)."]
        inferred = {s.task_state for s in self.steps if s.inferred}
        for state in (m for m in self.missed() if m not in inferred):
            lines += ["", f"{md_code(state)} was not seen by any poll (shorter than {self.interval:g} s); nova's "
                      "events below show when it ran."]
        if self.events:
            lines += ["", f"Nova's own events for request {md_code(self.request_id)} (nova's clock):", ""]
            events: list[tuple[str, ...]] = []
            for e in self.events:
                dur = (e.finish_time - e.start_time).total_seconds() if e.finish_time and e.start_time else None
                events.append((e.event, EVENT_OWNERS.get(e.event, "?"), e.host or "-",
                             e.start_time.isoformat() if e.start_time else "-", seconds(dur), e.result or "running"))
            lines += md_table(("event", "component", "host", "start", "duration", "result"), events)
        for note in self.notes:
            lines += ["", md_cell(note)]
        return "\n".join(lines)

    def result(self) -> ExerciseResult:
        data = {"server_id": self.server_id, "name": self.name, "interval_s": self.interval,
                "outcome": self.outcome, "host": self.host, "steps": [s.to_dict() for s in self.steps],
                "fault": None if self.fault is None else {"code": self.fault.code, "message": self.fault.message},
                "total_s": None if self.total_s is None else round(self.total_s, 3),
                "request_id": self.request_id, "missed": self.missed(),
                "events": [{"event": e.event, "host": e.host, "result": e.result,
                            "start": e.start_time.isoformat() if e.start_time else None,
                            "finish": e.finish_time.isoformat() if e.finish_time else None} for e in self.events]}
        return ExerciseResult("boot-trace", self.summary(), self.markdown(), data)
