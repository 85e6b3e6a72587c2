"""The demo storyline: one loop of `period` sim seconds that shows every capability in about two minutes.

Offsets are sim seconds from the start of each loop. "Visible" milestones follow from the liveness rules:
a dead compute is reported `down` by the API once its last heartbeat is older than service_down_time.
"""

from __future__ import annotations

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
