"""Triage: the five triage commands at a glance, and root-cause hints that follow the dependency graph.

"Diagnosing OpenStack is largely the practice of following the dependency graph rather than
investigating whichever service reported the error." These pure functions do that reasoning over what the
collectors already published (observations: snapshots + findings of every source):

- `triage_summary` -> the triage row: catalog, compute x/y up, agents x/y alive, volume x/y up, RabbitMQ,
  Galera; "unknown" (STALE / not configured) whenever the source cannot vouch for its numbers.
- `triage_hints` -> `triage.*` findings, each naming the likely cause, what it means for the cloud, and what to
  check in triage order (the service listings, then the bus and the database, then the catalog). Every
  hint lists the finding keys it was derived from in `evidence["derived_from"]` as (kind, subject) pairs.
  Causes absorb their symptoms: Galera without quorum explains a fleet of services going down and builds
  stuck in scheduling, so it is one hint, not three; a fleet flip explains builds stuck in scheduling.
- `jump_target` -> where `enter` on a finding should go (a host, a server, or a pane).

No hint when nothing is wrong: hints only derive from findings (or a source failing with 401).
"""

from __future__ import annotations

import re
from collections.abc import Collection, Iterable, Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from tui.freshness import human_age
from tui.models.finding import SEVERITY_ORDER, Finding, Severity
from tui.models.galera import GaleraSnapshot
from tui.models.instances import BUILD_QUEUED, InstancesSnapshot
from tui.models.observation import Observation
from tui.models.rabbitmq import RabbitSnapshot
from tui.models.services import SectionRead, ServiceRow, ServicesSnapshot
from tui.models.triage import REASSURANCES, Level, TriageCell, TriageSummary, brief_text  # noqa: F401 (re-exported)
from tui.rules.liveness import Liveness, assess_section
from tui.rules.queue_names import classify_queue
from tui.rules.quorum import READS_FAIL, STILL_ANSWERS, WRITES_FAIL
from tui.shell_command import command, shell_text

SOURCE = "triage"
DEFAULT_INTERVAL = 10.0
_AUTH_REFUSED = re.compile(r"\b401\b|Unauthorized|refused the credentials|rejected the credentials")

Key = tuple[str, str]
JudgedRows = Mapping[str, Sequence[tuple[ServiceRow, Liveness]]]


# ============================================================================================ the summary row
def _is_stale(obs: Observation, now: float, interval: float) -> bool:
    return obs.error is not None or obs.is_stale(now, interval)


def _stale_text(obs: Observation, now: float) -> str:
    if obs.ok_at is None:
        return "ERROR (never read)"
    return f"STALE {human_age(obs.age(now))}"


def _worst(findings: Iterable[Finding], prefixes: tuple[str, ...], skip: tuple[str, ...] = ()) -> Severity | None:
    sev = [f.severity for f in findings if f.kind.startswith(prefixes) and f.kind not in skip]
    if not sev:
        return None
    return min(sev, key=lambda s: SEVERITY_ORDER[s])


def _level(sev: Severity | None, late: bool = False) -> Level:
    if sev == "critical":
        return "critical"
    if sev == "warning" or late:
        return "warning"
    return "ok"


def _absent(name: str, label: str, source: str, observations: Mapping[str, Observation],
            configured: Collection[str] | None) -> TriageCell | None:
    """A cell for a source without data: not configured, or configured and not read yet."""
    obs = observations.get(source)
    if obs is not None and obs.snapshot is not None:
        return None
    if obs is not None and obs.error is not None:
        return TriageCell(name, label, f"ERROR: {obs.error}"[:80], "unknown", source, stale=True)
    if configured is not None and source not in configured:
        return TriageCell(name, label, "not configured", "unknown", source)
    return TriageCell(name, label, "waiting for the first poll", "unknown", source)


def _mark_stale(cell: TriageCell, obs: Observation, now: float, stale: bool) -> TriageCell:
    if not stale:
        return cell
    return TriageCell(cell.name, cell.label, f"{cell.text} · {_stale_text(obs, now)}", "unknown", cell.source,
                      stale=True)


def _catalog_cell(snap: ServicesSnapshot, findings: Sequence[Finding]) -> TriageCell:
    if not snap.keystone.ok:
        return TriageCell("catalog", "catalog", "Keystone UNREACHABLE", "critical", "services")
    down = sorted({c.service_type for c in snap.catalog if not c.ok})
    slow = sorted({c.service_type for c in snap.catalog if c.late} | ({"identity"} if snap.keystone.late else set()))
    parts = []
    if down:
        parts.append(f"{', '.join(down)} DOWN")
    if slow:
        parts.append(f"{', '.join(slow)} slow (one late answer)")
    if snap.missing_types:
        parts.append(f"missing {', '.join(snap.missing_types)}")
    if parts:
        return TriageCell("catalog", "catalog", "; ".join(parts), "critical" if down else "warning", "services")
    n = len(snap.catalog)
    return TriageCell("catalog", "catalog", f"ok ({n} endpoints)" if n else "ok", "ok", "services")


def _counts_by_binary(section: SectionRead, now: datetime, thresholds: Any,
                      judged_rows: JudgedRows | None = None) -> dict[str, list[int]]:
    """{binary: [up, enabled total, late, disabled]} for the section's rows, in one pass over its verdicts
    (judged_rows: the verdicts the poll's judgement made, by section name; judged here otherwise)."""
    counts: dict[str, list[int]] = {}
    judged = judged_rows.get(section.name) if judged_rows is not None else None
    for row, live in judged if judged is not None else assess_section(section, now, thresholds):
        c = counts.get(row.binary)
        if c is None:
            c = counts[row.binary] = [0, 0, 0, 0]
        if not row.enabled:
            c[3] += 1
            continue
        c[1] += 1
        if not live.down:
            c[0] += 1
            c[2] += int(live.late)
    return counts


def service_counts(snap: ServicesSnapshot, now: datetime, thresholds: Any,
                   judged_rows: JudgedRows | None = None) -> list[tuple[str, str, int, int]]:
    """(section, binary, up, enabled total) of every binary the control plane listed, as the triage row judges
    them (the poll's verdicts, judged_rows; else heartbeats against [thresholds] at `now`); a section not
    deployed is left out."""
    out: list[tuple[str, str, int, int]] = []
    for section in (snap.compute, snap.network, snap.volume):
        if section.deployed:
            out += [(section.name, binary, c[0], c[1])
                    for binary, c in sorted(_counts_by_binary(section, now, thresholds, judged_rows).items())]
    return out


