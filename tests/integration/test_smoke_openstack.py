"""Smoke: the real OpenStack test cloud answers the real openstacksdk (what stacktop's collectors read)."""

from __future__ import annotations

import time

import pytest

from tests.testbed.openstack import (
    OpenStackCloud,
    agent,
    attached_volume,
    error_server,
    migration_held_allocation,
    nova_service,
    orphan_allocation,
    provider_allocations,
    server_on,
    service_killed,
    service_pid,
)
from tests.testbed.rabbitmq import Broker
from tests.testbed.wait import wait_for

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


# ----------------------------------------------------------------------------------------------------------
# The scenario helpers of tests/testbed work on the real cloud and undo themselves.


def test_boot_on_each_compute_and_see_spawning_on_the_slow_one(conn) -> None:  # type: ignore[no-untyped-def]
    with server_on(conn, "compute-01") as s1:
        assert s1.status == "ACTIVE"
        assert s1.compute_host == "compute-01"
    with server_on(conn, "compute-02", wait=False, network="provider") as s2:
        seen = set()

        def active() -> bool:
            s = conn.compute.get_server(s2.id)
            seen.add(s.task_state)
            return s.status == "ACTIVE"

        wait_for(active, timeout=120, what="the server on compute-02 to be ACTIVE", interval=0.2)
        assert "spawning" in seen, f"compute-02 spawns slowly, so 'spawning' is observable (saw {seen})"
        assert conn.compute.get_server(s2.id).compute_host == "compute-02"
        ports = list(conn.network.ports(device_id=s2.id))
        assert ports and ports[0].binding_host_id == "compute-02"
    assert conn.compute.find_server(s2.id, all_projects=True) is None


def test_impossible_flavor_ends_in_error_with_no_valid_host(conn) -> None:  # type: ignore[no-untyped-def]
    with error_server(conn) as srv:
        assert srv.status == "ERROR"
        assert "No valid host was found" in srv.fault["message"]


def test_orphan_allocation_is_written_then_removed(conn) -> None:  # type: ignore[no-untyped-def]
    with orphan_allocation(conn, "compute-02") as orphan:
        allocs = provider_allocations(conn, orphan.provider_id)
        assert allocs[orphan.consumer]["resources"] == orphan.resources
        assert conn.compute.find_server(orphan.consumer, all_projects=True) is None
    assert orphan.consumer not in provider_allocations(conn, orphan.provider_id)


def test_attached_volume(conn) -> None:  # type: ignore[no-untyped-def]
    with server_on(conn, "compute-01") as srv, attached_volume(conn, srv) as vol:
        assert vol.status == "in-use"
        assert [a["server_id"] for a in vol.attachments] == [srv.id]
        assert [v.id for v in conn.compute.volume_attachments(srv)] == [vol.id]
    assert conn.block_storage.find_volume(vol.id, ignore_missing=True) is None


def test_killed_compute_goes_down_and_comes_back(conn) -> None:  # type: ignore[no-untyped-def]
    t0 = time.monotonic()
    with service_killed(conn, "nova-compute-02"):
        assert nova_service(conn, "nova-compute", "compute-02").state == "down"
        # service_down_time=20: noticed well before the default 60 s
        assert time.monotonic() - t0 < 45
    assert nova_service(conn, "nova-compute", "compute-02").state == "up"
    assert service_pid("nova-compute-02") is not None


def test_dead_neutron_agent_goes_not_alive_and_comes_back(conn) -> None:  # type: ignore[no-untyped-def]
    with service_killed(conn, "neutron-agent-compute-01"):
        assert agent(conn, "compute-01").is_alive is False
    assert agent(conn, "compute-01").is_alive is True


def test_migration_holds_an_allocation_on_the_dead_source(conn) -> None:  # type: ignore[no-untyped-def]
    with migration_held_allocation(conn, "compute-01") as held:
        allocs = provider_allocations(conn, held.source_provider_id)
        assert held.migration_uuid in allocs
        assert held.server.id not in allocs  # held by the migration, not by the instance
        assert held.dest_host == "compute-02"
    assert held.migration_uuid not in provider_allocations(conn, held.source_provider_id)
    assert conn.compute.find_server(held.server.id, all_projects=True) is None


def test_the_clouds_queues_report_statistics(openstack_cloud: OpenStackCloud, rabbitmq_broker: Broker) -> None:
    """Every queue of the cloud's vhost has a message count in the management API: a classic queue declared while
    the management plugin was off never gets one, and the RabbitMQ collector then sees no queue without a consumer
    (a fresh machine whose first test started the cloud before any test enabled the plugin failed CI so).
    testcloud/openstack.sh up turns the statistics on first and restarts a cloud whose queues predate them."""
    def blind() -> set[str]:
        queues = rabbitmq_broker.get("/api/queues/openstack?columns=name,messages")
        assert isinstance(queues, list) and queues, "the cloud's services declare their queues in vhost openstack"
        return {q["name"] for q in queues if "messages" not in q}

    first = blind()
    if first:
        time.sleep(6)  # a queue declared just now reports after one statistics interval (5 s)
    still = first & blind()
    assert not still, (f"{len(still)} queues of vhost openstack have no statistics (e.g. {sorted(still)[:3]}): they "
                       "predate the management plugin - run scripts/testcloud up openstack")
