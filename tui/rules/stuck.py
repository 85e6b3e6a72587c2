"""Instance rules: stuck in a task_state (naming the owner, the log to open first and on which host) and ERROR
servers (leading with the fault, which often names another service). Pure: `now` and thresholds passed in.

Owners follow nova's create path (api -> conductor -> scheduler -> compute, neutron, cinder). A host's
health (its nova-compute service, its L2 agent) comes in the snapshot, read by the instances collector in the
same poll, so a finding can say "and nova-compute on compute-02 is down": that is usually the answer.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, replace
from datetime import datetime

from tui.freshness import coarse_age, human_age
from tui.models.finding import Finding
from tui.models.instances import BUILD_QUEUED, AllocationInfo, HostHealth, InstancesSnapshot, Server
from tui.rules.task_states import DEFAULT_STUCK_SECONDS
from tui.shell_command import command, shell_text

SOURCE = "instances"
RECENT_ERROR_S = 3600.0  # an ERROR whose fault is younger than this is a warning; older ones are info


@dataclass(frozen=True)
class Owner:
    """Who owns a task_state. `{host}` in first_log/then is replaced by the server's recorded host.

    on_host: the owner runs on the server's recorded host (its health there is the first suspect).
    """

    component: str
    waiting_on: str
    first_log: str
    then: str
    on_host: bool


_NO_HOST = "no host yet"

OWNERS: dict[str, Owner] = {
    "scheduling": Owner("nova-scheduler", "the scheduler finding a host",
                        "nova-scheduler (on the controllers; no host yet)",
                        "placement, then the message bus between nova-conductor and nova-scheduler", False),
    "block_device_mapping": Owner("cinder-volume", "cinder creating or attaching a volume",
                                  "cinder-volume (the host serving this server's volumes)", "its storage backend",
                                  False),
    "networking": Owner("neutron-server", "neutron creating and binding ports",
                        "neutron-server (on the controllers)", "the L2 agent on {host}", False),
    "spawning": Owner("nova-compute", "the hypervisor on the target host", "nova-compute on {host}",
                      "libvirt on {host}", True),
    "deleting": Owner("nova-compute", "cleanup that is not completing", "nova-compute on {host}",
                      "nova-conductor", True),
    "soft-deleting": Owner("nova-compute", "cleanup that is not completing", "nova-compute on {host}",
                           "nova-conductor", True),
    "rebuild_block_device_mapping": Owner("cinder-volume", "cinder re-attaching the volumes",
                                          "cinder-volume (the host serving this server's volumes)",
                                          "its storage backend", False),
    "rebuild_spawning": Owner("nova-compute", "the hypervisor on the target host", "nova-compute on {host}",
                              "libvirt on {host}", True),
}
# BUILD with a host and no task_state: the build was cast to compute.<host> and nobody picked it up
OWNERS[BUILD_QUEUED] = Owner("nova-compute", "nova-compute on the host to pick up the build (cast over the bus)",
                             "nova-compute on {host}", "nova-conductor and the bus (queue compute.{host})", True)
# scheduling with no host but an allocation on a host: the scheduler chose it and the conductor cast the build
# to compute.<host>; nova shows no host until that nova-compute claims it (a dead one never does)
CAST = Owner("nova-compute", "nova-compute on {host} to claim the build (the scheduler chose {host}: placement "
             "holds its allocation there)", "nova-compute on {host}", "nova-conductor and the bus (queue "
             "compute.{host})", True)
_IMAGE = Owner("nova-compute", "the image upload to glance", "nova-compute on {host}", "glance-api", True)
MIGRATION_LIST = command("openstack", "server", "migration", "list")
_MIGRATE = Owner("nova-compute", "the migration between hosts", "nova-compute on {host}",
                 f"nova-compute on the destination host ({shell_text(MIGRATION_LIST)})", True)
_DEFAULT = Owner("nova-compute", "the operation on the hypervisor", "nova-compute on {host}", "libvirt on {host}",
                 True)


def owner_of(task_state: str) -> Owner:
    if task_state in OWNERS:
        return OWNERS[task_state]
    if task_state.startswith(("image_", "shelving")):
        return _IMAGE
    if task_state.startswith(("resize_", "migrating")):
        return _MIGRATE
    return _DEFAULT


def _fill(text: str, host: str | None) -> str:
    return text.replace("{host}", host or "the recorded host (none recorded)")


# ---- who owns an instance: the one answer of the pane's owner column, the instance screen and the finding --
@dataclass(frozen=True)
class InstanceOwner:
    """Who owns a server's current phase, and on which host.

    host: where the owner runs or the build waits: the recorded host, or for a build in scheduling with no
    host, the host the scheduler chose (`cast`: placement holds the allocation there and the conductor cast
    the build to compute.<host>; nova records no host until that nova-compute claims it).
    """

    phase: str
    owner: Owner
    host: str | None
    cast: bool

    @property
    def component(self) -> str:
        return self.owner.component

    @property
    def label(self) -> str:
        """"nova-compute on compute-01", or the component alone when it does not run on the host."""
        return f"{self.component} on {self.host}" if self.owner.on_host and self.host else self.component

    @property
    def cell(self) -> str:
        """The instances pane's owner column: "nova-compute@compute-01"."""
        return f"{self.component}@{self.host}" if self.owner.on_host and self.host else self.component

    @property
    def waiting_on(self) -> str:
        return _fill(self.owner.waiting_on, self.host)


