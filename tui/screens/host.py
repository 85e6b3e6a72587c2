"""The host drill-down (from an instance, a service row, an audit row or `:host NAME`).

The servers on the host come first, in a table of their own (enter opens the instance screen), then two halves:
- live: the host's compute services, network agents and volume services from the services observation the
  app already holds (no I/O; re-rendered once a second so countdowns tick), with the findings about the host;
- read by the screen: the nova services on the host with their heartbeat age at read, the hypervisor, the
  neutron agents, the ports bound to the host (binding_failed / DOWN flagged), the servers on it with task
  states, the migrations in progress from or to it, and its placement provider tree: inventories (total,
  reserved, allocation ratio, capacity), usages, and every consumer's allocation labelled *instance* (name,
  state, host), *migration* (status, source, destination) or *unknown*, judged by the stale-allocation audit
  (tui.rules.allocations, when the screen's read is made: tui.openstack.placement_reads).

Every block says beside its title when its data was read, and STALE once that is older than its source allows.
The nova services and network agents blocks, and the hypervisor's state and status (nova's hypervisor state is
its nova-compute's), follow the services source: built from the same observation as the table above, with the
state the table shows, so the two never disagree. The rest is re-read every OWN_READ_EVERY_S (or the services
interval, if longer) and on `r`; a refresh keeps the last read on screen until the new one arrives, and a part
the new read could not read (merge_read) keeps its last good data and time, STALE beside its block with the
reason. Without the services source the screen's own read answers for every block.

The read runs in a worker owned by this screen (tui.openstack.placement_reads.read_host): popping the screen
cancels it. Nothing blocks the UI loop: listings run in threads, per-provider GETs on async HTTP.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Mapping
from datetime import datetime
from typing import Any, ClassVar

from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Vertical, VerticalScroll
from textual.widgets import Footer, Static

from tui.freshness import human_age, utc_clock_time
from tui.models.finding import Finding, sort_findings
from tui.models.observation import Observation
from tui.models.placement import ConsumerVerdict, HostDetail, ProviderAudit, fmt_resources, rc_sort_key
from tui.models.services import SectionRead, ServiceRow, ServicesSnapshot
from tui.safetext import escape
from tui.safetext import text as safe_text
from tui.screens.context import context
from tui.screens.live import OWN_READ_EVERY_S, LiveScreen, own_block_read, own_read, own_read_due
from tui.widgets.breadcrumb import Breadcrumb
from tui.widgets.drilldown import DrillDown
from tui.widgets.keyed_table import KeyedTable
from tui.widgets.read_at import ReadAtLine, block_stamp
from tui.widgets.services_pane import COLUMNS, build_rows, host_sections, judged_sections, utc_datetime

SOURCE = "services"
MAX_ROWS = 200  # per list on the screen (ports, servers, consumers): the rest is counted, not shown
SEVERITY_STYLE = {"critical": "bold red", "warning": "yellow", "info": "cyan"}
VERDICT_STYLE = {"ok": "green", "stale": "bold red", "suspected": "yellow", "migration_stuck": "bold magenta",
                 "not_compute": "dim"}


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


@dataclasses.dataclass(frozen=True)
class LiveHost:
    """The host's rows in the services source's observation, as the table above shows them.

    compute / network: the host's sections of that observation (None: not listed, the screen's read answers);
    states: row key -> the state the table shows (up, LATE, DOWN, UNKNOWN); stamps: section -> the markup
    beside the block (when the source read it, STALE)."""

    compute: SectionRead | None
    network: SectionRead | None
    states: Mapping[str, str]
    stamps: Mapping[str, str]

    def compute_state(self, host: str) -> tuple[str, str] | None:
        """(state, status) of the host's nova-compute as the table shows it: nova's hypervisor state and status
        are its nova-compute service's."""
        row = next((r for r in (self.compute.rows if self.compute else ()) if r.binary == "nova-compute"
                    and r.host == host), None)
        if row is None:
            return None
        label = self.states.get(row.key, row.state)
        state = "down" if label == "DOWN" or row.forced_down else "up" if label in ("up", "LATE") else label
        return state, row.status


