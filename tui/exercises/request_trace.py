"""Request trace: follow one request id across the services of the create path.

Pure: log lines (from the configured `[[recorder.log_sources]]`, read by live.py) and nova's action/events
go in; out comes a per-service timeline (first and last entry, how many, the stage each service's first entry
opens and how long it lasted until the next service's first entry) and the services of the request
path that left no trace, with what each would have been doing.

Log times: oslo.log lines start `YYYY-MM-DD HH:MM:SS.mmm` in the log host's local time (no zone); Apache-style
access logs `[02/Dec/2026:11:23:31 +0000]`; ISO 8601 with a zone is taken as is. Times without a zone are
read in `local_tz` (stacktop's own zone unless given): a log host in another zone shifts that source.
"""

from __future__ import annotations

import itertools
import re
from collections.abc import Iterable
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta, tzinfo
from typing import Any

from tui.exercises import ExerciseResult, bars, md_block, md_cell, md_code, md_table, seconds, stamp
from tui.exercises.boot_trace import EVENT_OWNERS
from tui.models.instances import InstanceAction

# the request path for `openstack server create`, in order, with what each does for it
REQUEST_PATH: tuple[tuple[str, str], ...] = (
    ("keystone", "validates the token and returns the service catalog"),
    ("nova-api", "validates the request, checks quota, writes the instance record"),
    ("nova-scheduler", "asks placement for candidates, runs the filters, picks a host"),
    ("placement", "answers allocation candidates and records the allocation"),
    ("nova-conductor", "orchestrates the build, talks to the database for compute"),
    ("nova-compute", "creates the instance on the hypervisor"),
    ("glance", "serves the image to nova-compute"),
    ("neutron", "creates and binds the port, wires the network"),
    ("cinder", "creates and attaches the volume, if one was requested"),
)
PATH_NAMES = tuple(name for name, _ in REQUEST_PATH)
ROLE = dict(REQUEST_PATH)
REQUEST_ID = re.compile(r"^req-[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$")
UUID = re.compile(r"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}")
_OSLO = re.compile(r"(\d{4}-\d{2}-\d{2})[ T](\d{2}:\d{2}:\d{2})(\.\d+)?(Z|[+-]\d{2}:?\d{2})?")
_APACHE = re.compile(r"\[(\d{2}/\w{3}/\d{4}):(\d{2}:\d{2}:\d{2}) ([+-]\d{4})\]")
_INSTANCE = re.compile(r"\[instance: (" + UUID.pattern + r")\]")
_ANY_REQUEST = re.compile(r"req-[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}")
_HTTP = re.compile(r"\b(GET|HEAD|POST|PUT|PATCH|DELETE) (/\S*)")


def about_request(line: str, request_id: str) -> bool:
    """The line is part of the request: it names the id outside a URL being read (a GET of
    .../os-instance-actions/<id> is someone looking at the request, e.g. stacktop itself)."""
    if request_id not in line:
        return False
    m = _HTTP.search(line)
    if m and request_id in m.group(2):
        return request_id in line.replace(m.group(2), "")
    return True


def about_instance(line: str, instance_id: str, service: str) -> bool:
    """A line naming only the instance belongs to the request unless it is another API request (an HTTP
    request line: a poll or a later action) or, in a nova service, carries another nova request id."""
    if instance_id not in line or _HTTP.search(line):
        return False
    return not (service.lower().replace("_", "-").startswith("nova") and _ANY_REQUEST.search(line))


def path_slot(service: str) -> str:
    """A configured service name -> its place on the request path ('neutron-server' -> 'neutron')."""
    s = service.lower()
    for name in ("nova-api", "nova-scheduler", "nova-conductor", "nova-compute"):
        if s.startswith(name) or s.replace("_", "-").startswith(name):
            return name
    for name in ("keystone", "placement", "glance", "neutron", "cinder"):
        if name in s:
            return name
    return service


def parse_log_time(line: str, local_tz: tzinfo | None = None) -> datetime | None:
    """The timestamp a log line starts with (within its first 40 characters), as an aware UTC datetime."""
    head = line[:60]
    m = _OSLO.search(head[:40])
    if m:
        text = f"{m.group(1)}T{m.group(2)}{m.group(3) or ''}"
        try:
            value = datetime.fromisoformat(text)
        except ValueError:
            return None
        zone = m.group(4)
        if zone:
            value = datetime.fromisoformat(text + ("+00:00" if zone == "Z" else zone))
        else:
            value = value.replace(tzinfo=local_tz) if local_tz is not None else value.astimezone()
        return value.astimezone(UTC)
    m = _APACHE.search(head)
    if m:
        try:
            return datetime.strptime(f"{m.group(1)}:{m.group(2)} {m.group(3)}", "%d/%b/%Y:%H:%M:%S %z") \
                .astimezone(UTC)
        except ValueError:
            return None
    return None