def _section_counts(section: SectionRead, now: datetime, thresholds: Any,
                    binary: str | None = None, judged_rows: JudgedRows | None = None) -> tuple[int, int, int, int]:
    """(up, enabled total, late, disabled) for the section's rows (optionally of one binary)."""
    counts = _counts_by_binary(section, now, thresholds, judged_rows)
    picked = [c for b, c in counts.items() if binary is None or b == binary]
    up, total, late, disabled = (sum(c[i] for c in picked) for i in range(4))
    return up, total, late, disabled


def _compute_cell(snap: ServicesSnapshot, findings: Sequence[Finding], now: datetime,
                  thresholds: Any, judged_rows: JudgedRows | None = None) -> TriageCell:
    section = snap.compute
    counts = _counts_by_binary(section, now, thresholds, judged_rows)  # one pass (it was one per nova binary)
    up, total, late, disabled = counts.get("nova-compute", [0, 0, 0, 0])
    text = f"{up}/{total} up"
    if late:
        text += f", {late} late"
    if disabled:
        text += f" ({disabled} disabled)"
    # the other nova binaries (conductor, scheduler): say so when none of one binary is up
    dead = [binary for binary, (b_up, b_total, _, _) in sorted(counts.items())
            if binary != "nova-compute" and b_total and not b_up]
    if dead:
        text += f"; {', '.join(dead)} DOWN"
    sev = _worst(findings, ("nova.",), skip=("nova.service_disabled",))
    level: Level = "critical" if dead else _level(sev, late=bool(late))
    return TriageCell("compute", "compute", text, level, "services", stale=section.stale)


def _simple_section_cell(name: str, label: str, word: str, section: SectionRead, findings: Sequence[Finding],
                         prefixes: tuple[str, ...], now: datetime, thresholds: Any,
                         judged_rows: JudgedRows | None = None) -> TriageCell:
    if not section.deployed:
        return TriageCell(name, label, "n/a (not in the catalog)", "ok", "services")
    up, total, late, disabled = _section_counts(section, now, thresholds, judged_rows=judged_rows)
    text = f"{up}/{total} {word}"
    if late:
        text += f", {late} late"
    if disabled:
        text += f" ({disabled} disabled)"
    return TriageCell(name, label, text, _level(_worst(findings, prefixes), bool(late)), "services",
                      stale=section.stale)


def _services_cells(obs: Observation | None, now: datetime, thresholds: Any, stale: bool,
                    judged_rows: JudgedRows | None = None) -> list[TriageCell]:
    assert obs is not None
    snap: ServicesSnapshot = obs.snapshot
    findings = list(obs.findings)
    ts = now.timestamp()
    # up/late/down as of the last good poll (like the findings): extrapolated to `now`, agents beating every
    # 30 s and polled every 10 s would count as "late" for seconds before each heartbeat, every minute
    at = min(now, datetime.fromtimestamp(obs.ok_at, now.tzinfo)) if obs.ok_at is not None else now
    cells = [
        _catalog_cell(snap, findings),
        _compute_cell(snap, findings, at, thresholds, judged_rows),
        _simple_section_cell("agents", "agents", "alive", snap.network, findings, ("neutron.",), at, thresholds,
                             judged_rows),
        _simple_section_cell("volume", "volume", "up", snap.volume, findings, ("cinder.",), at, thresholds,
                             judged_rows),
    ]
    out = []
    for cell in cells:
        if cell.name == "catalog":
            out.append(_mark_stale(cell, obs, ts, stale))
        elif cell.stale and not stale and snap.keystone.ok is False:
            # listings not readable without Keystone: the last rows, as of their read
            out.append(TriageCell(cell.name, cell.label, f"{cell.text} · STALE (no token)", "unknown",
                                  cell.source, stale=True))
        elif cell.stale and not stale:
            out.append(TriageCell(cell.name, cell.label, f"{cell.text} · STALE (listing failed)", "unknown",
                                  cell.source, stale=True))
        else:
            out.append(_mark_stale(cell, obs, ts, stale))
    return out


def service_queue_subjects(findings: Iterable[Finding]) -> list[str]:
    """Queues named after an OpenStack service topic, holding messages with no consumer (confirmed)."""
    return sorted(f.subject for f in findings
                  if f.kind == "rabbitmq.queue_no_consumer" and f.evidence.get("class") == "service")


def _rabbit_cell(obs: Observation) -> TriageCell:
    snap: RabbitSnapshot = obs.snapshot
    findings = list(obs.findings)
    nodes = snap.nodes
    running = sum(1 for n in nodes if n.running is not False)
    parts = [f"{running}/{len(nodes)} running" if nodes else "nodes ?"]
    alarms = sorted({f"{a.resource}@{a.node}" for a in snap.alarms}
                    | {f"memory@{n.name}" for n in nodes if n.mem_alarm}
                    | {f"disk@{n.name}" for n in nodes if n.disk_free_alarm})
    parts.append(f"ALARM {', '.join(alarms)}" if alarms else "no alarms")
    partitioned = [n.name for n in nodes if n.partitions]
    parts.append(f"PARTITIONED ({', '.join(partitioned)})" if partitioned else "no partitions")
    queues = service_queue_subjects(findings)
    blind = list(getattr(snap, "unreadable_vhosts", ()))
    if queues:
        shown = ", ".join(queues[:3]) + (f" +{len(queues) - 3}" if len(queues) > 3 else "")
        parts.append(f"{len(queues)} service queue{'s' if len(queues) != 1 else ''} without consumers: {shown}")
    elif not blind:
        parts.append("service queues consumed")
    if blind:  # never "consumed" about queues it cannot see
        parts.append(f"vhost{'s' if len(blind) != 1 else ''} not readable: {', '.join(blind)}")
    # the triage questions only: a notifications queue nobody reads is a finding, not a red row
    level: Level = "critical" if alarms or partitioned or queues or running < len(nodes) else \
        "warning" if blind else "ok"
    return TriageCell("rabbitmq", "RabbitMQ", ", ".join(parts), level, "rabbitmq")


