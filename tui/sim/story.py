"""The demo storyline: one loop of `period` sim seconds that shows every capability in about two minutes.

Offsets are sim seconds from the start of each loop. "Visible" milestones follow from the liveness rules:
a dead compute is reported `down` by the API once its last heartbeat is older than service_down_time.
Storyline plays it on the engine (tui.sim.engine holds the cloud's state and its event loop).
"""

from __future__ import annotations

from typing import Any

from tui.sim.model import Consumer

# (offset s, event name, what an operator sees)
STORY: tuple[tuple[float, str, str], ...] = (
    (0.0, "loop_start", "a new loop picks its victim hosts"),
    (5.0, "novalidhost_boot", "a boot that cannot fit: ERROR with fault 'No valid host was found. '"),
    (8.0, "stuck_boot", "an instance boots on the victim host and reaches spawning"),
    (15.0, "compute_dies", "nova-compute on the victim host stops heartbeating; compute.<victim> loses its "
                           "consumer and messages pile up; the instance sticks in spawning"),
    (20.0, "agent_dies", "the Open vSwitch agent on another host stops heartbeating"),
    (30.0, "stale_allocation", "placement gains an allocation whose consumer is no instance or migration"),
    (45.0, "rabbit_memory_alarm", "RabbitMQ raises a memory alarm (local-alarms 503 at once, nodes later)"),
    (60.0, "galera_quorum_lost", "two Galera nodes vanish; the survivor is non-Primary, wsrep_ready OFF"),
    (75.0, "rabbit_memory_alarm_clears", "the memory alarm clears"),
    (90.0, "galera_quorum_regained", "the lost nodes rejoin (Joined), Primary again"),
    (120.0, "compute_recovers", "nova-compute restarts: the stuck build goes to ERROR, its queue drains"),
    (125.0, "agent_recovers", "the agent heartbeats again"),
    (170.0, "cleanup", "story instances deleted, the stale allocation removed"),
)

DEFAULT_PERIOD = 180.0

# Where `stacktop snapshot --demo` reads the storyline: the dead compute and the dead agent are reported down,
# the stuck build, the stale allocation and the backlog of the dead compute's queue are there, the alarm has
# cleared and Galera is Primary again; the nearest events (agent_down at 95 s, compute_recovers at 120 s) are
# 10 s away, so a slow read ages nothing across a threshold.
SNAPSHOT_OFFSET = 110.0


def milestones(service_down_time: float, agent_down_time: float) -> dict[str, float]:
    """Offsets at which each capability becomes visible through the APIs (for tests and the README)."""
    off = {name: t for t, name, _ in STORY}
    return {
        "instance_error_fault": off["novalidhost_boot"] + 2.0,
        "instance_spawning_on_victim": off["stuck_boot"] + 4.5,
        "queue_zero_consumers": off["compute_dies"],
        "stale_allocation": off["stale_allocation"],
        "rabbit_memory_alarm": off["rabbit_memory_alarm"],
        "galera_quorum_lost": off["galera_quorum_lost"],
        "compute_down": off["compute_dies"] + service_down_time,
        "agent_down": off["agent_dies"] + agent_down_time,
        "galera_quorum_regained": off["galera_quorum_regained"],
    }


