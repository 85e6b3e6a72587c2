"""Control-plane liveness rules: heartbeat age, countdown, down services, fleet flips, Keystone, catalog.

Pure functions; `now` (UTC, aware) and the thresholds are passed in.

Liveness follows nova's servicegroup DB driver (nova/servicegroup/drivers/db.py): a service is up while
`now - last_seen_up <= service_down_time` (exactly at the limit is still up); `forced_down` is down regardless.
The API's own `state` is trusted as well (it is computed with the API's service_down_time), so a service is
down when the API says so, when it is forced down, or when its heartbeat is older than our threshold. A
heartbeat older than LATE_FRACTION of the down time is *late*: the row counts down "down in N s".

Neutron's OVN agents are judged by neutron's own `alive` only: their heartbeat timestamp moves only when
neutron bumps the OVN nb_cfg, so an old one is normal.

Heartbeat age comes from the API's clock (see tui.models.services), so a skewed stacktop clock does not
matter; a heartbeat from the future (the service host's clock ahead) is age 0 with the skew kept as evidence.

Fleet flip: nova-compute writes its heartbeat through nova-conductor over RabbitMQ. When at least
`fleet_down_fraction` of one binary's enabled services (and at least two) stopped reporting within one down
time of each other (at least one of them already down, the others late), that is one `*.fleet_down` finding
about the binary, pointing at what carries the heartbeats, instead of one finding per host.

ML2/OVN: neutron reads every OVN agent's liveness from the OVN southbound database (the chassis' nb_cfg), not
from RabbitMQ, and reports a host's OVN Metadata / OVN Neutron agent dead whenever that host's ovn-controller
is, even while those processes run. So a dead ovn-controller is one finding naming the controller as the
cause, with the agents that follow it as evidence, not one finding per agent.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from tui.freshness import coarse_age
from tui.models.finding import Finding, Severity
from tui.models.services import EndpointCheck, SectionRead, ServiceRow, ServicesSnapshot
from tui.shell_command import command, shell_text

SOURCE = "services"
LATE_FRACTION = 0.5
REQUIRED_TYPES: tuple[str, ...] = ("identity", "compute", "network", "image", "placement")
SECTION_SERVICE_TYPE = {"compute": "compute", "network": "network", "volume": "block-storage"}
# Neutron agents whose death breaks port wiring on their host (no other agent can stand in).
L2_AGENT_MARKERS = ("open vswitch", "linux bridge", "ovn controller", "sr-nic", "macvtap")
OVN_CONTROLLER_TYPES = ("ovn controller agent", "ovn controller gateway agent")


@dataclass(frozen=True)
class Liveness:
    """One row's verdict at one moment.

    age_s: heartbeat age (>= 0; None when the API gave no timestamp); skew_s: how far the heartbeat lies in
    the future (> 0 only with clock skew); remaining_s: seconds until the down time is reached (late rows).
    """

    age_s: float | None
    down: bool
    late: bool
    remaining_s: float | None = None
    skew_s: float = 0.0
    why: str = ""
    down_time: float = 60.0

    @property
    def label(self) -> str:
        return "down" if self.down else "late" if self.late else "up"

    @property
    def late_mark(self) -> float:
        """The heartbeat age from which the row is late."""
        return self.down_time * LATE_FRACTION


def down_time_for(section: str, thresholds: Any) -> float:
    return float({
        "compute": thresholds.service_down_time,
        "network": thresholds.agent_down_time,
        "volume": thresholds.volume_service_down_time,
    }[section])


def heartbeat_age(row: ServiceRow, read_at: datetime | None, now: datetime) -> float | None:
    """Age at `now`, possibly negative (clock skew): the age measured at read plus local time since."""
    if row.age_at_read_s is None:
        return None
    elapsed = 0.0 if read_at is None else max(0.0, (now - read_at).total_seconds())
    return row.age_at_read_s + elapsed


def assess(row: ServiceRow, read_at: datetime | None, now: datetime, down_time: float,
           late_fraction: float = LATE_FRACTION) -> Liveness:
    raw = heartbeat_age(row, read_at, now)
    age = None if raw is None else max(0.0, raw)
    skew = 0.0 if raw is None or raw >= 0 else -raw
    # an OVN agent's heartbeat only moves when neutron bumps nb_cfg (at most every agent_down_time / 2, and
    # only while someone lists the agents), so its age says nothing by itself: neutron's own verdict counts
    timed = row.section != "network" or not is_ovn_agent(row)
    by_heartbeat = timed and age is not None and age > down_time
    api_down = row.state.lower() == "down"
    forced = bool(row.forced_down)
    down = forced or api_down or by_heartbeat
    if forced:
        why = "forced down"
    elif by_heartbeat:
        why = f"no heartbeat for {coarse_age(age)}"  # coarse: shown in the pane, must not tick every poll
    elif api_down and not timed:
        why = "neutron reports it dead (its chassis stopped following nb_cfg in the OVN southbound database)"
    elif api_down:
        why = "the API reports it down"
    else:
        why = ""
    late = timed and not down and age is not None and age > down_time * late_fraction
    remaining = max(0.0, down_time - age) if late and age is not None else None
    return Liveness(age_s=age, down=down, late=late, remaining_s=remaining, skew_s=skew, why=why,
                    down_time=down_time)


def section_now(section: SectionRead, now: datetime) -> datetime:
    """Rows carried over from an earlier poll are judged as of their read: ages must not grow while the
    listing cannot be read (a Keystone outage must not turn into a false fleet flip)."""
    if section.stale and section.read_at is not None:
        return section.read_at
    return now


def assess_section(section: SectionRead, now: datetime, thresholds: Any) -> list[tuple[ServiceRow, Liveness]]:
    """Every row of the section with its verdict at `now` (as of its read when the section is stale). The
    runner judges a poll's sections once (tui.rules.judge) and every view reads those verdicts."""
    at = section_now(section, now)
    down_time = down_time_for(section.name, thresholds)
    return [(row, assess(row, section.read_at, at, down_time)) for row in section.rows]


