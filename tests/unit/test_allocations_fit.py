"""The capacity explainer (tui.rules.fit): what a flavor asks, who can take it, what rules the others out."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

import pytest

from tui.models.placement import Inventory, Provider
from tui.rules.fit import candidate_providers, explain, flavor_request, required_param, summary_line

NOW = datetime(2026, 12, 2, 10, 0, tzinfo=UTC)
TINY = {"name": "m1.tiny", "id": "1", "vcpus": 1, "ram": 512, "disk": 1, "OS-FLV-EXT-DATA:ephemeral": 0,
        "swap": 0, "extra_specs": {}}
HUGE = {**TINY, "name": "x.huge", "id": "2", "disk": 10_000_000}


def rp(uuid: str, name: str, *, used: dict[str, int] | None = None, traits: tuple[str, ...] = ("COMPUTE_NODE",),
       disk_max: int = 600_000, vcpu_total: int = 8, root: str | None = None, inv: dict[str, Inventory] | None = None
       ) -> Provider:
    inv = inv if inv is not None else {
        "VCPU": Inventory("VCPU", vcpu_total, 0, 1.0, max_unit=vcpu_total),
        "MEMORY_MB": Inventory("MEMORY_MB", 16384, 512, 1.0, max_unit=16384),
        "DISK_GB": Inventory("DISK_GB", disk_max, 0, 1.0, max_unit=disk_max)}
    return Provider(uuid=uuid, name=name, root_provider_uuid=root or uuid, inventories=inv, usages=used or {},
                    traits=traits)


def test_flavor_request_like_nova_builds_it() -> None:
    req = flavor_request({**TINY, "disk": 10, "OS-FLV-EXT-DATA:ephemeral": 5, "swap": 1500})
    assert dict(req.resources) == {"VCPU": 1, "MEMORY_MB": 512, "DISK_GB": 17}  # 10 + 5 + ceil(1500/1024)
    assert req.forbidden == ("COMPUTE_STATUS_DISABLED",) and req.required == ()
    assert required_param(req) == ["!COMPUTE_STATUS_DISABLED"]


def test_flavor_extra_specs_and_command_line_traits() -> None:
    specs = {"resources:VCPU": "0", "resources:CUSTOM_GPU": "1", "trait:HW_CPU_X86_AVX2": "required",
             "trait:CUSTOM_SLOW": "forbidden", "hw:cpu_policy": "dedicated"}
    req = flavor_request({**TINY, "vcpus": 4, "extra_specs": specs}, ["CUSTOM_SSD", "!CUSTOM_OLD"])
    assert dict(req.resources) == {"PCPU": 4, "MEMORY_MB": 512, "DISK_GB": 1, "CUSTOM_GPU": 1}
    assert req.required == ("HW_CPU_X86_AVX2", "CUSTOM_SSD")
    assert req.forbidden == ("CUSTOM_SLOW", "CUSTOM_OLD", "COMPUTE_STATUS_DISABLED")
    assert any("PCPU" in n for n in req.notes)


def test_nothing_fits_each_host_names_disk_and_aggregate_free_looks_comfortable() -> None:
    providers = [rp("u1", "compute-01", used={"DISK_GB": 5}), rp("u2", "compute-02", used={"DISK_GB": 1})]
    report = explain(flavor_request(HUGE), providers, set(), NOW, hosts={"u1": "compute-01", "u2": "compute-02"})
    assert report.candidates == 0
    assert [(h.host, h.candidate) for h in report.hosts] == [("compute-01", False), ("compute-02", False)]
    for h in report.hosts:
        assert len(h.reasons) == 1 and h.reasons[0].startswith("DISK_GB: asks 10000000, at most 600000"), h.reasons
    assert report.hosts[0].reasons[0].endswith("599995 free of 600000")
    assert report.aggregate_free["DISK_GB"] == 1_199_994
    assert summary_line(report) == ("x.huge asks VCPU 1, MEMORY_MB 512, DISK_GB 10000000: fits nowhere (2 computes "
                                    "checked); cloud-wide free VCPU 16, MEMORY_MB 31744, DISK_GB 1199994")


def test_aggregate_is_not_a_host_seed_004() -> None:
    """20 idle vCPUs in total, the two hosts with the trait have 4 free each: an 8-vCPU request fits nowhere."""
    avx = ("COMPUTE_NODE", "HW_CPU_X86_AVX512F")
    providers = [rp("a", "c-a", traits=avx, used={"VCPU": 4}), rp("b", "c-b", traits=avx, used={"VCPU": 4}),
                 rp("c", "c-c", vcpu_total=12)]
    req = flavor_request({**TINY, "vcpus": 8}, ["HW_CPU_X86_AVX512F"])
    report = explain(req, providers, set(), NOW)
    assert report.aggregate_free["VCPU"] == 20 and report.candidates == 0
    reasons = {h.name: h.reasons for h in report.hosts}
    assert reasons["c-a"] == ("VCPU: asks 8, 4 free of 8 (used 4)",)
    assert reasons["c-c"] == ("lacks required trait HW_CPU_X86_AVX512F",)


@pytest.mark.parametrize(("kw", "reason"), [
    ({"traits": ("COMPUTE_NODE", "COMPUTE_STATUS_DISABLED")}, "compute service disabled (COMPUTE_STATUS_DISABLED)"),
    ({"inv": {"VCPU": Inventory("VCPU", 8)}}, "MEMORY_MB: asks 512, has no MEMORY_MB inventory"),
    ({"inv": {"VCPU": Inventory("VCPU", 8), "MEMORY_MB": Inventory("MEMORY_MB", 4096, step_size=1024),
              "DISK_GB": Inventory("DISK_GB", 10)}}, "MEMORY_MB: asks 512, not a multiple of step_size 1024"),
    ({"inv": {"VCPU": Inventory("VCPU", 8, min_unit=2), "MEMORY_MB": Inventory("MEMORY_MB", 4096),
              "DISK_GB": Inventory("DISK_GB", 10)}}, "VCPU: asks 1, at least 2 (min_unit)"),
])
def test_each_kind_of_reason(kw: dict[str, Any], reason: str) -> None:
    report = explain(flavor_request(TINY), [rp("u1", "compute-01", **kw)], set(), NOW)
    assert reason in report.hosts[0].reasons


def test_candidates_come_from_placement_and_unexplained_refusals_say_so() -> None:
    body = {"allocation_requests": [{"allocations": {"u1": {"resources": {"VCPU": 1}}}}], "provider_summaries": {}}
    assert candidate_providers(body) == {"u1"}
    providers = [rp("u2", "compute-02"), rp("u1", "compute-01")]
    report = explain(flavor_request(TINY), providers, {"u1"}, NOW)
    assert [(h.name, h.candidate) for h in report.hosts] == [("compute-01", True), ("compute-02", False)]
    assert "placement did not offer it" in report.hosts[1].reasons[0]
    assert summary_line(report).startswith("m1.tiny asks VCPU 1, MEMORY_MB 512, DISK_GB 1: fits on 1 of 2 computes")


def test_nested_tree_counts_as_one_compute() -> None:
    gpu = Provider(uuid="g1", name="compute-01_pgpu", root_provider_uuid="u1", parent_provider_uuid="u1",
                   inventories={"CUSTOM_GPU": Inventory("CUSTOM_GPU", 2)}, usages={"CUSTOM_GPU": 2}, traits=())
    req = flavor_request({**TINY, "extra_specs": {"resources:CUSTOM_GPU": "1"}})
    report = explain(req, [rp("u1", "compute-01"), gpu], set(), NOW)
    assert len(report.hosts) == 1 and report.hosts[0].name == "compute-01"
    assert report.hosts[0].reasons == ("CUSTOM_GPU: asks 1, 0 free of 2 (used 2)",)
