"""Instances pane: by default only servers worth attention (a task_state set, BUILD, ERROR, stuck); `a` shows all.

Rows are keyed by server id and updated in place. `in state for` is how long the server has been in its
task_state as of the poll (a lower bound: see models/instances.py), coarse (`<1m`, `4m`: it changes once a
minute, not every poll); a `~`
marks figures that rest on nova's updated_at rather than on our own observation. `owner` names the component
that owns the task_state (and the host it runs on), or for ERROR servers the service the fault names.
Stuck servers are marked `! ` (warning) or `!! ` (critical, e.g. their host's nova-compute is down).
Enter opens the instance screen.
"""

from __future__ import annotations

import asyncio
from collections.abc import Iterable, Mapping
from datetime import datetime
from itertools import compress
from operator import attrgetter, is_, itemgetter
from typing import TYPE_CHECKING, Any

from textual.app import ComposeResult

from tui.freshness import coarse_age
from tui.models.finding import Finding
from tui.models.observation import Observation
from tui.safetext import clean, escape
from tui.safetext import text as safe_text
from tui.widgets import column_fit as fit
from tui.widgets.drilldown import DrillDown
from tui.widgets.observed import Observed, keys_first, superseded
from tui.widgets.source_pane import SourcePane

if TYPE_CHECKING:  # models and rules are imported where used: ~20 ms of CPU before the first paint otherwise
    from tui.models.instances import InstancesSnapshot, Server
    from tui.models.judged import JudgedRow

# priority order (tui.widgets.column_fit): what is stuck, for how long, where and whose; the ids last. The
# identifying columns (name, status, host, owner) are always shown; hosts are cut last, and not below 16
# cells (compute-0001 and compute-0002 must not both read compute-0…)
COLUMNS = ("name", "status", "task_state", "in state for", "host", "owner", "id", "project")
FIT = {"name": fit.name(12, keep=True), "status": fit.KEPT, "host": fit.name(16, keep=True),
       "owner": fit.text(12, keep=True), "task_state": fit.secondary(10)}
SEVERITY_STYLE = {"critical": "bold red", "warning": "yellow", "info": "cyan"}
STATUS_STYLE = {"ERROR": "bold red", "BUILD": "yellow", "DELETED": "dim", "SHUTOFF": "dim"}
# a snapshot of at least this many servers has its rows made in a thread (InstancesPane.on_observed)
ROWS_IN_THREAD_FROM = 2_000


def owner_label(server: Server, judged: Mapping[str, JudgedRow] | None) -> str:
    """The owner column: the owner the poll's judgement names (tui.rules.judge, the finding's and the instance
    screen's owner); none for a server the judgement gave no row (no phase, not ERROR)."""
    row = judged.get(server.id) if judged is not None else None
    return row.owner if row is not None else ""


def judged_rows(obs: Observation) -> Mapping[str, JudgedRow] | None:
    """The servers' rows as the poll judged them (the observation's view)."""
    rows = getattr(getattr(obs, "view", None), "rows", None)
    return rows if isinstance(rows, Mapping) else None


def in_state_label(server: Server, now: datetime) -> str:
    age = server.in_state_for(now)
    if age is None:
        return ""
    nova_clock = server.task_since_basis in ("updated_at", "created")
    return ("~" if nova_clock else "") + coarse_age(age)  # ticks once a minute


def _sort_key(server: Server, severity: dict[str, str], now: datetime) -> tuple[Any, ...]:
    rank = {"critical": 0, "warning": 1}.get(severity.get(server.id, ""), 2)
    phase = server.phase
    if rank == 2:
        rank = 2 if server.status == "ERROR" else 3 if phase else 4
    age = (server.in_state_for(now) or 0.0) if phase else 0.0
    return (rank, -age, server.name, server.id)


Row = tuple[str, tuple[Any, ...]]
Rows = list[Row]
Entry = tuple[tuple[Any, ...], str, Row]  # (sort key, server id, row)


