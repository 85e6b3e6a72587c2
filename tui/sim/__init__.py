"""stacktop's built-in simulated cloud: the demo, the UI tests and the benchmarks at any scale.

    demo = start_demo(instances=10_000, hosts=500, queues=2_000, seed=0)
    config = demo.config()          # every section pointed at the simulator
    ...
    demo.stop()

No new dependencies: stdlib HTTP servers on 127.0.0.1 in daemon threads.
"""

from tui.sim.control import RemoteDemo, spawn_demo
from tui.sim.demo import CLOUD, Demo, DemoClouds, galera_connector, start_demo, start_demo_clouds
from tui.sim.story import STORY

__all__ = ["CLOUD", "STORY", "Demo", "DemoClouds", "RemoteDemo", "galera_connector", "spawn_demo", "start_demo",
           "start_demo_clouds"]
