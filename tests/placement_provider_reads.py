"""Per-provider placement reads that only the tests need (the contract tests and the storyline test compare
what the simulator answers): the app reads placement through `tui.openstack.placement_reads` instead."""

from __future__ import annotations

from typing import Any

from tui.openstack.paging import segment


def _placement(client: Any, path: str, action: str) -> dict[str, Any]:
    return client.get_json("placement", path, microversion=client.placement_microversion(), action=action)


def provider_inventories(client: Any, uuid: str) -> dict[str, dict[str, Any]]:
    """{resource class: {total, reserved, min_unit, max_unit, step_size, allocation_ratio}}."""
    return dict(_placement(client, f"/resource_providers/{segment(uuid)}/inventories", f"inventories of {uuid}")
                .get("inventories", {}))


def provider_usages(client: Any, uuid: str) -> dict[str, int]:
    usages = _placement(client, f"/resource_providers/{segment(uuid)}/usages", f"usages of {uuid}")
    return dict(usages.get("usages", {}))


def provider_allocations(client: Any, uuid: str) -> dict[str, dict[str, Any]]:
    """{consumer uuid: {resources: {rc: n}, consumer_generation}}."""
    return dict(_placement(client, f"/resource_providers/{segment(uuid)}/allocations", f"allocations on {uuid}")
                .get("allocations", {}))


def provider_traits(client: Any, uuid: str) -> list[str]:
    traits = _placement(client, f"/resource_providers/{segment(uuid)}/traits", f"traits of {uuid}")
    return list(traits.get("traits", []))
