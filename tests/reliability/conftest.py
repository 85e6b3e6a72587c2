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

        self._worlds: dict[str, World] = {}

    def world(self, slow: float = 1.0, client_kind: str = "sdk") -> World:
        """A new world: its own client and collectors."""
        return World(self.demo, self.faults, FaultyGaleraConnector(self.demo.galera_connector),
                     make_config(self.demo, slow=slow), client_kind=client_kind)

    def shared_world(self, client_kind: str = "sdk") -> World:
        """The module's world of that client kind, built once (saves a login and a first full poll per test);
        fresh runners."""
        world = self._worlds.get(client_kind)
        if world is None:
            world = self._worlds[client_kind] = self.world(client_kind=client_kind)
            world.build()
        world.fresh_runners()
        world.galera_faults.clear()
        return world

    def port(self, service: str) -> int:
        from tui.sim.faults import listener_name

        return int(self.demo.listeners[listener_name(service)].port)

    def stop(self) -> None:
        self.faults.clear()
        for world in self._worlds.values():
            if world.client is not None:
                world.client.close()
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