# ------------------------------------------------------------------------------------------------ fleet
@dataclass(frozen=True)
class Fleet:
    binary: str
    section: str
    rows: tuple[ServiceRow, ...]
    down: int
    late: int
    total: int
    spread_s: float
    ages: tuple[float, ...]


def find_fleets(assessed: Sequence[tuple[ServiceRow, Liveness]], down_time: float, fraction: float) -> list[Fleet]:
    """Per binary: the largest group of enabled, not-forced services whose heartbeats stopped within one down
    time of each other, all down or late, at least one down; a fleet when it is >= fraction of the binary's
    enabled services and at least two."""
    by_binary: dict[str, list[tuple[ServiceRow, Liveness]]] = {}
    for row, live in assessed:
        if row.enabled and not row.forced_down:
            by_binary.setdefault(row.binary, []).append((row, live))
    fleets = []
    for binary, members in sorted(by_binary.items()):
        total = len(members)
        going = sorted(((r, lv) for r, lv in members if (lv.down or lv.late) and lv.age_s is not None),
                       key=lambda m: m[1].age_s or 0.0)
        best: list[tuple[ServiceRow, Liveness]] = []
        start = 0
        for end in range(len(going)):
            while (going[end][1].age_s or 0.0) - (going[start][1].age_s or 0.0) > down_time:
                start += 1
            window = going[start:end + 1]
            if len(window) > len(best) and any(lv.down for _, lv in window):
                best = window
        needed = max(2, math.ceil(fraction * total - 1e-9))
        if len(best) >= needed:
            ages = tuple(lv.age_s or 0.0 for _, lv in best)
            fleets.append(Fleet(binary=binary, section=best[0][0].section, rows=tuple(r for r, _ in best),
                                down=sum(1 for _, lv in best if lv.down), late=sum(1 for _, lv in best if lv.late),
                                total=total, spread_s=max(ages) - min(ages), ages=ages))
    return fleets


def _hosts(rows: Iterable[ServiceRow]) -> list[str]:
    return sorted(r.host for r in rows)