@dataclass(frozen=True)
class LogHit:
    """One matching line. by: "request" (it names the request id) or "instance" (only the instance id)."""

    service: str
    source: str
    line: str
    at: datetime | None
    by: str = "request"

    @property
    def slot(self) -> str:
        return path_slot(self.service)


def match_lines(lines: Iterable[str], needles: Iterable[str]) -> list[str]:
    wanted = [n for n in needles if n]
    return [ln.rstrip("\n") for ln in lines if any(n in ln for n in wanted)]


def instance_ids(lines: Iterable[str]) -> list[str]:
    """Instance ids named by `[instance: UUID]` in matching lines, most frequent first."""
    counts: dict[str, int] = {}
    for ln in lines:
        for m in _INSTANCE.finditer(ln):
            counts[m.group(1)] = counts.get(m.group(1), 0) + 1
    return sorted(counts, key=lambda k: -counts[k])


@dataclass
class ServiceTrace:
    service: str
    first: datetime
    last: datetime
    entries: int = 0
    evidence: list[str] = field(default_factory=list)  # "log <source>", "nova event <name>", ...
    sample: str = ""
    stage_s: float | None = None  # from its first entry to the next service's first entry

    @property
    def span_s(self) -> float:
        return (self.last - self.first).total_seconds()


@dataclass
class RequestTrace:
    request_id: str
    instance_id: str | None = None
    action: InstanceAction | None = None
    hits: list[LogHit] = field(default_factory=list)
    searched: dict[str, str] = field(default_factory=dict)  # source label -> service
    errors: dict[str, str] = field(default_factory=dict)  # source label -> one line
    notes: list[str] = field(default_factory=list)
    window_s: float = 10.0  # instance-id-only lines count when within this of the request's own entries

    def add_lines(self, service: str, source: str, lines: Iterable[str], local_tz: tzinfo | None = None) -> None:
        """Lines of one source that name the request id or the instance id (pre-filtered or not)."""
        self.searched[source] = service
        for ln in lines:
            if about_request(ln, self.request_id):
                by = "request"
            elif self.instance_id and about_instance(ln, self.instance_id, service):
                by = "instance"
            else:
                continue
            self.hits.append(LogHit(service, source, ln, parse_log_time(ln, local_tz), by))

    def source_failed(self, service: str, source: str, error: str) -> None:
        self.searched[source] = service
        self.errors[source] = error

    def _window(self) -> tuple[datetime, datetime] | None:
        times = [h.at for h in self.hits if h.by == "request" and h.at is not None]
        if self.action is not None:
            if self.action.start_time:
                times.append(self.action.start_time)
            for e in self.action.events:
                times += [t for t in (e.start_time, e.finish_time) if t is not None]
        if not times:
            return None
        pad = timedelta(seconds=self.window_s)
        return min(times) - timedelta(seconds=5), max(times) + pad

    def relevant_hits(self) -> list[LogHit]:
        window = self._window()
        out = []
        for h in self.hits:
            if h.by == "instance" and (window is None or h.at is None or not window[0] <= h.at <= window[1]):
                continue
            out.append(h)
        return out

    def timeline(self) -> list[ServiceTrace]:
        """One row per service that left a trace, ordered by its first entry, with stage durations."""
        rows: dict[str, ServiceTrace] = {}

        def add(service: str, at: datetime | None, evidence: str, sample: str = "", times: bool = True) -> None:
            if at is None:
                return
            row = rows.get(service)
            if row is not None and not times:
                if evidence not in row.evidence:
                    row.evidence.append(evidence)
                return
            if row is None:
                row = rows[service] = ServiceTrace(service, at, at, sample=sample)
            row.first, row.last = min(row.first, at), max(row.last, at)
            row.entries += 1
            if evidence not in row.evidence:
                row.evidence.append(evidence)
            if sample and not row.sample:
                row.sample = sample

        for h in self.relevant_hits():
            tag = f"log {_short(h.source)}" + (" (by instance id)" if h.by == "instance" else "")
            add(h.slot, h.at, tag, h.line)
        if self.action is not None:
            add("nova-api", self.action.start_time, f"nova action {self.action.action}")
            for e in self.action.events:
                owner = EVENT_OWNERS.get(e.event, "nova-compute" if e.event.startswith("compute") else
                                         "nova-conductor" if e.event.startswith("conductor") else "nova")
                # nova's event times have 1 s resolution: they place a service only when no log line did
                logged = owner in rows and any(not ev.startswith("nova ") for ev in rows[owner].evidence)
                add(owner, e.start_time, f"nova event {e.event}", times=not logged)
                add(owner, e.finish_time, f"nova event {e.event}", times=not logged)
        ordered = sorted(rows.values(), key=lambda r: (r.first, _path_rank(r.service)))
        for a, b in itertools.pairwise(ordered):
            a.stage_s = (b.first - a.first).total_seconds()
        if ordered:
            ordered[-1].stage_s = ordered[-1].span_s
        return ordered

    def missing(self) -> list[str]:
        seen = {r.service for r in self.timeline()}
        return [name for name in PATH_NAMES if name not in seen]

    def unsearched(self) -> list[str]:
        """Path services no configured source covers: their absence proves nothing."""
        covered = {path_slot(s) for s in self.searched.values()}
        return [name for name in PATH_NAMES if name not in covered]

    # ---------------------------------------------------------------------------------------- report
    def summary(self) -> str:
        rows = self.timeline()
        order = " -> ".join(f"{r.service} {r.stage_s:.1f}s" if r.stage_s is not None else r.service
                            for r in rows) or "no trace anywhere"
        missing = self.missing()
        tail = f"; no trace of {', '.join(missing)}" if missing else "; every service on the path left a trace"
        return f"request {self.request_id}: {order}{tail}"

    def markdown(self) -> str:
        rows = self.timeline()
        instance = f", instance {md_code(self.instance_id)}" if self.instance_id else ""
        lines = [f"Request {md_code(self.request_id)}" + instance
                 + f"; {len(self.searched)} log source(s) searched read-only"
                 + (f", {len(self.errors)} failed" if self.errors else "") + ".", ""]
        if self.action is not None:
            lines += [f"Nova action {md_code(self.action.action)} started {md_cell(self.action.start_time)} "
                      f"({len(self.action.events)} events)"
                      + (f": {md_cell(self.action.message)}" if self.action.message else "") + ".", ""]
        table = [(i, r.service, stamp(r.first.timestamp()), stamp(r.last.timestamp()), seconds(r.stage_s),
                  seconds(r.span_s), r.entries, ", ".join(r.evidence)) for i, r in enumerate(rows, 1)]
        lines += md_table(("#", "service", "first entry", "last entry", "stage (to next service)",
                           "own span", "entries", "evidence"), table)
        if rows:
            lines += ["", *md_block(bars([(r.service, r.first.timestamp(), r.last.timestamp()) for r in rows]))]
        missing = self.missing()
        unsearched = set(self.unsearched())
        lines += ["", "Services on the request path that left **no trace**:", ""]
        if not missing:
            lines.append("(none)")
        for name in missing:
            why = " - no log source configured for it" if name in unsearched else ""
            lines.append(f"- **{name}**: {ROLE[name]}{why}")
        if self.errors:
            lines += ["", "Sources that could not be read:", ""]
            lines += [f"- {md_code(src)}: {md_cell(err)}" for src, err in self.errors.items()]
        samples = [(r.service, r.sample) for r in rows if r.sample]
        if samples:
            lines += ["", "First matching line per service:", ""]
            lines += md_block([f"{svc}: {line[:300]}" for svc, line in samples])
        for note in self.notes:
            lines += ["", md_cell(note)]
        return "\n".join(lines)

    def result(self) -> ExerciseResult:
        data: dict[str, Any] = {
            "request_id": self.request_id, "instance_id": self.instance_id,
            "timeline": [{"service": r.service, "first": r.first.isoformat(), "last": r.last.isoformat(),
                          "stage_s": None if r.stage_s is None else round(r.stage_s, 3),
                          "span_s": round(r.span_s, 3), "entries": r.entries, "evidence": r.evidence}
                         for r in self.timeline()],
            "missing": self.missing(), "unsearched": self.unsearched(), "errors": dict(self.errors),
            "sources": dict(self.searched),
        }
        return ExerciseResult("request-trace", self.summary(), self.markdown(), data)


def _short(source: str) -> str:
    """A path source by its file name (the full path is in the sources list), a command as given."""
    return source.rsplit("/", 1)[-1] if source.startswith(("/", "~", ".")) else source


def _path_rank(service: str) -> int:
    return PATH_NAMES.index(service) if service in PATH_NAMES else len(PATH_NAMES)
