"""Reading the configured log sources, on every host they run on: read-only, no shell, bounded.

A `[[recorder.log_sources]]` entry with `hosts` is read once per host (its `{host}` template filled in); one
without is read once. Each read is a file (the last `max_mb` of each file matching the path) or a command (run
without a shell in its own session, killed after `timeout` seconds or once it gave `max_mb`). Hosts are read
in parallel, at most READ_PARALLEL at once. A read that fails (ssh refused, a timeout, no such container, a
value that is not a plain name) is one line, never an exception and never a wait past the source's timeout.
"""

from __future__ import annotations

import contextlib
import glob
import os
import re
import shlex
import signal
import subprocess
import threading
import time
from collections import deque
from collections.abc import Callable, Iterable
from concurrent.futures import wait
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from pathlib import Path

from tui.abandon import DaemonThreadPool
from tui.config import LogSource
from tui.exercises.request_trace import UUID, parse_log_time, path_slot
from tui.models.finding import Finding
from tui.models.instances import Server
from tui.rules.finding_detail import finding_detail
from tui.rules.stuck import instance_owner

Clock = Callable[[], float]
READ_PARALLEL = 8
MAX_KEPT = 5000  # matching lines kept per read (the newest)
_LEVEL = re.compile(r"\b(ERROR|CRITICAL|WARNING|WARN|Traceback)\b")


@dataclass(frozen=True)
class LogTarget:
    """One read of one source on one host: argv or path, or the one-line reason it cannot be read."""

    service: str
    host: str | None
    label: str
    argv: tuple[str, ...] | None
    path: str | None
    timeout: float
    max_bytes: int
    error: str | None = None


def targets(src: LogSource, hosts: Iterable[str] | None = None) -> list[LogTarget]:
    """The reads of one source: one per host (its own hosts, or `hosts` when given) for a template, else one."""
    limit = max(1, src.max_bytes)
    names: list[str | None] = list(dict.fromkeys(hosts if hosts is not None else src.hosts)) if src.per_host \
        else [None]
    out = []
    for host in names:
        prefix = f"{host}: " if host else ""
        try:
            if src.command is not None:
                argv = tuple(src.argv_for(host))
                out.append(LogTarget(src.service, host, prefix + shlex.join(argv), argv, None, src.timeout, limit))
            else:
                path = src.path_for(host)
                out.append(LogTarget(src.service, host, prefix + path, None, path, src.timeout, limit))
        except ValueError as exc:
            out.append(LogTarget(src.service, host, prefix + src.label, None, None, src.timeout, limit,
                                 error=str(exc)))
    return out


def all_targets(sources: Iterable[LogSource]) -> list[LogTarget]:
    return [t for src in sources for t in targets(src)]


def read_target(t: LogTarget, keep: Callable[[str], bool], *, clock: Clock = time.monotonic) \
        -> tuple[list[str], str | None]:
    """The lines of one read that `keep` accepts (the newest MAX_KEPT): (lines, None) or (lines so far, one
    line saying what went wrong)."""
    if t.error:
        return [], t.error
    if t.path is not None:
        return _read_files(t, keep, clock)
    return _read_command(t, keep)


def _read_files(t: LogTarget, keep: Callable[[str], bool], clock: Clock) -> tuple[list[str], str | None]:
    assert t.path is not None
    deadline = clock() + t.timeout
    files = sorted(glob.glob(os.path.expanduser(t.path)))
    if not files:
        return [], f"no file matches {t.path}"
    out: deque[str] = deque(maxlen=MAX_KEPT)
    for name in files:
        try:
            with Path(name).open("rb") as fh:
                size = fh.seek(0, os.SEEK_END)
                fh.seek(max(0, size - t.max_bytes))
                if size > t.max_bytes:
                    fh.readline()  # the first line is cut: skip it
                for i, raw in enumerate(fh):
                    line = raw.decode("utf-8", errors="replace").rstrip("\n")
                    if keep(line):
                        out.append(line)
                    if i % 20000 == 0 and clock() > deadline:
                        return list(out), f"timed out after {t.timeout:g} s reading {name} (partial)"
        except OSError as exc:
            return list(out), f"cannot read {name}: {exc.strerror}"
    return list(out), None


