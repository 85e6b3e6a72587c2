"""Triage hints end to end on the simulated cloud (tui.sim, manual clock): the four real collectors read it,
their real rules produce findings, and tui.rules.triage turns them into hints. Each scenario yields its own
hint and no other; a healthy cloud (with its unread notifications queues and a disabled compute) none.

The conductor scenario and Galera quorum loss are also tested on the real test bed (tests/integration/triage).
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import AsyncIterator, Callable, Iterator
from datetime import datetime
from pathlib import Path
from typing import Any

import pytest
import yaml

from tui.collectors import galera, rabbitmq
from tui.collectors.instances import InstancesCollector
from tui.collectors.services import ServicesCollector
from tui.config import OpenStackConfig
from tui.models.finding import Finding
from tui.models.instances import InstancesSnapshot
from tui.models.observation import Observation
from tui.openstack import connect
from tui.rules.triage import triage_hints, triage_summary
from tui.runner import CollectorRunner
from tui.sim import start_demo
from tui.sim.demo import Demo

DOWN = 30.0  # the demo's service_down_time here (agents: 75 s, their report interval is 30 s)


class SimClockInstances(InstancesCollector):
    """Stuck rules judged on the sim's clock (the manual clock runs ahead of the wall clock)."""

    def findings(self, snapshot: InstancesSnapshot, now: datetime) -> list[Finding]:
        return super().findings(snapshot, self._clock())


class Cloud:
    """The four collectors on one demo, polled together like the app's runners."""

    def __init__(self, demo: Demo, openstack: OpenStackConfig | None = None) -> None:
        self.demo = demo
        cfg = demo.config()
        self.config = cfg
        os_cfg = openstack or cfg.openstack
        self.collectors: list[Any] = [
            ServicesCollector(os_cfg, cfg.thresholds, client_factory=lambda: connect(os_cfg), timeout=10),
            SimClockInstances(os_cfg, client_factory=lambda: connect(os_cfg), clock=demo.now,
                              stuck=cfg.thresholds.stuck, timeout=10),
            *rabbitmq.build(cfg),
            *galera.build(cfg, connector=demo.galera_connector),
        ]
        self.runners = [CollectorRunner(c) for c in self.collectors]
        self.observations: dict[str, Observation] = {}
        self.polls = 0

    async def poll(self) -> list[Finding]:
        for obs in await asyncio.gather(*(r.run_once() for r in self.runners)):
            self.observations[obs.source] = obs
        self.polls += 1
        return triage_hints(self.observations)

    async def until(self, pred: Callable[[list[Finding]], bool], what: str, timeout: float = 30.0) -> list[Finding]:
        deadline = time.monotonic() + timeout
        while True:
            hints = await self.poll()
            if pred(hints):
                return hints
            if time.monotonic() > deadline:
                found = sorted((f.kind, f.subject) for o in self.observations.values() for f in o.findings)
                raise AssertionError(f"timed out waiting for {what}: hints {[(h.kind, h.subject) for h in hints]}, "
                                     f"findings {found}, errors {[o.error for o in self.observations.values()]}")
            await asyncio.sleep(0.2)

    def kinds(self) -> set[str]:
        return {f.kind for o in self.observations.values() for f in o.findings}

    async def aclose(self) -> None:
        await asyncio.gather(*(c.aclose() for c in self.collectors), return_exceptions=True)


@pytest.fixture
def demo() -> Iterator[Demo]:
    d = start_demo(instances=24, hosts=4, queues=30, churn=0, storyline=False, manual=True,
                   service_down_time=DOWN)
    try:
        yield d
    finally:
        d.stop()


@pytest.fixture
async def cloud(demo: Demo) -> AsyncIterator[Cloud]:
    c = Cloud(demo)
    try:
        yield c
    finally:
        await c.aclose()


def kinds(hints: list[Finding]) -> list[tuple[str, str]]:
    return [(h.kind, h.subject) for h in hints]


async def settle(cloud: Cloud) -> None:
    """Past the first RabbitMQ statistics tick, then three polls: RabbitMQ reports a zero-consumer queue only
    once two polls in a row saw it."""
    cloud.demo.advance(6)
    for _ in range(3):
        assert await cloud.poll() == [], "no hint on the healthy simulated cloud"


async def test_healthy_no_hint(cloud: Cloud) -> None:
    await settle(cloud)
    # what is there is not a reason for a hint: a disabled compute, notifications nobody reads
    assert {"nova.service_disabled", "rabbitmq.queue_no_consumer"} <= cloud.kinds()
    row = triage_summary(cloud.observations, cloud.demo.now(), cloud.config.thresholds)
    assert {c.level for c in row.cells} == {"ok"}, row.line
    assert row.cell("compute").text == "3/3 up (1 disabled)"  # type: ignore[union-attr]


