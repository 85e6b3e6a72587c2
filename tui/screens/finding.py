"""The finding screen (enter on a row of the findings pane): one finding whole, following its source live.

It shows the severity, kind and subject, the whole summary, the owner component and host, the log to open
first, the next step, the command the next step names (as the cloud's judgement reads them: tui.drilldowns)
and every piece of evidence.
Everything in it comes from the cloud (names, faults, ids) and is rendered inert (tui.safetext).

Live (tui.screens.live): each new observation of the finding's source (every source for a triage hint)
re-renders it; when the finding is no longer reported the screen keeps its last text and says `CLEARED at
HH:MM:SS UTC`; a finding that comes back is shown live again. `y` copies the command, built from its words
and shell-quoted (tui.shell_command), to the clipboard (OSC 52), `enter` opens what the finding is about
(the host or instance screen, or its pane), `r` refreshes every source.
"""

from __future__ import annotations

import json
import re
from typing import Any, ClassVar

from rich.console import Group, RenderableType
from rich.table import Table
from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Vertical, VerticalScroll
from textual.widgets import Footer, Static

from tui.breadcrumb import short_id
from tui.drilldowns import finding_reading
from tui.freshness import utc_clock_time
from tui.jsonable import to_jsonable
from tui.models.finding import Finding, FindingDetail
from tui.models.observation import Observation
from tui.safetext import clean, escape
from tui.safetext import text as safe_text
from tui.screens.context import context
from tui.screens.live import EVERY_SOURCE, LiveScreen
from tui.widgets.breadcrumb import Breadcrumb
from tui.widgets.findings_pane import FindingsPane, dedupe, row_key
from tui.widgets.key_scroll import KeyScroll
from tui.widgets.read_at import ReadAtLine

SEVERITY_STYLE = {"critical": "bold red", "warning": "yellow", "info": "cyan"}
TRIAGE_SOURCE = "triage"
UNCOPYABLE = ("not copyable: a name in it holds a control character (written out in the next step); type the "
              "command yourself")
UUID = re.compile(r"[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}")


def split_key(key: str) -> tuple[str, str]:
    """A findings-pane row key (`kind|subject`) -> (kind, subject); kinds hold no `|`, subjects may."""
    kind, _, subject = key.partition("|")
    return kind, subject


def crumb_subject(subject: str) -> str:
    """A server id as people say it (its first block); any other subject as it is, up to 40 characters."""
    if UUID.fullmatch(subject):
        return short_id(subject)
    return subject if len(subject) <= 40 else subject[:39] + "…"


def evidence_value(value: Any) -> str:
    """A piece of evidence as text: a list one item a line (a (kind, subject) pair as `kind  subject`, as the
    findings pane lists them), a mapping `key: value` a line, yes/no, numbers and strings as they are; JSON only
    for what nests deeper."""
    plain = to_jsonable(value)
    if isinstance(plain, list) and all(_flat(item) or (isinstance(item, list) and all(map(_flat, item)))
                                       for item in plain):
        lines = ["  ".join(map(_scalar, item)) if isinstance(item, list) else _scalar(item) for item in plain]
        return "\n".join(lines) if lines else "none"
    if isinstance(plain, dict) and all(_flat(v) for v in plain.values()):
        return "\n".join(f"{k}: {_scalar(v)}" for k, v in plain.items()) or "none"
    if _flat(plain):
        return _scalar(plain)
    return json.dumps(plain, ensure_ascii=False, separators=(", ", ": "))


def _flat(value: Any) -> bool:
    return value is None or isinstance(value, (str, int, float, bool))


def _scalar(value: Any) -> str:
    if isinstance(value, bool):
        return "yes" if value else "no"
    return "-" if value is None else str(value)