def fleet_finding(fleet: Fleet, assessed: Sequence[tuple[ServiceRow, Liveness]],
                  followers: dict[str, list[ServiceRow]] | None = None) -> Finding:
    hosts = _hosts(fleet.rows)
    shown = ", ".join(hosts[:6]) + (f" and {len(hosts) - 6} more" if len(hosts) > 6 else "")
    n = len(fleet.rows)
    state = f"{fleet.down} down" + (f", {fleet.late} about to be" if fleet.late else "")
    summary = (f"{n} of {fleet.total} {fleet.binary} services stopped reporting together "
               f"(last heartbeats within {fleet.spread_s:.0f} s of each other; {state}): {shown}")
    evidence: dict[str, Any] = {
        "binary": fleet.binary, "hosts": hosts, "down": fleet.down, "late": fleet.late, "total": fleet.total,
        "spread_s": round(fleet.spread_s, 1), "heartbeat_ages_s": [round(a, 1) for a in fleet.ages],
    }
    if fleet.section == "network":
        kind = "neutron.fleet_down"
        if all(is_ovn_agent(r) for r in fleet.rows):
            next_step = OVN_FLEET_NEXT_STEP
            evidence["ovn"] = True
            with_it = sorted({f.binary for c in fleet.rows for f in (followers or {}).get(c.host, [])})
            if with_it:
                evidence["follow_the_controller"] = with_it
                summary += f"; neutron reports their hosts' {', '.join(with_it)} down with them"
        else:
            next_step = ("agents report their state over RabbitMQ to neutron-server's RPC workers (queue "
                         "q-reports-plugin): check neutron-rpc-server / neutron-server and RabbitMQ before the hosts")
    else:
        kind = "nova.fleet_down"
        conductors_down = sorted(r.host for r, lv in assessed if r.binary == "nova-conductor" and lv.down)
        if conductors_down:
            evidence["conductor_down_on"] = conductors_down
            summary += f"; nova-conductor itself is down on {', '.join(conductors_down)}"
        if fleet.binary == "nova-compute":
            next_step = ("nova-compute reports its heartbeat through nova-conductor over RabbitMQ: check "
                         "nova-conductor (running? its log) and RabbitMQ (the conductor queue has consumers? "
                         "alarms, partitions?) before touching the hosts")
        else:
            next_step = (f"{fleet.binary} writes its heartbeat to the database itself: check the database "
                         "(Galera quorum), RabbitMQ and nova-conductor before the hosts")
    return Finding(severity="critical", kind=kind, subject=fleet.binary, summary=summary, evidence=evidence,
                   next_step=next_step, source=SOURCE)


# ----------------------------------------------------------------------------------------- per service
def _evidence(row: ServiceRow, live: Liveness) -> dict[str, Any]:
    ev: dict[str, Any] = {
        "binary": row.binary, "host": row.host, "zone": row.zone, "status": row.status, "state": row.state,
        "updated_at": row.updated_at, "heartbeat_age_s": None if live.age_s is None else round(live.age_s, 1),
        "down_time_s": live.down_time,
    }
    if row.forced_down is not None:
        ev["forced_down"] = row.forced_down
    if row.disabled_reason:
        ev["disabled_reason"] = row.disabled_reason
    if row.agent_type:
        ev["agent_type"] = row.agent_type
    if live.skew_s:
        ev["clock_skew_s"] = round(live.skew_s, 1)
    if row.id:
        ev["id"] = row.id
    return ev


def _silence(live: Liveness) -> str:
    if live.why.startswith("no heartbeat"):
        return f"{live.why} (down after {live.down_time:g} s)"
    if live.age_s is not None:
        return f"{live.why}; last heartbeat {coarse_age(live.age_s)} ago"
    return live.why


def _others_up(assessed: Sequence[tuple[ServiceRow, Liveness]], row: ServiceRow) -> int:
    return sum(1 for r, lv in assessed if r.binary == row.binary and r is not row and r.enabled and not lv.down)


