"""Triage hints and the triage row, from snapshots run through the real per-source rules (so the findings the
hints derive from have their real kinds, subjects and evidence). Each scenario: its hint, citing what it was
derived from, and no unrelated hint; healthy: no hint."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import replace
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest

from tui.config import Thresholds
from tui.models.finding import Finding
from tui.models.galera import NON_PRIMARY_CONF_ID, GaleraNode, GaleraSnapshot
from tui.models.instances import BUILD_QUEUED, HostHealth, InstancesSnapshot, Server
from tui.models.observation import Observation
from tui.models.rabbitmq import Alarm, NodeInfo, QueueInfo, RabbitSnapshot
from tui.models.services import EndpointCheck, KeystoneCheck, SectionRead, ServiceRow, ServicesSnapshot
from tui.rules.liveness import services_findings
from tui.rules.queues import rabbitmq_findings
from tui.rules.quorum import READS_FAIL, WRITES_FAIL, galera_findings
from tui.rules.stuck import instance_findings
from tui.rules.triage import jump_target, triage_hints, triage_summary

NOW = datetime(2026, 3, 1, 12, 0, 0, tzinfo=UTC)
TH = Thresholds(service_down_time=60, agent_down_time=75, volume_service_down_time=60, fleet_down_fraction=0.5)
STUCK = {"scheduling": 30.0, "networking": 300.0, "block_device_mapping": 180.0, "spawning": 60.0,
         "deleting": 300.0, "default": 1800.0}
COMPUTES = ("compute-01", "compute-02", "compute-03")
URL = {"identity": "http://ks:5000/v3", "compute": "http://nova:8774/v2.1", "network": "http://neutron:9696",
       "image": "http://glance:9292", "placement": "http://placement:8778", "block-storage": "http://cinder:8776"}


# ------------------------------------------------------------------------------------------------ factories
def row(section: str, binary: str, host: str, age: float = 3.0, **kw: Any) -> ServiceRow:
    return ServiceRow(section=section, binary=binary, host=host, id=f"{binary}-{host}",  # type: ignore[arg-type]
                      updated_at=NOW - timedelta(seconds=age), age_at_read_s=age, **kw)


def services(*, compute_ages: dict[str, float] | None = None, conductor_age: float = 3.0,
             keystone_ok: bool = True, down_endpoints: Iterable[str] = ()) -> ServicesSnapshot:
    ages = {h: 3.0 for h in COMPUTES} | (compute_ages or {})
    compute = tuple(row("compute", "nova-compute", h, a, state="down" if a > 60 else "up") for h, a in ages.items())
    compute += (row("compute", "nova-conductor", "ctl-1", conductor_age,
                    state="down" if conductor_age > 60 else "up"),
                row("compute", "nova-scheduler", "ctl-1"))
    network = tuple(row("network", "neutron-openvswitch-agent", h, agent_type="Open vSwitch agent") for h in COMPUTES)
    volume = (row("volume", "cinder-scheduler", "ctl-1"), row("volume", "cinder-volume", "ctl-1@lvm"))
    down = set(down_endpoints)
    catalog = tuple(EndpointCheck(t, u, ok=t not in down, error="connection refused" if t in down else None)
                    for t, u in URL.items())
    return ServicesSnapshot(
        taken_at=NOW, keystone=KeystoneCheck(URL["identity"], "prod", ok=keystone_ok,
                                             error=None if keystone_ok else "connection refused"),
        compute=SectionRead("compute", compute, NOW), network=SectionRead("network", network, NOW),
        volume=SectionRead("volume", volume, NOW), catalog=catalog)


def rabbit(*, empty_queues: Iterable[str] = (), alarm: bool = False) -> RabbitSnapshot:
    names = ["conductor", "scheduler", "compute", *(f"compute.{h}" for h in COMPUTES), "notifications.info"]
    queues = []
    for name in names:
        if name in empty_queues:
            queues.append(QueueInfo("/", name, messages=12, consumers=0, stuck_since=NOW - timedelta(seconds=30),
                                    stuck_polls=3))
        elif name == "notifications.info":  # nobody reads notifications: a warning, never a hint
            queues.append(QueueInfo("/", name, messages=4000, consumers=0, stuck_polls=5,
                                    stuck_since=NOW - timedelta(hours=2)))
        else:
            queues.append(QueueInfo("/", name, messages=0, consumers=1))
    nodes = tuple(NodeInfo(f"rabbit@ctl-{i}", running=True, mem_alarm=alarm and i == 1) for i in (1, 2, 3))
    alarms = (Alarm("rabbit@ctl-1", "memory"),) if alarm else ()
    return RabbitSnapshot("http://rmq:15672", NOW, queues=tuple(queues), nodes=nodes, alarms=alarms,
                          alarms_checked=True)


def galera(*, quorum: bool = True) -> GaleraSnapshot:
    if quorum:
        nodes = tuple(GaleraNode(f"db{i}:3306", True, node_name=f"db{i}", cluster_size=3, cluster_status="Primary",
                                 state_comment="Synced", ready=True, conf_id=7, state_uuid="u", last_committed=100)
                      for i in (1, 2, 3))
    else:
        nodes = (GaleraNode("db1:3306", True, node_name="db1", cluster_size=1, cluster_status="non-Primary",
                            state_comment="Initialized", ready=False, conf_id=NON_PRIMARY_CONF_ID, state_uuid="u",
                            last_committed=100),
                 GaleraNode("db2:3306", False, error="connection refused"),
                 GaleraNode("db3:3306", False, error="connection refused"))
    return GaleraSnapshot(nodes=nodes, expected_size=3, taken_at=NOW.timestamp())


def server(sid: str, *, task: str | None = None, host: str | None = None, status: str = "ACTIVE",
           for_s: float = 0.0) -> Server:
    return Server(id=sid, name=sid, status=status, task_state=task, host=host,
                  task_since=NOW - timedelta(seconds=for_s) if (task or status == "BUILD") else None,
                  task_since_basis="observed")


def instances(*servers: Server, down: Iterable[str] = ()) -> InstancesSnapshot:
    base = [server(f"vm-{h}-{i}", host=h) for h in COMPUTES for i in range(2)]
    hosts = {h: HostHealth(h, compute_state="down" if h in down else "up", compute_status="enabled")
             for h in COMPUTES}
    return InstancesSnapshot(taken_at=NOW, servers=tuple(base) + servers, hosts=hosts)


def obs(source: str, snapshot: Any, findings: list[Finding], error: str | None = None) -> Observation:
    return Observation(source=source, snapshot=snapshot, error=error, ok_at=NOW.timestamp() - 1,
                       tried_at=NOW.timestamp() - 1, findings=tuple(findings))


def world(*, svc: ServicesSnapshot | None = None, rmq: RabbitSnapshot | None = None, gal: GaleraSnapshot | None = None,
          inst: InstancesSnapshot | None = None, services_error: str | None = None) -> dict[str, Observation]:
    svc, rmq, gal, inst = svc or services(), rmq or rabbit(), gal or galera(), inst or instances()
    return {
        "services": obs("services", svc, services_findings(svc, NOW, TH), services_error),
        "rabbitmq": obs("rabbitmq", rmq, rabbitmq_findings(rmq, NOW)),
        "galera": obs("galera", gal, galera_findings(gal, NOW)),
        "instances": obs("instances", inst, instance_findings(inst, NOW, STUCK)),
    }


def only(hints: list[Finding]) -> Finding:
    assert len(hints) == 1, [(h.kind, h.subject) for h in hints]
    return hints[0]


def cites(hint: Finding, kind: str, subject: str | None = None) -> bool:
    return any(k == kind and (subject is None or s == subject) for k, s in hint.evidence["derived_from"])


def seed_order(step: str) -> None:
    """next_step follows the seed: the service listings, then the bus and the database, then the catalog."""
    a, b, c = (step.index(x) for x in ("1) service listings", "2) the bus and the database", "3) the catalog"))
    assert a < b < c, step


# ------------------------------------------------------------------------------------------------- hints
def test_healthy_cloud_has_no_hint_even_with_unread_notifications() -> None:
    w = world()
    assert any(f.kind == "rabbitmq.queue_no_consumer" for f in w["rabbitmq"].findings), "the warning is there"
    assert triage_hints(w) == []


def test_keystone_unreachable() -> None:
    h = only(triage_hints(world(svc=services(keystone_ok=False))))
    assert h.kind == "triage.keystone" and h.severity == "critical" and h.source == "triage"
    assert "everything fails authentication" in h.summary and "running instances are unaffected" in h.summary
    assert cites(h, "keystone.unreachable", URL["identity"])
    seed_order(h.next_step)


def test_every_call_401_is_the_keystone_hint_naming_the_source_error() -> None:
    err = "Keystone at http://ks:5000/v3 refused the credentials of cloud 'prod' (401) - fix the auth section"
    h = only(triage_hints(world(services_error=err)))
    assert h.kind == "triage.keystone" and "401" in h.summary
    assert h.evidence["source_errors"] == {"services": err}
    assert "stacktop's own clouds.yaml" in h.next_step


def test_conductor_stopped_is_the_bus_or_conductor_hint_citing_the_fleet() -> None:
    svc = services(compute_ages={"compute-01": 75, "compute-02": 70, "compute-03": 50}, conductor_age=80)
    rmq = rabbit(empty_queues=["conductor"])
    h = only(triage_hints(world(svc=svc, rmq=rmq)))
    assert h.kind == "triage.bus_or_conductor" and h.subject == "nova-conductor" and h.severity == "critical"
    assert cites(h, "nova.fleet_down", "nova-compute") and cites(h, "rabbitmq.queue_no_consumer", "conductor")
    assert "message bus or nova-conductor, not the hosts" in h.summary
    assert "nova-conductor itself is down on ctl-1" in h.summary and "no nova-conductor is listening" in h.summary
    assert h.evidence["hosts"] == list(COMPUTES)
    assert jump_target(h) == ("pane", "rabbitmq")
    seed_order(h.next_step)


def test_fleet_without_a_queue_finding_still_points_at_the_bus() -> None:
    svc = services(compute_ages={"compute-01": 75, "compute-02": 70, "compute-03": 72})
    h = only(triage_hints(world(svc=svc)))
    assert h.kind == "triage.bus_or_conductor" and h.subject == "message-bus"
    assert "nova-conductor is up" in h.next_step  # the listing says so: the bus, then


def test_every_ovn_controller_down_is_no_message_bus_hint() -> None:
    """OVN agents report through the OVN southbound database, not RabbitMQ: their fleet is no bus hint."""
    svc = services()
    network = tuple(row("network", "ovn-controller", h, 80, agent_type="OVN Controller agent", state="down")
                    for h in COMPUTES)
    svc = replace(svc, network=SectionRead("network", network, NOW))
    w = world(svc=svc)
    (fleet,) = w["services"].findings
    assert fleet.kind == "neutron.fleet_down" and fleet.evidence["ovn"] is True
    assert not [h for h in triage_hints(w) if h.kind == "triage.bus_or_conductor"]


def test_galera_without_quorum_says_exactly_what_reads_and_writes_do() -> None:
    h = only(triage_hints(world(gal=galera(quorum=False))))
    assert h.kind == "triage.galera_no_quorum" and h.severity == "critical"
    assert '"lists work, creates fail"' in h.summary and "wsrep_dirty_reads=ON" in h.summary
    assert READS_FAIL in h.summary and WRITES_FAIL in h.summary
    assert "1047" in h.summary
    assert cites(h, "galera.quorum_lost", "db1:3306") and cites(h, "galera.size_mismatch", "cluster")
    assert "pc.bootstrap" in h.next_step
    seed_order(h.next_step)


def test_galera_absorbs_the_fleet_and_stuck_builds_it_explains() -> None:
    svc = services(compute_ages={"compute-01": 75, "compute-02": 70, "compute-03": 72})
    inst = instances(server("new-1", task="scheduling", status="BUILD", for_s=120))
    h = only(triage_hints(world(svc=svc, gal=galera(quorum=False), inst=inst)))
    assert h.kind == "triage.galera_no_quorum"
    assert cites(h, "nova.fleet_down", "nova-compute") and cites(h, "instance.stuck", "new-1")


def test_a_primary_component_left_is_no_cluster_hint() -> None:
    gal = galera()
    isolated = replace(gal.nodes[2], cluster_status="non-Primary", ready=False, cluster_size=1)
    gal = replace(gal, nodes=(gal.nodes[0], gal.nodes[1], isolated))
    w = world(gal=gal)
    assert any(f.kind == "galera.quorum_lost" for f in w["galera"].findings)
    assert triage_hints(w) == []


def test_placement_unreachable_is_novalidhost_despite_capacity() -> None:
    h = only(triage_hints(world(svc=services(down_endpoints=["placement"]))))
    assert h.kind == "triage.placement_unreachable" and h.subject == "placement"
    assert "NoValidHost although there is free capacity" in h.summary
    assert "running instances are unaffected" in h.summary
    assert cites(h, "catalog.endpoint_unreachable", "placement")
    seed_order(h.next_step)


def test_placement_absorbs_stuck_scheduling() -> None:
    inst = instances(server("new-1", task="scheduling", status="BUILD", for_s=120))
    h = only(triage_hints(world(svc=services(down_endpoints=["placement"]), inst=inst)))
    assert h.kind == "triage.placement_unreachable" and cites(h, "instance.stuck", "new-1")


def test_one_compute_down() -> None:
    svc = services(compute_ages={"compute-02": 90})
    rmq = rabbit(empty_queues=["compute.compute-02"])
    inst = instances(server("web-1", task="spawning", host="compute-02", status="BUILD", for_s=100),
                     down=["compute-02"])
    h = only(triage_hints(world(svc=svc, rmq=rmq, inst=inst)))
    assert h.kind == "triage.compute_down" and h.subject == "compute-02"
    assert "keep running" in h.summary and "cannot be managed" in h.summary and "no new instances" in h.summary
    assert "its 2 ACTIVE instance(s) keep running" in h.summary and "1 build(s) on it are stuck" in h.summary
    assert cites(h, "nova.service_enabled_but_down", "compute-02")
    assert cites(h, "rabbitmq.queue_no_consumer", "compute.compute-02") and cites(h, "instance.stuck", "web-1")
    assert jump_target(h) == ("host", "compute-02")
    seed_order(h.next_step)


def test_compute_down_with_only_a_build_on_it_says_the_build_is_stuck() -> None:
    """The only instance on the dead compute is a build that never started: nothing there "keeps running"."""
    svc = services(compute_ages={"compute-03": 90})
    inst = instances(server("new-1", task=None, host="compute-03", status="BUILD", for_s=100), down=["compute-03"])
    inst = replace(inst, servers=tuple(s for s in inst.servers if not s.id.startswith("vm-compute-03")))
    on_host = [s for s in inst.servers if s.host == "compute-03"]
    assert [s.status for s in on_host] == ["BUILD"]
    h = only(triage_hints(world(svc=svc, inst=inst)))
    assert h.kind == "triage.compute_down" and h.subject == "compute-03"
    assert "1 build(s) on it are stuck" in h.summary
    assert "keep running" not in h.summary and "ACTIVE" not in h.summary


def test_image_unreachable_builds_time_out_in_spawning() -> None:
    inst = instances(server("web-1", task="spawning", host="compute-01", status="BUILD", for_s=100))
    h = only(triage_hints(world(svc=services(down_endpoints=["image"]), inst=inst)))
    assert h.kind == "triage.image_unreachable"
    assert "spawning" in h.summary and "timing out rather than with an image error" in h.summary
    assert cites(h, "catalog.endpoint_unreachable", "image") and cites(h, "instance.stuck", "web-1")
    seed_order(h.next_step)


def test_builds_stuck_in_scheduling() -> None:
    inst = instances(server("new-1", task="scheduling", status="BUILD", for_s=120),
                     server("new-2", task="scheduling", status="BUILD", for_s=60))
    h = only(triage_hints(world(inst=inst)))
    assert h.kind == "triage.scheduling_stuck" and "2 build(s) stuck in scheduling" in h.summary
    assert "not the computes" in h.summary
    assert cites(h, "instance.stuck", "new-1") and cites(h, "instance.stuck", "new-2")
    seed_order(h.next_step)


def test_builds_queued_on_two_healthy_computes_point_at_the_bus_one_does_not() -> None:
    one = instances(server("q-1", status="BUILD", host="compute-01", for_s=120))
    assert triage_hints(world(inst=one)) == []
    two = instances(server("q-1", status="BUILD", host="compute-01", for_s=120),
                    server("q-2", status="BUILD", host="compute-02", for_s=120))
    h = only(triage_hints(world(inst=two)))
    assert h.kind == "triage.scheduling_stuck" and "never picked up" in h.summary
    assert all(f.evidence.get("phase") == BUILD_QUEUED for f in world(inst=two)["instances"].findings)


def test_a_short_stall_is_no_hint() -> None:
    inst = instances(server("new-1", task="scheduling", status="BUILD", for_s=10))
    assert triage_hints(world(inst=inst)) == []


def test_rabbit_memory_alarm_alone_is_no_hint() -> None:
    w = world(rmq=rabbit(alarm=True))
    assert any(f.kind == "rabbitmq.alarm" for f in w["rabbitmq"].findings)
    assert triage_hints(w) == []


def test_hints_ignore_their_own_kind_in_the_input() -> None:
    w = world(svc=services(down_endpoints=["image"]))
    hints = triage_hints(w)
    w["triage"] = obs("triage", None, hints)
    assert triage_hints(w) == hints


# --------------------------------------------------------------------------------------------- jump target
@pytest.mark.parametrize(("kind", "subject", "evidence", "target"), [
    ("instance.stuck", "abc", {"host": "compute-01"}, ("server", "abc")),
    ("nova.service_enabled_but_down", "compute-02", {"host": "compute-02"}, ("host", "compute-02")),
    ("cinder.service_down", "cinder-volume@st-1@lvm", {"host": "st-1@lvm"}, ("host", "st-1")),
    ("neutron.agent_down", "neutron-openvswitch-agent@c1", {"host": "c1"}, ("host", "c1")),
    ("rabbitmq.queue_no_consumer", "conductor", {}, ("pane", "rabbitmq")),
    ("rabbitmq.alarm", "rabbit@ctl-1", {}, ("pane", "rabbitmq")),
    ("galera.quorum_lost", "db1:3306", {}, ("pane", "galera")),
    ("nova.fleet_down", "nova-compute", {"hosts": ["a"]}, ("pane", "services")),
    ("keystone.unreachable", "http://ks", {}, ("pane", "services")),
])
def test_jump_target(kind: str, subject: str, evidence: dict[str, Any], target: tuple[str, str]) -> None:
    assert jump_target(Finding("warning", kind, subject, "s", evidence)) == target


# ------------------------------------------------------------------------------------------------ the row
def cells(w: dict[str, Observation], **kw: Any) -> dict[str, tuple[str, str]]:
    s = triage_summary(w, NOW, TH, **kw)
    return {c.name: (c.text, c.level) for c in s.cells}


def test_row_healthy() -> None:
    assert cells(world()) == {
        "catalog": ("ok (6 endpoints)", "ok"),
        "compute": ("3/3 up", "ok"),
        "agents": ("3/3 alive", "ok"),
        "volume": ("2/2 up", "ok"),
        "rabbitmq": ("3/3 running, no alarms, no partitions, service queues consumed", "ok"),
        "galera": ("size 3/3, 3 Primary, 3 Synced", "ok"),
    }


def test_row_conductor_stopped() -> None:
    svc = services(compute_ages={"compute-01": 75, "compute-02": 70, "compute-03": 50}, conductor_age=80)
    c = cells(world(svc=svc, rmq=rabbit(empty_queues=["conductor"], alarm=True)))
    assert c["compute"] == ("1/3 up, 1 late; nova-conductor DOWN", "critical")
    assert c["rabbitmq"] == ("3/3 running, ALARM memory@rabbit@ctl-1, no partitions, 1 service queue without "
                             "consumers: conductor", "critical")


def test_row_keystone_placement_galera() -> None:
    assert cells(world(svc=services(keystone_ok=False)))["catalog"] == ("Keystone UNREACHABLE", "critical")
    assert cells(world(svc=services(down_endpoints=["placement", "image"])))["catalog"] == (
        "image, placement DOWN", "critical")
    text, level = cells(world(gal=galera(quorum=False)))["galera"]
    assert level == "critical" and text.startswith("NO QUORUM: size 1/3, 0 Primary")


def test_row_unknown_when_not_configured_waiting_or_failing() -> None:
    w = world()
    stale = Observation("rabbitmq", w["rabbitmq"].snapshot, error="connection refused",
                        ok_at=NOW.timestamp() - 47, tried_at=NOW.timestamp())
    c = cells({"services": w["services"], "rabbitmq": stale}, configured={"services", "rabbitmq"})
    assert c["rabbitmq"] == ("3/3 running, no alarms, no partitions, service queues consumed · STALE 47s", "unknown")
    assert c["galera"] == ("not configured", "unknown")
    assert cells({})["galera"] == ("waiting for the first poll", "unknown")
    # old data without an error is STALE too (three intervals)
    old = replace(w["galera"], ok_at=NOW.timestamp() - 100)
    assert cells({"galera": old}, intervals={"galera": 5.0})["galera"][1] == "unknown"
    # a services poll that failed (401) keeps the last rows, marked
    failing = replace(w["services"], error="401", ok_at=NOW.timestamp() - 120)
    assert cells({"services": failing})["compute"] == ("3/3 up · STALE 2m", "unknown")


def test_one_compute_down_during_a_quorum_loss_keeps_its_own_hint() -> None:
    """Galera explains everybody's heartbeats stopping, not one compute down while the others report."""
    hints = triage_hints(world(svc=services(compute_ages={"compute-02": 90}), gal=galera(quorum=False)))
    assert [(h.kind, h.subject) for h in hints] == [("triage.galera_no_quorum", "galera"),
                                                    ("triage.compute_down", "compute-02")]
    assert not cites(hints[0], "nova.service_enabled_but_down")
