"""The stale-allocation audit (tui.rules.allocations): nova-manage placement audit's semantics over the API."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from tui.models.placement import (
    FINISHED_MIGRATION_STATUSES,
    ConsumerInfo,
    HostServer,
    Hypervisor,
    Inventory,
    Migration,
    Provider,
    ProviderAllocation,
    ProviderView,
    parse_allocations,
    parse_inventories,
    parse_usages,
)
from tui.openstack.errors import NotFound
from tui.openstack.placement_reads import compute_states, consumer_info, parse_services
from tui.rules.allocations import audit_findings, audit_provider, needs_second_look, phantom_lines

PAYLOADS = Path(__file__).resolve().parents[1] / "data" / "payloads" / "openstack"
RP = "11111111-1111-1111-1111-111111111111"
INST_A, INST_B = "aaaaaaaa-0000-0000-0000-000000000001", "aaaaaaaa-0000-0000-0000-000000000002"
ORPHAN = "dddddddd-0000-0000-0000-00000000dead"
MIG = "eeeeeeee-0000-0000-0000-00000000beef"
SMALL = {"VCPU": 1, "MEMORY_MB": 512, "DISK_GB": 1}


def provider(allocs: dict[str, dict[str, int]], *, vcpu_total: int = 8, ratio: float = 1.0,
             usages: dict[str, int] | None = None, name: str = "compute-01") -> Provider:
    inv = {"VCPU": Inventory("VCPU", vcpu_total, 0, ratio), "MEMORY_MB": Inventory("MEMORY_MB", 16384, 512, 1.0),
           "DISK_GB": Inventory("DISK_GB", 100, 0, 1.0)}
    return Provider(uuid=RP, name=name, root_provider_uuid=RP, inventories=inv, usages=usages,
                    allocations=tuple(ProviderAllocation(c, r) for c, r in allocs.items()))


def view(allocs: dict[str, dict[str, int]], *, host: str | None = "compute-01", instances: Any = (INST_A,),
         migrations: Any = (), states: dict[str, str] | None = None,
         consumers: dict[str, ConsumerInfo] | None = None, **kw: Any) -> ProviderView:
    return ProviderView(provider=provider(allocs, **kw), host=host, node=host,
                        instances=frozenset(instances) if instances is not None else None,
                        migrations=tuple(migrations) if migrations is not None else None,
                        compute_states=states or {"compute-01": "up", "compute-02": "up"},
                        consumers=consumers or {})


def migration(status: str = "confirming", source: str = "compute-02", dest: str = "compute-01",
              uuid: str = MIG, instance: str = INST_B) -> Migration:
    return Migration(uuid=uuid, instance_uuid=instance, source_compute=source, dest_compute=dest,
                     source_node=source, dest_node=dest, status=status, migration_type="migration")


def verdicts(v: ProviderView) -> dict[str, tuple[str, str]]:
    return {c.consumer: (c.kind, c.verdict) for c in audit_provider(v).consumers}


def test_instance_on_the_host_is_legitimate_and_a_random_consumer_is_stale() -> None:
    v = view({INST_A: SMALL, ORPHAN: {"VCPU": 1, "MEMORY_MB": 128}})
    assert needs_second_look(v) == [ORPHAN]
    assert verdicts(v) == {INST_A: ("instance", "ok"), ORPHAN: ("unknown", "stale")}
    [f] = audit_findings([audit_provider(v)])
    assert (f.kind, f.subject, f.severity) == ("placement.stale_allocation", ORPHAN, "warning")
    assert f.evidence["provider"] == RP and f.evidence["host"] == "compute-01"
    assert f.evidence["resources"] == {"VCPU": 1, "MEMORY_MB": 128}
    assert f.evidence["verdict"] == "stale" and f.evidence["label"] == "unknown"
    assert "compute-01" in f.summary and "VCPU 1, MEMORY_MB 128" in f.summary
    assert "--delete" in f.next_step and "read-only without --delete" in f.next_step


def test_in_progress_migration_is_legitimate_until_its_source_compute_is_down() -> None:
    mig = migration("confirming", source="compute-01", dest="compute-02")
    up = view({INST_A: SMALL, MIG: SMALL}, migrations=[mig])
    assert verdicts(up)[MIG] == ("migration", "ok")
    assert audit_findings([audit_provider(up)]) == []

    down = view({INST_A: SMALL, MIG: SMALL}, migrations=[mig], states={"compute-01": "down", "compute-02": "up"})
    audit = audit_provider(down)
    assert verdicts(down)[MIG] == ("migration", "migration_stuck")
    [f] = audit_findings([audit])
    assert (f.kind, f.subject) == ("placement.migration_stuck", MIG)
    assert f.evidence["status"] == "confirming" and f.evidence["source"] == "compute-01"
    assert f.evidence["source_state"] == "down" and f.evidence["dest"] == "compute-02"
    assert "not an orphan" in f.next_step and "nova-compute on compute-01" in f.next_step
    assert audit.phantom == {}, "a stuck migration's allocation is not phantom capacity"


@pytest.mark.parametrize("status", sorted(FINISHED_MIGRATION_STATUSES))
def test_a_finished_migration_holding_an_allocation_is_stale(status: str) -> None:
    v = view({INST_A: SMALL, MIG: SMALL}, migrations=[migration(status)])
    assert verdicts(v)[MIG] == ("migration", "stale")
    [f] = audit_findings([audit_provider(v)])
    assert f.kind == "placement.stale_allocation" and status in f.evidence["label"]


def test_migration_not_touching_this_host_does_not_legitimise() -> None:
    v = view({MIG: SMALL}, instances=(), migrations=[migration("running", source="compute-03", dest="compute-04")])
    assert verdicts(v)[MIG] == ("migration", "stale")


def test_instance_of_an_in_flight_migration_is_legitimate_on_either_side() -> None:
    v = view({INST_A: SMALL, INST_B: SMALL}, migrations=[migration("post-migrating")])
    assert verdicts(v)[INST_B] == ("instance", "ok")
    assert needs_second_look(v) == []


def test_instance_living_on_another_host_is_stale_and_labelled_with_its_host() -> None:
    elsewhere = HostServer(id=INST_B, name="web-1", status="ACTIVE", host="compute-02", node="compute-02")
    v = view({INST_A: SMALL, INST_B: SMALL}, consumers={INST_B: ConsumerInfo(INST_B, server=elsewhere)})
    audit = audit_provider(v)
    [c] = [c for c in audit.consumers if c.consumer == INST_B]
    assert (c.kind, c.verdict) == ("instance", "stale")
    assert c.label == "instance web-1 (ACTIVE, host compute-02)"
    assert "lives on compute-02" in c.reason


@pytest.mark.parametrize(("server", "reason"), [
    (HostServer(id=INST_B, name="new", status="ACTIVE", host="compute-01", node="compute-01"), "arrived after"),
    (HostServer(id=INST_B, name="boot", status="BUILD", task_state="scheduling"), "still building"),
])
def test_second_look_guards_the_listing_races(server: HostServer, reason: str) -> None:
    v = view({INST_A: SMALL, INST_B: SMALL}, consumers={INST_B: ConsumerInfo(INST_B, server=server)})
    [c] = [c for c in audit_provider(v).consumers if c.consumer == INST_B]
    assert c.verdict == "ok" and reason in c.reason


@pytest.mark.parametrize(("kw", "why"), [
    ({"host": None}, "host unresolved"),
    ({"instances": None}, "instances could not be read"),
    ({"migrations": None}, "migrations could not be read"),
])
def test_unexplained_consumer_is_only_suspected_when_something_could_not_be_seen(kw: dict[str, Any],
                                                                                  why: str) -> None:
    v = view({ORPHAN: SMALL}, **kw)
    [c] = audit_provider(v).consumers
    assert c.verdict == "suspected" and why in c.reason
    [f] = audit_findings([audit_provider(v)])
    assert f.severity == "info" and f.summary.startswith("suspected stale allocation")
    assert f.evidence["verdict"] == "suspected"


def test_consumer_without_compute_resources_is_not_judged() -> None:
    v = view({INST_A: SMALL, ORPHAN: {"NET_BW_EGR_KILOBIT_PER_SEC": 1000}})
    assert verdicts(v)[ORPHAN] == ("unknown", "not_compute")
    assert needs_second_look(v) == [] and audit_findings([audit_provider(v)]) == []


def test_phantom_capacity_line() -> None:
    v = view({INST_A: {"VCPU": 1}, INST_B: {"VCPU": 1}, ORPHAN: {"VCPU": 4}}, instances=(INST_A, INST_B),
             usages={"VCPU": 6})
    audit = audit_provider(v)
    assert audit.phantom == {"VCPU": 4}
    assert phantom_lines(audit) == ["placement says 6 of 8 VCPU used, 2 instances really use 2"]
    [f] = audit_findings([audit])
    assert f.evidence["phantom"] == ["placement says 6 of 8 VCPU used, 2 instances really use 2"]


def test_usage_falls_back_to_the_sum_of_allocations_and_capacity_uses_the_ratio() -> None:
    audit = audit_provider(view({INST_A: {"VCPU": 2}, ORPHAN: {"VCPU": 3}}, vcpu_total=4, ratio=4.0))
    assert audit.usages["VCPU"] == 5 and audit.capacities["VCPU"] == 16
    assert phantom_lines(audit) == ["placement says 5 of 16 VCPU used, 1 instance really use 2"]


def test_same_consumer_stale_on_two_providers_gets_two_subjects() -> None:
    a = audit_provider(view({ORPHAN: SMALL}, instances=()))
    b = audit_provider(ProviderView(provider=Provider(uuid="22222222-2222-2222-2222-222222222222", name="compute-02",
                                                      allocations=(ProviderAllocation(ORPHAN, SMALL),)),
                                    host="compute-02", node="compute-02", instances=frozenset(), migrations=()))
    subjects = sorted(f.subject for f in audit_findings([a, b]))
    assert subjects == [ORPHAN, f"{ORPHAN}@compute-02"]


# ---- against captured real payloads ---------------------------------------------------------------------------
def load(case: str, name: str) -> Any:
    return json.loads((PAYLOADS / case / name).read_text())


def real_views(case: str) -> list[ProviderView]:
    """What tui.openstack.placement_reads builds, from payloads captured on a real cloud."""
    services = parse_services(load(case, "compute_services.json")["services"], None)
    servers = [HostServer.from_api(s) for s in load(case, "servers_detail.json")["servers"]]
    migrations = [Migration.from_api(m) for m in load(case, "os_migrations.json")["migrations"]]
    out = []
    for rp in load(case, "rp_list.json")["resource_providers"]:
        parts = load(case, f"rp_{rp['name']}.json")
        p = Provider(uuid=rp["uuid"], name=rp["name"], root_provider_uuid=rp["root_provider_uuid"],
                     inventories=parse_inventories(parts["inventories"]), usages=parse_usages(parts["usages"]),
                     allocations=parse_allocations(parts["allocations"]))
        host = rp["name"]
        out.append(ProviderView(
            provider=p, host=host, node=host,
            instances=frozenset(s.id for s in servers if s.host == host and s.node == host),
            migrations=tuple(m for m in migrations if m.touches(host)), compute_states=compute_states(services)))
    return out


def test_captured_healthy_cloud_has_no_finding() -> None:
    audits = [audit_provider(v) for v in real_views("healthy")]
    assert audit_findings(audits) == []
    assert all(c.verdict == "ok" for a in audits for c in a.consumers)


def test_captured_migration_held_by_a_dead_source_is_stuck_not_stale() -> None:
    audits = {a.host: a for a in (audit_provider(v) for v in real_views("compute02-down-migration-held"))}
    findings = audit_findings(audits.values())
    assert [(f.kind, f.subject) for f in findings] == [
        ("placement.migration_stuck", "e60954d4-9c33-422d-9c5b-fb89fea069d5")]
    f = findings[0]
    assert f.evidence["host"] == "compute-02" and f.evidence["status"] == "confirming"
    assert f.evidence["source"] == "compute-02" and f.evidence["dest"] == "compute-01"
    [held] = [c for c in audits["compute-02"].consumers if c.kind == "migration"]
    assert held.label == "migration (confirming, migration, compute-02 -> compute-01)"
    assert {c.verdict for c in audits["compute-01"].consumers} == {"ok"}


def test_consumer_info_from_second_look_answers() -> None:
    info = consumer_info(ORPHAN, NotFound("GET .../servers/x answered 404"),
                         {"allocations": {}, "consumer_type": "INSTANCE", "project_id": "p"})
    assert info.server is None and info.server_missing and info.consumer_type == "INSTANCE"
    got = consumer_info(INST_B, {"server": {"id": INST_B, "name": "x", "status": "ACTIVE",
                                            "OS-EXT-SRV-ATTR:host": "compute-02"}}, None)
    assert got.server is not None and got.server.host == "compute-02" and got.consumer_type is None


def test_inventory_capacity_and_migration_progress() -> None:
    inv = Inventory.from_api("MEMORY_MB", {"total": 800000, "reserved": 512, "allocation_ratio": 1.5})
    assert inv.capacity == int((800000 - 512) * 1.5)
    assert Migration(uuid="m", status="confirming").in_progress
    assert Migration(uuid="m", status="post-migrating").in_progress
    assert not Migration(uuid="m", status="Confirmed").in_progress


def test_hypervisor_without_servers_key_has_none_when_asked_for_them() -> None:
    """Before compute 2.75 nova omits `servers` for an empty hypervisor: asked for, that means none."""
    raw = {"id": RP, "hypervisor_hostname": "compute-01", "service": {"host": "compute-01"}}
    assert Hypervisor.from_api(raw, with_servers=True).servers == ()
    assert Hypervisor.from_api(raw).servers is None
    full = Hypervisor.from_api({**raw, "servers": [{"uuid": INST_A, "name": "instance-00000001"}]})
    assert full.servers == (INST_A,) and full.host == "compute-01"