def compute_findings(assessed: Sequence[tuple[ServiceRow, Liveness]], skip: set[str]) -> list[Finding]:
    out = []
    for row, live in assessed:
        if row.key in skip:
            continue
        subject = row.host if row.binary == "nova-compute" else f"{row.binary}@{row.host}"
        ev = _evidence(row, live)
        if row.status == "disabled":
            reason = (row.disabled_reason or "").strip()
            auto = reason.upper().startswith("AUTO:")
            ev["driver_disabled"] = auto
            state = " and down" if live.down else ""
            if auto:
                summary = f"{row.binary} on {row.host} was disabled by the driver itself{state}: {reason}"
                next_step = (f"the virt driver lost its hypervisor: check libvirtd on {row.host} (virsh list) and "
                             "the nova-compute log; nova re-enables it when the connection returns")
            else:
                why = f": {reason}" if reason else " (no reason given)"
                summary = f"{row.binary} on {row.host} is disabled{state}{why}"
                ev["command"] = command("openstack", "compute", "service", "set", "--enable",
                                        operands=(row.host, row.binary))
                next_step = f"intended maintenance? If not: {shell_text(ev['command'])}"
            out.append(Finding("info", "nova.service_disabled", subject, summary, ev, next_step, SOURCE))
        elif row.status.upper() == "UNKNOWN" or row.state.upper() == "UNKNOWN":
            ev["command"] = command("nova-manage", "cell_v2", "list_cells")
            out.append(Finding(
                "warning", "nova.service_unknown", subject,
                f"{row.binary} on {row.host}: state UNKNOWN (its cell database does not answer nova-api)",
                ev, "check the cell's database and its nova-conductor; `nova-manage cell_v2 list_cells`",
                SOURCE))
        elif live.down and row.binary == "nova-compute" and not row.forced_down:
            ev["command"] = command("openstack", "compute", "service", "set", "--disable",
                                    operands=(row.host, "nova-compute"))
            out.append(Finding(
                "critical", "nova.service_enabled_but_down", subject,
                f"nova-compute on {row.host} is down but enabled: {_silence(live)}; it is still offered work "
                "it cannot do",
                ev,
                f"on {row.host}: is nova-compute running, what does its log say? If it runs, its reports do not "
                f"arrive: check nova-conductor and RabbitMQ. Until fixed: {shell_text(ev['command'])}",
                SOURCE))
        elif live.down:
            if row.forced_down:
                sev: Severity = "warning"
                summary = f"{row.binary} on {row.host} is forced down (os-services force-down)"
                ev["command"] = command("openstack", "compute", "service", "set", "--up",
                                        operands=(row.host, row.binary))
                next_step = (f"forced down by an operator (host fencing / evacuation); when {row.host} is healthy: "
                             f"{shell_text(ev['command'])}")
            else:
                others = _others_up(assessed, row)
                sev = "warning" if others else "critical"
                tail = f"; {others} other {row.binary} still up" if others else f"; no other {row.binary} is up"
                summary = f"{row.binary} on {row.host} is down: {_silence(live)}{tail}"
                next_step = (f"on {row.host}: is {row.binary} running, what does its log say? Then RabbitMQ and "
                             "the database, which it needs to report")
            out.append(Finding(sev, "nova.service_down", subject, summary, ev, next_step, SOURCE))
    return out


def _is_l2(row: ServiceRow) -> bool:
    text = f"{row.agent_type or ''} {row.binary}".lower()
    return any(m in text for m in L2_AGENT_MARKERS) or "openvswitch" in text or "linuxbridge" in text \
        or is_ovn_controller(row)


def is_ovn_controller(row: ServiceRow) -> bool:
    """The agent neutron's OVN driver lists for a chassis' ovn-controller (gateway chassis included)."""
    return row.binary == "ovn-controller" or (row.agent_type or "").lower() in OVN_CONTROLLER_TYPES


def is_ovn_agent(row: ServiceRow) -> bool:
    """Any agent of neutron's OVN driver: ovn-controller, the OVN Metadata agent, the OVN Neutron agent."""
    return is_ovn_controller(row) or (row.agent_type or "").lower().startswith("ovn ") \
        or row.binary.startswith("neutron-ovn-")


OVN_FLEET_NEXT_STEP = (
    "neutron reads OVN agents' liveness from the OVN southbound database (each chassis' nb_cfg follows the "
    "one neutron-server bumps in the northbound): check ovn-northd, the OVN NB/SB ovsdb-servers and "
    "neutron-server's connection to them before the hosts")


def ovn_followers(assessed: Sequence[tuple[ServiceRow, Liveness]]) -> dict[str, list[ServiceRow]]:
    """host -> the OVN agents other than ovn-controller that are down on a host whose ovn-controller is down
    (enabled, not forced): neutron reports them dead because their controller is, whatever their process does."""
    controllers_down = {r.host for r, lv in assessed if is_ovn_controller(r) and r.enabled and lv.down}
    out: dict[str, list[ServiceRow]] = {}
    for row, live in assessed:
        if row.host in controllers_down and is_ovn_agent(row) and not is_ovn_controller(row) and live.down:
            out.setdefault(row.host, []).append(row)
    return out


def _agent_impact(row: ServiceRow, l2: bool, others: int) -> str:
    if l2:
        return "ports on this host cannot be wired"
    if is_ovn_agent(row) and "metadata" in f"{row.agent_type} {row.binary}".lower():
        return "instances on this host get no metadata (cloud-init, keys)"
    return f"{others} other {row.binary} still alive" if others else f"no other {row.binary} is alive"