class RowMemo(dict[str, tuple[Any, ...]]):
    """What instance_rows keeps from one snapshot to the next, by server id: (server, cells, what the cells
    were made for, its Entry of a quiet server, None otherwise), made again when the server
    (the collector keeps an unchanged one as the same object), its finding or its age label changed; `quiet`,
    per view, the quiet servers' entries in their order (most of a big cloud: nothing to colour, nothing in
    progress, a sort key that never moves) and their ids: the next snapshot keeps the unchanged ones in that
    order (in C) and sorts in only the ones that changed; `last`, what the last rows of each view were made
    of: the very same servers, findings and age labels give those rows again, the same list (a poll where
    nothing changed costs a pass over the servers, and nothing downstream)."""

    def __init__(self, *args: Any) -> None:
        super().__init__(*args)
        self.quiet: dict[bool, tuple[list[Entry], set[str]]] = {}
        # per view: the servers, findings and age labels the last rows were made of, and those rows
        self.last: dict[bool, tuple[list[Server], dict[str, str], list[tuple[Server, str]], Rows]] = {}

    def copy(self) -> RowMemo:
        kept = RowMemo(self)
        kept.quiet, kept.last = dict(self.quiet), dict(self.last)
        return kept


def instance_rows(snapshot: InstancesSnapshot, findings: Iterable[Finding] = (), *, show_all: bool = False,
                  memo: RowMemo | None = None, judged: Mapping[str, JudgedRow] | None = None) -> Rows:
    """(server id, cells): stuck first (critical, then warning), then ERROR, then in a task_state (longest
    first), then the rest by name. Without show_all only servers worth attention.

    Cells without a style are plain (safe) strings: the table makes Rich cells only for the rows it draws,
    and `a` lists every server (10,000 and more). memo (RowMemo), kept by the caller from one snapshot to the
    next: the table then sees the same cells and skips them, and both views of a server share its cells; a
    poll costs a pass over the servers and a sort of what changed into the rest.
    judged: the poll's judged rows by server id (the owner column)."""
    severity: dict[str, str] = {}
    for f in findings:
        if f.kind == "instance.stuck":
            severity[f.subject] = f.severity
    now = snapshot.taken_at
    stuck_ids = set(severity)
    if show_all:
        servers = list(snapshot.servers)
    else:  # worth_attention: the snapshot's attention subset, plus any stuck server outside it
        servers = list(snapshot.attention)
        outside = stuck_ids - {s.id for s in servers}
        if outside:
            servers += [s for s in snapshot.servers if s.id in outside]
    last = memo.last.get(show_all) if memo is not None else None
    if (last is not None and len(last[0]) == len(servers) and all(map(is_, servers, last[0]))
            and last[1] == severity and all(in_state_label(s, now) == label for s, label in last[2])):
        return last[3]
    before, before_ids = memo.quiet.get(show_all, ([], set())) if memo is not None else ([], set())
    made: list[Entry] = []  # the servers that are not quiet
    fresh: list[Entry] = []  # quiet servers not in `before` as they are now
    moved: set[str] = set()  # servers of `before` that changed (or are no longer quiet)
    labelled: list[tuple[Server, str]] = []  # the servers whose cells show an age, with it
    for s in servers:
        sev = severity.get(s.id)
        status_style = STATUS_STYLE.get(s.status, "")
        kept = memo.get(s.id) if memo is not None else None
        if sev or status_style or s.phase or s.status == "ERROR":
            # the same server, finding and age label: the same cells (the age ticks once a minute)
            ticks = (sev, in_state_label(s, now))
            if kept is None or kept[0] is not s or kept[2] != ticks:
                # the mark also makes the cell differ (Rich Text equality ignores the style, so would the diff)
                mark = {"critical": "!! ", "warning": "! "}.get(sev or "", "")
                name = safe_text(mark + (s.name or "(no name)"), style=SEVERITY_STYLE[sev] if sev else "")
                status = safe_text(s.status, style=status_style)
                task = safe_text(s.task_state or "", style=SEVERITY_STYLE[sev] if sev else "")
                kept = (s, (name, status, task, ticks[1], s.host or "", owner_label(s, judged), s.short_id,
                            s.project_id[:8]), ticks, None)
                if memo is not None:
                    memo[s.id] = kept
            made.append((_sort_key(s, severity, now), s.id, (s.id, kept[1])))
            labelled.append((s, ticks[1]))
            moved.add(s.id)
        else:  # nothing to colour and nothing in progress: most of a big cloud
            if kept is None or kept[0] is not s or kept[2] is not None:
                cells = (clean(s.name or "(no name)"), clean(s.status), "", "", s.host or "", "", s.id[:8],
                         s.project_id[:8])
                kept = (s, cells, None, (_sort_key(s, severity, now), s.id, (s.id, cells)))
                if memo is not None:
                    memo[s.id] = kept
                fresh.append(kept[3])
                moved.add(s.id)
            elif s.id not in before_ids:
                fresh.append(kept[3])
    present = set(map(attrgetter("id"), servers)) - moved
    quiet = list(compress(before, map(present.__contains__, map(itemgetter(1), before)))) if before else []
    quiet += fresh
    quiet.sort(key=itemgetter(0))  # in order but for what changed: one comparison a server, in C
    ordered = quiet + made
    ordered.sort(key=itemgetter(0))
    rows = list(map(itemgetter(2), ordered))
    if memo is not None:
        memo.quiet[show_all] = (quiet, set(map(itemgetter(1), quiet)) if fresh or len(quiet) != len(before)
                                else before_ids)
        memo.last[show_all] = (servers, severity, labelled, rows)
        if len(memo) > 2 * len(snapshot.servers) + 64:  # servers gone
            live = {s.id for s in snapshot.servers}
            for sid in [k for k in list(memo) if k not in live]:
                memo.pop(sid, None)
    return rows


