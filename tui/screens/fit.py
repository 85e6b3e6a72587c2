"""`:fit FLAVOR [TRAIT...]`: why won't it fit? (capacity is a constraint problem.)

Aggregate free capacity is shown next to the computes placement really offers for the request
(GET /allocation_candidates, the scheduler's own question), and for every other compute the resource or trait
that rules it out (tui.rules.fit). A TRAIT is required; `!TRAIT` forbids it. Read-only: the screen names
constraints and suggests nothing that changes the cloud.
"""

from __future__ import annotations

import asyncio
from typing import Any, ClassVar

from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import VerticalScroll
from textual.screen import Screen
from textual.widgets import Footer, Static

from tui.models.placement import FitReport, HostFit, rc_sort_key
from tui.safetext import escape
from tui.screens.context import context
from tui.screens.host import app_now, client_getter
from tui.screens.live import own_read
from tui.widgets.breadcrumb import Breadcrumb
from tui.widgets.key_scroll import KeyScroll
from tui.widgets.read_at import ReadAtLine

MAX_HOSTS = 300


def _free(h: HostFit, rcs: list[str]) -> str:
    return ", ".join(f"{rc} {h.free.get(rc, 0)}" for rc in rcs)


def fit_text(report: FitReport) -> str:
    req = report.request
    rcs = sorted(req.resources, key=rc_sort_key)
    lines = [f"[b]{escape(report.summary_line())}[/b]"]
    traits = [*req.required, *(f"!{t}" for t in req.forbidden)]
    if traits:
        lines.append(f"traits: {escape(' '.join(traits))}")
    lines += [f"[dim]{escape(n)}[/]" for n in req.notes]
    lines.append("")
    lines.append("[b]Aggregate free capacity[/b] (what a dashboard adds up; not a host)")
    lines.append("  " + escape(", ".join(f"{rc} {report.aggregate_free.get(rc, 0)} (asks {req.resources[rc]})"
                                          for rc in rcs)))
    can = [h for h in report.hosts if h.candidate]
    cannot = [h for h in report.hosts if not h.candidate]
    lines.append("")
    lines.append(f"[b]Can take it[/b] ({len(can)}, from placement's allocation candidates)")
    if not can:
        lines.append("  [bold red]none: no single compute can hold this request[/]")
    for h in can[:MAX_HOSTS]:
        lines.append(f"  [green]{escape(h.host or h.name)}[/]  free {escape(_free(h, rcs))}")
    lines.append("")
    lines.append(f"[b]Ruled out[/b] ({len(cannot)})")
    for h in cannot[:MAX_HOSTS]:
        lines.append(f"  [yellow]{escape(h.host or h.name)}[/]: " + escape("; ".join(h.reasons)))
    shown = min(len(can), MAX_HOSTS) + min(len(cannot), MAX_HOSTS)
    if shown < len(report.hosts):
        lines.append(f"  [dim]... {len(report.hosts) - shown} more not shown[/]")
    if report.errors:
        lines.append("")
        lines += [f"[yellow]could not read {escape(k)}: {escape(v)}[/]" for k, v in sorted(report.errors.items())]
    return "\n".join(lines)


class FitScreen(Screen[None]):
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("escape", "close", "Back"),
        Binding("r", "reload", "Refresh", tooltip="refresh: ask placement again"),
    ]

    DEFAULT_CSS = """
    FitScreen > VerticalScroll { border: round $stacktop-focus; padding: 0 1; }
    FitScreen #fit-body { width: 100%; height: auto; }
    """

    def __init__(self, flavor: str, traits: list[str] | tuple[str, ...] = ()) -> None:
        super().__init__()
        self.flavor = flavor
        self.traits = tuple(traits)
        self.crumb = " ".join(("fit", flavor, *self.traits))
        self.report: FitReport | None = None
        self.error: str | None = None
        self.read_at: float | None = None  # when placement last answered (the app's clock)
        self.reading = False

    def compose(self) -> ComposeResult:
        yield Breadcrumb()
        with KeyScroll(id="fit-scroll"):
            yield ReadAtLine(id="read-at")
            yield Static(f"asking placement where {escape(self.flavor)} fits...", id="fit-body")
        yield Footer()

    def on_mount(self) -> None:
        title = " ".join((self.flavor, *self.traits))
        self.query_one(VerticalScroll).border_title = f"fit {escape(title)}"
        self.query_one(VerticalScroll).focus()
        self.action_reload()

    def read_again(self) -> None:
        self.action_reload()

    def action_reload(self) -> None:
        self.run_worker(self._load(), group="fit", exclusive=True, exit_on_error=False)

    async def _load(self) -> None:
        from tui.openstack.placement_reads import explain_fit

        body = self.query_one("#fit-body", Static)
        getter = client_getter(self.app)
        if getter is None:
            body.update(f"[yellow]{escape(context(self.app).cannot_read('nothing to ask placement'))}[/]")
            return
        self.reading = True
        self._show_read_at()
        try:
            client = await asyncio.to_thread(getter)
            report = await explain_fit(client, self.flavor, self.traits, clock=lambda: app_now(self.app))
        except Exception as exc:  # SourceError (unknown flavor, placement down): one line, keep the screen
            self.error = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
            body.update(f"[red]{escape(self.error)}[/]")
            return
        finally:
            self.reading = False
            self._show_read_at()
        self.report, self.error, self.read_at = report, None, context(self.app).now()
        body.update(fit_text(report))
        self._show_read_at()

    def _show_read_at(self) -> None:
        self.query_one("#read-at", ReadAtLine).show([own_read("placement", self.read_at, reading=self.reading,
                                                              error=self.error)])

    def action_close(self) -> None:
        self.app.pop_screen()


def open_fit(app: Any, args: list[str], name: str = "") -> None:
    """`:fit FLAVOR [TRAIT...]` (command table handler)."""
    app.push_screen(FitScreen(args[0], args[1:]))
