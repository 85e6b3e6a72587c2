"""One simulated cloud per test module (faults are cleared after every test); collectors built per test."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from tests.reliability.world import World, make_config
from tui.sim import start_demo
from tui.sim.faults import Faults, FaultyGaleraConnector


class Sim:
    def __init__(self) -> None:
        self.demo = start_demo(storyline=False, instances=12, hosts=3, queues=12, churn=0.0)
        self.faults = Faults(self.demo)

        self._world: World | None = None

    def world(self, slow: float = 1.0) -> World:
        """A new world: its own client and collectors."""
        return World(self.demo, self.faults, FaultyGaleraConnector(self.demo.galera_connector),
                     make_config(self.demo, slow=slow))

    def shared_world(self) -> World:
        """The module's world, built once (saves a login and a first full poll per test); fresh runners."""
        if self._world is None:
            self._world = self.world()
            self._world.build()
        self._world.fresh_runners()
        self._world.galera_faults.clear()
        return self._world

    def port(self, service: str) -> int:
        from tui.sim.faults import listener_name

        return int(self.demo.listeners[listener_name(service)].port)

    def stop(self) -> None:
        self.faults.clear()
        if self._world is not None and self._world.client is not None:
            self._world.client.close()
        self.demo.stop()


@pytest.fixture(scope="module")
def sim() -> Iterator[Sim]:
    s = Sim()
    yield s
    s.stop()


@pytest.fixture(autouse=True)
def _clear_faults(request: pytest.FixtureRequest) -> Iterator[None]:
    yield
    if "sim" in request.fixturenames:
        sim: Any = request.getfixturevalue("sim")
        sim.faults.clear()
