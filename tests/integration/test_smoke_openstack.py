"""Smoke: the real OpenStack test cloud answers the real openstacksdk (what stacktop's collectors read)."""

from __future__ import annotations

import pytest

from tests.testbed.openstack import OpenStackCloud

pytestmark = pytest.mark.integration


@pytest.fixture(scope="module")
def conn(openstack_cloud: OpenStackCloud):  # type: ignore[no-untyped-def]
    c = openstack_cloud.connect()
    yield c
    c.close()


def test_compute_services_four_binaries_up(conn) -> None:  # type: ignore[no-untyped-def]
    services = list(conn.compute.services())
    up = sorted((s.binary, s.host) for s in services if s.state == "up" and s.status == "enabled")
    assert [b for b, _ in up].count("nova-compute") == 2, up
    assert {b for b, _ in up} == {"nova-scheduler", "nova-conductor", "nova-compute"}, up
    assert {h for b, h in up if b == "nova-compute"} == {"compute-01", "compute-02"}


def test_two_hypervisors(conn) -> None:  # type: ignore[no-untyped-def]
    hyps = list(conn.compute.hypervisors(details=True))
    assert sorted(h.name for h in hyps) == ["compute-01", "compute-02"]
    assert all(h.state == "up" for h in hyps)


def test_two_placement_providers(conn) -> None:  # type: ignore[no-untyped-def]
    rps = list(conn.placement.resource_providers())
    assert sorted(rp.name for rp in rps) == ["compute-01", "compute-02"]


def test_network_agents_alive(conn) -> None:  # type: ignore[no-untyped-def]
    agents = [a for a in conn.network.agents() if a.agent_type == "Open vSwitch agent"]
    assert sorted(a.host for a in agents) == ["compute-01", "compute-02"]
    assert all(a.is_alive for a in agents)


def test_volume_services_up(conn) -> None:  # type: ignore[no-untyped-def]
    services = {(s.binary, s.state) for s in conn.block_storage.services()}
    assert ("cinder-scheduler", "up") in services
    assert ("cinder-volume", "up") in services


def test_resources_for_scenarios_exist(conn) -> None:  # type: ignore[no-untyped-def]
    assert conn.compute.find_flavor("m1.tiny") is not None
    assert conn.compute.find_flavor("x.huge") is not None
    assert conn.image.find_image("tiny") is not None
    assert conn.network.find_network("provider") is not None