def instance_owner(server: Server) -> InstanceOwner | None:
    """The owner of the server's phase (None when it is in none): its task_state's owner on the recorded host,
    except a build in scheduling with no host that the scheduler already placed (Server.cast_host), which
    waits on nova-compute on that host, not on the scheduler."""
    phase = server.phase
    if not phase:
        return None
    if phase == "scheduling" and not server.host and server.cast_host:
        return InstanceOwner(phase, CAST, server.cast_host, True)
    return InstanceOwner(phase, owner_of(phase), server.host, False)


def owner_cell(server: Server) -> str:
    """What the instances pane shows as the server's owner: its phase's owner (instance_owner), else for an
    ERROR server the component its fault names."""
    owned = instance_owner(server)
    if owned is not None:
        return owned.cell
    if server.status == "ERROR":
        origin = fault_origin(server.fault.message) if server.fault else None
        return f"fault: {origin[0]}" if origin else "fault"
    return ""


@dataclass(frozen=True)
class OwnerVerdict:
    """An owned phase judged with its host's health: the log to open first and then, and the next step."""

    owned: InstanceOwner
    first_log: str
    then: str
    problems: tuple[str, ...]  # sentences about the owner's host (empty: healthy, or no host)
    compute_down: bool
    agent_dead: bool
    next_step: str

    @property
    def critical(self) -> bool:
        """Its host cannot make progress: nova-compute down, or the agent a port needs dead."""
        return self.compute_down or (self.agent_dead and self.owned.phase in ("networking", "spawning"))


def judge_owner(owned: InstanceOwner, now: datetime, hosts: Mapping[str, HostHealth] | None = None, *,
                hosts_error: str | None = None, request_id: str | None = None) -> OwnerVerdict:
    """The owner's host health (hosts: by host name, as the instances source read them), the logs to open and
    the next step: what the instance.stuck finding and the instance screen's second and fourth answers say."""
    host, phase, owner = owned.host, owned.phase, owned.owner
    problems, compute_down, agent_dead = host_problems(host, hosts or {}, hosts_error, now)
    first, then = _fill(owner.first_log, host), _fill(owner.then, host)
    agent, ovn = network_agent((hosts or {}).get(host) if host else None, host or "")
    if phase == "networking" and host:
        then = agent
        if ovn:
            first = "neutron-server (on the controllers: its OVN mechanism driver)"
    next_step = f"open the log of {first} first, then {then}"
    if compute_down and host and owned.cast:
        next_step = (f"nova-compute on {host} is down: start it there (the build waits in its queue compute.{host} "
                     f"and is claimed when it consumes again), then {first}'s log")
    elif compute_down and host:
        next_step = (f"nova-compute on {host} is down: start there (its process and host), then {first}'s log; "
                     "a restarted nova-compute puts build-state instances in ERROR")
    elif agent_dead and host and phase in ("networking", "spawning"):
        next_step = f"{agent} is dead: ports cannot bind/plug; then open {first}'s log"
    if request_id:
        next_step += f" ({shell_text(command('grep', operands=(request_id,)))})"
    return OwnerVerdict(owned, first, then, tuple(problems), compute_down, agent_dead, next_step)


def threshold_for(stuck: Mapping[str, float], task_state: str) -> float:
    """The configured threshold; BUILD_QUEUED (not a nova task_state) uses scheduling's: a hand-off."""
    if task_state == BUILD_QUEUED and task_state not in stuck:
        task_state = "scheduling"
    default = stuck.get("default", DEFAULT_STUCK_SECONDS["default"])
    return float(stuck.get(task_state, DEFAULT_STUCK_SECONDS.get(task_state, default)))


