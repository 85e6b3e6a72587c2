"""The control-plane pane: compute services, network agents and volume services in one keyed table.

Grouped compute / network / volume (a header row per group), down and late rows first. Over ATTENTION_OVER
services, healthy rows (up, enabled, not late) are hidden by default, the headers keep the counts; `a` shows
all. Late rows count down ("down in 12s") every second between polls (a service going down); down rows show a
coarse age (`3m ago`, changes once a minute); healthy rows show `≤ 30s` (within the late mark, half the down
time), not the exact age: that changed with every heartbeat and repainted the table every poll. Enter on a
row opens the host screen.
"""

from __future__ import annotations

from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any

from rich.text import Text
from textual.app import ComposeResult

from tui.freshness import coarse_age, human_age
from tui.models.observation import Observation
from tui.safetext import escape
from tui.safetext import text as safe_text
from tui.widgets import column_fit as fit
from tui.widgets.drilldown import DrillDown
from tui.widgets.source_pane import SourcePane

if TYPE_CHECKING:  # models and rules are imported where used: ~20 ms of CPU before the first paint otherwise
    from tui.models.services import SectionRead, ServiceRow, ServicesSnapshot
    from tui.rules.liveness import Liveness

# state and heartbeat right after the host: in a half-width pane (two panes side by side at 160 columns) the
# columns after them are cut first, and these two are what the on-call engineer reads
COLUMNS = ("binary", "host", "state", "heartbeat", "status", "zone", "reason")
# names and free text give up width first (tui.widgets.column_fit); the state column shrinks only into its
# section-header counts ("14, 13 down" stays whole); the heartbeat (a countdown) is never cut
FIT = {"binary": fit.name(14, keep=True), "host": fit.name(16, keep=True), "state": fit.secondary(11, keep=True),
       "status": fit.secondary(8),
       "zone": fit.secondary(6), "reason": fit.text(12)}
STATE_STYLE = {"down": "bold red", "late": "yellow", "up": "green"}


def utc_datetime(epoch: float | None) -> datetime | None:
    return None if epoch is None else datetime.fromtimestamp(epoch, UTC)


def _is_snapshot(value: Any) -> bool:
    from tui.models.services import ServicesSnapshot

    return isinstance(value, ServicesSnapshot)


def heartbeat_text(live: Liveness, row: ServiceRow) -> Text:
    if row.forced_down:
        return Text("forced down", style="bold red")
    if live.age_s is None:
        return Text("?", style="dim")
    skew = " (clock ahead)" if live.skew_s >= 1 else ""
    if live.late and live.remaining_s is not None:  # a service going down: this is a change, it counts down
        return Text(f"{human_age(live.age_s)} · down in {live.remaining_s:.0f}s{skew}", style="bold yellow")
    if live.down:  # coarse: a service down for hours must not repaint the table every poll
        return Text(f"{coarse_age(live.age_s)} ago{skew}", style="bold red")
    # healthy: within the late mark. The exact age changed with every heartbeat and repainted the table every
    # poll for nothing; the host screen has it
    return Text(f"≤ {human_age(live.late_mark)}{skew}")


def state_text(live: Liveness, row: ServiceRow) -> Text:
    if row.state.upper() == "UNKNOWN":
        return Text("UNKNOWN", style="yellow")
    label = live.label
    return Text(label.upper() if label != "up" else "up", style=STATE_STYLE[label])


def status_text(row: ServiceRow) -> Text:
    if row.status == "enabled":
        return Text("enabled")
    auto = (row.disabled_reason or "").upper().startswith("AUTO:")
    return safe_text(row.status + (" (driver)" if auto else ""), style="magenta" if auto else "cyan")


def row_cells(row: ServiceRow, live: Liveness) -> tuple[Any, ...]:
    reason = row.disabled_reason or (live.why if live.down else "") or ""
    return (row.binary, row.host, state_text(live, row), heartbeat_text(live, row), status_text(row), row.zone or "",
            reason)


