"""The host drill-down (from an instance, a service row, an audit row or `:host NAME`).

Two halves:
- live: the host's compute services, network agents and volume services from the services observation the
  app already holds (no I/O; re-rendered once a second so countdowns tick), with the findings about the host;
- on demand (`r` reads again): the nova services on the host with their heartbeat age at read, the
  hypervisor, the neutron agents, the ports bound to the host (binding_failed / DOWN flagged), the servers on it
  with task states, the migrations in progress from or to it, and its placement provider tree: inventories
  (total, reserved, allocation ratio, capacity), usages, and every consumer's allocation labelled *instance*
  (name, state, host), *migration* (status, source, destination) or *unknown*, judged by the stale-allocation
  audit (tui.rules.allocations).

A read-at line says when each half was read (UTC) and STALE when the services source stops answering
(tui.screens.live); a refresh keeps the last read on screen until the new one arrives.

The on-demand read runs in a worker owned by this screen (tui.openstack.placement_reads.read_host): popping the screen
cancels it. Nothing blocks the UI loop: listings run in threads, per-provider GETs on async HTTP.
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import datetime
from typing import Any, ClassVar

from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Vertical, VerticalScroll
from textual.widgets import Footer, Static

from tui.freshness import human_age
from tui.models.finding import Finding, sort_findings
from tui.models.observation import Observation
from tui.models.placement import ConsumerVerdict, HostDetail, ProviderAudit, rc_sort_key
from tui.models.services import ServicesSnapshot
from tui.rules.allocations import audit_findings, fmt_resources, phantom_lines
from tui.safetext import escape
from tui.screens.context import context
from tui.screens.live import LiveScreen, own_read
from tui.widgets.breadcrumb import Breadcrumb
from tui.widgets.keyed_table import KeyedTable
from tui.widgets.read_at import ReadAtLine
from tui.widgets.services_pane import COLUMNS, build_rows, host_sections, judged_sections, utc_datetime

SOURCE = "services"
MAX_ROWS = 200  # per list on the screen (ports, servers, consumers): the rest is counted, not shown
SEVERITY_STYLE = {"critical": "bold red", "warning": "yellow", "info": "cyan"}
VERDICT_STYLE = {"ok": "green", "stale": "bold red", "suspected": "yellow", "migration_stuck": "bold magenta",
                 "not_compute": "dim"}


def on_host(host: str, name: str) -> bool:
    """cinder-volume hosts are `host@backend`; agents and computes use the bare host name."""
    return name == host or name.startswith(host + "@")


def host_findings(findings: tuple[Finding, ...] | list[Finding], host: str) -> list[Finding]:
    def about(f: Finding) -> bool:
        ev = f.evidence
        return (on_host(host, f.subject) or on_host(host, f.subject.rpartition("@")[2])
                or on_host(host, str(ev.get("host") or "")) or host in (ev.get("hosts") or ()))

    return sort_findings([f for f in findings if about(f)])


def findings_text(findings: list[Finding]) -> str:
    return "\n".join(f"[{SEVERITY_STYLE[f.severity]}]{f.severity.upper()}[/] {escape(f.kind)}: {escape(f.summary)}\n"
                     f"    next: {escape(f.next_step)}" for f in findings)


def client_getter(app: Any) -> Callable[[], Any] | None:
    """How a screen reaches the cloud: the running OpenStack collectors' client (one token, one session),
    else a session of its own on [openstack]; None when no cloud is configured."""
    ctx = context(app)
    if ctx.replaying or ctx.starting:
        return None  # a replay shows the recording: never the live cloud beside it; nothing to read yet
    for name in ("instances", "services"):
        getter = getattr(ctx.collector(name), "client", None)
        if callable(getter):
            return getter  # type: ignore[no-any-return]
    cfg = ctx.config.openstack
    if cfg.cloud:
        from tui.openstack.session import OpenStackSession

        return OpenStackSession(cfg).client
    return None


def app_now(app: Any) -> datetime:
    return context(app).now_utc()


# ---- rendering of the on-demand half (pure: HostDetail -> markup) ---------------------------------------------
def _age(seconds: float | None) -> str:
    return "?" if seconds is None else f"{human_age(max(0.0, seconds))} ago"


def _more(n: int) -> list[str]:
    return [f" [dim]... {n} more not shown[/]"] if n > 0 else []


def services_text(d: HostDetail) -> list[str]:
    lines = ["[b]Nova services on this host[/b] (heartbeat age on the API's clock, at read)"]
    if not d.services:
        lines.append(" [yellow]no nova service reports this host[/]" if "services" not in d.errors else " -")
    for s in sorted(d.services, key=lambda s: (s.binary != "nova-compute", s.binary)):
        state = "[bold red]DOWN[/]" if s.down else f"[green]{escape(s.state)}[/]"
        if s.forced_down:
            state += " [bold red](forced down)[/]"
        status = escape(s.status) if s.status == "enabled" else f"[cyan]{escape(s.status)}[/]"
        reason = f"  disabled: {escape(s.disabled_reason)}" if s.disabled_reason else ""
        lines.append(f" {escape(s.binary)}  {state}  {status}  heartbeat {_age(s.age_at_read_s)}{reason}")
    return lines


def hypervisor_text(d: HostDetail) -> list[str]:
    lines = ["[b]Hypervisor[/b]"]
    if not d.hypervisors:
        lines.append(" -")
    for h in d.hypervisors:
        state = "[bold red]down[/]" if h.state == "down" else escape(str(h.state))
        n = "?" if h.servers is None else str(len(h.servers))
        lines.append(f" {escape(h.hypervisor_hostname)}  id {escape(h.id)}  type {escape(str(h.hypervisor_type))}"
                     f"  state {state}  status {escape(str(h.status))}  {n} servers")
    return lines


def agents_text(d: HostDetail) -> list[str]:
    lines = ["[b]Network agents[/b]"]
    if not d.agents:
        lines.append(" none on this host" if "agents" not in d.errors else " -")
    for a in d.agents:
        alive = {True: "[green]alive[/]", False: "[bold red]DEAD[/]", None: "[yellow]?[/]"}[a.alive]
        admin = "" if a.admin_state_up is not False else "  [cyan]admin down[/]"
        lines.append(f" {escape(a.agent_type)}  {escape(a.binary)}  {alive}{admin}  heartbeat {_age(a.age_at_read_s)}")
    return lines


def ports_text(d: HostDetail) -> list[str]:
    flagged = [p for p in d.ports if p.flagged]
    lines = [f"[b]Ports bound to this host[/b] ({len(d.ports)}, {len(flagged)} flagged)"]
    if not d.ports:
        lines.append(" none" if "ports" not in d.errors else " -")
    ordered = sorted(d.ports, key=lambda p: (not p.binding_failed, not p.flagged, p.device_owner, p.id))
    for p in ordered[:MAX_ROWS]:
        vif = "[bold red]binding_failed[/]" if p.binding_failed else escape(str(p.vif_type))
        status = f"[bold red]{escape(p.status)}[/]" if p.flagged and p.status == "DOWN" else escape(p.status)
        lines.append(f" {escape(p.id)}  {status}  vif {vif}  {escape(p.device_owner or '-')} "
                     f"{escape(p.device_id[:8] or '-')}  {escape(', '.join(p.fixed_ips) or '-')}")
    return lines + _more(len(ordered) - MAX_ROWS)


def servers_text(d: HostDetail) -> list[str]:
    busy = [s for s in d.servers if s.task_state or s.status not in ("ACTIVE", "SHUTOFF")]
    lines = [f"[b]Servers on this host[/b] ({len(d.servers)}, {len(busy)} in a task state or not ACTIVE/SHUTOFF)"]
    if not d.servers:
        lines.append(" none" if "servers" not in d.errors else " -")
    ordered = sorted(d.servers, key=lambda s: (not s.task_state, s.status == "ACTIVE", s.name))
    for s in ordered[:MAX_ROWS]:
        task = f"[yellow]{escape(s.task_state)}[/]" if s.task_state else "-"
        status = f"[bold red]{escape(s.status)}[/]" if s.status == "ERROR" else escape(s.status)
        lines.append(f" {escape(s.name or '(no name)')}  {escape(s.id)}  {status}  task {task}  "
                     f"vm {escape(str(s.vm_state))}  {escape(s.flavor or '-')}")
    return lines + _more(len(ordered) - MAX_ROWS)


def migrations_text(d: HostDetail, states: dict[str, str]) -> list[str]:
    lines = [f"[b]Migrations in progress from or to {escape(d.host)}[/b]"]
    if not d.migrations:
        lines.append(" none" if "migrations" not in d.errors else " -")
    for m in d.migrations:
        src_down = states.get(m.source_compute or "") == "down"
        warn = f"  [bold red]source nova-compute on {escape(str(m.source_compute))} is down[/]" if src_down else ""
        updated = m.updated_at.strftime("%H:%M:%SZ") if m.updated_at else "?"
        lines.append(f" {escape(m.uuid)}  {escape(m.migration_type or 'migration')}  [b]{escape(m.status)}[/b]  "
                     f"{escape(str(m.source_compute))} -> {escape(str(m.dest_compute))}  instance "
                     f"{escape(m.instance_uuid[:8])}  updated {updated}{warn}")
    return lines


def consumer_line(v: ConsumerVerdict) -> str:
    style = VERDICT_STYLE.get(v.verdict, "")
    verdict = f"[{style}]{escape(v.verdict)}[/]"
    why = f"  [dim]{escape(v.reason)}[/]" if v.verdict != "ok" else ""
    return f"   {escape(v.consumer)}  {escape(fmt_resources(v.resources))}  {escape(v.label)}  {verdict}{why}"


def provider_text(audit: ProviderAudit, detail: HostDetail) -> list[str]:
    p = next((x for x in detail.providers if x.uuid == audit.provider_uuid), None)
    lines = [f"[b]Placement provider {escape(audit.provider_name)}[/b]  {escape(audit.provider_uuid)}"]
    if p is None:
        return lines
    if p.traits is not None and "COMPUTE_STATUS_DISABLED" in p.traits:
        lines.append(" [cyan]trait COMPUTE_STATUS_DISABLED: the scheduler skips it[/]")
    lines.append("  inventory      total  reserved  ratio   capacity      used      free")
    for rc in sorted(p.inventories or {}, key=rc_sort_key):
        inv = (p.inventories or {})[rc]
        used = p.used(rc)
        lines.append(f"  {escape(rc):<12} {inv.total:>7} {inv.reserved:>9} {inv.allocation_ratio:>6g} "
                     f"{inv.capacity:>10} {used:>9} {inv.capacity - used:>9}")
    if p.inventories is None:
        lines.append("  [yellow]inventories not read[/]")
    consumers = audit.consumers
    stale = len(audit.stale)
    lines.append(f"  allocations: {len(consumers)} consumer{'s' if len(consumers) != 1 else ''}"
                 + (f", [bold red]{stale} stale or suspected[/]" if stale else ""))
    ordered = sorted(consumers, key=lambda v: (v.verdict == "ok", v.kind, v.label))
    lines += [consumer_line(v) for v in ordered[:MAX_ROWS]] + _more(len(ordered) - MAX_ROWS)
    for line in phantom_lines(audit):
        lines.append(f"  [yellow]phantom capacity: {escape(line)}[/]")
    return lines


def detail_text(d: HostDetail) -> str:
    states = dict(d.compute_states)
    parts = [services_text(d), hypervisor_text(d), agents_text(d), ports_text(d), servers_text(d),
             migrations_text(d, states)]
    for audit in d.audits:
        parts.append(provider_text(audit, d))
    if not d.audits:
        parts.append(["[b]Placement[/b]", " no provider read for this host"])
    findings = audit_findings(d.audits)
    parts.append(["[b]Placement audit[/b]", findings_text(findings) if findings else
                  " every allocation here belongs to an instance on this host or an in-progress migration"])
    if d.errors:
        parts.append(["[b]Could not read[/b]"] + [f" [yellow]{escape(k)}: {escape(v)}[/]"
                                                   for k, v in sorted(d.errors.items())])
    return "\n\n".join("\n".join(p) for p in parts)


class HostScreen(LiveScreen):
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("escape", "close", "Back"),
        Binding("r", "reload", "Refresh", tooltip="refresh: read the host again"),
        Binding("enter", "noop", show=False),
    ]

    SOURCES: ClassVar[tuple[str, ...]] = (SOURCE,)

    DEFAULT_CSS = """
    HostScreen > Vertical { border: round $stacktop-focus; }
    HostScreen #host-title { padding: 0 1; height: auto; }
    HostScreen #host-scroll { height: 1fr; }
    HostScreen #host-services { height: auto; max-height: 16; }
    HostScreen #host-findings { padding: 0 1; height: auto; }
    HostScreen #host-detail { padding: 0 1; height: auto; }
    """

    def __init__(self, host: str) -> None:
        super().__init__()
        self.host = host
        self.crumb = host
        self.table: KeyedTable | None = None
        self.detail: HostDetail | None = None
        self.error: str | None = None
        self.reading = False  # not `loading`: Widget.loading would cover the whole screen with a spinner
        self.reads = 0  # finished on-demand reads (ok or not)
        self.read_at: float | None = None  # when the last on-demand read finished well (the app's clock)
        self._shown: Observation | None = None

    def compose(self) -> ComposeResult:
        yield Breadcrumb()
        with Vertical():
            yield Static(f"[b]host {escape(self.host)}[/b]", id="host-title")
            yield ReadAtLine(id="read-at")
            with VerticalScroll(id="host-scroll"):
                self.table = KeyedTable(COLUMNS, id="host-services")
                yield self.table
                yield Static("", id="host-findings")
                yield Static("reading hypervisor, ports, servers, migrations and placement...", id="host-detail")
        yield Footer()

    def on_mount(self) -> None:
        self.query_one(Vertical).border_title = f"host {escape(self.host)}"
        self.refresh_view()
        self.set_interval(1.0, self.refresh_view)
        if self.table is not None:
            self.table.focus()
        self.follow_live()
        self.action_reload()

    # -- the live half
    def _observation(self) -> Observation | None:
        return context(self.app).observation(SOURCE)

    def observed(self, observation: Observation) -> None:
        self.refresh_view()

    def own_reads(self) -> list[tuple[str, str]]:
        return [own_read("details", self.read_at, reading=self.reading, error=self.error)]

    def refresh_view(self) -> None:
        obs = self._observation()
        if self.table is None or obs is None or not isinstance(obs.snapshot, ServicesSnapshot):
            self.query_one("#host-findings", Static).update("[dim]control-plane source: waiting (or not running)[/]")
            return
        ctx = context(self.app)
        now = utc_datetime(ctx.now())
        assert now is not None
        rows = build_rows(host_sections(judged_sections(obs), self.host), now, utc_datetime(obs.ok_at))
        self.table.sync(rows)
        if obs is not self._shown:
            self._shown = obs
            findings = host_findings(obs.findings, self.host)
            error = f"[red]source error: {escape(obs.error)}[/]\n" if obs.error else ""
            self.query_one("#host-findings", Static).update(
                error + (findings_text(findings) if findings else f"No findings about {escape(self.host)}."))

    # -- the on-demand half
    def read_again(self) -> None:
        self.action_reload()

    def action_reload(self) -> None:
        self.run_worker(self._load(), group="host-detail", exclusive=True, exit_on_error=False)

    async def _load(self) -> None:
        import asyncio

        from tui.openstack.placement_reads import read_host

        body = self.query_one("#host-detail", Static)
        getter = client_getter(self.app)
        if getter is None:
            why = context(self.app).cannot_read("hypervisor, ports, servers, migrations and placement are not read")
            body.update(f"[yellow]{escape(why)}[/]")
            return
        self.reading = True
        self.refresh_read_at()
        if self.detail is None:  # a refresh keeps the last read on screen (and its scroll) until the new one
            body.update("reading hypervisor, ports, servers, migrations and placement...")
        try:
            client = await asyncio.to_thread(getter)
            detail = await read_host(client, self.host, clock=lambda: app_now(self.app))
        except Exception as exc:  # SourceError and friends: say it here, keep the screen
            self.error = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
            failed = f"[red]could not read host {escape(self.host)}: {escape(self.error)}[/]"
            body.update(failed if self.detail is None else f"{failed}\n\n{detail_text(self.detail)}")
            self.reads += 1
            return
        finally:
            self.reading = False
            self.refresh_read_at()
        self.detail, self.error, self.read_at = detail, None, context(self.app).now()
        body.update(detail_text(detail))
        self.reads += 1
        self.refresh_read_at()

    @property
    def placement_findings(self) -> list[Finding]:
        return audit_findings(self.detail.audits) if self.detail is not None else []

    def action_close(self) -> None:
        self.app.pop_screen()

    def action_noop(self) -> None:
        return None
