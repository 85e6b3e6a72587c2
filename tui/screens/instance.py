"""The instance screen (enter on an instance row): five questions with their evidence, then actions
and events with request ids (latest first), ports and volumes.

It reads on demand through the instances collector (InstancesCollector.instance_detail, in a worker owned by
this screen: popping the screen cancels it). `r` reads again, `h` opens the host screen of the recorded host,
`y` copies the instance id and `Y` the latest request id to the clipboard (OSC 52), quoted for a shell when they
need it (an id from the cloud is one argument when pasted, and nothing in it runs; one holding a control character
is not copied).

Live (tui.screens.live): every new observation of the instances source re-renders the screen, with the server
(status, task state, fault) and its host's health as that source last read them when it read them after the
screen's own read (`live_detail`): a host that dies while the screen is open turns question 4 red. When that
source sees the server change (status, task state, vm state, host, fault) the screen reads its actions, ports,
volumes and allocations again; it also does every OWN_READ_EVERY_S (or the source's interval, if longer) and on
`r`. The read-at line says when each was read, and every block says beside its title when its data was read,
STALE once that is older than its source allows.
"""

from __future__ import annotations

import dataclasses
from datetime import datetime
from typing import TYPE_CHECKING, Any, ClassVar

from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Vertical, VerticalScroll
from textual.widgets import Footer, Static

from tui.breadcrumb import short_id
from tui.drilldowns import instance_answers, stuck_after
from tui.freshness import utc_clock_time
from tui.models.instances import InstanceAction, InstanceDetail, InstancesSnapshot, PortInfo, Server, VolumeInfo
from tui.models.observation import Observation
from tui.safetext import escape
from tui.screens.context import context
from tui.screens.live import OWN_READ_EVERY_S, LiveScreen, own_block_read, own_read, own_read_due
from tui.shell_command import copyable
from tui.widgets.breadcrumb import Breadcrumb
from tui.widgets.key_scroll import KeyScroll
from tui.widgets.read_at import ReadAtLine, block_stamp

if TYPE_CHECKING:
    from tui.rules.stuck import Answer

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


def questions_text(answers: list[Answer], stamp: str = "") -> str:
    lines = [f"[b]Five questions[/b] (why is this instance stuck?){stamp}"]
    for i, a in enumerate(answers, 1):
        lines.append(f" {VERDICT.get(a.verdict, a.verdict)} {i}. {escape(a.question)} {escape(a.answer)}")
        if a.evidence:
            lines.append(f"       [dim]{escape(a.evidence)}[/]")
    return "\n".join(lines)


def actions_text(actions: tuple[InstanceAction, ...], stamp: str = "") -> str:
    lines = [f"[b]Actions and events[/b] (latest first){stamp}"]
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


def ports_text(ports: tuple[PortInfo, ...], stamp: str = "") -> str:
    lines = [f"[b]Ports[/b]{stamp}"]
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


def volumes_text(volumes: tuple[VolumeInfo, ...], stamp: str = "") -> str:
    lines = [f"[b]Volumes[/b]{stamp}"]
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


def detail_text(detail: InstanceDetail, now: datetime, stuck: Any, known: Server | None = None,
                hosts: InstancesSnapshot | None = None, stamps: dict[str, str] | None = None) -> str:
    """`known`: the instances source's last observation of this server (when its task_state began, the host
    the scheduler chose for it); `hosts`: that source's snapshot, whose host health answers for a build's chosen
    host (the screen reads only the recorded host's); `stamps`: block -> the markup beside its title
    (questions: the server's data; read: what the screen read itself)."""
    stamps = stamps or {}
    read = stamps.get("read", "")
    answers = instance_answers(detail, now, stuck, known, hosts)
    parts = [header_text(detail.server), questions_text(answers, stamps.get("questions", "")),
             actions_text(detail.actions, read), ports_text(detail.ports, read), volumes_text(detail.volumes, read),
             errors_text(dict(detail.errors))]
    return "\n\n".join(p for p in parts if p)


def newer_observation(read_at: float | None, observation: Observation | None) -> bool:
    """The instances source read its snapshot after the screen's own read."""
    return (observation is not None and isinstance(observation.snapshot, InstancesSnapshot)
            and observation.ok_at is not None and (read_at is None or observation.ok_at > read_at))


def server_state(s: Server) -> tuple[Any, ...]:
    """What the screen re-reads on when the source sees it change. Only fields the listing and
    GET /servers/{id} report alike."""
    return (s.status, s.task_state, s.vm_state, s.host, s.fault.message if s.fault else None)