# ---- host health ------------------------------------------------------------------------------------------
def host_problems(host: str | None, hosts: Mapping[str, HostHealth], hosts_error: str | None,
                  now: datetime) -> tuple[list[str], bool, bool]:
    """(sentences about the host's health, compute down?, an agent dead?). Empty when healthy or no host."""
    if not host:
        return [], False, False
    if hosts_error is not None:
        return [f"health of {host} unknown ({hosts_error})"], False, False
    health = hosts.get(host)
    if health is None or health.compute_state is None:
        return [f"no nova-compute service is registered for {host}"], True, False
    out: list[str] = []
    if health.compute_down:
        beat = ""
        if health.compute_updated_at is not None:
            beat = f", last heartbeat {human_age((now - health.compute_updated_at).total_seconds())} ago"
        forced = " (forced down)" if health.forced_down else ""
        out.append(f"nova-compute on {host} is down{forced}{beat}")
    if health.compute_status == "disabled":
        reason = f": {health.disabled_reason}" if health.disabled_reason else ""
        out.append(f"nova-compute on {host} is disabled{reason}")
    dead = health.dead_agents
    for agent in dead:
        out.append(f"{agent.binary} on {host} is dead")
    return out, health.compute_down, bool(dead)


OVN_AGENT_TYPES = ("OVN Controller agent", "OVN Controller Gateway agent")


def network_agent(health: HostHealth | None, host: str) -> tuple[str, bool]:
    """(the host's port-binding agent by name, is it OVN?): `ovn-controller on HOST` on an ML2/OVN cloud (its
    chassis, as neutron lists it), the agent's own binary otherwise (neutron-openvswitch-agent ...), "the L2
    agent on HOST" when the host's agents were not read."""
    agents = health.agents if health is not None else ()
    for a in agents:
        if a.agent_type in OVN_AGENT_TYPES or a.binary == "ovn-controller":
            return f"ovn-controller on {host}", True
    for a in agents:
        if a.agent_type and "metadata" not in a.agent_type.lower() and "dhcp" not in a.agent_type.lower() \
                and "l3" not in a.agent_type.lower():
            return f"{a.binary} on {host}", False
    return f"the L2 agent on {host}", False


# ---- instance.stuck ---------------------------------------------------------------------------------------
def instance_stuck(server: Server, now: datetime, stuck: Mapping[str, float],
                   hosts: Mapping[str, HostHealth] | None = None, *, hosts_error: str | None = None,
                   poll_interval_s: float | None = None) -> Finding | None:
    state = server.phase
    if not state:
        return None
    age = server.in_state_for(now)
    limit = threshold_for(stuck, state)
    if age is None or age <= limit:
        return None
    owned = instance_owner(server)
    if owned is None:
        return None
    verdict = judge_owner(owned, now, hosts, hosts_error=hosts_error, request_id=server.request_id)
    owner, host, cast, problems = owned.owner, owned.host, owned.cast, list(verdict.problems)
    first, then = verdict.first_log, verdict.then
    basis = {"observed": "first seen by stacktop", "created": "since created"}.get(server.task_since_basis or "",
                                                                                 "since updated_at")
    shown = "BUILD with no task_state" if state == BUILD_QUEUED else state
    summary = (f"{server.label} stuck in {shown} for {coarse_age(age)} (> {human_age(limit)}, {basis}): "
               f"waiting on {owned.waiting_on}; owner {owned.label}")
    if state == "scheduling" and not cast:
        summary += " (no host yet: restarting a compute never fixes it)"
    if problems:
        summary += " - " + "; ".join(problems)
    next_step = verdict.next_step
    critical = verdict.critical
    named = [MIGRATION_LIST] if shell_text(MIGRATION_LIST) in next_step else []
    if server.request_id:
        named.append(command("grep", operands=(server.request_id,)))
    evidence: dict[str, object] = {
        "server": server.id, "name": server.name, "status": server.status, "vm_state": server.vm_state,
        "task_state": server.task_state, "phase": state, "in_state_s": round(age, 1), "threshold_s": limit,
        "since": server.task_since, "since_basis": server.task_since_basis, "updated_at": server.updated_at,
        "poll_interval_s": poll_interval_s, "owner": owner.component, "owner_label": owned.label, "host": host,
        "first_log": first, "then": then, "host_problems": problems, "request_id": server.request_id,
        "cast_host": server.cast_host if cast else None,
    }
    if named:
        evidence["command"] = named[0]
    return Finding(severity="critical" if critical else "warning", kind="instance.stuck", subject=server.id,
                   summary=summary, evidence=evidence, next_step=next_step, source=SOURCE)