def _galera_cell(obs: Observation) -> TriageCell:
    snap: GaleraSnapshot = obs.snapshot
    findings = list(obs.findings)
    expected = snap.expected_size or len(snap.nodes)
    serving = [n for n in snap.reachable if n.primary and not n.quorum_lost]
    synced = sum(1 for n in snap.reachable if n.state_comment == "Synced")
    sizes = [n.cluster_size for n in snap.reachable if n.cluster_size is not None]
    size = snap.primary_size if snap.primary_size is not None else (max(sizes) if sizes else 0)
    if not snap.reachable:
        return TriageCell("galera", "Galera", f"no node answers (0/{expected})", "critical", "galera")
    if not serving:
        text = f"NO QUORUM: size {size}/{expected}, 0 Primary, {synced} Synced (reads 1047, writes fail)"
        return TriageCell("galera", "Galera", text, "critical", "galera")
    text = f"size {size}/{expected}, {len(serving)} Primary, {synced} Synced"
    return TriageCell("galera", "Galera", text, _level(_worst(findings, ("galera.",))), "galera")


def triage_summary(observations: Mapping[str, Observation], now: datetime, thresholds: Any, *,
                   configured: Collection[str] | None = None,
                   intervals: Mapping[str, float] | None = None,
                   judged_rows: JudgedRows | None = None) -> TriageSummary:
    """The triage row. configured: the sources stacktop runs (None: unknown, a missing one is "waiting");
    intervals: poll interval per source, to call data older than three intervals STALE; judged_rows: the
    services rows with their verdicts as of the services poll, by section name (judged here otherwise)."""
    intervals = intervals or {}
    ts = now.timestamp()
    cells: list[TriageCell] = []

    svc = observations.get("services")
    absent = _absent("catalog", "catalog", "services", observations, configured)
    if absent is not None:
        cells.append(absent)
        for name, label in (("compute", "compute"), ("agents", "agents"), ("volume", "volume")):
            cells.append(TriageCell(name, label, absent.text, "unknown", "services", absent.stale))
    elif not isinstance(svc.snapshot if svc is not None else None, ServicesSnapshot):
        for name, label in (("catalog", "catalog"), ("compute", "compute"), ("agents", "agents"),
                            ("volume", "volume")):
            cells.append(TriageCell(name, label, "cannot read this snapshot", "unknown", "services"))
    else:
        assert svc is not None
        stale = _is_stale(svc, ts, intervals.get("services", DEFAULT_INTERVAL))
        cells.extend(_services_cells(svc, now, thresholds, stale, judged_rows))

    for name, label, source, build, cls in (("rabbitmq", "RabbitMQ", "rabbitmq", _rabbit_cell, RabbitSnapshot),
                                            ("galera", "Galera", "galera", _galera_cell, GaleraSnapshot)):
        absent = _absent(name, label, source, observations, configured)
        if absent is not None:
            cells.append(absent)
            continue
        obs = observations[source]
        if not isinstance(obs.snapshot, cls):  # another shape (e.g. a CLI source, a test double)
            cells.append(TriageCell(name, label, "cannot read this snapshot", "unknown", source))
            continue
        cell = build(obs)
        cells.append(_mark_stale(cell, obs, ts, _is_stale(obs, ts, intervals.get(source, DEFAULT_INTERVAL))))
    placement = _placement_cell(observations.get("placement"))
    if placement is not None:
        cells.append(placement)
    return TriageSummary(tuple(cells))


def _placement_cell(obs: Observation | None) -> TriageCell | None:
    """The background audit, only when it found allocations to look at (a healthy audit adds no cell)."""
    if obs is None or obs.error is not None:
        return None
    from tui.models.placement import AuditDigest  # the audit's models only once an audit came (30 s in at least)

    if not isinstance(obs.snapshot, AuditDigest):
        return None
    stale = [f for f in obs.findings if f.kind == "placement.stale_allocation" and f.severity == "warning"]
    stuck = [f for f in obs.findings if f.kind == "placement.migration_stuck"]
    if not stale and not stuck:
        return None
    hosts = sorted({str(f.evidence.get("host") or f.evidence.get("provider_name") or "?") for f in stale + stuck})
    parts = []
    if stale:
        parts.append(f"{len(stale)} stale allocation{'s' if len(stale) != 1 else ''}")
    if stuck:
        parts.append(f"{len(stuck)} stuck migration{'s' if len(stuck) != 1 else ''}")
    where = ", ".join(hosts[:2]) + (f" +{len(hosts) - 2}" if len(hosts) > 2 else "")
    return TriageCell("placement", "placement", f"{' + '.join(parts)} ({where})", "warning", "placement")


# ================================================================================================= the hints
@dataclass(frozen=True)
class _Context:
    findings: tuple[Finding, ...]
    observations: Mapping[str, Observation]

    def of(self, *kinds: str) -> list[Finding]:
        return [f for f in self.findings if f.kind in kinds]

    def snapshot(self, source: str, cls: type) -> Any:
        obs = self.observations.get(source)
        snap = None if obs is None else obs.snapshot
        return snap if isinstance(snap, cls) else None

    def error(self, source: str) -> str | None:
        obs = self.observations.get(source)
        return None if obs is None else obs.error


def _keys(findings: Iterable[Finding]) -> list[Key]:
    seen: list[Key] = []
    for f in findings:
        if f.key not in seen:
            seen.append(f.key)
    return seen


def _severity(findings: Sequence[Finding], default: Severity = "critical") -> Severity:
    if not findings:
        return default
    return min((f.severity for f in findings), key=lambda s: SEVERITY_ORDER[s])


def _steps(listings: str, bus_db: str, catalog: str) -> str:
    """next_step in triage order: the service listings, then the bus and the database, then the catalog."""
    return f"1) service listings: {listings} 2) the bus and the database: {bus_db} 3) the catalog: {catalog}"


def _hint(severity: Severity, kind: str, subject: str, summary: str, derived: Sequence[Finding],
          next_step: str, **evidence: Any) -> Finding:
    return Finding(severity=severity, kind=kind, subject=subject, summary=summary,
                   evidence={"derived_from": _keys(derived), **evidence}, next_step=next_step, source=SOURCE)


