"""The instance screen (enter on an instance row): five questions with their evidence, then actions
and events with request ids (latest first), ports and volumes.

It reads on demand through the instances collector (InstancesCollector.instance_detail, in a worker owned by
this screen: popping the screen cancels it). `r` reads again, `h` opens the host screen of the recorded host.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any, ClassVar

from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import VerticalScroll
from textual.screen import Screen
from textual.widgets import Footer, Static

from tui.breadcrumb import short_id
from tui.models.instances import InstanceAction, InstanceDetail, InstancesSnapshot, PortInfo, Server, VolumeInfo
from tui.rules.stuck import Answer, five_questions, with_task_since
from tui.rules.task_states import DEFAULT_STUCK_SECONDS
from tui.safetext import escape
from tui.screens.context import context
from tui.widgets.breadcrumb import Breadcrumb

VERDICT = {"ok": "[green]ok[/]", "bad": "[bold red]!![/]", "unknown": "[yellow]??[/]", "n/a": "[dim]--[/]"}


def _t(value: datetime | None) -> str:
    return value.strftime("%Y-%m-%d %H:%M:%SZ") if value else "-"


def header_text(server: Server) -> str:
    bits = [f"[b]{escape(server.name or '(no name)')}[/b]  {escape(server.id)}",
            f"status [b]{escape(server.status)}[/b]  vm_state {escape(str(server.vm_state))}  "
            f"task_state [b]{escape(str(server.task_state))}[/b]  host {escape(server.host or '-')}  "
            f"flavor {escape(server.flavor or '-')}",
            f"project {escape(server.project_id)}  user {escape(server.user_id)}  created {_t(server.created)}  "
            f"updated {_t(server.updated_at)}"]
    return "\n".join(bits)


def questions_text(answers: list[Answer]) -> str:
    lines = ["[b]Five questions[/b] (why is this instance stuck?)"]
    for i, a in enumerate(answers, 1):
        lines.append(f" {VERDICT.get(a.verdict, a.verdict)} {i}. {escape(a.question)} {escape(a.answer)}")
        if a.evidence:
            lines.append(f"       [dim]{escape(a.evidence)}[/]")
    return "\n".join(lines)


def actions_text(actions: tuple[InstanceAction, ...]) -> str:
    lines = ["[b]Actions and events[/b] (latest first)"]
    if not actions:
        lines.append(" none recorded")
    for a in actions:
        msg = f"  [red]{escape(a.message)}[/]" if a.message else ""
        lines.append(f" {_t(a.start_time)}  [b]{escape(a.action)}[/b]  {escape(a.request_id)}{msg}")
        for e in a.events:
            result = e.result or "running"
            style = "red" if result.lower() == "error" else "green" if result.lower() == "success" else "yellow"
            lines.append(f"     {_t(e.start_time)} -> {_t(e.finish_time)}  {escape(e.event)}  "
                         f"[{style}]{escape(result)}[/]  {escape(e.host or '')}")
            if e.traceback:
                last = [ln for ln in e.traceback.strip().splitlines() if ln.strip()][-1:]
                if last:
                    lines.append(f"       [dim]{escape(last[0].strip()[:160])}[/]")
    return "\n".join(lines)


def ports_text(ports: tuple[PortInfo, ...]) -> str:
    lines = ["[b]Ports[/b]"]
    if not ports:
        lines.append(" none")
    for p in ports:
        vif = escape(str(p.vif_type))
        if p.binding_failed:
            vif = "[bold red]binding_failed[/]"
        elif p.vif_type in (None, "unbound"):
            vif = f"[yellow]{vif}[/]"
        status = f"[yellow]{escape(p.status)}[/]" if p.status != "ACTIVE" else escape(p.status)
        lines.append(f" {escape(p.id)}  ips {escape(', '.join(p.fixed_ips) or '-')}  binding host "
                     f"{escape(p.binding_host or '-')}  vif_type {vif}  status {status}")
    return "\n".join(lines)


def volumes_text(volumes: tuple[VolumeInfo, ...]) -> str:
    lines = ["[b]Volumes[/b]"]
    if not volumes:
        lines.append(" none")
    for v in volumes:
        dot = {True: "yes", False: "no", None: "?"}[v.delete_on_termination]
        lines.append(f" {escape(v.id)} {escape(v.name)}  {escape(v.status)}  {v.size or '?'} GB  device "
                     f"{escape(v.device or '-')}  {escape(v.attach_status or '')}  delete_on_termination {dot}"
                     f"  backend {escape(v.backend_host or '-')}")
    return "\n".join(lines)


def errors_text(errors: dict[str, str] | Any) -> str:
    if not errors:
        return ""
    return "\n".join(f"[yellow]could not read {escape(k)}: {escape(v)}[/]" for k, v in errors.items())


def detail_text(detail: InstanceDetail, now: datetime, stuck: Any, known: Server | None = None) -> str:
    """`known`: the instances source's last observation of this server (when its task_state began)."""
    answers = five_questions(with_task_since(detail.server, known), now, stuck, detail.host_health, detail.allocations,
                             health_error=detail.errors.get("host"),
                             allocations_error=detail.errors.get("allocations"))
    parts = [header_text(detail.server), questions_text(answers), actions_text(detail.actions),
             ports_text(detail.ports), volumes_text(detail.volumes), errors_text(dict(detail.errors))]
    return "\n\n".join(p for p in parts if p)