LIVE_STATE = {"DOWN": "[bold red]DOWN[/]", "LATE": "[yellow]LATE[/]", "UNKNOWN": "[yellow]UNKNOWN[/]"}
LIVE_ALIVE = {"DOWN": "[bold red]DEAD[/]", "LATE": "[yellow]late[/]", "UNKNOWN": "[yellow]?[/]"}


def _row_age(row: ServiceRow) -> str:
    return _age(row.age_at_read_s)


def live_services_text(section: SectionRead, states: Mapping[str, str], stamp: str) -> list[str]:
    """The nova services block from the services source: each row with the state the table shows."""
    lines = [f"[b]Nova services on this host[/b] (heartbeat age on the API's clock, at read){stamp}"]
    if not section.rows:
        lines.append(" [yellow]no nova service reports this host[/]" if section.error is None else " -")
    for r in sorted(section.rows, key=lambda r: (r.binary != "nova-compute", r.binary)):
        label = states.get(r.key, r.state)
        state = LIVE_STATE.get(label, f"[green]{escape(label)}[/]")
        if r.forced_down:
            state += " [bold red](forced down)[/]"
        status = escape(r.status) if r.status == "enabled" else f"[cyan]{escape(r.status)}[/]"
        reason = f"  disabled: {escape(r.disabled_reason)}" if r.disabled_reason else ""
        lines.append(f" {escape(r.binary)}  {state}  {status}  heartbeat {_row_age(r)}{reason}")
    return lines


def live_agents_text(section: SectionRead, states: Mapping[str, str], stamp: str) -> list[str]:
    """The network agents block from the services source: alive as the table's state says."""
    lines = [f"[b]Network agents[/b]{stamp}"]
    if not section.rows:
        lines.append(" none on this host" if section.error is None else " -")
    for r in sorted(section.rows, key=lambda r: (r.agent_type or "", r.binary)):
        alive = LIVE_ALIVE.get(states.get(r.key, r.state), "[green]alive[/]")
        admin = "  [cyan]admin down[/]" if r.status == "disabled" else ""
        lines.append(f" {escape(r.agent_type or '')}  {escape(r.binary)}  {alive}{admin}  heartbeat {_row_age(r)}")
    return lines


def services_text(d: HostDetail, stamp: str = "") -> list[str]:
    lines = [f"[b]Nova services on this host[/b] (heartbeat age on the API's clock, at read){stamp}"]
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


def hypervisor_text(d: HostDetail, stamp: str = "", live: tuple[str, str] | None = None) -> list[str]:
    """live: (state, status) of the host's nova-compute from the services source, shown for every hypervisor
    of the host in place of the read's (nova derives them from that service)."""
    lines = [f"[b]Hypervisor[/b]{stamp}"]
    if not d.hypervisors:
        lines.append(" -")
    for h in d.hypervisors:
        raw_state, raw_status = live if live is not None else (h.state, h.status)
        state = "[bold red]down[/]" if raw_state == "down" else escape(str(raw_state))
        n = "?" if h.servers is None else str(len(h.servers))
        lines.append(f" {escape(h.hypervisor_hostname)}  id {escape(h.id)}  type {escape(str(h.hypervisor_type))}"
                     f"  state {state}  status {escape(str(raw_status))}  {n} servers")
    return lines


def agents_text(d: HostDetail, stamp: str = "") -> list[str]:
    lines = [f"[b]Network agents[/b]{stamp}"]
    if not d.agents:
        lines.append(" none on this host" if "agents" not in d.errors else " -")
    for a in d.agents:
        alive = {True: "[green]alive[/]", False: "[bold red]DEAD[/]", None: "[yellow]?[/]"}[a.alive]
        admin = "" if a.admin_state_up is not False else "  [cyan]admin down[/]"
        lines.append(f" {escape(a.agent_type)}  {escape(a.binary)}  {alive}{admin}  heartbeat {_age(a.age_at_read_s)}")
    return lines