def _stuck(ctx: _Context, phase: str) -> list[Finding]:
    return [f for f in ctx.of("instance.stuck") if f.evidence.get("phase") == phase]


# --- Keystone -----------------------------------------------------------------------------------------------
def keystone_hint(ctx: _Context) -> Finding | None:
    unreachable = ctx.of("keystone.unreachable")
    refused = {src: err for src in ("services", "instances")
               if (err := ctx.error(src)) and _AUTH_REFUSED.search(err)}
    if not unreachable and not refused:
        return None
    if unreachable:
        f = unreachable[0]
        url = f.evidence.get("auth_url") or f.subject
        what = f"Keystone at {url} does not answer ({f.evidence.get('error') or 'unreachable'})"
        first = (f"`openstack token issue` reproduces it; check Keystone's web server (uwsgi/apache) and the load "
                 f"balancer in front of {url}.")
    else:
        what = "Keystone refuses stacktop's credentials (401 on every call)"
        first = ("rule out stacktop's own clouds.yaml entry first (`openstack token issue` with the same cloud); "
                 "if every user gets 401, check Keystone's fernet keys (rotated on one node only?) and its log.")
    summary = (f"{what}: everything fails authentication at once, so no API call succeeds anywhere (it looks "
               "like a total cloud failure and is one service); running instances are unaffected, they do "
               "not need Keystone.")
    next_step = _steps(
        "they need a token: once stacktop's own token expires it shows the rows it last read (STALE); do not "
        "read them as services going down.",
        "Keystone stores tokens' users and projects in the database: is Galera Primary?",
        first)
    return _hint("critical", "triage.keystone", "keystone", summary, unreachable, next_step,
                 pane="services", source_errors=refused, command=command("openstack", "token", "issue"))


# --- Galera -------------------------------------------------------------------------------------------------
def galera_hint(ctx: _Context) -> Finding | None:
    snap: GaleraSnapshot | None = ctx.snapshot("galera", GaleraSnapshot)
    quorum = ctx.of("galera.quorum_lost")
    if snap is None or not quorum or not snap.reachable:
        return None
    if any(n.primary and not n.quorum_lost for n in snap.reachable):
        return None  # a Primary component still serves: clients of the other nodes are fine (galera findings)
    expected = snap.expected_size or len(snap.nodes)
    nodes = ", ".join(n.label for n in snap.reachable if n.quorum_lost)
    # what a database without quorum explains: everybody's heartbeats stop at once, builds stop moving. One
    # compute down while the others report is not explained by it (its own hint stays).
    consequences = ctx.of("nova.fleet_down", "neutron.fleet_down") + _stuck(ctx, "scheduling")
    summary = (f"Galera has no Primary component ({len(snap.reachable)} of {expected} nodes answer, none in "
               f"quorum: {nodes}): the saying \"lists work, creates fail\" holds only for clients that set "
               f"wsrep_dirty_reads=ON. Exactly: {READS_FAIL}; {WRITES_FAIL}. {STILL_ANSWERS}, so health checks "
               "pass. With the default (OFF) OpenStack's lists fail too (500s); creates fail either way. "
               "Running instances keep running; service heartbeats are database writes, so services look down.")
    if consequences:
        summary += f" Explains {len(consequences)} other finding(s) (services down together, builds stuck)."
    quorum_step = quorum[0].next_step
    next_step = _steps(
        "expect services to turn down together (their heartbeats cannot be written): not the hosts.",
        f"restore quorum first. {quorum_step}",
        "not involved: do not restart the API services.")
    derived = quorum + ctx.of("galera.size_mismatch", "galera.node_unreachable") + consequences
    return _hint("critical", "triage.galera_no_quorum", "galera", summary, derived, next_step, pane="galera",
                 nodes_without_quorum=[n.address for n in snap.reachable if n.quorum_lost],
                 unreachable_nodes=[n.address for n in snap.unreachable], expected_size=expected)


# --- the bus / the conductor --------------------------------------------------------------------------------
def _rows_state(snap: ServicesSnapshot | None, binary: str) -> str:
    if snap is None:
        return "unknown"
    rows = [r for r in snap.compute.rows if r.binary == binary]
    if not rows:
        return "not listed"
    down = [r.host for r in rows if r.state.lower() == "down" or r.forced_down]
    return f"DOWN on {', '.join(down)}" if down else "up"


def bus_hint(ctx: _Context) -> Finding | None:
    # OVN agents do not report over RabbitMQ: their fleet points at the OVN databases itself
    fleets = [f for f in ctx.of("nova.fleet_down", "neutron.fleet_down") if not f.evidence.get("ovn")]
    if not fleets:
        return None
    svc: ServicesSnapshot | None = ctx.snapshot("services", ServicesSnapshot)
    queues = [f for f in ctx.of("rabbitmq.queue_no_consumer") if f.evidence.get("class") == "service"]
    broker = ctx.of("rabbitmq.alarm", "rabbitmq.partition", "rabbitmq.node_down")
    conductor_down = sorted({h for f in fleets for h in f.evidence.get("conductor_down_on", ())})
    conductor_queues = [f for f in queues if str(f.evidence.get("topic")) == "conductor"]
    parts = []
    for f in fleets:
        n, total = len(f.evidence.get("hosts", ())), f.evidence.get("total", "?")
        parts.append(f"{n} of {total} {f.subject}")
    carriers = []
    if any(f.kind == "nova.fleet_down" for f in fleets):
        carriers.append("nova-compute reports through nova-conductor over RabbitMQ")
    if any(f.kind == "neutron.fleet_down" for f in fleets):
        carriers.append("neutron agents report over RabbitMQ to neutron-server's RPC workers (q-reports-plugin)")
    summary = (f"{' and '.join(parts)} services stopped reporting at once; their processes are probably alive "
               f"({'; '.join(carriers)}): the cause is the message bus or "
               f"{'nova-conductor' if carriers[0].startswith('nova') else 'neutron-server RPC'}, not the hosts.")
    why = []
    if conductor_down:
        why.append(f"nova-conductor itself is down on {', '.join(conductor_down)}")
    if conductor_queues:
        why.append(f"queue {conductor_queues[0].subject} holds messages with 0 consumers: no nova-conductor is "
                   "listening")
    other_queues = [f.subject for f in queues if f not in conductor_queues]
    if other_queues:
        why.append(f"service queues without consumers: {', '.join(other_queues[:5])}")
    if broker:
        why.append("RabbitMQ: " + "; ".join(f.summary for f in broker[:2]))
    rabbit_error = ctx.error("rabbitmq")
    if rabbit_error:
        why.append(f"RabbitMQ's management API fails: {rabbit_error}")
    if why:
        summary += " " + "; ".join(why) + "."
    cond_state = _rows_state(svc, "nova-conductor")
    next_step = _steps(
        f"{'; '.join(parts)} down together while nova-conductor is {cond_state} and nova-scheduler is "
        f"{_rows_state(svc, 'nova-scheduler')}: a host problem would not take them all at once.",
        "is nova-conductor running, what does its log say (AMQP errors)? `rabbitmqctl cluster_status` (alarms, "
        "partitions), `rabbitmqctl list_queues name messages consumers` (conductor: 0 consumers?); Galera "
        "Primary?",
        "not involved.")
    absorbed = _stuck(ctx, "scheduling")
    subject = "nova-conductor" if conductor_down or conductor_queues else "message-bus"
    return _hint(_severity(fleets), "triage.bus_or_conductor", subject, summary,
                 fleets + queues + broker + absorbed, next_step,
                 pane="rabbitmq" if queues or broker else "services",
                 hosts=sorted({h for f in fleets for h in f.evidence.get("hosts", ())}),
                 conductor_down_on=conductor_down, command=command("rabbitmqctl", "cluster_status"))