# ---- instance.error ---------------------------------------------------------------------------------------
_ORIGINS: tuple[tuple[re.Pattern[str], str, str], ...] = (
    (re.compile(r"no valid host", re.I), "nova-scheduler / placement",
     "no host could take it: check placement capacity for the flavor (allocation candidates) and the "
     "nova-scheduler log for the filter that removed the hosts"),
    (re.compile(r"port|binding|vif|neutron|network", re.I), "neutron",
     "the port could not be bound/plugged: neutron-server's log, then the L2 agent on the host"),
    (re.compile(r"volume|block ?device|cinder|bdm", re.I), "cinder",
     "the volume could not be created/attached: cinder-volume's log, then its backend"),
    (re.compile(r"image|glance", re.I), "glance",
     "the image could not be fetched: glance-api's log, then nova-compute's on the host"),
    (re.compile(r"libvirt|hypervisor|domain|qemu", re.I), "the hypervisor",
     "the hypervisor refused it: nova-compute's log on the host, then libvirt"),
)


def fault_origin(message: str) -> tuple[str, str] | None:
    """(component the fault names, what to do) or None."""
    for pattern, component, step in _ORIGINS:
        if pattern.search(message):
            return component, step
    return None


def instance_error(server: Server, now: datetime, *, recent_s: float = RECENT_ERROR_S) -> Finding | None:
    if server.status != "ERROR":
        return None
    fault = server.fault
    host = f" on {server.host}" if server.host else " (no host recorded)"
    evidence: dict[str, object] = {
        "server": server.id, "name": server.name, "status": server.status, "vm_state": server.vm_state,
        "task_state": server.task_state, "host": server.host, "updated_at": server.updated_at,
    }
    if fault is None or not fault.message:
        evidence["command"] = events = command("openstack", "server", "event", "list", operands=(server.id,))
        return Finding(severity="warning", kind="instance.error", subject=server.id,
                       summary=f"{server.label} is ERROR{host} with no fault recorded",
                       evidence=evidence,
                       next_step=f"{shell_text(events)}: the failed event names the step",
                       source=SOURCE)
    message = " ".join(fault.message.split())
    when = fault.created.strftime("%Y-%m-%d %H:%M:%SZ") if fault.created else "time unknown"
    code = f"code {fault.code}" if fault.code is not None else "no code"
    origin = fault_origin(message)
    summary = f"{message} ({code}, {when}) - {server.label} is ERROR{host}"
    if origin:
        summary += f"; the fault names {origin[0]}"
    evidence.update({"fault_code": fault.code, "fault_message": fault.message, "fault_created": fault.created,
                     "fault_origin": origin[0] if origin else None})
    if fault.details:
        evidence["fault_details"] = fault.details[-2000:]
    named = [] if origin else [command("openstack", "server", "show", operands=(server.id,))]
    step = origin[1] if origin else f"{shell_text(named[0])} (fault) and its request id in the logs"
    if server.request_id:
        named.append(command("grep", operands=(server.request_id,)))
        step += f" ({shell_text(named[-1])})"
        evidence["request_id"] = server.request_id
    if named:
        evidence["command"] = named[0]
    anchor = fault.created or server.updated_at
    recent = anchor is None or (now - anchor).total_seconds() <= recent_s
    return Finding(severity="warning" if recent else "info", kind="instance.error", subject=server.id,
                   summary=summary, evidence=evidence, next_step=step, source=SOURCE)


def instance_findings(snapshot: InstancesSnapshot, now: datetime, stuck: Mapping[str, float]) -> list[Finding]:
    out: list[Finding] = []
    for server in snapshot.attention:  # no finding about a server outside it (no phase, not ERROR)
        found = instance_stuck(server, now, stuck, snapshot.hosts, hosts_error=snapshot.hosts_error,
                               poll_interval_s=snapshot.poll_interval_s)
        if found is not None:
            out.append(found)
        err = instance_error(server, now)
        if err is not None:
            out.append(err)
    return out


def worth_attention(server: Server, stuck_ids: set[str] | frozenset[str] = frozenset()) -> bool:
    """The pane's default view: a task_state set, BUILD, ERROR, or stuck."""
    return bool(server.phase) or server.status == "ERROR" or server.id in stuck_ids