def finding_body(f: Finding, detail: FindingDetail) -> RenderableType:
    """The whole finding, inert: every string is a Text (never parsed as markup), controls written out."""
    head = Text.assemble((f.severity.upper(), SEVERITY_STYLE[f.severity]), "  ", (clean(f.kind), "bold"))
    facts = Table.grid(padding=(0, 2))
    facts.add_column(style="bold", no_wrap=True)
    facts.add_column(overflow="fold")
    owner = detail.owned_by or detail.owner
    if detail.commands:
        command = Text()
        for index, offered in enumerate(detail.commands):
            if index:
                command.append("\n")
            command.append_text(safe_text(offered.text, style="bold"))
            mark = "WRITE: changes the cloud" if offered.write else "read-only"
            key = "y copies it" if index == 0 else "y again copies it"
            command.append(f"   ({mark}; {key})", style="bold red" if offered.write else "dim")
    else:
        command = Text(UNCOPYABLE if detail.uncopyable else "none given by the rule", style="dim")
    for label, value in (("subject", safe_text(f.subject)), ("source", safe_text(f.source or "-")),
                         ("summary", safe_text(f.summary)), ("owner", safe_text(owner)),
                         ("host", safe_text(detail.host or "-")),
                         ("log to open", safe_text(detail.log or "-")),
                         ("next step", safe_text(f.next_step or "-")), ("command", command)):
        facts.add_row(label, value)
    evidence = Table.grid(padding=(0, 2))
    evidence.add_column(style="dim", no_wrap=True)
    evidence.add_column(overflow="fold")
    for key, value in f.evidence.items():
        if key == "command":
            continue  # shown above, quoted for a shell
        evidence.add_row(safe_text(key), safe_text(evidence_value(value)))
    if not f.evidence.keys() - {"command"}:
        evidence.add_row("", Text("none", style="dim"))
    return Group(head, Text(""), facts, Text(""), Text("Evidence", style="bold"), evidence)