# --- a service the catalog hides ----------------------------------------------------------------------------
# catalog service type stacktop reads only when the catalog lists it -> (its services section, the prefix of the
# oslo.messaging consumers that prove the service runs). compute and network are required: a catalog without
# them is catalog.service_missing already.
HIDDEN_SERVICE_EVIDENCE: dict[str, tuple[str, str]] = {"block-storage": ("volume", "cinder-")}


def catalog_hidden_hints(ctx: _Context) -> list[Finding]:
    """A service type the catalog gives stacktop's user no endpoint for, while its processes consume their
    RabbitMQ topics: the service runs, the catalog (endpoint filtering by project, another region or interface)
    hides it, and its services go unchecked; without this hint that section is simply "not deployed"."""
    svc: ServicesSnapshot | None = ctx.snapshot("services", ServicesSnapshot)
    rabbit: RabbitSnapshot | None = ctx.snapshot("rabbitmq", RabbitSnapshot)
    if svc is None or rabbit is None or not svc.keystone.ok:
        return []
    out = []
    for stype, (section, prefix) in HIDDEN_SERVICE_EVIDENCE.items():
        if svc.section(section).deployed:
            continue
        consumed = sorted(q.name for q in rabbit.queues
                          if (q.consumers or 0) > 0 and (classify_queue(q.name).service or "").startswith(prefix))
        if not consumed:
            continue
        services = sorted({str(classify_queue(name).service) for name in consumed})
        cloud = f"cloud '{svc.keystone.cloud}'" if svc.keystone.cloud else "the configured cloud"
        shown = ", ".join(consumed[:4]) + (f" and {len(consumed) - 4} more" if len(consumed) > 4 else "")
        summary = (f"the Keystone catalog of {cloud} lists no '{stype}' endpoint for stacktop's user, yet "
                   f"{', '.join(services)} run: RabbitMQ queues {shown} have consumers. The catalog hides the "
                   f"service (endpoint filtering by project, another region or interface); its {section} services "
                   "are not checked.")
        next_step = (f"as an admin: `openstack endpoint list --service {stype}` (its region and interface) and "
                     "`openstack endpoint list --project <the user's project>` (Keystone endpoint filtering); then "
                     f"set region_name / interface of {cloud} in clouds.yaml, or `openstack endpoint add project "
                     "<endpoint> <project>`")
        out.append(_hint("warning", "triage.catalog_hidden", stype, summary, (), next_step, pane="services",
                         service_type=stype, seen_as="rabbitmq consumers", queues=consumed[:20]))
    return out


# --- catalog endpoints: placement, image ------------------------------------------------------------------
def _endpoint(ctx: _Context, service_type: str) -> list[Finding]:
    return [f for f in ctx.of("catalog.endpoint_unreachable", "catalog.service_missing")
            if f.subject == service_type]


def _where(f: Finding) -> str:
    if f.kind == "catalog.service_missing":
        return "has no endpoint in the catalog"
    url = str(f.evidence.get("url") or "")
    err = str(f.evidence.get("error") or (f"HTTP {f.evidence.get('status')}" if f.evidence.get("status") else ""))
    if url and url in err:
        return f"does not answer: {err}"
    return f"does not answer at {url}" + (f" ({err})" if err else "")


def placement_hint(ctx: _Context) -> Finding | None:
    found = _endpoint(ctx, "placement")
    if not found:
        return None
    novalid = [f for f in ctx.of("instance.error") if f.evidence.get("fault_origin") == "nova-scheduler / placement"]
    stuck = _stuck(ctx, "scheduling")
    summary = (f"placement {_where(found[0])}: new builds fail with NoValidHost although there is free capacity "
               "(the scheduler gets no allocation candidates); running instances are unaffected.")
    if novalid:
        summary += f" {len(novalid)} build(s) already ended in ERROR with NoValidHost."
    next_step = _steps(
        "nova-scheduler is up and still fails: the cause is what it asks, placement.",
        "placement's database: is Galera Primary?",
        "the placement endpoint: is placement-api (uwsgi/apache) running, does its load balancer answer? "
        "`openstack catalog show placement`.")
    return _hint(_severity(found), "triage.placement_unreachable", "placement", summary,
                 found + novalid + stuck, next_step, pane="services",
                 command=command("openstack", "catalog", "show", "placement"))