# ---- the five questions (instance screen) -------------------------------------------------------------
@dataclass(frozen=True)
class Answer:
    """One of the five questions. verdict: "ok", "bad", "unknown" or "n/a"."""

    question: str
    answer: str
    verdict: str
    evidence: str = ""


def five_questions(server: Server, now: datetime, stuck: Mapping[str, float], health: HostHealth | None,
                   allocations: tuple[AllocationInfo, ...] | None, *, health_error: str | None = None,
                   allocations_error: str | None = None) -> list[Answer]:
    """health: of the host the server's owner runs on (instance_owner: the recorded host, or the host the
    scheduler chose for a build nova shows no host for yet)."""
    out: list[Answer] = []
    owned = instance_owner(server)
    cast = owned is not None and owned.cast
    verdict = None
    if owned is not None:
        hosts = {owned.host: health} if owned.host and health else {}
        verdict = judge_owner(owned, now, hosts, hosts_error=health_error, request_id=server.request_id)
    # 1. did it get a host?
    if server.host:
        out.append(Answer("Did it get a host?", f"yes: {server.host}", "ok",
                          f"OS-EXT-SRV-ATTR:host={server.host} hypervisor={server.hypervisor_hostname}"))
    elif cast and owned is not None:
        out.append(Answer("Did it get a host?", f"chosen, not claimed: the scheduler chose {owned.host} "
                          f"(placement holds the allocation there); nova records no host until nova-compute on "
                          f"{owned.host} claims the build", "ok",
                          f"OS-EXT-SRV-ATTR:host is empty; placement allocation on {owned.host}"))
    elif server.status == "ERROR" or server.task_state == "scheduling":
        out.append(Answer("Did it get a host?", "no: the scheduler never succeeded (a scheduling problem, "
                          "not a compute problem)", "bad", "OS-EXT-SRV-ATTR:host is empty"))
    else:
        out.append(Answer("Did it get a host?", "no host recorded", "unknown", "OS-EXT-SRV-ATTR:host is empty"))
    # 2. task state and its owner
    if owned is not None and verdict is not None:
        age = server.in_state_for(now)
        limit = threshold_for(stuck, owned.phase)
        late = "bad" if age is not None and age > limit else "ok"
        basis = SINCE_BASIS_TEXT.get(server.task_since_basis or "", "?")
        since = (f"since {server.task_since.strftime('%H:%M:%S')}, {basis}" if server.task_since
                 else "since unknown: neither stacktop nor nova's updated_at says")
        out.append(Answer("What is the task state?",
                          f"{_phase_text(server)} for {human_age(age)} ({since}; threshold {human_age(limit)}): "
                          f"waiting on {owned.waiting_on}; owner {owned.label}; {verdict.next_step}", late,
                          f"task_since {server.task_since.isoformat() if server.task_since else '?'} "
                          f"({server.task_since_basis or '?'}): a lower bound of the state's start"))
    else:
        out.append(Answer("What is the task state?", f"none (status {server.status}, vm_state {server.vm_state})",
                          "bad" if server.status == "ERROR" else "ok", "OS-EXT-STS:task_state is null"))
    # 3. the fault
    if server.fault and server.fault.message:
        origin = fault_origin(server.fault.message)
        names = f"; it names {origin[0]}" if origin else ""
        created = server.fault.created.isoformat() if server.fault.created else "?"
        out.append(Answer("What does the fault say?", f"{server.fault.message}{names}", "bad",
                          f"code {server.fault.code}, created {created}"))
    else:
        out.append(Answer("What does the fault say?", "no fault recorded", "ok" if server.status != "ERROR"
                          else "unknown"))
    # 4. is the recorded host healthy? (for a build the scheduler placed: the host it waits on)
    if cast and owned is not None and verdict is not None:
        chosen = f"no host recorded; the chosen host {owned.host}: "
        if health_error:
            out.append(Answer("Is the recorded host healthy?", f"{chosen}unknown: {health_error}", "unknown"))
        elif verdict.problems:
            out.append(Answer("Is the recorded host healthy?", chosen + "; ".join(verdict.problems), "bad",
                              _health_text(health)))
        else:
            out.append(Answer("Is the recorded host healthy?", f"{chosen}nova-compute on {owned.host} is up and "
                              "enabled", "ok", _health_text(health)))
    elif not server.host:
        out.append(Answer("Is the recorded host healthy?", "no host recorded", "n/a"))
    elif health_error:
        out.append(Answer("Is the recorded host healthy?", f"unknown: {health_error}", "unknown"))
    else:
        problems, _, _ = host_problems(server.host, {server.host: health} if health else {}, None, now)
        if problems:
            out.append(Answer("Is the recorded host healthy?", "; ".join(problems), "bad", _health_text(health)))
        else:
            out.append(Answer("Is the recorded host healthy?", f"yes: nova-compute on {server.host} is up and "
                              "enabled" + (", agents alive" if health and health.agents else ""), "ok",
                              _health_text(health)))
    # 5. do placement's allocations match?
    out.append(_allocations_answer(server, allocations, allocations_error))
    return out


