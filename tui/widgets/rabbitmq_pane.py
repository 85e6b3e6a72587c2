"""RabbitMQ pane: one node status line, then every queue, zero-consumer queues first.

Over ATTENTION_OVER queues the default view holds only queues worth attention (messages waiting, a service
queue without consumer, a finding); `a` toggles all. Rows are keyed by vhost + queue and updated in place.
The `since` column is the wall-clock time the collector first saw the queue holding messages with 0
consumers (not a ticking age: cells change only when the state changes). Unknown numbers (fresh queues)
show `?`, never 0. Queue names of rows with a finding are coloured by its severity.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from textual.app import ComposeResult

from tui.dashboard import show_ages
from tui.freshness import table_time
from tui.models.observation import Observation
from tui.safetext import escape
from tui.safetext import text as safe_text
from tui.widgets import column_fit as fit
from tui.widgets.source_pane import SourcePane

if TYPE_CHECKING:  # models and rules are imported where used: ~20 ms of CPU before the first paint otherwise
    from tui.models.judged import JudgedQueue
    from tui.models.rabbitmq import NodeInfo, QueueInfo, RabbitSnapshot

SEVERITY_STYLE = {"critical": "bold red", "warning": "yellow", "info": "cyan"}
# priority order (tui.widgets.column_fit): the name, then what says it is stuck; queue names shrink with "…"
COLUMNS = ("queue", "messages", "consumers", "since", "type", "class")
FIT = {"queue": fit.name(12, keep=True), "type": fit.secondary(7), "class": fit.text(10)}


def _num(value: int | None) -> str:
    return "?" if value is None else f"{value:,}"


def _bytes(value: int | None) -> str:
    if value is None:
        return "?"
    size = float(value)
    for unit in ("B", "K", "M", "G", "T"):
        if size < 1024 or unit == "T":
            return f"{size:.0f}{unit}" if unit == "B" else f"{size:.1f}{unit}"
        size /= 1024
    return f"{value}B"  # pragma: no cover


def _is_snapshot(value: Any) -> bool:
    from tui.models.rabbitmq import RabbitSnapshot

    return isinstance(value, RabbitSnapshot)


def _type_label(q: QueueInfo) -> Any:
    """classic / quorum / stream, with members online of members for replicated queues ("quorum 2/3", red
    without a majority) and the state when it is not running ("classic down"); "?" when not reported."""
    label = q.queue_type or "?"
    style = ""
    if q.replicated and q.members:
        online = len(set(q.online or ()) & set(q.members)) if q.online is not None else None
        label += f" {'?' if online is None else online}/{len(q.members)}"
        if q.has_majority is False:
            style = "bold red"
        elif online is not None and online < len(q.members):
            style = "yellow"
    if q.state and q.state != "running":
        label += f" {q.state}"
        style = style or "bold red"
    return safe_text(label, style=style) if style else label


def _since(q: QueueInfo, now: float | None, ages: bool) -> str:
    return "" if q.stuck_since is None else table_time(q.stuck_since.timestamp(), now, ages)


ATTENTION_OVER = 100  # more queues than this: by default only those worth attention (`a` shows all)


def queue_rows(snapshot: RabbitSnapshot, judged: Sequence[JudgedQueue], *, show_all: bool = True,
               now: float | None = None, ages: bool = False) -> list[tuple[str, tuple[Any, ...]]]:
    """(key, cells) for every queue as the poll judged it (tui.rules.judge.judge_queues: in pane order,
    zero-consumer queues first, fullest first), or, without show_all and over ATTENTION_OVER queues, those worth
    attention (messages waiting, a service queue without consumer, a finding)."""
    many_vhosts = len({q.vhost for q in snapshot.queues}) > 1
    if not show_all and len(snapshot.queues) > ATTENTION_OVER:
        judged = [j for j in judged if j.attention]
    rows = []
    for j in judged:
        q, sev = j.queue, j.severity
        label = j.subject if many_vhosts else q.name
        name = safe_text(label, style=SEVERITY_STYLE[sev]) if sev else safe_text(label)
        consumers = _num(q.consumers)
        if q.no_consumer_with_messages:
            consumers_cell: Any = safe_text(consumers, style="bold red" if sev == "critical" else "yellow")
        else:
            consumers_cell = consumers
        rows.append((f"{q.vhost}\x1f{q.name}", (name, _num(q.messages), consumers_cell, _since(q, now, ages),
                                                 _type_label(q), j.kind_label)))
    return rows


def _node_healthy(n: NodeInfo) -> bool:
    """Running, no alarm, not draining, not partitioned, file descriptors under 90 %."""
    fd_high = n.fd_used is not None and bool(n.fd_total) and n.fd_used / (n.fd_total or 1) >= 0.9
    return (n.running is True and not n.being_drained and not n.mem_alarm and not n.disk_free_alarm
            and not n.partitions and not fd_high)


def _node_part(n: NodeInfo, *, brief: bool = False) -> str:
    """brief: only what is wrong (no "running" beside an alarm, fd only when high, memory only with its alarm)."""
    name = escape(n.name)
    if n.running is False:
        return f"[bold red]{name} DOWN[/]"
    alarms = [r for r, on in (("memory", n.mem_alarm), ("disk", n.disk_free_alarm)) if on]
    problem = bool(alarms or n.partitions or n.being_drained)
    state = "[green]running[/]" if n.running else "[yellow]state ?[/]"
    bits = [f"[b]{name}[/b]" if brief and problem and n.running else f"[b]{name}[/b] {state}"]
    if n.being_drained:
        bits.append("[yellow]DRAINING[/]")
    if alarms:
        bits.append(f"[bold red]{' + '.join(alarms).upper()} ALARM[/]")
    if n.partitions:
        bits.append(f"[bold red]PARTITIONED from {escape(', '.join(n.partitions))}[/]")
    fd_high = n.fd_used is not None and bool(n.fd_total) and n.fd_used / (n.fd_total or 1) >= 0.9
    if (n.fd_used is not None or n.fd_total is not None) and (fd_high or not brief):
        fd = f"fd {_num(n.fd_used)}/{_num(n.fd_total)}"
        bits.append(f"[yellow]{fd}[/]" if fd_high else fd)
    if n.sockets_used is not None and n.sockets_total and not brief:  # RabbitMQ 4 counts no sockets: not shown
        bits.append(f"sockets {_num(n.sockets_used)}/{_num(n.sockets_total)}")
    if n.mem_used is not None and (n.mem_alarm or not brief):
        bits.append(f"mem {_bytes(n.mem_used)}/{_bytes(n.mem_limit)}")
    return " ".join(bits)


def status_line(snapshot: RabbitSnapshot, *, brief: bool = False) -> str:
    """Console markup: nodes (running, alarms, partitions, fd use), live alarms, queue counts. brief (a narrow
    pane): what is wrong with a node only, the healthy ones counted ("+2 running"), no version, fewer words."""
    if brief:
        healthy = [n for n in snapshot.nodes if _node_healthy(n)]
        parts = [_node_part(n, brief=True) for n in snapshot.nodes if not _node_healthy(n)]
        if len(healthy) == 1 and not parts:
            parts.append(_node_part(healthy[0], brief=True))
        elif healthy:
            parts.append(f"{'+' if parts else ''}{len(healthy)} [green]running[/]")
        parts = parts or ["[yellow]no node information[/]"]
    else:
        parts = [_node_part(n) for n in snapshot.nodes] or ["[yellow]no node information[/]"]
    noded = {(n.name, r) for n in snapshot.nodes for r, on in (("memory", n.mem_alarm), ("disk", n.disk_free_alarm))
             if on}
    live = [a for a in snapshot.alarms if (a.node, a.resource) not in noded]
    if live:
        parts.append("[bold red]" + escape(", ".join(f"{a.resource.upper()} ALARM on {a.node}" for a in live))
                     + "[/]")
    elif snapshot.alarms_checked and not noded and not brief:
        parts.append("no alarms")
    idle = sum(1 for q in snapshot.queues if q.no_consumer_with_messages)
    total = len(snapshot.queues)
    queues = f"{total:,} queue{'s' if total != 1 else ''}"
    if idle:
        queues += f", [bold]{idle} with {'no consumer' if brief else 'messages and no consumer'}[/b]"
    parts.append(queues)
    if snapshot.rabbitmq_version and not brief:
        parts.append(f"v{escape(snapshot.rabbitmq_version)}")
    if snapshot.confirm_error:
        parts.append(f"[yellow]live check off: {escape(snapshot.confirm_error)}[/]")
    return (BRIEF_SEPARATOR if brief else SEPARATOR).join(parts)


SEPARATOR, BRIEF_SEPARATOR = "  ·  ", " · "


class RabbitMQPane(SourcePane):
    SOURCE = "rabbitmq"
    TITLE = "RabbitMQ"
    COLUMNS = COLUMNS
    FIT = FIT

    def __init__(self, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.show_all = False

    def action_toggle_all(self) -> None:
        self.show_all = not self.show_all
        self.times_changed(self._now())

    def times_changed(self, now: float) -> None:
        obs = self.observation
        if obs is not None and _is_snapshot(obs.snapshot):
            self.render_snapshot(obs.snapshot, obs)

    def compose_body(self) -> ComposeResult:
        if self.configured:  # unconfigured: just the "not configured" line, like every other pane
            yield from super().compose_body()

    def render_snapshot(self, snapshot: Any, obs: Observation) -> None:
        if not _is_snapshot(snapshot):
            super().render_snapshot(snapshot, obs)
            return
        judged = getattr(obs.view, "detail", None)
        rows = queue_rows(snapshot, judged if isinstance(judged, tuple) else (), show_all=self.show_all,
                          now=self._now(), ages=show_ages(self.app))
        view, brief = "", ""
        if len(rows) < len(snapshot.queues):
            view = f"{SEPARATOR}showing {len(rows):,} worth attention (a: all)"
            brief = f"{BRIEF_SEPARATOR}{len(rows):,} shown (a: all)"
        elif self.show_all and len(snapshot.queues) > ATTENTION_OVER:
            view = f"{SEPARATOR}showing all (a: attention only)"
            brief = f"{BRIEF_SEPARATOR}all shown (a: attention)"
        self.set_fitting_message(status_line(snapshot) + view, status_line(snapshot, brief=True) + brief)
        if self.table is not None:
            self.table.sync(rows)