def _agent_next_step(row: ServiceRow) -> str:
    if is_ovn_controller(row):
        return (f"on {row.host}: is ovn-controller running, what does its log say? It needs ovs-vswitchd on the "
                "host and the OVN southbound database; neutron reads its liveness there (Chassis_Private nb_cfg), "
                "not over RabbitMQ")
    if is_ovn_agent(row):
        return (f"on {row.host}: is {row.binary} running, what does its log say? It reports through the OVN "
                "southbound database (its chassis' external_ids), not over RabbitMQ")
    return (f"on {row.host}: is {row.binary} running, what does its log say? If it runs, its state reports do not "
            "arrive: check RabbitMQ and neutron-server's RPC workers")


def network_findings(assessed: Sequence[tuple[ServiceRow, Liveness]], skip: set[str],
                     followers: dict[str, list[ServiceRow]] | None = None) -> list[Finding]:
    """One finding per dead enabled agent; OVN agents that only follow their host's dead ovn-controller
    (`followers`, see ovn_followers) go into the controller's finding instead of one of their own."""
    followers = ovn_followers(assessed) if followers is None else followers
    folded = {r.key for rows in followers.values() for r in rows}
    out = []
    for row, live in assessed:
        if row.key in skip or row.key in folded or not row.enabled or not live.down:
            continue
        others = _others_up(assessed, row)
        l2 = _is_l2(row)
        sev: Severity = "critical" if l2 or not others else "warning"
        what = row.agent_type or row.binary
        summary = f"{what} on {row.host} is down: {_silence(live)}; {_agent_impact(row, l2, others)}"
        ev = _evidence(row, live)
        with_it = followers.get(row.host, []) if is_ovn_controller(row) else []
        if with_it:
            names = ", ".join(f"{r.agent_type or r.binary} ({r.binary})" for r in with_it)
            summary = (f"ovn-controller on {row.host} is down: {_silence(live)}; ports on this host cannot be "
                       f"wired. neutron reports its {names} down with it: those follow the controller's chassis, "
                       "the cause is ovn-controller")
            ev["follow_the_controller"] = [r.binary for r in with_it]
        out.append(Finding(sev, "neutron.agent_down", f"{row.binary}@{row.host}", summary, ev,
                           _agent_next_step(row), SOURCE))
    return out


def volume_findings(assessed: Sequence[tuple[ServiceRow, Liveness]], skip: set[str]) -> list[Finding]:
    out = []
    for row, live in assessed:
        if row.key in skip or not row.enabled or not live.down:
            continue
        others = _others_up(assessed, row)
        sev: Severity = "warning" if others else "critical"
        tail = f"; {others} other {row.binary} still up" if others else f"; no other {row.binary} is up"
        out.append(Finding(
            sev, "cinder.service_down", f"{row.binary}@{row.host}",
            f"{row.binary} on {row.host} is down: {_silence(live)}{tail}",
            _evidence(row, live),
            f"on {row.host.split('@')[0]}: is {row.binary} running, what does its log say (backend reachable?)? "
            "Then the database and RabbitMQ",
            SOURCE))
    return out


# ------------------------------------------------------------------------------------------ late heartbeats
LATE_KINDS = {"compute": "nova.service_late", "network": "neutron.agent_late", "volume": "cinder.service_late"}
LATE_GROUP_OVER = 3  # more late services of one binary than this: one finding naming the hosts
# a report lands a little after its interval (the database write, the API's clock): a finding only past this
# much over LATE_FRACTION of the down time (with down = 2 x report_interval, half the down time is one interval)
LATE_SLACK_S = 1.0


