"""`:audit`: the whole-cloud stale-allocation audit (also in the command palette through the command table).

Every provider's allocations against the hypervisors' servers and the in-progress migrations, read with
bounded concurrency (tui.openstack.placement_reads.audit_cloud) in a worker owned by this screen, with a progress bar.
One row per provider: consumers, instances, stale ones and the phantom capacity ("placement says 6 of 8 VCPU
used, 2 instances really use 2"); the findings below. Enter opens the host screen of the selected row; `r`
runs the audit again. Read-only: it reports, it changes nothing.
"""

from __future__ import annotations

import asyncio
from typing import Any, ClassVar

from rich.text import Text
from textual import on
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Vertical, VerticalScroll
from textual.screen import Screen
from textual.widgets import DataTable, Footer, ProgressBar, Static

from tui.models.placement import AuditReport, ProviderAudit
from tui.safetext import escape
from tui.screens.context import context
from tui.screens.host import app_now, client_getter, findings_text
from tui.screens.live import own_read
from tui.widgets.breadcrumb import Breadcrumb
from tui.widgets.keyed_table import KeyedTable
from tui.widgets.read_at import ReadAtLine

COLUMNS = ("host", "provider", "consumers", "instances", "migrations", "stale", "phantom capacity")


def audit_rows(report: AuditReport) -> list[tuple[str, tuple[Any, ...]]]:
    """Providers with stale consumers first."""
    rows = []
    ordered = sorted(report.providers, key=lambda a: (not a.stale, not any(c.verdict == "migration_stuck"
                                                                           for c in a.consumers), a.host or "~"))
    for a in ordered:
        stale = len(a.stale)
        stuck = sum(1 for c in a.consumers if c.verdict == "migration_stuck")
        stale_cell: Any = Text(str(stale), style="bold red") if stale else "0"
        if stuck:
            stale_cell = Text(f"{stale} (+{stuck} stuck migration{'s' if stuck > 1 else ''})",
                              style="bold red" if stale else "magenta")
        host: Any = a.host or Text("unresolved", style="yellow")
        phantom = "; ".join(a.phantom_lines()) or "-"
        rows.append((a.provider_uuid, (host, a.provider_name, str(len(a.consumers)), str(a.instance_count),
                                       str(a.migration_count), stale_cell, phantom)))
    return rows


def summary_text(report: AuditReport) -> str:
    stale = sum(1 for a in report.providers for c in a.consumers if c.verdict == "stale")
    suspected = sum(1 for a in report.providers for c in a.consumers if c.verdict == "suspected")
    stuck = sum(1 for a in report.providers for c in a.consumers if c.verdict == "migration_stuck")
    hosts = sum(1 for a in report.providers if a.phantom)
    head = (f"{len(report.providers)} providers audited in {report.duration_s:.1f} s ({report.requests} requests): "
            f"{stale} stale, {suspected} suspected, {stuck} held by stuck migrations; phantom capacity on "
            f"{hosts} host{'s' if hosts != 1 else ''}")
    errors = "".join(f"\n[yellow]could not read {escape(k)}: {escape(v)}[/]" for k, v in report.errors.items())
    return escape(head) + errors


def provider_errors(audits: tuple[ProviderAudit, ...]) -> str:
    lines = [f"[yellow]{escape(a.provider_name)}: {escape(k)}: {escape(v)}[/]" for a in audits
             for k, v in a.errors.items()]
    return "\n".join(lines)


