"""A plain host screen: that host's compute services, network agents and volume services, and the findings
about it. It reads the services observation the app already holds (no I/O of its own) and re-renders once a
second, so countdowns keep ticking. The host drill-down (issue 9) grows this screen later.
"""

from __future__ import annotations

import dataclasses
from typing import Any, ClassVar

from rich.markup import escape
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Vertical
from textual.screen import Screen
from textual.widgets import Footer, Static

from tui.config import Thresholds
from tui.models.finding import Finding, sort_findings
from tui.models.observation import Observation
from tui.models.services import ServicesSnapshot
from tui.widgets.keyed_table import KeyedTable
from tui.widgets.services_pane import COLUMNS, _dt, build_rows

SOURCE = "services"


def on_host(host: str, name: str) -> bool:
    """cinder-volume hosts are `host@backend`; agents and computes use the bare host name."""
    return name == host or name.startswith(host + "@")


def host_snapshot(snapshot: ServicesSnapshot, host: str) -> ServicesSnapshot:
    def only(section: Any) -> Any:
        return dataclasses.replace(section, rows=tuple(r for r in section.rows if on_host(host, r.host)))

    return dataclasses.replace(snapshot, compute=only(snapshot.compute), network=only(snapshot.network),
                               volume=only(snapshot.volume))


def host_findings(findings: tuple[Finding, ...] | list[Finding], host: str) -> list[Finding]:
    def about(f: Finding) -> bool:
        ev = f.evidence
        return (on_host(host, f.subject) or on_host(host, f.subject.rpartition("@")[2])
                or on_host(host, str(ev.get("host") or "")) or host in (ev.get("hosts") or ()))

    return sort_findings([f for f in findings if about(f)])


class HostScreen(Screen[None]):
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("escape", "close", "Back"),
        Binding("enter", "noop", show=False),
    ]

    DEFAULT_CSS = """
    HostScreen > Vertical { border: round $accent; }
    HostScreen #host-title { padding: 0 1; height: auto; }
    HostScreen #host-findings { padding: 0 1; height: auto; max-height: 50%; }
    HostScreen KeyedTable { height: 1fr; }
    """

    def __init__(self, host: str) -> None:
        super().__init__()
        self.host = host
        self.table: KeyedTable | None = None
        self._shown: Observation | None = None

    def compose(self) -> ComposeResult:
        with Vertical():
            yield Static(f"[b]host {escape(self.host)}[/b]", id="host-title")
            self.table = KeyedTable(COLUMNS, id="host-services")
            yield self.table
            yield Static("", id="host-findings")
        yield Footer()

    def on_mount(self) -> None:
        self.query_one(Vertical).border_title = f"host {self.host}"
        self.refresh_view()
        self.set_interval(1.0, self.refresh_view)
        if self.table is not None:
            self.table.focus()

    def _observation(self) -> Observation | None:
        return getattr(self.app, "observations", {}).get(SOURCE)

    def refresh_view(self) -> None:
        obs = self._observation()
        if self.table is None or obs is None or not isinstance(obs.snapshot, ServicesSnapshot):
            self.query_one("#host-findings", Static).update("waiting for the control-plane source")
            return
        clock = getattr(self.app, "clock", None)
        now = _dt(clock() if callable(clock) else None) or _dt(obs.ok_at)
        assert now is not None
        thresholds = getattr(getattr(self.app, "config", None), "thresholds", None) or Thresholds()
        rows = build_rows(host_snapshot(obs.snapshot, self.host), thresholds, now, _dt(obs.ok_at))
        self.table.sync(rows)
        if obs is not self._shown:
            self._shown = obs
            findings = host_findings(obs.findings, self.host)
            styles = {"critical": "bold red", "warning": "yellow", "info": "cyan"}
            lines = [f"[{styles[f.severity]}]{f.severity.upper()}[/] {escape(f.kind)}: {escape(f.summary)}\n"
                     f"    next: {escape(f.next_step)}" for f in findings]
            error = f"[red]source error: {escape(obs.error)}[/]\n" if obs.error else ""
            self.query_one("#host-findings", Static).update(
                error + ("\n".join(lines) if lines else f"No findings about {escape(self.host)}."))

    def action_close(self) -> None:
        self.app.pop_screen()

    def action_noop(self) -> None:
        return None