def ports_text(d: HostDetail, stamp: str = "") -> list[str]:
    flagged = [p for p in d.ports if p.flagged]
    lines = [f"[b]Ports bound to this host[/b] ({len(d.ports)}, {len(flagged)} flagged){stamp}"]
    if not d.ports:
        lines.append(" none" if "ports" not in d.errors else " -")
    ordered = sorted(d.ports, key=lambda p: (not p.binding_failed, not p.flagged, p.device_owner, p.id))
    for p in ordered[:MAX_ROWS]:
        vif = "[bold red]binding_failed[/]" if p.binding_failed else escape(str(p.vif_type))
        status = f"[bold red]{escape(p.status)}[/]" if p.flagged and p.status == "DOWN" else escape(p.status)
        lines.append(f" {escape(p.id)}  {status}  vif {vif}  {escape(p.device_owner or '-')} "
                     f"{escape(p.device_id[:8] or '-')}  {escape(', '.join(p.fixed_ips) or '-')}")
    return lines + _more(len(ordered) - MAX_ROWS)


SERVER_COLUMNS = ("name", "status", "task_state", "vm_state", "flavor", "id")


def servers_title(d: HostDetail | None, stamp: str = "") -> str:
    """The title of the servers block (first on the screen, over its table)."""
    if d is None:
        return f"[b]Servers on this host[/b]  [dim]reading...[/]{stamp}"
    busy = [s for s in d.servers if s.task_state or s.status not in ("ACTIVE", "SHUTOFF")]
    more = f", the first {MAX_ROWS} shown" if len(d.servers) > MAX_ROWS else ""
    none = ("  none" if "servers" not in d.errors else "  -") if not d.servers else ""
    return (f"[b]Servers on this host[/b] ({len(d.servers)}, {len(busy)} in a task state or not ACTIVE/SHUTOFF"
            f"{more}; enter opens one){stamp}{none}")


def server_rows(d: HostDetail) -> list[tuple[str, tuple[Any, ...]]]:
    """The servers table's rows, keyed by server id: those in a task state first, then not ACTIVE, by name."""
    ordered = sorted(d.servers, key=lambda s: (not s.task_state, s.status == "ACTIVE", s.name))
    rows = []
    for s in ordered[:MAX_ROWS]:
        status = safe_text(s.status, style="bold red" if s.status == "ERROR" else "")
        rows.append((s.id, (safe_text(s.name or "(no name)"), status,
                            safe_text(s.task_state or "-", style="yellow" if s.task_state else ""),
                            safe_text(s.vm_state or "-"), safe_text(s.flavor or "-"), safe_text(s.id))))
    return rows


def migrations_text(d: HostDetail, states: dict[str, str], stamp: str = "") -> list[str]:
    lines = [f"[b]Migrations in progress from or to {escape(d.host)}[/b]{stamp}"]
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


def provider_text(audit: ProviderAudit, detail: HostDetail, stamp: str = "") -> list[str]:
    p = next((x for x in detail.providers if x.uuid == audit.provider_uuid), None)
    lines = [f"[b]Placement provider {escape(audit.provider_name)}[/b]  {escape(audit.provider_uuid)}{stamp}"]
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
    for line in audit.phantom_lines():
        lines.append(f"  [yellow]phantom capacity: {escape(line)}[/]")
    return lines


# the parts of the screen's own read, each with the HostDetail fields it fills: a part the latest read could not
# read keeps the previous read's data (and its time) on screen, STALE beside its block
PART_FIELDS: dict[str, tuple[str, ...]] = {
    "services": ("services", "compute_states"), "hypervisors": ("hypervisors",), "agents": ("agents",),
    "ports": ("ports",), "servers": ("servers",), "migrations": ("migrations",),
    "placement": ("providers", "audits", "findings")}