class AuditScreen(Screen[None]):
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("escape", "close", "Back"),
        Binding("r", "rerun", "Refresh", tooltip="refresh: run the audit again"),
        Binding("enter", "open_host", "Host screen"),
    ]

    DEFAULT_CSS = """
    AuditScreen > Vertical { border: round $stacktop-focus; }
    AuditScreen #audit-status { padding: 0 1; height: auto; }
    AuditScreen #audit-progress { padding: 0 1; height: 1; }
    AuditScreen #audit-hosts { height: auto; max-height: 60%; }
    AuditScreen #audit-scroll { height: 1fr; }
    AuditScreen #audit-findings { padding: 0 1; height: auto; }
    """

    def __init__(self) -> None:
        super().__init__()
        self.report: AuditReport | None = None
        self.error: str | None = None
        self.running = False
        self.progress_seen: list[tuple[str, int, int]] = []
        self.table: KeyedTable | None = None
        self.crumb = "audit"
        self.read_at: float | None = None  # when the last audit finished (the app's clock)

    def compose(self) -> ComposeResult:
        yield Breadcrumb()
        with Vertical():
            yield ReadAtLine(id="read-at")
            yield Static("starting the audit...", id="audit-status")
            yield ProgressBar(id="audit-progress", show_eta=False)
            self.table = KeyedTable(COLUMNS, id="audit-hosts")
            yield self.table
            with VerticalScroll(id="audit-scroll"):
                yield Static("", id="audit-findings")
        yield Footer()

    def on_mount(self) -> None:
        self.query_one(Vertical).border_title = "placement audit: allocations vs instances and migrations"
        if self.table is not None:
            self.table.focus()
        self.action_rerun()

    @property
    def findings(self) -> list[Any]:
        return list(self.report.findings) if self.report is not None else []

    def _progress(self, phase: str, done: int, total: int) -> None:
        self.progress_seen.append((phase, done, total))
        bar = self.query_one("#audit-progress", ProgressBar)
        bar.update(total=max(total, 1), progress=done)
        self.query_one("#audit-status", Static).update(f"auditing: {escape(phase)} {done}/{total}")

    def read_again(self) -> None:
        self.action_rerun()

    def action_rerun(self) -> None:
        if self.running:
            return
        self.run_worker(self._run(), group="audit", exclusive=True, exit_on_error=False)

    async def _run(self) -> None:
        from tui.openstack.placement_reads import audit_cloud

        status = self.query_one("#audit-status", Static)
        getter = client_getter(self.app)
        if getter is None:
            status.update(f"[yellow]{escape(context(self.app).cannot_read('nothing to audit'))}[/]")
            return
        self.running = True
        self._show_read_at()
        try:
            client = await asyncio.to_thread(getter)
            report = await audit_cloud(client, progress=self._progress, clock=lambda: app_now(self.app))
        except Exception as exc:  # SourceError: say it, keep the screen
            self.error = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
            status.update(f"[red]audit failed: {escape(self.error)}[/]")
            return
        finally:
            self.running = False
            self._show_read_at()
        self.report, self.error, self.read_at = report, None, context(self.app).now()
        self._show_read_at()
        status.update(summary_text(report))
        bar = self.query_one("#audit-progress", ProgressBar)
        bar.update(total=1, progress=1)
        if self.table is not None:
            self.table.sync(audit_rows(report))
        findings = self.findings
        body = findings_text(findings) if findings else (
            "No stale allocation: every consumer is an instance on its host or an in-progress migration.")
        errors = provider_errors(report.providers)
        self.query_one("#audit-findings", Static).update(body + ("\n\n" + errors if errors else ""))

    def _show_read_at(self) -> None:
        self.query_one("#read-at", ReadAtLine).show([own_read("audit", self.read_at, reading=self.running,
                                                              error=self.error)])

    @on(DataTable.RowSelected, "#audit-hosts")
    def _row_selected(self, event: DataTable.RowSelected) -> None:
        event.stop()
        self.action_open_host()

    def action_open_host(self) -> None:
        if self.table is None or self.report is None:
            return
        key = self.table.cursor_key()
        audit = next((a for a in self.report.providers if a.provider_uuid == key), None)
        if audit is None:
            return
        if not audit.host:
            self.notify(f"provider {audit.provider_name} has no hypervisor behind it (host unresolved)", timeout=4)
            return
        from tui.screens.host import HostScreen

        self.app.push_screen(HostScreen(audit.host))

    def action_close(self) -> None:
        self.app.pop_screen()


def open_audit(app: Any, args: list[str], name: str = "") -> None:
    """`:audit` (command table handler)."""
    app.push_screen(AuditScreen())
