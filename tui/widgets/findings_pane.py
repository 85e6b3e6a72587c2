"""Every source's findings in one table, plus the triage hints derived from them: the findings the runner's
judgement of the cloud's latest poll shows (tui.models.judged.CloudView.shown).

- Critical first; within a severity the triage hints (the likely cause) before the findings they explain.
- Deduplicated by (kind, subject): the same finding from two observations is one row (the more severe); many
  of one kind are one row with their count (tui.rules.grouping), counted as all of them in the status line.
- A poll rebuilds only the rows that read differently (finding_rows' memo), so it costs what changed.
- `since` is the wall-clock time (UTC, as every time on screen) stacktop first saw the finding (kept while it
  stays present; a finding that goes away and comes back starts again). A time, not a ticking age: with
  nothing changing, the table (and the terminal) stays still.
- `enter` opens the finding screen (the whole finding, live); from there `enter` jumps to its subject: a host
  -> the host screen, a server -> the instance screen, a queue / node / cluster -> that source's pane
  (tui.rules.triage.jump_target, judged with the poll).
- A toast once when a critical finding appears that was not present in the last TOAST_FORGET_S seconds
  (not on every poll, not again when it merely flaps); the criticals one incident brings within
  TOAST_GATHER_S (each source reports on its own) make one toast, led by the triage hint.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import ClassVar

from rich.text import Text

from tui.dashboard import dashboard
from tui.freshness import clock_time
from tui.models.finding import SEVERITY_ORDER, Finding, members
from tui.models.observation import Observation
from tui.safetext import text as safe_text
from tui.widgets import column_fit as fit
from tui.widgets.column_fit import ColumnRule
from tui.widgets.drilldown import DrillDown
from tui.widgets.observed import AllObserved, keys_first, latest_observations
from tui.widgets.source_pane import SourcePane

SEVERITY_STYLE = {"critical": "bold red", "warning": "yellow", "info": "cyan"}
TOAST_FORGET_S = 300.0
TOASTS_KEPT = 50  # the toasts remembered on the pane (tests, the curious): a dashboard runs all day
TOAST_GATHER_S = 1.0  # new criticals arriving within this long make one toast
SUBJECT_WIDTH = 64  # a subject is a name from outside: a 255-character one must not push the summary off screen
Key = tuple[str, str]
Row = tuple[str, tuple[object, ...]]
RowMemo = dict[Key, tuple[Finding, str, "float | None", Row]]  # key -> (finding, since, until, its row)


def shorten(value: str, width: int) -> str:
    return value if len(value) <= width else value[:width - 1] + "…"


def row_key(f: Finding) -> str:
    return f"{f.kind}|{f.subject}"


def dedupe(findings: Iterable[Finding]) -> list[Finding]:
    """One finding per (kind, subject), the most severe; ordered critical first, triage hints first within a
    severity, then by kind and subject."""
    best: dict[Key, Finding] = {}
    for f in findings:
        have = best.get(f.key)
        if have is None or SEVERITY_ORDER[f.severity] < SEVERITY_ORDER[have.severity]:
            best[f.key] = f
    return sorted(best.values(), key=lambda f: (SEVERITY_ORDER[f.severity], not f.kind.startswith("triage."),
                                                f.kind, f.subject))


def finding_row(f: Finding, since: str, until: float | None) -> Row:
    """The findings table's row of `f`: `since` its first-seen time; until: when its silence ends (None: not
    silenced; the row is dimmed and says until when)."""
    if until is not None:
        return (row_key(f), (Text(f"{f.severity.upper()} (silenced)", style="dim"),
                             safe_text(f.kind, style="dim"), safe_text(shorten(f.subject, SUBJECT_WIDTH), style="dim"),
                             safe_text(f.summary, style="dim"), safe_text(f.next_step, style="dim"),
                             Text(f"silenced to {clock_time(until)}", style="dim")))
    kind = safe_text(f.kind, style="bold") if f.kind.startswith("triage.") else f.kind
    return (row_key(f), (Text(f.severity.upper(), style=SEVERITY_STYLE[f.severity]), kind,
                         shorten(f.subject, SUBJECT_WIDTH), f.summary, f.next_step, since))


def finding_rows(findings: Iterable[Finding], first_seen: dict[Key, float] | None = None,
                 now: float | None = None, silenced: Mapping[Key, float] | None = None,
                 made: RowMemo | None = None) -> list[Row]:
    """Rows of the findings table; a silenced finding (silenced: key -> until) is dimmed, last, and its `since`
    says until when. made: the rows of the last call by key (updated here): a finding whose row would read the
    same keeps its row, the very same cells, so the table compares and redraws only the rows that changed."""
    listed = list(findings)
    rows = []
    quiet = []
    for f in dedupe(listed):
        seen = None if first_seen is None or now is None else first_seen.get(f.key)
        since = "" if seen is None else clock_time(seen)
        until = silenced.get(f.key) if silenced else None
        kept = made.get(f.key) if made is not None else None
        if kept is not None and kept[1] == since and kept[2] == until and (kept[0] is f or kept[0] == f):
            row = kept[3]
        else:
            row = finding_row(f, since, until)
            if made is not None:
                made[f.key] = (f, since, until, row)
        (rows if until is None else quiet).append(row)
    if made is not None and len(made) > len(rows) + len(quiet):
        present = {f.key for f in listed}
        for key in [k for k in made if k not in present]:
            del made[key]
    return rows + quiet


class FindingsPane(SourcePane):
    SOURCE = "findings"
    TITLE = "findings"
    # what to read first, leftmost: the time first seen comes last (column_fit cuts kind, subject and the two
    # texts to fit the pane, so the next step is on screen from 80 columns up)
    COLUMNS = ("severity", "kind", "subject", "summary", "next step", "since")
    # the four share the width (widest first): at 120 columns each keeps ~20 cells, at 220 kind and subject are
    # whole and the two texts ~60
    FIT: ClassVar[dict[str, ColumnRule]] = {"kind": fit.text(12), "subject": fit.text(12),
                                            "summary": fit.text(16), "next step": fit.text(14)}

    def __init__(self, **kwargs: object) -> None:
        super().__init__(**kwargs)  # type: ignore[arg-type]
        self.by_source: dict[str, Observation] = {}
        self.findings: list[Finding] = []
        self.hints: list[Finding] = []
        self.first_seen: dict[Key, float] = {}
        self.silenced: dict[Key, float] = {}  # the cloud on screen's silences in force: key -> until
        self._critical_seen: dict[Key, float] = {}
        self._pending_toast: dict[Key, Finding] = {}
        self.toasts: list[str] = []  # what was toasted (tests, the curious)
        self._made: RowMemo = {}  # each finding's row as last built (finding_rows)
        self._rows: list[Row] = []  # the rows last given to the table

    async def on_all_observed(self, message: AllObserved) -> None:
        await keys_first(self)
        self.show_all(latest_observations(self, message))

    def show_all(self, observations: dict[str, Observation]) -> None:
        self.by_source = dict(observations)
        if not self._mounted:
            return
        now = self._now()
        from tui.models.judged import latest_view  # with the first poll, after the first paint

        view = latest_view(observations)  # the cloud as its latest poll judged it (tui.models.judged)
        self.hints = list(view.hints) if view is not None else []
        self.findings = list(view.shown) if view is not None else []
        present = {f.key for f in self.findings}
        for key in list(self.first_seen):
            if key not in present:
                del self.first_seen[key]
        for key in present:
            self.first_seen.setdefault(key, now)
        self.silenced = self._silences(now)
        self._toast_new_criticals(now)
        self._sync(now)
        loud = [f for f in self.findings if f.key not in self.silenced]
        counts = {s: sum(members(f) for f in loud if f.severity == s) for s in ("critical", "warning", "info")}
        text = "No findings." if not self.findings else "  ".join(f"{n} {s}" for s, n in counts.items() if n)
        quiet = len(self.findings) - len(loud)
        if quiet:
            text = (text + "  ·  " if loud else "") + f"{quiet} silenced (X lifts)"
        if self.hints:
            text += f"  ·  {len(self.hints)} triage hint{'s' if len(self.hints) != 1 else ''} (likely causes) first"
        self.set_message(text)
        self.refresh_freshness(now)

    def body_mounted(self) -> None:
        if self.by_source:
            self._sync(self._now())
        super().body_mounted()

    def swap(self, observations: dict[str, Observation], first_seen: dict[Key, float]) -> None:
        """Another cloud's findings: its own first-seen times, and no "new critical" toast for what it had."""
        self.first_seen = dict(first_seen)
        self._pending_toast = {}
        now = self._now()
        self._critical_seen = {f.key: now for obs in observations.values() for f in obs.findings
                               if f.severity == "critical"}
        from tui.models.judged import latest_view  # with the first poll, after the first paint

        view = latest_view(observations)
        self._critical_seen.update({f.key: now for f in (view.hints if view is not None else ())
                                    if f.severity == "critical"})
        if self.table is not None:
            self.table.reset()
        self._made, self._rows = {}, []
        self.show_all(observations)

    def _silences(self, now: float) -> dict[Key, float]:
        """The cloud on screen's silences in force (key -> until); none outside a StacktopApp."""
        dash = dashboard(self.app)
        silences = None if dash is None else dash.silences
        return silences.active(now) if hasattr(silences, "active") else {}

    def _sync(self, now: float) -> None:
        """The table shows the findings: only the rows that read differently are built again, and when none
        does the table is given the very list it has (it returns at once)."""
        if self.table is None:
            return
        rows = finding_rows(self.findings, self.first_seen, now, self.silenced, self._made)
        if len(rows) != len(self._rows) or any(a is not b for a, b in zip(rows, self._rows, strict=True)):
            self._rows = rows
        self.table.sync(self._rows)

    def _toast_new_criticals(self, now: float) -> None:
        critical = [f for f in self.findings if f.severity == "critical" and f.key not in self.silenced]
        new = [f for f in critical if now - self._critical_seen.get(f.key, -1e18) > TOAST_FORGET_S]
        for f in critical:
            self._critical_seen[f.key] = now
        for key, seen in list(self._critical_seen.items()):
            if now - seen > TOAST_FORGET_S:
                del self._critical_seen[key]
        if not new:
            return
        first = not self._pending_toast
        self._pending_toast.update({f.key: f for f in new})
        if first:  # sources report one by one: gather what one incident brings, then toast once
            self.set_timer(TOAST_GATHER_S, self._flush_toast)

    def _flush_toast(self) -> None:
        present = {f.key: f for f in self.findings if f.severity == "critical" and f.key not in self.silenced}
        new = [present[k] for k in self._pending_toast if k in present]
        self._pending_toast = {}
        if not new:
            return
        lead = sorted(new, key=lambda f: (not f.kind.startswith("triage."), f.kind, f.subject))[0]
        if len(new) == 1:
            message = f"{lead.kind} {lead.subject}: {lead.summary}"
        else:
            message = f"{len(new)} new critical findings - {lead.kind} {lead.subject}: {lead.summary}"
        message = message if len(message) <= 300 else message[:297] + "..."
        self.toasts.append(message)
        del self.toasts[:-TOASTS_KEPT]
        self.app.notify(message, title="new critical", severity="error", timeout=10, markup=False)

    def on_mount(self) -> None:
        super().on_mount()
        if self.by_source:
            self.show_all(self.by_source)

    def refresh_freshness(self, now: float) -> None:
        failing = [obs.source for obs in self.by_source.values() if obs.error is not None]
        if not self.by_source:
            dash = dashboard(self.app)
            runners = None if dash is None else dash.runners
            text, level = ("waiting for the first poll", "loading") if runners else ("no sources", "off")
        else:
            text = f"sources failing: {', '.join(failing)}" if failing else "all sources ok"
            level = "stale" if failing else "ok"
        if text != getattr(self, "_subtitle_text", None):  # assigning repaints the whole pane, even unchanged
            self._subtitle_text = text
            self.border_subtitle = text
        self.set_level(level)

    def selected(self) -> Finding | None:
        if self.table is None:
            return None
        key = self.table.cursor_key()
        return next((f for f in self.findings if row_key(f) == key), None)

    def drill_down(self) -> None:
        """`enter`: the finding screen of the selected row (the app opens it)."""
        f = self.selected()
        if f is not None:
            self.post_message(DrillDown("finding", row_key(f)))

    def jump(self, f: Finding) -> None:
        """Open what `f` is about: its host or server screen, else its pane with the cursor on its row."""
        from tui.models.judged import latest_view  # with the first poll, after the first paint

        view = latest_view(self.by_source)  # where the poll's judgement sends it (tui.rules.triage.jump_target)
        what, name = view.jumps.get(f.key, ("pane", f.source or "findings")) if view is not None else \
            ("pane", f.source or "findings")
        app = self.app
        if what in ("host", "server"):
            self.post_message(DrillDown(what, name))
        else:
            dash = dashboard(app)
            show_source = None if dash is None else dash.show_source
            if callable(show_source):
                show_source(name)
            self._point_at(name, f)

    def _point_at(self, source: str, f: Finding) -> None:
        """In the pane just focused, put the cursor on the finding's row when it has one (a queue: keyed
        vhost + US + name; a Galera node: keyed by address)."""
        candidates = [f.subject]
        if f.evidence.get("queue") is not None:
            candidates.insert(0, f"{f.evidence.get('vhost', '/')}\x1f{f.evidence['queue']}")
        for pane in self.screen.query(SourcePane):
            if source != pane.SOURCE or pane.table is None:
                continue
            for key in candidates:
                try:
                    pane.table.move_cursor(row=pane.table.get_row_index(key), animate=False)
                    return
                except Exception:
                    continue
