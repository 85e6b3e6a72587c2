"""The instances source on the simulated cloud's manual clock, for UI tests that drive the sim by hand."""

from __future__ import annotations

from datetime import datetime

from tui.collectors.instances import InstancesCollector
from tui.models.finding import Finding
from tui.models.instances import InstancesSnapshot
from tui.openstack import connect
from tui.sim.demo import Demo

STUCK = {"scheduling": 120.0, "networking": 300.0, "block_device_mapping": 180.0, "spawning": 20.0,
         "deleting": 300.0, "default": 1800.0}


class SimClockInstances(InstancesCollector):
    """The runner evaluates rules at the wall clock; the manual sim clock is ahead of it: use the sim's."""

    def findings(self, snapshot: InstancesSnapshot, now: datetime) -> list[Finding]:
        return super().findings(snapshot, self._clock())


def sim_instances(demo: Demo) -> InstancesCollector:
    """An instances collector polling every 0.2 s, judging stuck builds on the sim's clock (STUCK thresholds)."""
    cfg = demo.config().openstack
    return SimClockInstances(cfg, client_factory=lambda: connect(cfg), clock=demo.now, stuck=STUCK,
                             interval=0.2, timeout=10)