def image_hint(ctx: _Context) -> Finding | None:
    found = _endpoint(ctx, "image")
    if not found:
        return None
    spawning = _stuck(ctx, "spawning")
    summary = (f"the image service (glance) {_where(found[0])}: new builds stall in spawning while nova-compute "
               "waits for the image, and end by timing out rather than with an image error; everything else "
               "works (running instances, the other APIs).")
    if spawning:
        summary += f" {len(spawning)} build(s) are stuck in spawning now."
    next_step = _steps(
        "nova-compute is up on the hosts with stuck builds: not the computes.",
        "glance's database: is Galera Primary?",
        "the image endpoint: is glance-api running, does its load balancer answer? `openstack image list`.")
    return _hint(_severity(found), "triage.image_unreachable", "image", summary, found + spawning, next_step,
                 pane="services", command=command("openstack", "image", "list"))


# --- one compute down ---------------------------------------------------------------------------------------
def compute_down_hints(ctx: _Context) -> list[Finding]:
    out = []
    inst: InstancesSnapshot | None = ctx.snapshot("instances", InstancesSnapshot)
    for f in ctx.of("nova.service_enabled_but_down"):
        host = str(f.evidence.get("host") or f.subject)
        queue = [q for q in ctx.of("rabbitmq.queue_no_consumer", LOST_KIND) if q.evidence.get("topic") == "compute"
                 and q.evidence.get("host") == host]
        stuck = [s for s in ctx.of("instance.stuck") if s.evidence.get("host") == host]
        summary = f"nova-compute on {host} is down while the other computes report: " + _on_down_host(
            inst.servers_on(host) if inst is not None else None, len(stuck))
        if queue:
            summary += f" Queue {queue[0].subject} has no consumer: the process is gone or lost its connection."
        argv = command("openstack", "compute", "service", "set", "--disable", operands=(host, "nova-compute"))
        next_step = _steps(
            f"only {host} is down: a host problem, not the bus. On {host}: is nova-compute running, what does "
            "its log say?",
            f"queue compute.{host}: 0 consumers = the process is gone or disconnected from RabbitMQ.",
            f"not involved. Until fixed: {shell_text(argv)}.")
        out.append(_hint(f.severity, "triage.compute_down", host, summary, [f, *queue, *stuck], next_step,
                         host=host, command=argv))
    return out


# --- a process gone from the bus, or late to report: the two signals told together ---------------------------
LOST_KIND = "rabbitmq.consumer_lost"
LOST_GROUP_KIND = "rabbitmq.consumers_lost"
LATE_KINDS = ("nova.service_late", "neutron.agent_late", "cinder.service_late")
DOWN_KINDS = ("nova.service_enabled_but_down", "nova.service_down", "neutron.agent_down", "cinder.service_down")
# "gone", "leaving" (gone for less than the restart grace), "present", "restarted" (present, a new process since
# its last report) or "unknown"
ConsumerState = str
HeartbeatState = str  # "fresh" | "late" | "down" | "unknown"


def lost_service_cause(consumer: ConsumerState, heartbeat: HeartbeatState) -> str | None:
    """The likely cause from the bus (is its queue consumed?) and the service listing (is its heartbeat on
    time?); None when neither signal says anything is wrong."""
    if consumer == "leaving" and heartbeat == "late":
        return ("restarting? Its consumer left moments ago and its heartbeat is late: a restart consumes again "
                "within the grace; if it does not, the process died or lost the bus")
    if consumer == "leaving" and heartbeat in ("fresh", "unknown"):
        return ("its consumer left moments ago (a restart?): watching; the process is gone or cut off from the bus if "
                "it does not return within the grace")
    if consumer == "restarted" and heartbeat == "late":
        return ("restarting: a new process consumes its queue again; its first heartbeat comes about one report "
                "interval after it started")
    if consumer == "restarted" and heartbeat == "down":
        return ("it was restarted and consumes its queue, but has not reported since: follow what carries its "
                "heartbeat (nova-conductor for nova-compute, the database, the bus)")
    if consumer == "gone" and heartbeat in ("late", "down"):
        return "the process died or lost the bus: its queue has no consumer and its heartbeat stopped"
    if consumer == "gone" and heartbeat == "fresh":
        return ("it lost its queue only: its heartbeat still arrives (a restart in progress, or its RabbitMQ "
                "connection dropped while its reports still get through)")
    if consumer == "gone":
        return "the process is gone or cut off from the bus (no consumer on its queue)"
    if consumer == "present" and heartbeat in ("late", "down"):
        return ("it runs but cannot report: it still consumes its queue, so follow what carries its heartbeat "
                "(nova-conductor for nova-compute, the database, the bus) or a hung process")
    if heartbeat in ("late", "down"):
        return "its heartbeat stopped (its queue's consumers are not known)"
    return None


def _service_key(binary: str, host: str) -> tuple[str, str]:
    return (binary, host.split("@")[0])


def _heartbeats(ctx: _Context) -> dict[tuple[str, str], HeartbeatState]:
    """(binary, host) -> the heartbeat state the services source judged this poll."""
    out: dict[tuple[str, str], HeartbeatState] = {}
    svc: ServicesSnapshot | None = ctx.snapshot("services", ServicesSnapshot)
    if svc is not None:
        for section in svc.sections:
            for row in section.rows:
                out[_service_key(row.binary, row.host)] = "fresh"
    for f in ctx.of(*LATE_KINDS):
        if f.evidence.get("host"):
            out[_service_key(str(f.evidence.get("binary")), str(f.evidence["host"]))] = "late"
    for f in ctx.of(*DOWN_KINDS):
        if f.evidence.get("host"):
            out[_service_key(str(f.evidence.get("binary")), str(f.evidence["host"]))] = "down"
    return out