def live_detail(detail: InstanceDetail, read_at: float | None, observation: Observation | None) -> InstanceDetail:
    """The on-demand read with the server and its host's health taken from the instances source's observation
    when that was read after it (the host may have died since, the task state moved on)."""
    if not newer_observation(read_at, observation):
        return detail
    assert observation is not None
    snap = observation.snapshot
    server = snap.server(detail.server.id)
    if server is None:
        return detail
    health = snap.hosts.get(server.host) if server.host and snap.hosts_error is None else None
    if health is None:  # the source did not read this host: the screen's own read of it stands, if same host
        same = server.host == detail.server.host
        return dataclasses.replace(detail, server=server, host_health=detail.host_health if same else None)
    errors = {k: v for k, v in detail.errors.items() if k != "host"}
    return dataclasses.replace(detail, server=server, host_health=health, errors=errors)


class InstanceScreen(LiveScreen):
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("escape", "close", "Back"),
        Binding("h", "host", "Host screen", tooltip="the host screen of the instance's host"),
        Binding("r", "reload", "Refresh", tooltip="refresh: read the instance again"),
        Binding("y", "copy_id", "Copy id", tooltip="copy the instance id to the clipboard"),
        Binding("Y", "copy_request", "Copy request id",
                tooltip="copy the request id of the latest action to the clipboard"),
        Binding("l", "log_lines", "Log lines",
                tooltip="the lines naming this instance in its owner's log on its host ([[recorder.log_sources]])"),
        Binding("enter", "noop", show=False),
    ]

    SOURCES: ClassVar[tuple[str, ...]] = ("instances",)

    DEFAULT_CSS = """
    InstanceScreen > Vertical { border: round $stacktop-focus; }
    InstanceScreen #instance-scroll { height: 1fr; padding: 0 1; }
    InstanceScreen #instance-body { width: 100%; height: auto; }
    """

    def __init__(self, server_id: str) -> None:
        super().__init__()
        self.server_id = server_id
        self.crumb = short_id(server_id)
        self.detail: InstanceDetail | None = None  # the last on-demand read
        self.detail_at: float | None = None  # ... and when it was read (the app's clock)
        self.tried_at: float | None = None  # when the last own read started
        self._source_state: tuple[Any, ...] | None = None  # server_state as the instances source last showed it
        self.reads = 0  # finished own reads (ok or not)
        self.reading = False
        self.error: str | None = None
        self._body = ""

    def compose(self) -> ComposeResult:
        yield Breadcrumb()
        with Vertical():
            yield ReadAtLine(id="read-at")
            with KeyScroll(id="instance-scroll"):
                yield Static(self._initial_text(), id="instance-body")
        yield Footer()

    def on_mount(self) -> None:
        self.query_one(Vertical).border_title = f"instance {escape(self.server_id)}"
        self.query_one(VerticalScroll).focus()
        self.follow_live()
        self.set_interval(1.0, self._tick)
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
        return stuck_after(self._collector())

    def _initial_text(self) -> str:
        known = self._known()
        head = header_text(known) + "\n\n" if known is not None else ""
        return head + "reading server, actions, ports, volumes, allocations..."

    def _why_not_read(self) -> str:
        ctx = context(self.app)
        if ctx.replaying:
            return ctx.cannot_read("actions, ports, volumes and allocations are not read")
        return "the instances source is not running"

    def read_again(self) -> None:
        self.action_reload()

    def action_reload(self) -> None:
        self.tried_at = context(self.app).now()
        self.run_worker(self._load(), group="instance-detail", exclusive=True, exit_on_error=False)

    def reread_every(self) -> float:
        """How often the screen reads again on its own: OWN_READ_EVERY_S, or the source's interval if longer."""
        return max(OWN_READ_EVERY_S, context(self.app).interval("instances"))

    def _tick(self) -> None:
        """Once a second: the blocks' ages (a block turns STALE on the clock alone), a re-read when due."""
        self.render_detail()
        ctx = context(self.app)
        if own_read_due(self.tried_at, ctx.now(), self.reread_every(), reading=self.reading, paused=ctx.paused):
            self.action_reload()

    def _reread_if_moved(self) -> None:
        """The source saw the server change (status, task state, vm state, host, fault) since the screen's read:
        its actions, ports, volumes and allocations are read again. Once per change the source sees: a source
        that lags behind the read does not make the screen read at every poll."""
        obs = context(self.app).observation("instances")
        if self.detail is None or self.reading or self.tried_at is None or not newer_observation(self.detail_at, obs):
            return
        assert obs is not None
        seen = obs.snapshot.server(self.server_id)
        if seen is None:
            return
        before, self._source_state = self._source_state, server_state(seen)
        if self._source_state == before:
            return
        if self._source_state != server_state(self.detail.server):
            self.action_reload()

    async def _load(self) -> None:
        collector = self._collector()
        loader = getattr(collector, "instance_detail", None)
        if loader is None:
            self.tried_at = None  # nothing to read from: no re-reads either (`r` or the source starting try again)
            self._show(self._initial_text().replace("reading", "cannot read") +
                       f"\n[yellow]{escape(self._why_not_read())}[/]")
            return
        self.reading = True
        self.refresh_read_at()
        try:
            detail = await loader(self.server_id)
        except Exception as exc:  # SourceError/NotFound: say it here, keep the screen
            self.error = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
            if self.detail is None:
                self._show(self._initial_text().split("reading")[0] + f"[red]{escape(self.error)}[/]")
            self.reads += 1
            return
        finally:
            self.reading = False
            self.refresh_read_at()
            self.render_detail()
        self.detail, self.detail_at, self.error = detail, context(self.app).now(), None
        self.reads += 1
        self.render_detail()
        self.refresh_read_at()

    # -- live
    def observed(self, observation: Observation) -> None:
        self.render_detail()
        self._reread_if_moved()

    def shown_detail(self) -> InstanceDetail | None:
        """What the screen shows: the last read, brought up to date by the instances source."""
        if self.detail is None:
            return None
        return live_detail(self.detail, self.detail_at, context(self.app).observation("instances"))

    def render_detail(self) -> None:
        detail = self.shown_detail()
        if detail is not None:
            snap = context(self.app).snapshot("instances")
            hosts = snap if isinstance(snap, InstancesSnapshot) else None
            self._show(self._gone() + detail_text(detail, self._now(), self._stuck(), self._known(), hosts,
                                                  self._stamps()))

    def _stamps(self) -> dict[str, str]:
        """Beside each block: when its data was read. The questions rest on the server as the instances source
        last saw it when that is newer than the screen's read; the other blocks on the screen's read."""
        ctx = context(self.app)
        own = own_block_read(self.detail_at, ctx.now(), self.reread_every(), paused=ctx.paused, error=self.error)
        obs = ctx.observation("instances")
        follows = newer_observation(self.detail_at, obs)
        questions = [self.source_freshness("instances", named=True)] if follows else []
        return {"read": block_stamp([own]), "questions": block_stamp([*questions, own])}

    def _gone(self) -> str:
        """A line when the instances source, read after the screen's own read, no longer lists the server."""
        obs = context(self.app).observation("instances")
        snap = obs.snapshot if obs is not None else None
        if (obs is None or obs.ok_at is None or not isinstance(snap, InstancesSnapshot) or snap.partial
                or (self.detail_at is not None and obs.ok_at <= self.detail_at) or snap.server(self.server_id)):
            return ""
        return (f"[bold yellow]the instances source no longer lists this server (read {utc_clock_time(obs.ok_at)}):"
                " deleted? Shown as last read.[/]\n\n")

    def _show(self, text: str) -> None:
        if text != self._body:  # Static.update repaints (and re-lays out) even the same text
            self._body = text
            self.query_one("#instance-body", Static).update(text)

    def own_reads(self) -> list[tuple[str, str]]:
        return [own_read("details", self.detail_at, reading=self.reading, error=self.error)]

    # -- keys
    def _server(self) -> Server | None:
        detail = self.shown_detail()
        return detail.server if detail is not None else self._known()

    def action_host(self) -> None:
        server = self._server()
        host = server.host if server is not None else None
        if not host:
            self.notify("this server has no host recorded (it never got past scheduling)", timeout=4)
            return
        from tui.screens.host import HostScreen

        self.app.push_screen(HostScreen(host))

    def _copy(self, what: str, value: str) -> None:
        copied = copyable((value,))
        if copied is None:
            self.notify(f"the {what} holds a control character (written out on screen): not copied", timeout=4,
                        severity="warning")
            return
        self.app.copy_to_clipboard(copied)
        self.notify(f"copied the {what} to the clipboard: {copied}", timeout=3)

    def action_copy_id(self) -> None:
        self._copy("instance id", self.server_id if self.detail is None else self.detail.server.id)

    def action_copy_request(self) -> None:
        actions = self.detail.actions if self.detail is not None else ()
        request = next((a.request_id for a in actions if a.request_id), None)
        if request is None:
            server = self._server()
            request = getattr(server, "request_id", None) if server is not None else None
        if not request:
            self.notify("no request id read for this instance yet (r refreshes)", timeout=3)
            return
        self._copy("request id", request)

    def action_log_lines(self) -> None:
        server = self._server()
        if server is not None:
            from tui.screens.loglines import open_log_lines

            actions = self.detail.actions if self.detail is not None else ()
            open_log_lines(self.app, "instance", server, [a.request_id for a in actions if a.request_id])

    def action_close(self) -> None:
        self.app.pop_screen()

    def action_noop(self) -> None:
        return None