class InstanceScreen(Screen[None]):
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("escape", "close", "Back"),
        Binding("h", "host", "Host screen", tooltip="the host screen of the instance's host"),
        Binding("r", "reload", "Refresh", tooltip="refresh: read the instance again"),
        Binding("enter", "noop", show=False),
    ]

    DEFAULT_CSS = """
    InstanceScreen > VerticalScroll { border: round $stacktop-focus; padding: 0 1; }
    InstanceScreen #instance-body { width: 100%; height: auto; }
    """

    def __init__(self, server_id: str) -> None:
        super().__init__()
        self.server_id = server_id
        self.crumb = short_id(server_id)
        self.detail: InstanceDetail | None = None
        self.error: str | None = None

    def compose(self) -> ComposeResult:
        yield Breadcrumb()
        with VerticalScroll(id="instance-scroll"):
            yield Static(self._initial_text(), id="instance-body")
        yield Footer()

    def on_mount(self) -> None:
        self.query_one(VerticalScroll).border_title = f"instance {escape(self.server_id)}"
        self.query_one(VerticalScroll).focus()
        self.action_reload()

    # -- data
    def _collector(self) -> Any:
        return context(self.app).collector("instances")

    def _known(self) -> Server | None:
        snap = context(self.app).snapshot("instances")
        return snap.server(self.server_id) if isinstance(snap, InstancesSnapshot) else None

    def _now(self) -> datetime:
        return context(self.app).now_utc()

    def _stuck(self) -> Any:
        collector = self._collector()
        return getattr(collector, "stuck", None) or DEFAULT_STUCK_SECONDS

    def _initial_text(self) -> str:
        known = self._known()
        head = header_text(known) + "\n\n" if known is not None else ""
        return head + "reading server, actions, ports, volumes, allocations..."

    def _why_not_read(self) -> str:
        ctx = context(self.app)
        if ctx.replaying:
            return ctx.cannot_read("actions, ports, volumes and allocations are not read")
        return "the instances source is not running"

    def action_reload(self) -> None:
        self.run_worker(self._load(), group="instance-detail", exclusive=True, exit_on_error=False)

    async def _load(self) -> None:
        body = self.query_one("#instance-body", Static)
        collector = self._collector()
        loader = getattr(collector, "instance_detail", None)
        if loader is None:
            body.update(self._initial_text().replace("reading", "cannot read") +
                        f"\n[yellow]{escape(self._why_not_read())}[/]")
            return
        try:
            detail = await loader(self.server_id)
        except Exception as exc:  # SourceError/NotFound: say it here, keep the screen
            self.error = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
            body.update(self._initial_text().split("reading")[0] + f"[red]{escape(self.error)}[/]")
            return
        self.detail = detail
        self.error = None
        body.update(detail_text(detail, self._now(), self._stuck(), self._known()))

    # -- keys
    def action_host(self) -> None:
        server = self.detail.server if self.detail is not None else self._known()
        host = server.host if server is not None else None
        if not host:
            self.notify("this server has no host recorded (it never got past scheduling)", timeout=4)
            return
        try:
            from tui.screens.host import HostScreen
        except ImportError:
            self.notify(f"host screen for {host}: not available yet", timeout=4)
            return
        self.app.push_screen(HostScreen(host))

    def action_close(self) -> None:
        self.app.pop_screen()

    def action_noop(self) -> None:
        return None