def _read_command(t: LogTarget, keep: Callable[[str], bool]) -> tuple[list[str], str | None]:
    assert t.argv is not None
    shown = shlex.join(t.argv)
    try:
        proc = subprocess.Popen(list(t.argv), stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                                stderr=subprocess.STDOUT, start_new_session=True)
    except (OSError, ValueError) as exc:
        return [], f"cannot run `{shown}`: {getattr(exc, 'strerror', None) or exc}"
    timed_out = threading.Event()

    def kill() -> None:
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(proc.pid, signal.SIGKILL)

    def expire() -> None:
        timed_out.set()
        kill()

    timer = threading.Timer(t.timeout, expire)
    timer.daemon = True
    timer.start()
    out: deque[str] = deque(maxlen=MAX_KEPT)
    last = ""
    given = 0
    too_much = False
    try:
        assert proc.stdout is not None
        for raw in proc.stdout:
            given += len(raw)
            line = raw.decode("utf-8", errors="replace").rstrip("\n")
            if keep(line):
                out.append(line)
            elif line.strip():
                last = line
            if given > t.max_bytes:
                too_much = True
                kill()
                break
        proc.wait()
    finally:
        timer.cancel()
        if proc.stdout is not None:
            proc.stdout.close()
    lines = list(out)
    if timed_out.is_set():
        return lines, f"`{shown}` timed out after {t.timeout:g} s (partial)"
    if too_much:
        return lines, f"`{shown}` gave more than {t.max_bytes / 1048576:g} MB: stopped there (partial)"
    if proc.returncode != 0 and not lines:
        detail = f": {last.strip()[:200]}" if last.strip() else ""
        return lines, f"`{shown}` exited {proc.returncode}{detail}"
    return lines, None