def late_findings(section: str, assessed: Sequence[tuple[ServiceRow, Liveness]], skip: set[str]) -> list[Finding]:
    """A warning per enabled service whose heartbeat is late (older than LATE_FRACTION of the down time) but
    not yet down: the countdown to nova's (neutron's, cinder's) own verdict. Many of one binary at once: one
    finding (a fleet about to flip, told by its fleet finding once one is down)."""
    kind = LATE_KINDS[section]
    late = [(r, lv) for r, lv in assessed if lv.late and r.enabled and not r.forced_down and r.key not in skip
            and (lv.age_s or 0.0) > lv.down_time * LATE_FRACTION + LATE_SLACK_S]
    by_binary: dict[str, list[tuple[ServiceRow, Liveness]]] = {}
    for row, live in late:
        by_binary.setdefault(row.binary, []).append((row, live))
    out = []
    for binary, members in sorted(by_binary.items()):
        if len(members) > LATE_GROUP_OVER:
            hosts = _hosts(r for r, _ in members)
            soonest = min(lv.remaining_s or 0.0 for _, lv in members)
            shown = ", ".join(hosts[:6]) + (f" and {len(hosts) - 6} more" if len(hosts) > 6 else "")
            out.append(Finding(
                "warning", kind, binary,
                f"{len(members)} {binary} heartbeats are late together ({shown}); the first is down in "
                f"{soonest:.0f} s: what carries their reports (RabbitMQ, nova-conductor, the database) more likely "
                "than the hosts",
                {"binary": binary, "hosts": hosts, "late": len(members), "down_in_s": round(soonest, 1),
                 "down_time_s": members[0][1].down_time},
                "RabbitMQ (alarms, partitions, the conductor queue's consumers) and nova-conductor before the hosts",
                SOURCE))
            continue
        for row, live in members:
            subject = row.host if row.binary == "nova-compute" else f"{row.binary}@{row.host}"
            age = live.age_s or 0.0
            judge = {"compute": "nova", "network": "neutron", "volume": "cinder"}[section]
            summary = (f"{row.binary} on {row.host}: heartbeat late ({age:.0f} s old); {judge} calls it down in "
                       f"{live.remaining_s or 0.0:.0f} s (after {live.down_time:g} s)")
            ev = _evidence(row, live)
            ev["down_in_s"] = round(live.remaining_s or 0.0, 1)
            next_step = (f"on {row.host}: is {row.binary} running and not hung (SIGSTOP, a stuck thread)? If it "
                         "consumes its queue but cannot report, follow what carries the report: "
                         + ("nova-conductor, then RabbitMQ and the database" if row.binary == "nova-compute"
                            else "RabbitMQ and the database"))
            out.append(Finding("warning", kind, subject, summary, ev, next_step, SOURCE))
    return out


# ------------------------------------------------------------------------------------ keystone, catalog
def keystone_findings(snap: ServicesSnapshot) -> list[Finding]:
    ks = snap.keystone
    if ks.ok and ks.late:
        url = ks.auth_url or "(no auth_url)"
        return [Finding(
            "warning", "keystone.slow", url,
            f"Keystone at {url} did not answer this poll's version GET in time ({ks.late}); it answered the "
            "poll before, so this is one slow answer, not yet an outage: reported unreachable if the next "
            "poll gets no answer either",
            {"auth_url": ks.auth_url, "cloud": ks.cloud, "clouds_file": ks.clouds_file, "error": ks.late},
            "a loaded Keystone (token validations of every API) answers late: watch the next poll; if it "
            f"recurs, check Keystone's web server workers and the load balancer in front of {url}",
            SOURCE)]
    if ks.ok:
        return []
    url = ks.auth_url or "(no auth_url)"
    cloud = ks.cloud or "(default cloud)"
    argv = command("openstack", "--os-cloud", ks.cloud, "token", "issue") if ks.cloud else \
        command("openstack", "token", "issue")
    return [Finding(
        "critical", "keystone.unreachable", url,
        f"Keystone at {url} (clouds.yaml cloud '{cloud}') does not answer: {ks.error or 'unreachable'}; "
        "no API call can get a token (running instances are not affected)",
        {"auth_url": ks.auth_url, "cloud": ks.cloud, "clouds_file": ks.clouds_file, "error": ks.error,
         "command": argv},
        f"check Keystone's web server (uwsgi/apache) and the load balancer in front of {url}; "
        f"`{shell_text(argv)}` reproduces it",
        SOURCE)]


def catalog_findings(snap: ServicesSnapshot) -> list[Finding]:
    out = []
    if snap.keystone.ok:  # the catalog is only known with a token
        for stype in snap.missing_types:
            argv = command("openstack", "catalog", "show", operands=(stype,))
            out.append(Finding(
                "warning", "catalog.service_missing", stype,
                f"the Keystone catalog has no '{stype}' endpoint for this region/interface",
                {"service_type": stype, "cloud": snap.keystone.cloud, "command": argv},
                f"{shell_text(argv)}; check region_name / interface in clouds.yaml", SOURCE))
    for check in snap.catalog:
        if check.service_type == "identity" and (not snap.keystone.ok or snap.keystone.late):
            continue  # already keystone.unreachable / keystone.slow
        if check.late:
            out.append(endpoint_slow_finding(check))
        elif not check.ok:
            out.append(endpoint_finding(check))
    return out