def _consumers(ctx: _Context, recent_s: float) -> dict[tuple[str, str], ConsumerState]:
    """(service, host) -> whether its per-host topic queue has a consumer (from the RabbitMQ snapshot):
    "restarted" when it came back or changed connection within the last `recent_s` seconds."""
    out: dict[tuple[str, str], ConsumerState] = {}
    rabbit: RabbitSnapshot | None = ctx.snapshot("rabbitmq", RabbitSnapshot)
    if rabbit is not None:
        for q in rabbit.queues:
            if q.consumers is None or not q.name.count("."):
                continue
            kind = classify_queue(q.name)
            if kind.cls != "service" or not kind.host or not kind.service:
                continue
            n = q.live_consumers if q.live_consumers is not None else q.consumers
            key = _service_key(kind.service, kind.host)
            if out.get(key) == "gone" or n <= 0:
                out.setdefault(key, "unknown")
                continue
            restarted = q.consumer_restarted_at
            fresh = restarted is not None and (rabbit.taken_at - restarted).total_seconds() <= recent_s
            out[key] = "restarted" if fresh or out.get(key) == "restarted" else "present"
    for f in ctx.of(LOST_KIND, "rabbitmq.queue_no_consumer"):
        if f.evidence.get("host") and f.evidence.get("service") and f.evidence.get("class") == "service":
            out[_service_key(str(f.evidence["service"]), str(f.evidence["host"]))] = "gone"
    for group in ctx.of(LOST_GROUP_KIND):
        for host in group.evidence.get("hosts", ()):
            out[_service_key(str(group.evidence.get("service")), str(host))] = "gone"
    return out


def lost_service_hints(ctx: _Context, told_hosts: Collection[str]) -> list[Finding]:
    """One hint per process whose queue lost its consumer or whose heartbeat is late, telling both facts and the
    likely cause (lost_service_cause); computes already told by compute_down_hints are left to it."""
    # a lost consumer is told by rabbitmq.consumer_lost, or, once messages wait for it, by queue_no_consumer
    lost = {_service_key(str(f.evidence["service"]), str(f.evidence["host"])): f
            for f in ctx.of("rabbitmq.queue_no_consumer", LOST_KIND)
            if f.evidence.get("host") and f.evidence.get("service") and f.evidence.get("class") == "service"}
    for group in ctx.of(LOST_GROUP_KIND):  # several processes of one service at once: each host's hint cites it
        for host in group.evidence.get("hosts", ()):
            lost.setdefault(_service_key(str(group.evidence.get("service")), str(host)), group)
    late = {_service_key(str(f.evidence.get("binary")), str(f.evidence["host"])): f for f in ctx.of(*LATE_KINDS)
            if f.evidence.get("host")}
    if not lost and not late:
        return []
    beats = _heartbeats(ctx)
    # a restart counts while the heartbeat it interrupted has not come back: at most the longest down time
    recent = max([float(f.evidence.get("down_time_s") or 60.0) for f in late.values()] + [60.0])
    consumers = _consumers(ctx, recent)
    # nova-compute reports through nova-conductor: with no conductor consuming, a compute that still consumes
    # its own queue but reports late follows the conductor, and is told in the conductor's hint
    conductor_gone = any(f.evidence.get("service") == "nova-conductor"
                         for f in ctx.of(LOST_KIND, LOST_GROUP_KIND, "rabbitmq.queue_no_consumer"))
    followers: list[Finding] = []
    out = []
    for key in sorted(set(lost) | set(late)):
        binary, host = key
        if binary == "nova-compute" and host in told_hosts:
            continue
        consumer = consumers.get(key, "unknown")
        if key in lost and lost[key].severity == "info":
            consumer = "leaving"  # within the grace (rabbitmq.consumer_lost is an info until then)
        heartbeat = beats.get(key, "unknown")
        if (conductor_gone and binary == "nova-compute" and key in late and key not in lost
                and consumer in ("present", "unknown")):
            followers.append(late[key])
            continue
        cause = lost_service_cause(consumer, heartbeat)
        if cause is None:
            continue
        derived = [f for f in (lost.get(key), late.get(key)) if f is not None]
        derived += [f for f in ctx.of(*DOWN_KINDS) if f.evidence.get("host")
                    and _service_key(str(f.evidence.get("binary")), str(f.evidence["host"])) == key]
        facts = []
        if key in lost:
            facts.append(lost[key].summary)
        if key in late:
            facts.append(late[key].summary)
        summary = f"{binary} on {host}: {cause}. " + "; ".join(facts)
        queue = lost[key].evidence.get("queue") if key in lost else None
        next_step = _steps(
            f"the {binary} row of {host}: heartbeat {heartbeat}.",
            f"queue {queue or '(its topic queue)'}: consumer {consumer}; on {host}: is {binary} running, what does "
            "its log say (AMQP errors)?",
            "not involved.")
        severity = _severity(derived)
        # the two signals are told here, once: their own findings stand aside (a group of several hosts stays)
        absorbs = [f.key for f in (lost.get(key), late.get(key)) if f is not None and f.kind != LOST_GROUP_KIND]
        if consumer in ("restarted", "leaving") and heartbeat in ("late", "fresh", "unknown"):
            severity = "info"  # a restart's heartbeat gap is expected: an info, not the late warning
        out.append(_hint(severity, "triage.service_lost", f"{binary}@{host}", summary, derived, next_step,
                         host=host, binary=binary, consumer=consumer, heartbeat=heartbeat, cause=cause,
                         pane="services", absorbs=absorbs))
    return _fold_followers(out, followers)


def _fold_followers(hints: list[Finding], followers: list[Finding]) -> list[Finding]:
    """The computes whose heartbeats are late because no nova-conductor consumes go into the first conductor
    hint (their late findings cited and absorbed there); without one, each is its own hint as usual."""
    if not followers:
        return hints
    at = next((i for i, h in enumerate(hints) if h.evidence.get("binary") == "nova-conductor"), None)
    if at is None:
        return hints + [_hint(f.severity, "triage.service_lost", f"nova-compute@{f.evidence.get('host')}",
                              f"nova-compute on {f.evidence.get('host')}: its heartbeat is late while no "
                              "nova-conductor consumes: it reports through nova-conductor. " + f.summary,
                              [f], _steps("nova-conductor's rows.", "is nova-conductor running?", "not involved."),
                              host=f.evidence.get("host"), binary="nova-compute", consumer="present",
                              heartbeat="late", cause="follows nova-conductor", pane="services", absorbs=[f.key])
                        for f in followers]
    hint = hints[at]
    hosts = ", ".join(sorted(str(f.evidence.get("host")) for f in followers))
    ev = dict(hint.evidence)
    ev["derived_from"] = list(ev.get("derived_from", ())) + _keys(followers)
    ev["absorbs"] = list(ev.get("absorbs", ())) + [f.key for f in followers]
    ev["followers"] = sorted(str(f.evidence.get("host")) for f in followers)
    folded = Finding(severity=_severity([hint, *followers]), kind=hint.kind, subject=hint.subject,
                     summary=f"{hint.summary}; nova-compute heartbeats late on {hosts}: they report through "
                             "nova-conductor, so they follow it",
                     evidence=ev, next_step=hint.next_step, source=hint.source)
    return [*hints[:at], folded, *hints[at + 1:]]