def status_line(snapshot: InstancesSnapshot, findings: Iterable[Finding], *, show_all: bool, shown: int,
                matched: int | None = None, brief: bool = False) -> str:
    """matched: with a filter on, how many of the `shown` rows it lets through. brief (a narrow pane): the
    view and the age basis in fewer words, without the poll's kind."""
    servers = snapshot.servers
    attention = snapshot.attention  # every server with a task_state, a phase or ERROR is in it
    busy = sum(1 for s in attention if s.task_state)
    errors = sum(1 for s in attention if s.status == "ERROR")
    stuck = sum(1 for f in findings if f.kind == "instance.stuck")
    # the dashboard's first read holds only the servers worth attention; the full list follows at once
    total = "listing every server..." if snapshot.partial else f"{len(servers):,} servers"
    parts = [total, f"{busy} in a task_state", f"{errors} ERROR"]
    if stuck:
        parts.append(f"[bold red]{stuck} stuck[/]")
    count = f"{shown:,}" if matched is None else f"{matched:,} of {shown:,}"
    if brief:
        view = f"all {count} shown (a: attention)" if show_all else f"{count} shown (a: all)"
    else:
        view = (f"showing all {count} (a: attention only)" if show_all
                else f"showing {count} worth attention (a: all)")
    if matched is not None:
        view = f"filtered: {view}"
    parts.append(view)
    bases = {s.task_since_basis for s in attention if s.phase}
    if bases & {"created", "updated_at"}:
        parts.append("~: nova's clock" if brief else "~age: since nova's updated_at or created" if "created" in bases
                     else "~age: since nova's updated_at")
    # the poll's kind only: its request and row counts (and the status=BUILD listing one poll in three)
    # changed the line, so the terminal, every poll with nothing else changing; they are in the snapshot
    if not brief:
        parts.append(f"poll {escape(snapshot.poll.mode)}")
    if snapshot.hosts_error:
        parts.append(f"[yellow]host health unknown: {escape(snapshot.hosts_error)}[/]")
    down = sorted(h.host for h in snapshot.hosts.values() if h.compute_state is not None and h.compute_down)
    if down:
        parts.append(f"[bold red]nova-compute down on {escape(', '.join(down))}[/]")
    return "  ·  ".join(parts)


