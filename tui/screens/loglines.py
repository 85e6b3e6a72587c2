"""The log-lines screen (`l` on the finding screen and the instance screen): the lines that matter from the
owning component's log on its host, read through `[[recorder.log_sources]]` (tui.exercises.hostlogs).

One block per read (a host, a file): the lines naming the request id or the instance id, else the last
ERROR/WARNING lines around when the finding or the state began; a host that cannot be read is the one line
saying why. The reads run in a worker owned by the screen, each bounded by its source's timeout: the screen
never waits on a hung host. `r` reads again. Every line comes from a log and is shown inert.
"""

from __future__ import annotations

import asyncio
from collections.abc import Iterable
from typing import Any, ClassVar

from rich.console import Group, RenderableType
from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Vertical, VerticalScroll
from textual.screen import Screen
from textual.widgets import Footer, Static

from tui.config import LogSource
from tui.exercises.hostlogs import HostLines, LogQuery, finding_query, instance_query, query_lines, sources_for
from tui.safetext import escape
from tui.safetext import text as safe_text
from tui.widgets.breadcrumb import Breadcrumb
from tui.widgets.key_scroll import KeyScroll


def blocks_body(query: LogQuery, blocks: list[HostLines], configured: bool) -> RenderableType:
    """The blocks, inert: every line from a log is a Text, never markup."""
    if not configured:
        return Group(safe_text(f"No [[recorder.log_sources]] entry is for {query.owner}.", style="yellow"),
                     Text("Add one with its hosts and a {host} template (README: Per-host log sources); "
                          "`stacktop init --kolla` / `--osa` writes them.", style="dim"))
    parts: list[RenderableType] = []
    for b in blocks:
        where = b.host or "-"
        head = Text.assemble((f"{b.service} on {where}", "bold"), "  ", (b.label, "dim"))
        parts.append(head)
        if b.error:
            parts.append(safe_text(f"  cannot read: {b.error}", style="red"))
        if b.lines:
            parts.append(safe_text(f"  {len(b.lines)} line(s), by {b.chosen_by}:", style="dim"))
            parts += [safe_text("  " + ln[:600]) for ln in b.lines]
        elif not b.error:
            parts.append(safe_text(f"  no line names {', '.join(query.ids) or 'the ids'} and no ERROR/WARNING line",
                                   style="dim"))
        parts.append(Text(""))
    return Group(*parts)


class LogLinesScreen(Screen[None]):
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("escape", "close", "Back"),
        Binding("r", "reload", "Read again"),
    ]

    DEFAULT_CSS = """
    LogLinesScreen > Vertical { border: round $stacktop-focus; }
    LogLinesScreen #loglines-status { padding: 0 1; height: auto; color: $text-muted; }
    LogLinesScreen #loglines-scroll { height: 1fr; padding: 0 1; }
    LogLinesScreen #loglines-body { width: 100%; height: auto; }
    """

    def __init__(self, query: LogQuery, sources: Iterable[LogSource]) -> None:
        super().__init__()
        self.query_ = query
        self.sources = tuple(sources)
        self.crumb = f"logs {query.owner}"
        self.blocks: list[HostLines] | None = None

    def compose(self) -> ComposeResult:
        yield Breadcrumb()
        with Vertical():
            yield Static("", id="loglines-status")
            with KeyScroll(id="loglines-scroll"):
                yield Static("", id="loglines-body")
        yield Footer()

    def on_mount(self) -> None:
        self.query_one(Vertical).border_title = escape(f"log lines of {self.query_.title}")
        self.query_one(VerticalScroll).focus()
        self.action_reload()

    def action_reload(self) -> None:
        self.run_worker(self._read(), group="loglines", exclusive=True, exit_on_error=False)

    async def _read(self) -> None:
        status = self.query_one("#loglines-status", Static)
        body = self.query_one("#loglines-body", Static)
        configured = bool(sources_for(self.sources, self.query_.owner))
        ids = ", ".join(self.query_.ids) or "no id"
        if configured:
            status.update(escape(f"reading {self.query_.title} for {ids}..."))
        blocks = await asyncio.to_thread(query_lines, self.sources, self.query_) if configured else []
        self.blocks = blocks
        failed = sum(1 for b in blocks if b.error)
        status.update(escape(f"{len(blocks)} read(s) of {self.query_.title} for {ids}"
                             + (f", {failed} could not be read" if failed else "") + "  (r reads again)"))
        body.update(blocks_body(self.query_, blocks, configured))

    def action_close(self) -> None:
        self.app.pop_screen()


def open_log_lines(app: Any, what: str, subject: Any, request_ids: Iterable[str] = ()) -> None:
    """Push the log-lines screen for a finding or an instance (Server); replays read no log."""
    from tui.screens.context import context

    if context(app).replaying:
        app.notify(context(app).cannot_read("logs are not read"), severity="warning")
        return
    query = finding_query(subject) if what == "finding" else instance_query(subject, request_ids)
    app.push_screen(LogLinesScreen(query, app.config.recorder.log_sources))