class Storyline:
    """Plays STORY on an Engine (tui.sim.engine), one loop every `engine.period` sim seconds.

    It only schedules events with `engine.at` and drives the engine through its public methods and state
    (boot, delete, kill_compute, the Galera and RabbitMQ nodes ...); it keeps no state of its own: the loop's
    picks are `engine.story_state`, what happened `engine.story_log` (the engine holds all state, so the
    state at sim time T still depends on (seed, knobs, T) only). Each event is a method named after it.
    `engine` is typed Any: this module sits below the engine (which imports it), so it does not import it.
    """

    def __init__(self, engine: Any) -> None:
        self.engine = engine

    def start(self) -> None:
        """The first loop starts at the engine's now."""
        self.engine.at(self.engine.t, self.loop_start, 0)

    def _log(self, event: str, **detail: Any) -> None:
        self.engine.story_log.append((self.engine.t, event, detail))

    def loop_start(self, k: int) -> None:
        e = self.engine
        t0 = e.t
        rng = e.rng
        candidates = [h for h in e.hosts if h.service.status == "enabled"] or e.hosts
        victim = rng.choice(candidates)
        others = [h for h in candidates if h is not victim] or candidates
        agent_host = rng.choice(others)
        stale_host = rng.choice(others)
        e.story_state = {"loop": k, "victim": victim.name, "agent_host": agent_host.name,
                         "stale_host": stale_host.name, "loop_start": t0}
        self._log("loop_start", **e.story_state)
        for offset, name, _ in STORY[1:]:
            e.at(t0 + offset, getattr(self, name))
        e.at(t0 + e.period, self.loop_start, k + 1)

    def novalidhost_boot(self) -> None:
        e = self.engine
        inst = e.boot(e.server_name(f"bigdata-{e.story_state['loop']:03d}", 0), e.projects[0], "x.huge",
                      fail="novalidhost", durations=(2.0, 1.0, 1.0, 1.0))
        e.specials.add(inst.id)
        e.story_state["novalidhost"] = inst.id
        self._log("novalidhost_boot", server=inst.id, server_name=inst.name)

    def stuck_boot(self) -> None:
        e = self.engine
        victim = e.story_state["victim"]
        inst = e.boot(e.server_name(f"web-{e.story_state['loop']:03d}-canary", 4),
                      e.projects[1 % len(e.projects)], "m1.medium", host=victim,
                      durations=(1.5, 1.5, 1.0, 120.0))
        e.specials.add(inst.id)
        e.story_state["stuck"] = inst.id
        self._log("stuck_boot", server=inst.id, server_name=inst.name, host=victim)

    def compute_dies(self) -> None:
        e = self.engine
        e.kill_compute(e.story_state["victim"])
        self._log("compute_dies", host=e.story_state["victim"])

    def agent_dies(self) -> None:
        e = self.engine
        e.kill_agent(e.host_by_name[e.story_state["agent_host"]].agent)
        self._log("agent_dies", host=e.story_state["agent_host"])

    def stale_allocation(self) -> None:
        e = self.engine
        consumer = e.new_uuid()
        project = e.projects[-1]
        e.consumers[consumer] = Consumer(consumer, project, e.users[project])
        host = e.host_by_name[e.story_state["stale_host"]]
        e.providers[host.hypervisor_id].allocate(consumer, {"VCPU": 4, "MEMORY_MB": 8192, "DISK_GB": 80})
        e.story_state["stale_consumer"] = consumer
        self._log("stale_allocation", consumer=consumer, host=host.name, provider=host.hypervisor_id)

    def rabbit_memory_alarm(self) -> None:
        e = self.engine
        node = e.rabbit_nodes[0]
        node.alarms = [a for a in node.alarms if a[1] is None or a[1] > e.t - 600] + [[e.t, None]]
        self._log("rabbit_memory_alarm", node=node.name)

    def rabbit_memory_alarm_clears(self) -> None:
        e = self.engine
        for a in e.rabbit_nodes[0].alarms:
            if a[1] is None:
                a[1] = e.t
        self._log("rabbit_memory_alarm_clears", node=e.rabbit_nodes[0].name)

    def galera_quorum_lost(self) -> None:
        e = self.engine
        n1, n2, n3 = e.galera_nodes
        for n in (n2, n3):
            n.reachable, n.state, n.since = False, "down", e.t
        n1.state, n1.since = "isolated", e.t
        self._log("galera_quorum_lost", survivor=n1.name, lost=[n2.name, n3.name])

    def galera_quorum_regained(self) -> None:
        e = self.engine
        e.galera_conf_id += 1
        for n in e.galera_nodes:
            n.reachable, n.since = True, e.t
            n.state = "synced" if n.index == 1 else "joined"
        e.at(e.t + 5.0, self.galera_synced)
        self._log("galera_quorum_regained", conf_id=e.galera_conf_id)

    def galera_synced(self) -> None:
        """Five seconds after the rejoin the Joined nodes are Synced (not a STORY line of its own)."""
        for n in self.engine.galera_nodes:
            if n.state == "joined":
                n.state = "synced"

    def compute_recovers(self) -> None:
        e = self.engine
        e.start_compute(e.story_state["victim"])
        self._log("compute_recovers", host=e.story_state["victim"])

    def agent_recovers(self) -> None:
        e = self.engine
        e.start_agent(e.host_by_name[e.story_state["agent_host"]].agent)
        self._log("agent_recovers", host=e.story_state["agent_host"])

    def cleanup(self) -> None:
        e = self.engine
        for key in ("novalidhost", "stuck"):
            sid = e.story_state.get(key)
            if sid and sid in e.instances:
                e.delete(sid)
        consumer = e.story_state.pop("stale_consumer", None)
        if consumer:
            e.unclaim(consumer)
        self._log("cleanup")
