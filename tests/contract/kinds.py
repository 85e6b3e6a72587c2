"""Every resource kind stacktop reads, as one tui.openstack call each, with the paths that are data maps.

`read_all(client, ids)` runs the same calls against any cloud (the simulator or the real test bed); the
contract tests compare the shapes kind by kind.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from tests.contract.shape import Shape, drift, shape
from tests.placement_provider_reads import provider_allocations, provider_inventories, provider_traits, provider_usages
from tui.openstack import OpenStackClient


@dataclass(frozen=True)
class Ids:
    active: str  # an ACTIVE server with a port and an attached volume
    error: str  # an ERROR server with a fault
    create_request: str  # the create action's request id of `active`
    hypervisor: str
    provider: str  # the provider `active` is allocated on


@dataclass(frozen=True)
class Kind:
    name: str
    read: Callable[[OpenStackClient, Ids], Any]
    maps: tuple[str, ...] = ()


KINDS: tuple[Kind, ...] = (
    Kind("compute_services", lambda c, i: c.compute_services()),
    Kind("servers", lambda c, i: c.servers(), ("[].addresses", "[].metadata", "[].flavor.extra_specs")),
    Kind("server_active", lambda c, i: c.server(i.active), ("addresses", "metadata", "flavor.extra_specs")),
    Kind("server_error", lambda c, i: c.server(i.error), ("addresses", "metadata", "flavor.extra_specs")),
    Kind("instance_actions", lambda c, i: c.instance_actions(i.active)),
    Kind("instance_action", lambda c, i: c.instance_action(i.active, i.create_request)),
    Kind("hypervisors", lambda c, i: c.hypervisors(with_servers=True)),
    Kind("hypervisor", lambda c, i: c.hypervisor(i.hypervisor)),
    Kind("migrations", lambda c, i: c.migrations()),
    Kind("flavors", lambda c, i: c.flavors(), ("[].extra_specs",)),
    Kind("network_agents", lambda c, i: c.network_agents(),
         ("[].configurations.bridge_mappings", "[].configurations.ovs_capabilities")),
    Kind("ports", lambda c, i: c.ports(), ("[].binding:profile", "[].binding:vif_details.bound_drivers")),
    Kind("volume_services", lambda c, i: c.volume_services()),
    Kind("volumes", lambda c, i: c.volumes(), ("[].metadata",)),
    Kind("resource_providers", lambda c, i: c.resource_providers()),
    Kind("provider_inventories", lambda c, i: provider_inventories(c, i.provider), ("",)),
    Kind("provider_usages", lambda c, i: provider_usages(c, i.provider), ("",)),
    Kind("provider_allocations", lambda c, i: provider_allocations(c, i.provider), ("", ".*.resources")),
    Kind("provider_traits", lambda c, i: provider_traits(c, i.provider)),
    Kind("consumer_allocations", lambda c, i: c.consumer_allocations(i.active),
         ("allocations", "allocations.*.resources")),
    Kind("allocation_candidates", lambda c, i: c.allocation_candidates({"VCPU": 1, "MEMORY_MB": 512, "DISK_GB": 1}),
         ("allocation_requests[].allocations", "allocation_requests[].allocations.*.resources",
          "allocation_requests[].mappings", "provider_summaries", "provider_summaries.*.resources")),
    Kind("catalog", lambda c, i: c.catalog()),
    Kind("endpoint_versions", lambda c, i: c.endpoint_versions()),
)


def read_all(client: OpenStackClient, ids: Ids, kinds: tuple[Kind, ...] = KINDS) -> dict[str, Shape]:
    return {k.name: shape(k.read(client, ids), k.maps) for k in kinds}


def sim_ids(client: OpenStackClient) -> Ids:
    """Sample ids on a running simulator: an ACTIVE server with a volume, the storyline's ERROR server."""
    servers = client.servers()
    active = next(s for s in servers if s["status"] == "ACTIVE" and s["os-extended-volumes:volumes_attached"]
                  and s["addresses"])
    error = next(s for s in servers if s["status"] == "ERROR" and s.get("fault"))
    return _ids(client, active, error)


def _ids(client: OpenStackClient, active: dict[str, Any], error: dict[str, Any]) -> Ids:
    create = next(a for a in client.instance_actions(active["id"]) if a["action"] == "create")
    host = active["OS-EXT-SRV-ATTR:host"]
    hyp = next(h for h in client.hypervisors() if h["hypervisor_hostname"] == host)
    provider = next(iter(client.consumer_allocations(active["id"])["allocations"]))
    return Ids(active["id"], error["id"], create["request_id"], hyp["id"], provider)


def ids_for(client: OpenStackClient, active_id: str, error_id: str) -> Ids:
    return _ids(client, client.server(active_id), client.server(error_id))


def report(real: dict[str, Shape], sim: dict[str, Shape], ignore: dict[str, tuple[str, ...]] | None = None
           ) -> list[str]:
    """Drift lines for every kind, each prefixed with the kind: [] when the simulator is faithful."""
    ignore = ignore or {}
    out = []
    for name in real:
        out += [f"{name}: {line}" for line in drift(real[name], sim[name], ignore=ignore.get(name, ()))]
    return out