@pytest.mark.parametrize(("service", "kind", "words"), [
    ("identity", "triage.keystone", "everything fails authentication"),
    ("placement", "triage.placement_unreachable", "NoValidHost although there is free capacity"),
    ("image", "triage.image_unreachable", "timing out rather than with an image error"),
])
async def test_endpoint_refusing(cloud: Cloud, service: str, kind: str, words: str) -> None:
    await settle(cloud)
    cloud.demo.set_refusing(service, True)
    hints = await cloud.until(lambda h: any(x.kind == kind for x in h), kind)
    assert len(hints) == 1, kinds(hints)
    assert words in hints[0].summary
    cloud.demo.set_refusing(service, False)
    await cloud.until(lambda h: h == [], "the hint to clear once the service answers again")


async def test_credentials_refused_everywhere_is_the_keystone_hint(demo: Demo, tmp_path: Path) -> None:
    data = yaml.safe_load(demo.clouds_file.read_text())
    data["clouds"]["stacktop-demo"]["auth"]["password"] = "not-the-password"
    bad = tmp_path / "clouds.yaml"
    bad.write_text(yaml.safe_dump(data))
    bad.chmod(0o600)
    cloud = Cloud(demo, OpenStackConfig(cloud="stacktop-demo", clouds_file=str(bad), timeout=10))
    try:
        hints = await cloud.until(lambda h: bool(h), "a hint")
        assert kinds(hints) == [("triage.keystone", "keystone")]
        assert "401" in hints[0].summary and "services" in hints[0].evidence["source_errors"]
    finally:
        await cloud.aclose()


async def test_one_compute_down(cloud: Cloud) -> None:
    await settle(cloud)
    cloud.demo.inject("kill_compute", host="compute-02")
    cloud.demo.advance(DOWN + 5)
    hints = await cloud.until(lambda h: bool(h) and "rabbitmq.queue_no_consumer" in str(h[0].evidence),
                              "triage.compute_down citing the queue")
    assert kinds(hints) == [("triage.compute_down", "compute-02")]
    h = hints[0]
    assert ("nova.service_enabled_but_down", "compute-02") in h.evidence["derived_from"]
    assert ("rabbitmq.queue_no_consumer", "compute.compute-02") in h.evidence["derived_from"]
    assert "keep running" in h.summary and "cannot be managed" in h.summary
    cloud.demo.inject("start_compute", host="compute-02")
    cloud.demo.advance(11)
    await cloud.until(lambda h: h == [], "the hint to clear after the restart")


async def test_conductor_down_fleet_flip(cloud: Cloud) -> None:
    await settle(cloud)
    cloud.demo.inject("conductor_down")
    cloud.demo.advance(DOWN + 5)
    hints = await cloud.until(lambda h: bool(h), "a hint")
    assert kinds(hints) == [("triage.bus_or_conductor", "message-bus")]
    assert ("nova.fleet_down", "nova-compute") in hints[0].evidence["derived_from"]
    assert "message bus or nova-conductor, not the hosts" in hints[0].summary
    cloud.demo.inject("conductor_up")
    cloud.demo.advance(11)
    await cloud.until(lambda h: h == [], "the hint to clear once heartbeats arrive")


async def test_builds_stuck_in_scheduling(cloud: Cloud) -> None:
    await settle(cloud)
    engine = cloud.demo.engine
    with engine.lock:
        for name in ("sched-a", "sched-b"):
            engine.boot(name, engine.projects[0], "m1.small", durations=(3600.0, 1.0, 1.0, 1.0))
    await cloud.poll()  # first seen in scheduling
    cloud.demo.advance(cloud.config.thresholds.stuck["scheduling"] + 5)
    hints = await cloud.until(lambda h: bool(h), "a hint")
    assert kinds(hints) == [("triage.scheduling_stuck", "scheduling")]
    assert "2 build(s) stuck in scheduling" in hints[0].summary


async def test_galera_quorum_loss_in_the_storyline_is_the_only_hint() -> None:
    """The storyline at 62 s: Galera lost quorum at 60 s, amid a dying compute (late, not yet down), a dead
    agent (late), a RabbitMQ memory alarm, a NoValidHost ERROR and a stale allocation: one hint, Galera's.
    At 92 s quorum is back and the victim's compute is down: the compute hint, alone."""
    demo = start_demo(instances=24, hosts=4, queues=30, churn=0, storyline=True, manual=True)
    cloud = Cloud(demo)
    try:
        assert await cloud.poll() == []
        demo.advance(62)
        hints = await cloud.until(lambda h: bool(h), "a hint")
        await cloud.poll()  # and it stays the only one once RabbitMQ confirmed its queues
        hints = await cloud.poll()
        assert kinds(hints) == [("triage.galera_no_quorum", "galera")], kinds(hints)
        assert {"rabbitmq.alarm", "rabbitmq.queue_no_consumer", "instance.error"} <= cloud.kinds()
        h = hints[0]
        assert "ERROR 1047" in h.summary and "wsrep_dirty_reads=ON" in h.summary
        assert ("galera.quorum_lost", "sim-db-1:3306") in h.evidence["derived_from"]
        demo.advance(30)  # quorum regained at 90 s; the victim's compute is down since 75 s
        victim = demo.engine.story_state["victim"]
        hints = await cloud.until(lambda h: all(x.kind != "triage.galera_no_quorum" for x in h),
                                  "the Galera hint to clear")
        assert kinds(hints) == [("triage.compute_down", victim)]
    finally:
        await cloud.aclose()
        demo.stop()
