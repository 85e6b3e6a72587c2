"""Provably read-only, end to end: every collector, the one-shot snapshot and every drill-down screen run
against the simulated cloud, whose listeners record each request (method, path). Anything but GET (and
Keystone's token POST) fails the test. Faults are thrown in too: error paths must not write either."""

from __future__ import annotations

import time
from collections.abc import Iterator
from typing import Any

import pytest

from tests.reliability.world import World, make_config
from tui.app import StacktopApp
from tui.sim import start_demo
from tui.sim.faults import Faults, FaultyGaleraConnector
from tui.snapshot import collect_once

EVERY_SERVICE = {"identity", "compute", "network", "volume", "placement", "rabbitmq"}


def _is_read(method: str, target: str) -> bool:
    return method == "GET" or (method == "POST" and target.split("?")[0].rstrip("/").endswith("/v3/auth/tokens"))


@pytest.fixture(scope="module")
def storied() -> Iterator[Any]:
    """The storyline at 10x speed: stuck builds, a dead compute, an ERROR server, alarms, quorum loss."""
    demo = start_demo(instances=30, hosts=4, queues=20, churn=20.0, speed=10.0)
    yield demo
    demo.stop()


async def test_every_collector_screen_and_error_path_only_reads(storied: Any) -> None:
    demo = storied
    faults = Faults(demo)
    world = World(demo, faults, FaultyGaleraConnector(demo.galera_connector), make_config(demo))
    demo.stats.reset()
    world.build()
    app = StacktopApp(world.config, collectors=list(world.collectors.values()))
    async with app.run_test(size=(160, 48)) as pilot:
        deadline = time.monotonic() + 60
        while not (all(src in app.observations for src in world.collectors)
                   and app.observations["instances"].ok_at):
            assert time.monotonic() < deadline, \
                f"sources never read: { {k: o.error for k, o in app.observations.items()} }"
            await pilot.pause(0.1)
        servers = list(app.observations["instances"].snapshot.servers)
        hosts = sorted({s.host for s in servers if s.host})
        flavors = sorted({s.flavor for s in servers if s.flavor})
        lines = [f"server {s.id}" for s in servers[:1]] + [f"host {h}" for h in hosts[:1]] + ["audit"]
        lines += [f"fit {flavors[0]}"] if flavors else []
        for line in lines:
            app.run_command(line)
            await pilot.pause(1.0)  # the screen's on-demand reads
            while len(app.screen_stack) > 1:
                app.pop_screen()
                await pilot.pause(0.05)
        for service in ("nova", "placement", "rabbitmq"):  # error paths read too
            faults.set(service, "500")
        app.action_refresh_now()
        app.run_command(f"server {servers[0].id}")
        await pilot.pause(1.5)
        faults.clear()
    await collect_once([world.collectors["services"], world.collectors["instances"]])  # the snapshot command
    log = list(demo.stats.log)
    writes = [(svc, m, t) for svc, m, t, _, _ in log if not _is_read(m, t)]
    assert writes == [], f"stacktop sent writes: {writes[:10]}"
    assert {svc for svc, *_ in log} >= EVERY_SERVICE, "the recording saw every service (else it proves nothing)"
    assert any(m == "GET" and "/allocations/" in t for _, m, t, _, _ in log), "the instance screen read placement"
