"""stacktop's built-in simulated cloud: the demo, the UI tests and the benchmarks at any scale.

    demo = start_demo(instances=10_000, hosts=500, queues=2_000, seed=0)
    config = demo.config()          # every section pointed at the simulator
    ...
    demo.stop()

No new dependencies: stdlib HTTP servers on 127.0.0.1 in daemon threads.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from tui.sim.control import RemoteDemo, spawn_demo
    from tui.sim.demo import CLOUD, Demo, DemoClouds, galera_connector, start_demo, start_demo_at, start_demo_clouds
    from tui.sim.story import STORY

# Lazy (PEP 562): `import tui.sim.remote_galera` (the benchmark's app) must not build the whole simulator.
_WHERE = {"RemoteDemo": "control", "spawn_demo": "control", "CLOUD": "demo", "Demo": "demo", "DemoClouds": "demo",
          "galera_connector": "demo", "start_demo": "demo", "start_demo_at": "demo",
         "start_demo_clouds": "demo", "STORY": "story"}

__all__ = ["CLOUD", "STORY", "Demo", "DemoClouds", "RemoteDemo", "galera_connector", "spawn_demo", "start_demo",
           "start_demo_at", "start_demo_clouds"]


def __getattr__(name: str) -> Any:
    where = _WHERE.get(name)
    if where == "control":
        from tui.sim import control as module
    elif where == "demo":
        from tui.sim import demo as module
    elif where == "story":
        from tui.sim import story as module
    else:
        raise AttributeError(f"module 'tui.sim' has no attribute '{name}'")
    return getattr(module, name)