def endpoint_finding(check: EndpointCheck) -> Finding:
    what = f"HTTP {check.status}" if check.status is not None else (check.error or "no answer")
    name = f" ({check.name})" if check.name else ""
    return Finding(
        "critical", "catalog.endpoint_unreachable", check.service_type,
        f"the {check.service_type}{name} endpoint {check.url} does not answer a version GET: {what}",
        {"service_type": check.service_type, "url": check.url, "interface": check.interface,
         "region": check.region, "status": check.status, "error": check.error, "elapsed_s": check.elapsed_s},
        f"check the {check.name or check.service_type} API process and the load balancer in front of {check.url}",
        SOURCE)


def endpoint_slow_finding(check: EndpointCheck) -> Finding:
    name = f" ({check.name})" if check.name else ""
    return Finding(
        "warning", "catalog.endpoint_slow", check.service_type,
        f"the {check.service_type}{name} endpoint {check.url} did not answer this poll's version GET in time "
        f"({check.error or 'no answer'}); it answered the check before: one slow answer, reported unreachable "
        "if the next check gets none either",
        {"service_type": check.service_type, "url": check.url, "interface": check.interface,
         "region": check.region, "error": check.error, "elapsed_s": check.elapsed_s},
        f"watch the next poll; if it recurs, check the {check.name or check.service_type} API's workers and the "
        f"load balancer in front of {check.url}",
        SOURCE)


def read_failed_finding(section: SectionRead) -> Finding:
    return Finding(
        "warning", "services.read_failed", section.name,
        f"could not list {section.name} services: {section.error}" + (
            f" (showing rows read at {section.read_at:%H:%M:%S})" if section.rows and section.read_at else ""),
        {"section": section.name, "error": section.error, "rows_read_at": section.read_at},
        "the line names the URL; a 403 means the clouds.yaml user lacks the admin role", SOURCE)


# --------------------------------------------------------------------------------------------- all
def services_findings(snap: ServicesSnapshot, now: datetime, thresholds: Any,
                      judged_rows: Mapping[str, Sequence[tuple[ServiceRow, Liveness]]] | None = None
                      ) -> list[Finding]:
    """judged_rows: the sections' rows already judged at `now` (by section name), judged here otherwise."""
    out = keystone_findings(snap) + catalog_findings(snap)
    unreachable = {c.service_type for c in snap.catalog if not c.ok}
    fraction = float(thresholds.fleet_down_fraction)
    for section in snap.sections:
        if section.stale and snap.keystone.ok and SECTION_SERVICE_TYPE[section.name] not in unreachable:
            out.append(read_failed_finding(section))
        if not section.rows:
            continue
        judged = judged_rows.get(section.name) if judged_rows is not None else None
        assessed = list(judged) if judged is not None else assess_section(section, now, thresholds)
        skip: set[str] = set()
        followers = ovn_followers(assessed) if section.name == "network" else {}
        folded = {r.key for rows in followers.values() for r in rows}
        if section.name in ("compute", "network"):
            candidates = [(r, lv) for r, lv in assessed if r.key not in folded]
            for fleet in find_fleets(candidates, down_time_for(section.name, thresholds), fraction):
                out.append(fleet_finding(fleet, assessed, followers))
                skip.update(r.key for r in fleet.rows)
        out.extend(late_findings(section.name, [(r, lv) for r, lv in assessed if r.key not in folded], skip))
        if section.name == "network":
            out.extend(network_findings(assessed, skip, followers))
        elif section.name == "compute":
            out.extend(compute_findings(assessed, skip))
        else:
            out.extend(volume_findings(assessed, skip))
    return out


def row_rank(live: Liveness, row: ServiceRow) -> int:
    """Table order inside a section: down, late, unknown, disabled, up."""
    if live.down and row.enabled:
        return 0
    if live.late:
        return 1
    if row.status.upper() == "UNKNOWN" or row.state.upper() == "UNKNOWN":
        return 2
    if live.down or not row.enabled:
        return 3
    return 4