def header_cells(section: SectionRead, counted: list[tuple[ServiceRow, Liveness]]) -> tuple[Any, ...]:
    from tui.models.services import SECTION_TITLES

    title = Text(SECTION_TITLES[section.name], style="bold underline")
    if not section.deployed:
        return (title, "", "", "", "", "", Text("not in the catalog", style="dim"))
    down = sum(1 for r, lv in counted if lv.down and r.enabled)
    late = sum(1 for _, lv in counted if lv.late)
    parts = [f"{len(counted)}"]
    if down:
        parts.append(f"{down} down")
    if late:
        parts.append(f"{late} late")
    summary = safe_text(", ".join(parts), style="bold red" if down else "yellow" if late else "")
    note: Any = ""
    if section.error:
        when = f" (rows from {section.read_at:%H:%M:%S})" if section.read_at and section.rows else ""
        note = safe_text(f"{section.error}{when}", style="red")
    elif section.read_at is None:
        note = Text("not read yet", style="dim")
    return (title, "", summary, "", "", "", note)


ATTENTION_OVER = 100  # more services than this: by default healthy rows are hidden (`a` shows all)


def healthy(row: ServiceRow, live: Liveness) -> bool:
    """Up, enabled, not late: nothing to read there (the section header still counts it)."""
    return (row.enabled and not row.forced_down and not live.down and not live.late
            and row.state.upper() != "UNKNOWN")


# one section judged as of the poll (tui.rules.judge): (the section, its down time, every row with its verdict
# then, in table order: down, late, unknown, disabled, up)
SectionAtPoll = tuple["SectionRead", float, tuple[tuple["ServiceRow", "Liveness"], ...]]


def judged_sections(obs: Observation | None) -> tuple[SectionAtPoll, ...]:
    """The sections as the poll judged them (the observation's view); none before a judged poll."""
    detail = getattr(getattr(obs, "view", None), "detail", None)
    return detail if isinstance(detail, tuple) else ()


def on_host(host: str, row_host: str) -> bool:
    return row_host == host or row_host.split("@")[0] == host


def host_sections(at_poll: tuple[SectionAtPoll, ...], host: str) -> tuple[SectionAtPoll, ...]:
    """The judged sections with only the rows of `host` (the host screen's control-plane table)."""
    import dataclasses

    out = []
    for section, down_time, judged in at_poll:
        rows = tuple((row, live) for row, live in judged if on_host(host, row.host))
        out.append((dataclasses.replace(section, rows=tuple(r for r, _ in rows)), down_time, rows))
    return tuple(out)


def _ticked(live: Liveness, elapsed: float) -> Liveness:
    """The poll's verdict with its heartbeat age and countdown moved on by `elapsed` seconds: the state stays
    the poll's (late stays late until the next poll judges it down)."""
    import dataclasses

    remaining = None if live.remaining_s is None else max(0.0, live.remaining_s - elapsed)
    return dataclasses.replace(live, age_s=None if live.age_s is None else live.age_s + elapsed,
                               remaining_s=remaining)


def rows_at(at_poll: tuple[SectionAtPoll, ...], poll: datetime, now: datetime, *, hide_healthy: bool = False
            ) -> tuple[list[tuple[str, tuple[Any, ...]]], float]:
    """(table rows at `now`, seconds until some cell may change without a new poll) from the verdicts of the
    poll at `poll`. The verdicts are the poll's; the ages of rows late or down then tick on at paint time (a
    countdown every second, a down row's age when its text does). Stale sections are frozen (as of their
    read)."""
    out: list[tuple[str, tuple[Any, ...]]] = []
    soonest = 3600.0
    elapsed = max(0.0, (now - poll).total_seconds())
    for section, _down_time, judged in at_poll:
        assessed = []
        for row, live in judged:
            if (live.late or live.down) and not section.stale:
                if elapsed:
                    live = _ticked(live, elapsed)
                if not row.forced_down and live.age_s is not None:
                    soonest = min(soonest, 0.0 if live.late else _until_text_changes(live.age_s))
            assessed.append((row, live))
        out.append((f"hdr:{section.name}", header_cells(section, assessed)))
        # in table order already (the judge sorts once a poll); only the rows shown are kept
        shown = [m for m in assessed if not healthy(m[0], m[1])] if hide_healthy else assessed
        out.extend((row.key, row_cells(row, live)) for row, live in shown)
    return out, soonest


def _hide_healthy(snapshot: ServicesSnapshot, show_all: bool) -> bool:
    return not show_all and sum(len(s.rows) for s in snapshot.sections) > ATTENTION_OVER


def build_rows(at_poll: tuple[SectionAtPoll, ...], now: datetime, poll: datetime | None = None, *,
               hide_healthy: bool = False) -> list[tuple[str, tuple[Any, ...]]]:
    """Table rows at `now` from the sections judged at the poll (`poll`, default `now`): without hide_healthy
    every row. A row healthy at the poll stays so until the next poll: agents beating every 30 s, polled every
    10 s, would flicker LATE for seconds before each fresh heartbeat (and repaint the table every second)."""
    return rows_at(at_poll, min(poll or now, now), now, hide_healthy=hide_healthy)[0]