def without_absorbed(findings: Iterable[Finding], hints: Iterable[Finding]) -> list[Finding]:
    """The findings no hint stands in for (evidence["absorbs"]: triage.service_lost tells a process's lost
    consumer and late heartbeat as one finding, at their worst severity, or as an info for a restart)."""
    absorbed = {tuple(k) for h in hints for k in h.evidence.get("absorbs", ())}
    return [f for f in findings if f.key not in absorbed] if absorbed else list(findings)


def _on_down_host(servers: list[Any] | None, stuck: int) -> str:
    """What a compute's nova-compute being down means for the instances on it, case by case: ACTIVE ones keep
    running, builds there cannot go on, the others cannot be managed; servers None: the instances are unknown."""
    unmanaged = "cannot be managed (stop, reboot, resize, migrate and delete do not complete)"
    tail = "; it gets no new instances while it is down."
    if servers is None:
        parts = [f"its instances keep running (libvirt does not need nova-compute) but {unmanaged}"]
        if stuck:
            parts.append(f"{stuck} build(s) are stuck there")
        return "; ".join(parts) + tail
    active = sum(1 for s in servers if s.status == "ACTIVE")
    builds = sum(1 for s in servers if s.status == "BUILD")
    other = len(servers) - active - builds
    parts = []
    if active:
        parts.append(f"its {active} ACTIVE instance(s) keep running (libvirt does not need nova-compute) but "
                     + unmanaged)
    if builds:
        parts.append(f"{builds} build(s) on it are stuck: only its nova-compute can go on with them")
    if other:
        also = "cannot be managed either" if active else unmanaged
        parts.append(f"{other} other instance(s) (not ACTIVE) {also}")
    if not servers:
        parts.append("it runs no instances")
    return "; ".join(parts) + tail


# --- builds stuck before reaching a compute ----------------------------------------------------------------
def scheduling_hint(ctx: _Context) -> Finding | None:
    # a scheduling build with an allocation was cast to a host: like a queued one (cast, never picked up)
    scheduling = [f for f in _stuck(ctx, "scheduling") if not f.evidence.get("cast_host")]
    queued = [f for f in _stuck(ctx, BUILD_QUEUED) + [f for f in _stuck(ctx, "scheduling")
                                                      if f.evidence.get("cast_host")]
              if not f.evidence.get("host_problems")]
    queued_hosts = sorted({str(f.evidence.get("host")) for f in queued})
    if len(queued_hosts) < 2:
        queued = []
    if not scheduling and not queued:
        return None
    parts = []
    if scheduling:
        longest = max(float(f.evidence.get("in_state_s") or 0) for f in scheduling)
        parts.append(f"{len(scheduling)} build(s) stuck in scheduling with no host chosen (longest "
                     f"{human_age(longest)})")
    if queued:
        parts.append(f"{len(queued)} build(s) cast to healthy computes ({', '.join(queued_hosts)}) never picked up")
    summary = ("; ".join(parts) + ": across every host, so the cause is the scheduler, placement or the message "
               "bus between nova-conductor, nova-scheduler and the computes, not the computes: restarting a "
               "compute never fixes it.")
    next_step = _steps(
        "are nova-scheduler and nova-conductor up?",
        "do queues scheduler and conductor have consumers, are messages piling up? Is Galera Primary?",
        "does the placement endpoint answer (allocation candidates)?")
    return _hint(_severity(scheduling + queued), "triage.scheduling_stuck", "scheduling", summary,
                 scheduling + queued, next_step, pane="instances")


def triage_hints(observations: Mapping[str, Observation], now: datetime | None = None) -> list[Finding]:
    """Every root-cause hint for the current observations (none when nothing is wrong). `now` is unused:
    the findings already carry their time-dependent verdicts; kept for the rule signature."""
    del now
    findings = tuple(f for obs in observations.values() for f in obs.findings if not f.kind.startswith("triage."))
    ctx = _Context(findings, observations)
    hints: list[Finding | None] = [keystone_hint(ctx)]
    galera = galera_hint(ctx)
    hints.append(galera)
    bus = None if galera else bus_hint(ctx)
    hints.append(bus)
    placement = placement_hint(ctx)
    hints += [placement, image_hint(ctx)]
    hints.extend(catalog_hidden_hints(ctx))
    down_hints = compute_down_hints(ctx)
    hints.extend(down_hints)
    if bus is None and galera is None:
        hints.extend(lost_service_hints(ctx, {h.subject for h in down_hints}))
    if galera is None and bus is None and placement is None:
        hints.append(scheduling_hint(ctx))
    return [h for h in hints if h is not None]


# ===================================================================================== where enter goes
HOST_KINDS = ("nova.service_enabled_but_down", "nova.service_down", "nova.service_disabled", "nova.service_unknown",
              "neutron.agent_down", "cinder.service_down", "triage.compute_down", "triage.service_lost",
              "nova.service_late", "neutron.agent_late", "cinder.service_late")
PANE_BY_PREFIX = (("rabbitmq.", "rabbitmq"), ("galera.", "galera"), ("instance.", "instances"),
                  ("keystone.", "services"), ("catalog.", "services"), ("nova.", "services"),
                  ("neutron.", "services"), ("cinder.", "services"), ("services.", "services"))


def jump_target(f: Finding) -> tuple[str, str]:
    """("host", name) | ("server", id) | ("pane", source): what `enter` on this finding opens."""
    if f.kind.startswith("instance."):
        return ("server", f.subject)
    if f.kind in HOST_KINDS and f.evidence.get("host"):
        return ("host", str(f.evidence["host"]).split("@")[0])
    if f.kind.startswith("triage.") and f.evidence.get("pane"):
        return ("pane", str(f.evidence["pane"]))
    for prefix, pane in PANE_BY_PREFIX:
        if f.kind.startswith(prefix):
            return ("pane", pane)
    return ("pane", f.source or "findings")