# what a task_since rests on, as the instance screen says it (see tui/models/instances.py)
SINCE_BASIS_TEXT = {"observed": "first seen by stacktop", "updated_at": "nova's updated_at",
                    "created": "nova's created"}


def with_task_since(server: Server, known: Server | None) -> Server:
    """`server` (read now) with when its current task_state began, when the read alone does not say: the
    dashboard's own observation of it (`known`, from the instances source) if that saw the same phase, else
    nova's clock (`created` for scheduling, which begins at the POST; else `updated_at`, which every task_state
    change bumps). Unchanged when it already has one or is in no task_state.

    A build in scheduling with no host also takes the host the source found the scheduler chose for it
    (Server.cast_host), so that its owner is the same one the source's finding and the pane name."""
    if (server.phase == "scheduling" and not server.host and not server.cast_host and known is not None
            and known.phase == "scheduling" and not known.host and known.cast_host):
        server = replace(server, cast_host=known.cast_host)
    if server.task_since is not None or server.phase is None:
        return server
    if known is not None and known.phase == server.phase and known.task_since is not None:
        return replace(server, task_since=known.task_since, task_since_basis=known.task_since_basis)
    if server.phase == "scheduling" and server.created is not None:
        return replace(server, task_since=server.created, task_since_basis="created")
    if server.updated_at is not None:
        return replace(server, task_since=server.updated_at, task_since_basis="updated_at")
    return server


def _phase_text(server: Server) -> str:
    return "BUILD with no task_state (queued for nova-compute)" if server.phase == BUILD_QUEUED \
        else str(server.task_state)


def _health_text(health: HostHealth | None) -> str:
    if health is None:
        return ""
    beat = health.compute_updated_at.isoformat() if health.compute_updated_at else "?"
    agents = ", ".join(f"{a.binary} {'alive' if a.alive else 'DEAD'}" for a in health.agents) or "no agents read"
    return (f"nova-compute state={health.compute_state} status={health.compute_status} "
            f"forced_down={health.forced_down} updated_at={beat}; {agents}")


def _allocations_answer(server: Server, allocations: tuple[AllocationInfo, ...] | None,
                        error: str | None) -> Answer:
    q = "Do placement's allocations match its host?"
    if error:
        return Answer(q, f"unknown: {error}", "unknown")
    if allocations is None:
        return Answer(q, "not read", "unknown")
    names = [a.provider_name or a.provider_id for a in allocations]
    text = "; ".join(f"{a.provider_name or a.provider_id}: "
                     + ", ".join(f"{k}={v}" for k, v in sorted(a.resources.items())) for a in allocations)
    if not server.host:
        if allocations and server.cast_host and names == [server.cast_host] and server.phase == "scheduling":
            return Answer(q, f"held on {server.cast_host}, the host the scheduler chose: the build waits there "
                          "to be claimed", "ok", text)
        if allocations:
            return Answer(q, f"no host, yet placement holds allocations on {', '.join(names)}", "bad", text)
        return Answer(q, "no host and no allocations: consistent", "ok")
    if not allocations:
        if server.status in ("ERROR", "SHELVED_OFFLOADED", "DELETED"):
            return Answer(q, "no allocations (nothing held for a server that is not running)", "ok")
        return Answer(q, f"no allocations, though it runs on {server.host}: placement undercounts this host",
                      "bad")
    expected = {server.host, server.hypervisor_hostname} - {None}
    if any(n in expected for n in names):
        extra = [n for n in names if n not in expected]
        if extra and not (server.task_state or "").startswith(("resize", "migrating")):
            return Answer(q, f"yes, plus allocations on {', '.join(extra)}", "bad", text)
        return Answer(q, f"yes: held on {', '.join(names)}", "ok", text)
    return Answer(q, f"no: held on {', '.join(names)}, not on {server.host}", "bad", text)
