"""The simulator's ML2/OVN knob (Engine(ovn=True)) read by the real services collector: an OVN Controller and
an OVN Metadata agent per compute host, no DHCP/L3/metadata agents; a killed ovn-controller takes its host's
metadata agent down with it, as neutron's OVN driver reports it (tests/integration/ovn runs the same on real OVN),
and stacktop makes one finding of it naming the controller."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import UTC, datetime

import pytest

from tui.collectors.services import ServicesCollector
from tui.openstack import connect
from tui.sim import start_demo
from tui.sim.demo import Demo

START = 1_790_000_000.0


@pytest.fixture
def ovn_demo() -> Iterator[Demo]:
    demo = start_demo(instances=10, hosts=3, queues=30, churn=0, storyline=False, ovn=True, manual=True,
                      start=START)
    demo.advance(12)
    yield demo
    demo.stop()


async def poll(demo: Demo):  # type: ignore[no-untyped-def]
    cfg = demo.config()
    collector = ServicesCollector(cfg.openstack, cfg.thresholds, client_factory=lambda: connect(cfg.openstack),
                                  timeout=10)
    snap = await collector.collect()
    return snap, collector.findings(snap, datetime.fromtimestamp(demo.engine.clock.time(), UTC))


async def test_ovn_agents_per_compute_host_and_none_on_the_controllers(ovn_demo: Demo) -> None:
    snap, found = await poll(ovn_demo)
    rows = {(r.host, r.binary, r.agent_type, r.state) for r in snap.network.rows}
    hosts = [h.name for h in ovn_demo.engine.hosts]
    assert rows == {(h, b, t, "up") for h in hosts for b, t in (("ovn-controller", "OVN Controller agent"),
                                                                  ("neutron-ovn-metadata-agent", "OVN Metadata agent"))}
    assert not [f for f in found if f.kind.startswith("neutron.")]


async def test_a_dead_ovn_controller_takes_its_metadata_agent_down_and_is_one_finding(ovn_demo: Demo) -> None:
    host = ovn_demo.engine.hosts[1].name
    ovn_demo.engine.inject("kill_agent", host=host)
    ovn_demo.advance(ovn_demo.engine.agent_down_time + 31)
    snap, found = await poll(ovn_demo)
    states = {(r.host, r.binary): r.state for r in snap.network.rows}
    assert states[(host, "ovn-controller")] == "down" and states[(host, "neutron-ovn-metadata-agent")] == "down"
    assert [r for r in snap.network.rows if r.state == "down" and r.host != host] == []
    (f,) = [f for f in found if f.kind.startswith("neutron.")]
    assert (f.kind, f.subject) == ("neutron.agent_down", f"ovn-controller@{host}")
    assert f.evidence["follow_the_controller"] == ["neutron-ovn-metadata-agent"]

    ovn_demo.engine.inject("start_agent", host=host)
    ovn_demo.advance(1)
    snap, found = await poll(ovn_demo)
    assert {r.state for r in snap.network.rows} == {"up"}
    assert not [f for f in found if f.kind.startswith("neutron.")]