def part_error(d: HostDetail, part: str) -> str | None:
    """Why the read could not read `part` (None: it did)."""
    if part != "placement":
        return d.errors.get(part)
    if d.audits:
        return None
    return next((v for k, v in sorted(d.errors.items()) if "provider" in k or k == "hypervisors"), None)


def merge_read(old: HostDetail | None, new: HostDetail, at: float, part_at: Mapping[str, float]
               ) -> tuple[HostDetail, dict[str, float], dict[str, str]]:
    """(the detail shown, when each part was last read well, why a part failed now): the new read, with each
    part it could not read kept from the old one, as of the old one's time."""
    times, failed, kept = dict(part_at), {}, {}
    for part, fields in PART_FIELDS.items():
        why = part_error(new, part)
        if why is None:
            times[part] = at
            continue
        failed[part] = why
        if old is not None and part in times:
            kept.update({f: getattr(old, f) for f in fields})
    return dataclasses.replace(new, **kept), times, failed


def detail_text(d: HostDetail, live: LiveHost | None = None, stamps: Mapping[str, str] | None = None) -> str:
    """Every block below the tables (the servers have a table of their own, first: servers_title, server_rows).
    live: the services source's view of the host (its nova services and agents blocks, the hypervisor's and this
    host's compute state); stamps: part of the screen's own read (PART_FIELDS) -> the markup beside its
    blocks."""
    stamps = stamps or {}
    states = dict(d.compute_states)
    compute = live.compute_state(d.host) if live is not None else None
    if compute is not None:
        states[d.host] = compute[0]
    if live is not None and live.compute is not None:
        services = live_services_text(live.compute, live.states, live.stamps.get("compute", ""))
    else:
        services = services_text(d, stamps.get("services", ""))
    if live is not None and live.network is not None:
        agents = live_agents_text(live.network, live.states, live.stamps.get("network", ""))
    else:
        agents = agents_text(d, stamps.get("agents", ""))
    hv_stamp = stamps.get("hypervisors", "")
    if compute is not None and live is not None:
        hv_stamp = live.stamps.get("hypervisor", hv_stamp)
    placement = stamps.get("placement", "")
    parts = [services, hypervisor_text(d, hv_stamp, compute), agents, ports_text(d, stamps.get("ports", "")),
             migrations_text(d, states, stamps.get("migrations", ""))]
    for audit in d.audits:
        parts.append(provider_text(audit, d, placement))
    if not d.audits:
        parts.append([f"[b]Placement[/b]{placement}", " no provider read for this host"])
    findings = list(d.findings)
    parts.append([f"[b]Placement audit[/b]{placement}", findings_text(findings) if findings else
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
    # the servers first (what the host's trouble touches), each row selectable: enter opens the instance

    SOURCES: ClassVar[tuple[str, ...]] = (SOURCE,)

    DEFAULT_CSS = """
    HostScreen > Vertical { border: round $stacktop-focus; }
    HostScreen #host-title { padding: 0 1; height: auto; }
    HostScreen #host-scroll { height: 1fr; }
    HostScreen #host-services { height: auto; max-height: 16; }
    HostScreen #host-servers-title { padding: 0 1; height: auto; }
    HostScreen #host-servers { height: auto; max-height: 14; margin-bottom: 1; }
    HostScreen #host-findings { padding: 0 1; height: auto; }
    HostScreen #host-detail { padding: 0 1; height: auto; }
    """

    def __init__(self, host: str) -> None:
        super().__init__()
        self.host = host
        self.crumb = host
        self.table: KeyedTable | None = None
        self.servers: KeyedTable | None = None  # the servers on the host (the screen's own read), first
        self.detail: HostDetail | None = None
        self.error: str | None = None
        self.reading = False  # not `loading`: Widget.loading would cover the whole screen with a spinner
        self.reads = 0  # finished reads of the screen's own (ok or not)
        self.read_at: float | None = None  # when the last own read finished well (the app's clock)
        self.tried_at: float | None = None  # when the last own read started
        self.part_at: dict[str, float] = {}  # part (PART_FIELDS) -> when it was last read well
        self.part_errors: dict[str, str] = {}  # part -> why the latest read could not read it
        self.live: LiveHost | None = None  # the services source's view of the host, as the table shows it
        self._shown: Observation | None = None
        self._body = ""
        self._servers_title = servers_title(None)

    def compose(self) -> ComposeResult:
        yield Breadcrumb()
        with Vertical():
            yield Static(f"[b]host {escape(self.host)}[/b]", id="host-title")
            yield ReadAtLine(id="read-at")
            with VerticalScroll(id="host-scroll"):
                yield Static(servers_title(None), id="host-servers-title")
                self.servers = KeyedTable(SERVER_COLUMNS, id="host-servers")
                yield self.servers
                self.table = KeyedTable(COLUMNS, id="host-services")
                yield self.table
                yield Static("", id="host-findings")
                yield Static("reading hypervisor, ports, servers, migrations and placement...", id="host-detail")
        yield Footer()

    def on_mount(self) -> None:
        self.query_one(Vertical).border_title = f"host {escape(self.host)}"
        self.refresh_view()
        self.set_interval(1.0, self.refresh_view)
        if self.servers is not None:
            self.servers.focus()
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
        """The table, the findings and every block below from the app's latest services observation (one
        observation for all of them), then the screen's own read again when it is due."""
        obs = self._observation()
        if self.table is None or obs is None or not isinstance(obs.snapshot, ServicesSnapshot):
            self.query_one("#host-findings", Static).update("[dim]control-plane source: waiting (or not running)[/]")
            self.live = None
        else:
            ctx = context(self.app)
            now = utc_datetime(ctx.now())
            assert now is not None
            mine = host_snapshot(obs.snapshot, self.host)
            rows = build_rows(host_sections(judged_sections(obs), self.host), now, utc_datetime(obs.ok_at))
            self.table.sync(rows)
            self.live = self._live_host(mine, {key: str(cells[2]) for key, cells in rows})
            if obs is not self._shown:
                self._shown = obs
                findings = host_findings(obs.findings, self.host)
                error = f"[red]source error: {escape(obs.error)}[/]\n" if obs.error else ""
                self.query_one("#host-findings", Static).update(
                    error + (findings_text(findings) if findings else f"No findings about {escape(self.host)}."))
        self.render_detail()
        self._reread_if_due()

    def _live_host(self, mine: ServicesSnapshot, states: dict[str, str]) -> LiveHost:
        source = self.source_freshness(SOURCE, named=True)
        sections: dict[str, SectionRead | None] = {}
        parts: dict[str, list[tuple[str, str]]] = {}
        for name in ("compute", "network"):
            section = mine.section(name)
            if section.read_at is None:  # never listed: the screen's own read answers for the block
                sections[name] = None
                continue
            sections[name] = section
            parts[name] = [source]
            if section.error is not None:  # the source answers, this listing did not: its rows are older
                parts[name].append((f"{section.error} (rows from {utc_clock_time(section.read_at.timestamp())})",
                                    "stale"))
        stamps = {name: block_stamp(p) for name, p in parts.items()}
        if "compute" in parts:
            own = self._own_block("hypervisors")
            state = [(f"state, status: {t}", level) if i == 0 else (t, level) for i, (t, level) in
                     enumerate(parts["compute"])]
            stamps["hypervisor"] = block_stamp(state + ([own] if own[0] else []))
        return LiveHost(compute=sections["compute"], network=sections["network"], states=states, stamps=stamps)

    # -- the screen's own read
    def reread_every(self) -> float:
        """How often the screen reads again on its own: OWN_READ_EVERY_S, or the services interval if longer."""
        return max(OWN_READ_EVERY_S, context(self.app).interval(SOURCE))

    def _own_block(self, part: str) -> tuple[str, str]:
        """(text, level) beside the blocks of one part of the screen's own read."""
        ctx = context(self.app)
        return own_block_read(self.part_at.get(part), ctx.now(), self.reread_every(), paused=ctx.paused,
                              error=self.error or self.part_errors.get(part))

    def _reread_if_due(self) -> None:
        ctx = context(self.app)
        if own_read_due(self.tried_at, ctx.now(), self.reread_every(), reading=self.reading, paused=ctx.paused):
            self.action_reload()

    def render_detail(self) -> None:
        """The blocks below the table from the last read and the services source's view (no I/O)."""
        if self.detail is None:
            return  # the read under way (or why there is none) says so
        stamps = {part: block_stamp([self._own_block(part)]) for part in PART_FIELDS}
        self._show_servers(self.detail, stamps.get("servers", ""))
        text = detail_text(self.detail, self.live, stamps)
        if self.error is not None:
            text = f"[red]could not read host {escape(self.host)}: {escape(self.error)}[/]\n\n{text}"
        self._show(text)

    def _show_servers(self, detail: HostDetail, stamp: str) -> None:
        title = servers_title(detail, stamp)
        if title != self._servers_title:
            self._servers_title = title
            self.query_one("#host-servers-title", Static).update(title)
        if self.servers is not None:
            self.servers.sync(server_rows(detail))

    @property
    def servers_text(self) -> str:
        """The servers block's title as last shown (markup)."""
        return self._servers_title

    def on_data_table_row_selected(self, event: KeyedTable.RowSelected) -> None:
        """enter on a server: its instance screen."""
        if event.data_table is not self.servers or event.row_key.value is None:
            return
        event.stop()
        self.post_message(DrillDown("server", str(event.row_key.value)))  # the app opens it (no screen cycle)

    @property
    def shown_detail(self) -> str:
        """The markup of the blocks below the table as last shown (empty before the first read)."""
        return self._body

    def _show(self, text: str) -> None:
        if text != self._body:  # Static.update repaints (and re-lays out) even the same text
            self._body = text
            self.query_one("#host-detail", Static).update(text)

    def read_again(self) -> None:
        self.action_reload()

    def action_reload(self) -> None:
        self.tried_at = context(self.app).now()
        self.run_worker(self._load(), group="host-detail", exclusive=True, exit_on_error=False)

    async def _load(self) -> None:
        import asyncio

        from tui.openstack.placement_reads import read_host

        getter = client_getter(self.app)
        if getter is None:
            self.tried_at = None  # nothing to read from: no re-reads either (`r` or the sources starting try again)
            why = context(self.app).cannot_read("hypervisor, ports, servers, migrations and placement are not read")
            self._show(f"[yellow]{escape(why)}[/]")
            return
        self.reading = True
        self.refresh_read_at()
        if self.detail is None:  # a refresh keeps the last read on screen (and its scroll) until the new one
            self._show("reading hypervisor, ports, servers, migrations and placement...")
        try:
            client = await asyncio.to_thread(getter)
            detail = await read_host(client, self.host, clock=lambda: app_now(self.app))
        except Exception as exc:  # SourceError and friends: say it here, keep the screen
            self.error = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
            if self.detail is None:
                self._show(f"[red]could not read host {escape(self.host)}: {escape(self.error)}[/]")
            self.reads += 1
            return
        finally:
            self.reading = False
            self.refresh_read_at()
            self.render_detail()
        at = context(self.app).now()
        self.detail, self.part_at, self.part_errors = merge_read(self.detail, detail, at, self.part_at)
        self.error, self.read_at = None, at
        self.render_detail()
        self.reads += 1
        self.refresh_read_at()

    @property
    def placement_findings(self) -> list[Finding]:
        return list(self.detail.findings) if self.detail is not None else []

    def action_close(self) -> None:
        self.app.pop_screen()

    def action_noop(self) -> None:
        return None