class InstancesPane(SourcePane):
    SOURCE = "instances"
    TITLE = "instances"
    COLUMNS = COLUMNS
    FIT = FIT

    def __init__(self, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.show_all = False
        self._rows: dict[bool, tuple[Any, Any, list[tuple[str, tuple[Any, ...]]]]] = {}  # show_all -> rows
        self._quiet_cells = RowMemo()  # instance_rows' memo

    def compose_body(self) -> ComposeResult:
        if self.configured:
            yield from super().compose_body()

    async def on_observed(self, message: Observed) -> None:
        """A big snapshot's rows (10,000 servers: sorting and cells, 100-200 ms on a busy host) are made in a
        thread before SourcePane.on_observed (Textual calls it next) shows them: the loop meanwhile answers
        the keys, where it would otherwise make a key typed then wait for the whole pass. Both views are made
        (the one on screen and the other), so `a` finds its rows made, and the table measures the other
        view's between keys (KeyedTable.expect). What the pane then shows is exactly what instance_rows
        gives on the loop."""
        from tui.models.instances import InstancesSnapshot

        obs = message.observation
        snapshot = obs.snapshot
        if (not isinstance(snapshot, InstancesSnapshot) or len(snapshot.servers) < ROWS_IN_THREAD_FROM
                or not self._mounted or snapshot is self._rendered_snapshot):
            return
        await keys_first(self)
        if superseded(self, obs):
            return
        views = (False, True)  # both: `a` finds its rows made, and the table has them measured (expect)
        memo = self._quiet_cells.copy()  # the thread's own: the loop may make rows of the last snapshot meanwhile

        def make() -> dict[bool, list[tuple[str, tuple[Any, ...]]]]:
            # a view that did not change is given as the same list (RowMemo.last): the table skips it
            return {view: instance_rows(snapshot, obs.findings, show_all=view, memo=memo, judged=judged_rows(obs))
                    for view in views}

        made = await asyncio.to_thread(make)
        self._quiet_cells = memo
        self._rows = {view: (snapshot, obs.findings, rows) for view, rows in made.items()}

    def rows_of(self, snapshot: InstancesSnapshot, obs: Observation) -> list[tuple[str, tuple[Any, ...]]]:
        """The rows of this view, made once per snapshot (and findings): `a` back and forth, and every key
        of the filter, reuse them."""
        kept = self._rows.get(self.show_all)
        if kept is None or kept[0] is not snapshot or kept[1] is not obs.findings:
            if kept is not None and kept[0] is not snapshot:
                self._rows.clear()  # the other view's rows are of an older snapshot
            kept = self._rows[self.show_all] = (snapshot, obs.findings,
                                                instance_rows(snapshot, obs.findings, show_all=self.show_all,
                                                              memo=self._quiet_cells, judged=judged_rows(obs)))
        return kept[2]

    def render_snapshot(self, snapshot: Any, obs: Observation) -> None:
        from tui.models.instances import InstancesSnapshot

        if not isinstance(snapshot, InstancesSnapshot):
            super().render_snapshot(snapshot, obs)
            return
        rows = self.rows_of(snapshot, obs)
        if self.table is not None:
            self.table.sync(rows)
            self.table.expect(*self._other_view(snapshot, obs))
        self._status(snapshot, obs, len(rows))

    def _other_view(self, snapshot: InstancesSnapshot, obs: Observation) -> list[list[tuple[str, tuple[Any, ...]]]]:
        """The rows `a` would show, when made already (in on_observed's thread, for a big snapshot)."""
        kept = self._rows.get(not self.show_all)
        return [kept[2]] if kept is not None and kept[0] is snapshot and kept[1] is obs.findings else []

    def _status(self, snapshot: InstancesSnapshot, obs: Observation, shown: int) -> None:
        table = self.table
        matched = table.matched if table is not None and table.row_filter.active else None
        forms = [status_line(snapshot, obs.findings, show_all=self.show_all, shown=shown, matched=matched,
                             brief=brief) for brief in (False, True)]
        self.set_fitting_message(*forms)

    def action_toggle_all(self) -> None:
        from tui.models.instances import InstancesSnapshot

        self.show_all = not self.show_all
        obs = self.observation
        if obs is not None and isinstance(obs.snapshot, InstancesSnapshot):
            self.render_snapshot(obs.snapshot, obs)
        else:
            self.set_message("showing all servers (a: attention only)" if self.show_all
                             else "showing servers worth attention (a: all)")

    def apply_filter(self, text: str) -> None:
        from tui.models.instances import InstancesSnapshot

        super().apply_filter(text)
        obs = self.observation
        if obs is not None and isinstance(obs.snapshot, InstancesSnapshot):
            # the status line's count follows the filter (the table filtered the rows it has)
            self._status(obs.snapshot, obs, len(self.rows_of(obs.snapshot, obs)))

    def selected_server(self) -> str | None:
        return self.table.cursor_key() if self.table is not None else None

    def drill_down(self) -> None:
        server_id = self.selected_server()
        if server_id is None:
            return
        self.post_message(DrillDown("server", server_id))