def _until_text_changes(age: float) -> float:
    """Seconds until coarse_age(age) shows something else (<1m, then minutes, hours)."""
    if age < 60:
        return 60.0 - age
    if age < 3600:
        return 60.0 - age % 60.0
    return 60.0 - age % 60.0 if age < 86400 else 3600.0


def next_change_s(at_poll: tuple[SectionAtPoll, ...], now: datetime, poll: datetime | None = None) -> float:
    """Seconds until some cell may change without a new poll: a countdown (a row late at the poll) ticks every
    second, a down row's age when its text does; rows healthy at the poll wait for the next poll. Stale
    sections are frozen."""
    return rows_at(at_poll, min(poll or now, now), now)[1]


def message_text(snapshot: ServicesSnapshot) -> str:
    ks = snapshot.keystone
    if not ks.ok:
        return f"[b red]Keystone {escape(ks.auth_url or '')} unreachable[/]: {escape(ks.error or '')}"
    bad = [c for c in snapshot.catalog if not c.ok]
    late = [c for c in snapshot.catalog if c.late]
    total = len(snapshot.catalog)
    if not total:
        cat = "catalog not checked"
    elif bad:
        cat = "[b red]catalog: " + ", ".join(escape(c.service_type) for c in bad) + " not answering[/]"
    else:
        cat = f"catalog {total - len(late)}/{total} answering"
    if late:
        cat += "  [yellow]late: " + ", ".join(escape(c.service_type) for c in late) + "[/]"
    keystone = "[yellow]Keystone late (answered the poll before)[/]" if ks.late else "Keystone ok"
    missing = f"  [yellow]missing: {', '.join(snapshot.missing_types)}[/]" if snapshot.missing_types else ""
    mv = f"  compute {snapshot.compute_microversion}" if snapshot.compute_microversion else ""
    return f"{keystone}  {cat}{missing}{mv}"


class ServicesPane(SourcePane):
    SOURCE = "services"
    TITLE = "control plane"
    COLUMNS = COLUMNS
    FIT = FIT

    def __init__(self, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.show_all = False

    def action_toggle_all(self) -> None:
        self.show_all = not self.show_all
        obs = self.observation
        if obs is not None and _is_snapshot(obs.snapshot):
            self.render_snapshot(obs.snapshot, obs)

    def compose_body(self) -> ComposeResult:
        if self.configured:  # unconfigured: just the "not configured" line, like every other pane
            yield from super().compose_body()

    def render_snapshot(self, snapshot: Any, obs: Observation) -> None:
        if not _is_snapshot(snapshot):
            super().render_snapshot(snapshot, obs)
            return
        text = message_text(snapshot)
        total = sum(len(s.rows) for s in snapshot.sections)
        if total > ATTENTION_OVER:
            text += "  ·  all rows (a: problems only)" if self.show_all else "  ·  healthy rows hidden (a: all)"
        self.set_message(text)
        self._sync_rows(self._now())

    def _sync_rows(self, now: float) -> None:
        obs = self.observation
        if self.table is None or obs is None or not _is_snapshot(obs.snapshot):
            return
        at = utc_datetime(now) or datetime.now(UTC)
        poll = min(utc_datetime(obs.ok_at) or at, at)
        rows, next_change = rows_at(judged_sections(obs), poll, at,
                                    hide_healthy=_hide_healthy(obs.snapshot, self.show_all))
        self.table.sync(rows)
        self._resync_at = now + next_change

    def refresh_freshness(self, now: float) -> None:
        super().refresh_freshness(now)
        # only late/down cells change between polls: rebuilding 1,500 rows every second for nothing costs
        # more CPU than the whole idle app, so the tick re-syncs only once a row is (about to be) late
        if self._mounted and now >= getattr(self, "_resync_at", 0.0):
            self._sync_rows(now)

    def selected_row(self) -> ServiceRow | None:
        obs = self.observation
        if self.table is None or obs is None or not _is_snapshot(obs.snapshot):
            return None
        key = self.table.cursor_key()
        for section in obs.snapshot.sections:
            for row in section.rows:
                if row.key == key:
                    return row
        return None

    def drill_down(self) -> None:
        row = self.selected_row()
        if row is None:
            return
        self.post_message(DrillDown("host", row.host.split("@")[0]))