class FindingScreen(LiveScreen):
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("escape", "close", "Back"),
        Binding("y", "copy", "Copy command", tooltip="copy the command the next step names to the clipboard"),
        Binding("enter", "open_subject", "Open subject",
                tooltip="the host or instance screen the finding is about, or its pane"),
        Binding("l", "log_lines", "Log lines",
                tooltip="the lines that matter from the owner's log on its host ([[recorder.log_sources]])"),
    ]

    SOURCES: ClassVar[tuple[str, ...]] = (EVERY_SOURCE,)

    DEFAULT_CSS = """
    FindingScreen > Vertical { border: round $stacktop-focus; }
    FindingScreen #finding-cleared { padding: 0 1; height: auto; color: $warning; text-style: bold; }
    FindingScreen #finding-cleared.-hidden { display: none; }
    FindingScreen #finding-scroll { height: 1fr; padding: 0 1; }
    FindingScreen #finding-body { width: 100%; height: auto; }
    """

    def __init__(self, key: str) -> None:
        super().__init__()
        self.key = key
        self.kind, self.subject = split_key(key)
        self.crumb = f"{self.kind} {crumb_subject(self.subject)}"
        self.finding: Finding | None = None  # the latest seen (kept once cleared)
        self.detail: FindingDetail | None = None  # ... and its reading (owner, host, log, command)
        self.cleared_at: float | None = None
        self.holder: str | None = None  # the source whose observation reports it
        self.copies = 0  # `y` presses: each copies the next command offered (the diagnostic first)
        self._shown: Any = None

    def compose(self) -> ComposeResult:
        yield Breadcrumb()
        with Vertical():
            yield ReadAtLine(id="read-at")
            yield Static("", id="finding-cleared", classes="-hidden")
            with KeyScroll(id="finding-scroll"):
                yield Static("", id="finding-body")
        yield Footer()

    def on_mount(self) -> None:
        self.query_one(Vertical).border_title = escape(f"finding {self.kind} {self.subject}")
        self.query_one(VerticalScroll).focus()
        self._seen(self.current())
        self.render_finding()
        self.follow_live()

    # -- data
    def current(self) -> Finding | None:
        """The finding as the app's latest observations report it, or None when none does any more."""
        observations = context(self.app).observations
        if self.kind.startswith(f"{TRIAGE_SOURCE}."):
            from tui.models.judged import latest_view

            view = latest_view(observations)  # the hints the runner judged with the cloud's latest poll
            found: list[Finding] = list(view.hints) if view is not None else []
        else:
            holders = {name: obs for name, obs in observations.items()
                       if any(f.key == (self.kind, self.subject) for f in obs.findings)}
            if holders:
                self.holder = min(holders)
            found = [f for obs in holders.values() for f in obs.findings if f.key == (self.kind, self.subject)]
        return next((f for f in dedupe(found) if row_key(f) == self.key), None)

    def _seen(self, finding: Finding | None) -> None:
        """The finding as now reported, with its reading as the cloud's latest judgement made it."""
        if finding is not None:
            self.finding, self.detail = finding, finding_reading(finding, context(self.app).observations)

    def sources(self) -> tuple[str, ...]:
        if self.kind.startswith(f"{TRIAGE_SOURCE}.") or self.holder is None:
            return super().sources()  # a triage hint is derived from every source
        return (self.holder,)

    def observed(self, observation: Observation) -> None:
        now = self.current()
        if now is not None:
            self._seen(now)
            self.cleared_at = None
        elif self.finding is not None and self.cleared_at is None:
            self.cleared_at = observation.ok_at or observation.tried_at or context(self.app).now()
        self.render_finding()

    # -- rendering
    def render_finding(self) -> None:
        banner = self.query_one("#finding-cleared", Static)
        body = self.query_one("#finding-body", Static)
        if self.finding is None:
            state: Any = ("absent",)
            text: RenderableType = safe_text(f"{self.kind} about {self.subject} is not reported by the latest "
                                             "observations", style="yellow")
        else:
            state = (self.finding, self.cleared_at)
            assert self.detail is not None
            text = finding_body(self.finding, self.detail)
        if state == self._shown:
            return  # Static.update repaints even the same content
        self._shown = state
        if self.cleared_at is not None:
            banner.update(f"CLEARED at {utc_clock_time(self.cleared_at)}: the latest read no longer reports it "
                          "(shown as last seen)")
        banner.set_class(self.cleared_at is None, "-hidden")
        body.update(text)

    @property
    def command(self) -> str | None:
        return self.detail.command if self.detail is not None else None

    # -- keys
    def action_copy(self) -> None:
        """Copy the next command offered: the read-only (diagnostic) one first, a write one after it, said."""
        detail = self.detail
        if detail is None or not detail.commands:
            uncopyable = detail is not None and detail.uncopyable
            self.notify(UNCOPYABLE if uncopyable else "this finding's next step names no command to copy",
                        severity="warning" if uncopyable else "information", timeout=4)
            return
        offered = detail.commands[self.copies % len(detail.commands)]
        self.copies += 1
        self.app.copy_to_clipboard(offered.text)  # quoted words without any control (shell_command.copyable)
        if offered.write:
            self.notify(f"copied a WRITE command (it changes the cloud): {offered.text}", severity="warning",
                        timeout=4)
        else:
            more = "; y again: the next one" if len(detail.commands) > 1 else ""
            self.notify(f"copied the read-only command: {offered.text}{more}", timeout=3)

    def action_open_subject(self) -> None:
        if self.finding is None:
            return
        pane = next(iter(self.app.screen_stack[0].query(FindingsPane).results(FindingsPane)), None)
        if pane is not None:
            pane.jump(self.finding)

    def action_log_lines(self) -> None:
        if self.finding is not None:
            from tui.screens.loglines import open_log_lines

            open_log_lines(self.app, "finding", self.finding)

    def action_close(self) -> None:
        self.app.pop_screen()