def read_all(items: Iterable[LogTarget], keep: Callable[[str], bool], parallel: int = READ_PARALLEL,
             grace_s: float = 5.0) -> list[tuple[LogTarget, list[str], str | None]]:
    """Every read, at most `parallel` at once (daemon threads: a quit never waits for them). A read still going
    when every read should have ended (its timeout, per round of `parallel`, plus `grace_s`: a file on a hung
    mount) is left behind as one line."""
    reads = list(items)
    if not reads:
        return []
    width = max(1, min(parallel, len(reads)))
    rounds = -(-len(reads) // width)
    budget = max(t.timeout for t in reads) * rounds + grace_s
    pool = DaemonThreadPool(width)
    try:
        futures = [pool.submit(read_target, t, keep) for t in reads]
        wait(futures, timeout=budget)
    finally:
        pool.shutdown(wait=False, cancel_futures=True)
    out: list[tuple[LogTarget, list[str], str | None]] = []
    for t, fut in zip(reads, futures, strict=True):
        if fut.done() and not fut.cancelled():
            lines, err = fut.result()
            out.append((t, lines, err))
        else:
            out.append((t, [], f"no answer within {budget:g} s: left behind"))
    return out


# ------------------------------------------------------------------------------- the lines that matter
def _norm(name: str) -> str:
    return name.lower().replace("_", "-").strip()


def sources_for(sources: Iterable[LogSource], owner: str) -> list[LogSource]:
    """The sources of the owning component: its own name (nova-compute, neutron-openvswitch-agent), else the
    sources in its place on the request path (neutron-server for "neutron")."""
    items = list(sources)
    want = _norm(owner)
    exact = [s for s in items if _norm(s.service) == want or _norm(s.service).startswith(want)]
    if exact:
        return exact
    slot = path_slot(want)
    return [s for s in items if path_slot(_norm(s.service)) == slot]


@dataclass
class HostLines:
    """The block of one read: the lines that matter, how they were chosen, or the one line of its failure."""

    service: str
    host: str | None
    label: str
    lines: list[str]
    chosen_by: str  # "request id", "instance id", "ERROR/WARNING around HH:MM", ...
    error: str | None = None


def is_problem(line: str) -> bool:
    return bool(_LEVEL.search(line[:200]))


def lines_that_matter(sources: Iterable[LogSource], owner: str, host: str | None, ids: Iterable[str],
                      began: datetime | None, *, around_s: float = 600.0, show: int = 30) -> list[HostLines]:
    """The owning component's log on `host` (every host of its sources when None): the lines naming one of
    `ids` (request id, instance id), else the last ERROR/WARNING lines within `around_s` of `began` (the
    last ones of all when none falls there)."""
    wanted = [i for i in ids if i]
    chosen = sources_for(sources, owner)
    reads = [t for src in chosen
             for t in targets(src, [host] if host and src.per_host else None)]
    answers = read_all(reads, lambda ln: any(i in ln for i in wanted) or is_problem(ln))
    out = []
    for t, lines, err in answers:
        named = [ln for ln in lines if any(i in ln for i in wanted)]
        if named:
            which = next(i for i in wanted if any(i in ln for ln in named))
            out.append(HostLines(t.service, t.host, t.label, named[-show:], _id_kind(which), err))
            continue
        problems = [ln for ln in lines if is_problem(ln)]
        how = "last ERROR/WARNING lines"
        if began is not None and problems:
            lo, hi = began - timedelta(seconds=around_s), began + timedelta(seconds=around_s)
            near = [ln for ln in problems if (at := parse_log_time(ln)) is not None and lo <= at <= hi]
            if near:
                problems = near
                how = f"ERROR/WARNING lines within {around_s / 60:g} min of {began:%H:%M:%S}Z"
        out.append(HostLines(t.service, t.host, t.label, problems[-show:], how, err))
    return out


def _id_kind(value: str) -> str:
    return "request id" if value.startswith("req-") else "id " + value


def _when(value: object) -> datetime | None:
    if isinstance(value, datetime):
        return value if value.tzinfo else value.replace(tzinfo=UTC)
    if isinstance(value, str) and value:
        with contextlib.suppress(ValueError):
            parsed = datetime.fromisoformat(value.replace("Z", "+00:00"))
            return parsed if parsed.tzinfo else parsed.replace(tzinfo=UTC)
    return None


@dataclass(frozen=True)
class LogQuery:
    """What the log-lines view reads: the owner's sources on its host, for these ids, around `began`."""

    owner: str
    host: str | None
    ids: tuple[str, ...]
    began: datetime | None

    @property
    def title(self) -> str:
        return f"{self.owner} on {self.host}" if self.host else f"{self.owner} on every host it runs on"


def finding_query(finding: Finding) -> LogQuery:
    """A finding's owning component and host (tui.rules.finding_detail), the request and instance ids it
    names, and when it began (the state's start, else when its evidence says it was last updated)."""
    detail = finding_detail(finding)
    ev = finding.evidence
    ids = [str(ev[k]) for k in ("request_id", "server", "instance", "port", "volume") if ev.get(k)]
    if UUID.fullmatch(finding.subject):
        ids.append(finding.subject)
    began = next((w for w in (_when(ev.get(k)) for k in ("since", "began", "first_seen", "updated_at"))
                  if w is not None), None)
    return LogQuery(detail.owner, detail.host, tuple(dict.fromkeys(ids)), began)


def instance_query(server: Server, request_ids: Iterable[str] = ()) -> LogQuery:
    """An instance: the owner of its phase on its host (nova-compute on its host once it has one), its id
    and its actions' request ids, around when its state began."""
    owned = instance_owner(server)
    if owned is not None:
        owner, host = owned.owner.component, owned.host
    else:
        owner, host = ("nova-compute", server.host) if server.host else ("nova-conductor", None)
    ids = tuple(dict.fromkeys([*(r for r in request_ids if r), *([server.request_id] if server.request_id else []),
                               server.id]))
    return LogQuery(owner, host, ids, server.task_since or server.updated_at)


def query_lines(sources: Iterable[LogSource], query: LogQuery) -> list[HostLines]:
    return lines_that_matter(sources, query.owner, query.host, query.ids, query.began)
