"""instance.stuck / instance.error and the five questions: pure rules, `now` injected."""

from __future__ import annotations

import dataclasses
from datetime import UTC, datetime, timedelta

import pytest

from tui.models.instances import AgentHealth, AllocationInfo, Fault, HostHealth, InstancesSnapshot, Server
from tui.rules.stuck import (
    five_questions,
    instance_error,
    instance_findings,
    instance_owner,
    instance_stuck,
    owner_cell,
    owner_of,
    with_task_since,
    worth_attention,
)
from tui.rules.task_states import DEFAULT_STUCK_SECONDS

NOW = datetime(2026, 3, 1, 12, 0, 0, tzinfo=UTC)
STUCK = dict(DEFAULT_STUCK_SECONDS)


def server(task_state: str | None = "spawning", age_s: float = 0.0, *, host: str | None = "compute-02",
           status: str = "BUILD", basis: str = "observed", **kw: object) -> Server:
    since = NOW - timedelta(seconds=age_s) if task_state else None
    return Server(id=kw.pop("id", "0123456789abcdef"), name=kw.pop("name", "web-1"), status=status,  # type: ignore[arg-type]
                  task_state=task_state, host=host, task_since=since,
                  task_since_basis=basis if task_state else None, **kw)  # type: ignore[arg-type]


def healthy(host: str = "compute-02", **kw: object) -> HostHealth:
    base: dict[str, object] = {"compute_state": "up", "compute_status": "enabled",
                               "compute_updated_at": NOW - timedelta(seconds=3)}
    base.update(kw)
    return HostHealth(host=host, **base)  # type: ignore[arg-type]


@pytest.mark.parametrize(
    ("state", "limit", "owner", "first_log", "then"),
    [
        ("scheduling", 120, "nova-scheduler", "nova-scheduler", "placement"),
        ("block_device_mapping", 180, "cinder-volume", "cinder-volume", "its storage backend"),
        ("networking", 300, "neutron-server", "neutron-server", "the L2 agent on compute-02"),
        ("spawning", 600, "nova-compute", "nova-compute on compute-02", "libvirt on compute-02"),
        ("deleting", 300, "nova-compute", "nova-compute on compute-02", "nova-conductor"),
        ("powering-off", 1800, "nova-compute", "nova-compute on compute-02", "libvirt on compute-02"),
    ],
)
def test_stuck_at_threshold_boundary_names_owner_log_and_host(state: str, limit: int, owner: str,
                                                              first_log: str, then: str) -> None:
    hosts = {"compute-02": healthy()}
    assert instance_stuck(server(state, limit), NOW, STUCK, hosts) is None, "exactly at the threshold: not yet"
    f = instance_stuck(server(state, limit + 1), NOW, STUCK, hosts)
    assert f is not None
    assert (f.kind, f.subject, f.severity, f.source) == ("instance.stuck", "0123456789abcdef", "warning", "instances")
    assert f.evidence["owner"] == owner
    assert f.evidence["threshold_s"] == limit
    assert first_log in f.evidence["first_log"] and then in f.evidence["then"]
    assert first_log in f.next_step and then in f.next_step
    assert f"stuck in {state}" in f.summary and f"owner {owner}" in f.summary
    assert f.evidence["host_problems"] == []


def test_scheduling_has_no_host_and_says_restarting_a_compute_does_not_help() -> None:
    f = instance_stuck(server("scheduling", 500, host=None), NOW, STUCK, {})
    assert f is not None
    assert f.evidence["host"] is None
    assert "no host yet" in f.summary and "restarting a compute never fixes it" in f.summary
    assert " on compute" not in f.summary
    assert "message bus" in f.next_step


def test_spawning_on_a_host_whose_compute_is_down_says_so_and_is_critical() -> None:
    hosts = {"compute-02": healthy(compute_state="down", compute_updated_at=NOW - timedelta(seconds=35))}
    f = instance_stuck(server("spawning", 700), NOW, STUCK, hosts)
    assert f is not None and f.severity == "critical"
    assert "owner nova-compute on compute-02" in f.summary
    assert "nova-compute on compute-02 is down, last heartbeat 35s ago" in f.summary
    assert f.next_step.startswith("nova-compute on compute-02 is down")
    assert f.evidence["host_problems"] == ["nova-compute on compute-02 is down, last heartbeat 35s ago"]


def test_forced_down_and_disabled_are_reported() -> None:
    hosts = {"compute-02": healthy(forced_down=True, compute_status="disabled", disabled_reason="AUTO: libvirt")}
    f = instance_stuck(server("deleting", 301), NOW, STUCK, hosts)
    assert f is not None and f.severity == "critical"
    assert "(forced down)" in f.summary and "is disabled: AUTO: libvirt" in f.summary


def test_networking_with_dead_agent_is_critical_and_points_at_the_agent() -> None:
    agent = AgentHealth(binary="neutron-openvswitch-agent", alive=False)
    hosts = {"compute-02": healthy(agents=(agent,), agents_read=True)}
    f = instance_stuck(server("networking", 301), NOW, STUCK, hosts)
    assert f is not None and f.severity == "critical"
    assert "neutron-openvswitch-agent on compute-02 is dead" in f.summary
    assert "L2 agent on compute-02 is dead" in f.next_step


def test_unknown_host_health_is_not_claimed_healthy() -> None:
    f = instance_stuck(server("spawning", 601), NOW, STUCK, {}, hosts_error="compute API: timed out")
    assert f is not None and f.severity == "warning"
    assert "health of compute-02 unknown (compute API: timed out)" in f.summary


def test_host_without_compute_service_is_flagged() -> None:
    f = instance_stuck(server("spawning", 601), NOW, STUCK, {"compute-01": healthy("compute-01")})
    assert f is not None and f.severity == "critical"
    assert "no nova-compute service is registered for compute-02" in f.summary


def test_configured_thresholds_and_default_apply() -> None:
    low = {**STUCK, "spawning": 5.0, "default": 60.0}
    assert instance_stuck(server("spawning", 6), NOW, low, {"compute-02": healthy()}) is not None
    assert instance_stuck(server("rebooting", 59), NOW, low, {"compute-02": healthy()}) is None
    assert instance_stuck(server("rebooting", 61), NOW, low, {"compute-02": healthy()}) is not None


def test_basis_is_named() -> None:
    a = instance_stuck(server("spawning", 700, basis="updated_at"), NOW, STUCK, {"compute-02": healthy()})
    b = instance_stuck(server("spawning", 700, basis="observed"), NOW, STUCK, {"compute-02": healthy()})
    assert a is not None and b is not None
    assert "since updated_at" in a.summary and a.evidence["since_basis"] == "updated_at"
    assert "first seen by stacktop" in b.summary and b.evidence["since_basis"] == "observed"


def test_no_task_state_never_stuck() -> None:
    assert instance_stuck(server(None, 0, status="ACTIVE"), NOW, STUCK, {}) is None


@pytest.mark.parametrize(
    ("state", "component"),
    [("image_uploading", "nova-compute"), ("resize_migrating", "nova-compute"), ("rebuild_spawning", "nova-compute"),
     ("rebuild_block_device_mapping", "cinder-volume"), ("soft-deleting", "nova-compute")],
)
def test_owner_table_covers_other_states(state: str, component: str) -> None:
    assert owner_of(state).component == component


# ---- instance.error ---------------------------------------------------------------------------------------
NOVALID = "No valid host was found. There are not enough hosts available."


def test_error_leads_with_the_fault_message_code_and_time() -> None:
    fault = Fault(code=500, message=NOVALID, created=NOW - timedelta(minutes=2), details="Traceback ...")
    f = instance_error(server(None, status="ERROR", host=None, fault=fault), NOW)
    assert f is not None and f.kind == "instance.error" and f.severity == "warning"
    assert f.summary.startswith("No valid host was found. There are not enough hosts available. (code 500, "
                                "2026-03-01 11:58:00Z)")
    assert "(no host recorded)" in f.summary and "nova-scheduler / placement" in f.summary
    assert "placement" in f.next_step
    assert f.evidence["fault_code"] == 500 and f.evidence["fault_details"] == "Traceback ..."


@pytest.mark.parametrize(
    ("message", "origin"),
    [("Build of instance x aborted: Failed to allocate the network(s), not rescheduling.", "neutron"),
     ("Binding failed for port abc", "neutron"),
     ("Build of instance x aborted: Volume y did not finish being created even after we waited", "cinder"),
     ("Image 1234 could not be found.", "glance")],
)
def test_error_names_the_service_the_fault_names(message: str, origin: str) -> None:
    f = instance_error(server(None, status="ERROR", fault=Fault(code=500, message=message, created=NOW)), NOW)
    assert f is not None and f.evidence["fault_origin"] == origin and f.summary.startswith(message)


def test_old_error_is_info_and_error_without_fault_says_so() -> None:
    old = Fault(code=500, message=NOVALID, created=NOW - timedelta(days=3))
    f = instance_error(server(None, status="ERROR", fault=old), NOW)
    assert f is not None and f.severity == "info"
    bare = instance_error(server(None, status="ERROR"), NOW)
    assert bare is not None and "no fault recorded" in bare.summary and "server event list" in bare.next_step
    assert instance_error(server(None, status="ACTIVE"), NOW) is None


def test_findings_over_a_snapshot() -> None:
    snap = InstancesSnapshot(
        taken_at=NOW,
        servers=(server("spawning", 700, id="a" * 32), server(None, status="ACTIVE", id="b" * 32),
                 server(None, status="ERROR", id="c" * 32, fault=Fault(500, NOVALID, NOW))),
        hosts={"compute-02": healthy()},
    )
    kinds = sorted((f.kind, f.subject[:1]) for f in instance_findings(snap, NOW, STUCK))
    assert kinds == [("instance.error", "c"), ("instance.stuck", "a")]


def test_worth_attention() -> None:
    assert worth_attention(server("spawning"))
    assert worth_attention(server(None, status="ERROR"))
    assert worth_attention(server(None, status="BUILD"))
    assert not worth_attention(server(None, status="ACTIVE"))
    assert worth_attention(server(None, status="ACTIVE", id="x"), {"x"})


# ---- five questions ---------------------------------------------------------------------------------------
def test_five_questions_for_a_server_stuck_on_a_dead_host() -> None:
    s = server("spawning", 700, hypervisor_hostname="compute-02")
    health = healthy(compute_state="down")
    allocs = (AllocationInfo("rp-2", "compute-02", {"VCPU": 1, "MEMORY_MB": 512}),)
    answers = five_questions(s, NOW, STUCK, health, allocs)
    assert [a.verdict for a in answers] == ["ok", "bad", "ok", "bad", "ok"]
    assert "owner nova-compute" in answers[1].answer
    assert "nova-compute on compute-02 is down" in answers[3].answer
    assert "compute-02" in answers[4].answer


def test_task_since_from_the_dashboard_then_nova() -> None:
    """The screen's read has no task_since: the dashboard's observation of the same phase, else nova's clock."""
    read = dataclasses.replace(server("spawning"), task_since=None, task_since_basis=None,
                               updated_at=NOW - timedelta(seconds=240), created=NOW - timedelta(seconds=600))
    seen = server("spawning", 300, basis="observed")
    assert (with_task_since(read, seen).task_since, with_task_since(read, seen).task_since_basis) == \
        (NOW - timedelta(seconds=300), "observed")
    other_phase = server("networking", 500)
    for known in (other_phase, None):
        s = with_task_since(read, known)
        assert (s.task_since, s.task_since_basis) == (NOW - timedelta(seconds=240), "updated_at")
    sched = dataclasses.replace(read, task_state="scheduling", host=None)
    assert with_task_since(sched, None).task_since_basis == "created"
    answer = five_questions(with_task_since(read, None), NOW, STUCK, healthy(), ())[1].answer
    assert answer.startswith("spawning for 4m (since 11:56:00, nova's updated_at; threshold ")
    unknown = dataclasses.replace(read, updated_at=None)
    assert "since unknown" in five_questions(with_task_since(unknown, None), NOW, STUCK, healthy(), ())[1].answer
    active = dataclasses.replace(read, task_state=None, status="ACTIVE")
    assert with_task_since(active, seen) is active


def test_five_questions_scheduling_failure() -> None:
    s = server(None, status="ERROR", host=None, fault=Fault(500, NOVALID, NOW))
    answers = five_questions(s, NOW, STUCK, None, ())
    assert answers[0].verdict == "bad" and "scheduler never succeeded" in answers[0].answer
    assert answers[2].answer.startswith("No valid host") and "nova-scheduler" in answers[2].answer
    assert answers[3].verdict == "n/a"
    assert answers[4].verdict == "ok"


def test_allocations_on_another_provider_do_not_match() -> None:
    s = server(None, status="ACTIVE", host="compute-01")
    answers = five_questions(s, NOW, STUCK, healthy("compute-01"), (AllocationInfo("rp-2", "compute-02", {}),))
    assert answers[4].verdict == "bad" and "not on compute-01" in answers[4].answer
    missing = five_questions(s, NOW, STUCK, healthy("compute-01"), ())
    assert missing[4].verdict == "bad" and "undercounts" in missing[4].answer
    unread = five_questions(s, NOW, STUCK, healthy("compute-01"), None, allocations_error="placement: 503")
    assert unread[4].verdict == "unknown"


# ---- BUILD with a host and no task_state: the cast to compute.<host> nobody picked up -------------------
def test_build_without_task_state_on_a_dead_compute_is_stuck_there() -> None:
    s = Server(id="q" * 32, name="forced", status="BUILD", task_state=None, host="compute-02",
               task_since=NOW - timedelta(seconds=121), task_since_basis="updated_at")
    assert s.phase == "build_queued" and worth_attention(s)
    hosts = {"compute-02": healthy(compute_state="down")}
    f = instance_stuck(s, NOW, STUCK, hosts)
    assert f is not None and f.severity == "critical"
    assert "stuck in BUILD with no task_state for 2m" in f.summary
    assert f.evidence["task_state"] is None and f.evidence["phase"] == "build_queued"
    assert f.evidence["threshold_s"] == 120, "a hand-off: scheduling's threshold"
    assert "compute.compute-02" in f.evidence["then"]
    assert instance_stuck(s, NOW, {**STUCK, "scheduling": 200}, hosts) is None
    answers = five_questions(s, NOW, STUCK, hosts["compute-02"], None)
    assert "BUILD with no task_state" in answers[1].answer and answers[1].verdict == "bad"


def test_request_id_is_named_in_the_next_step() -> None:
    s = dataclasses.replace(server("spawning", 700), request_id="req-1234")
    f = instance_stuck(s, NOW, STUCK, {"compute-02": healthy()})
    assert f is not None and f.next_step.endswith("(grep req-1234)") and f.evidence["request_id"] == "req-1234"
    e = instance_error(dataclasses.replace(server(None, status="ERROR", fault=Fault(500, NOVALID, NOW)),
                                           request_id="req-9"), NOW)
    assert e is not None and "(grep req-9)" in e.next_step


def test_on_an_ovn_cloud_a_networking_build_names_ovn_controller_and_the_ovn_driver() -> None:
    """ML2/OVN: the port-binding agent of a host is its chassis (`ovn-controller`), not an L2 agent."""
    dead = AgentHealth(binary="ovn-controller", agent_type="OVN Controller agent", alive=False)
    meta = AgentHealth(binary="neutron-ovn-metadata-agent", agent_type="OVN Metadata agent", alive=True)
    hosts = {"compute-02": healthy(agents=(meta, dead), agents_read=True)}
    f = instance_stuck(server("networking", 301), NOW, STUCK, hosts)
    assert f is not None and f.severity == "critical"
    assert "ovn-controller on compute-02 is dead" in f.summary
    assert f.next_step.startswith("ovn-controller on compute-02 is dead: ports cannot bind/plug"), f.next_step
    assert f.evidence["first_log"] == "neutron-server (on the controllers: its OVN mechanism driver)"
    assert f.evidence["then"] == "ovn-controller on compute-02"
    assert "L2 agent" not in f.summary + f.next_step
    alive = {"compute-02": healthy(agents=(dataclasses.replace(dead, alive=True),), agents_read=True)}
    f = instance_stuck(server("networking", 301), NOW, STUCK, alive)
    assert f is not None and f.severity == "warning" and f.evidence["then"] == "ovn-controller on compute-02"


def test_an_ovs_cloud_names_its_agent_binary() -> None:
    ovs = AgentHealth(binary="neutron-openvswitch-agent", agent_type="Open vSwitch agent", alive=True)
    hosts = {"compute-02": healthy(agents=(ovs,), agents_read=True)}
    f = instance_stuck(server("networking", 301), NOW, STUCK, hosts)
    assert f is not None and f.evidence["then"] == "neutron-openvswitch-agent on compute-02"
    assert f.evidence["first_log"] == "neutron-server (on the controllers)"


def test_a_build_the_scheduler_placed_has_one_owner_in_the_cell_the_finding_and_the_five_questions() -> None:
    """scheduling, no host recorded, placement's allocation on compute-02: nova-compute there owns it, not the
    scheduler, in the pane's owner cell, the finding and the instance screen's answers alike."""
    s = dataclasses.replace(server("scheduling", 200, host=None), cast_host="compute-02")
    dead = healthy(compute_state="down")
    assert owner_cell(s) == "nova-compute@compute-02"
    f = instance_stuck(s, NOW, STUCK, {"compute-02": dead})
    assert f is not None and "owner nova-compute on compute-02" in f.summary and f.severity == "critical"
    answers = five_questions(s, NOW, STUCK, dead, (AllocationInfo("rp-2", "compute-02", {}),))
    assert [a.verdict for a in answers] == ["ok", "bad", "ok", "bad", "ok"]
    assert "the scheduler chose compute-02" in answers[0].answer
    assert "owner nova-compute on compute-02;" in answers[1].answer and f.next_step in answers[1].answer
    assert "nova-compute on compute-02 is down" in answers[3].answer
    # the screen's own read has no cast host: it takes the source's
    read = dataclasses.replace(s, cast_host=None, task_since=None, task_since_basis=None)
    assert with_task_since(read, s).cast_host == "compute-02"
    assert owner_cell(read) == "nova-scheduler" and instance_owner(read) == instance_owner(
        dataclasses.replace(s, cast_host=None))


@pytest.mark.parametrize(("state", "owner"), [("networking", "neutron-server"),
                                              ("spawning", "nova-compute on compute-02")])
def test_the_finding_screen_names_the_owner_the_finding_and_the_pane_name(state: str, owner: str) -> None:
    """neutron-server runs on the controllers: not "neutron-server on compute-02" beside "owner neutron-server"."""
    from tui.rules.finding_detail import finding_detail

    s = server(state, 2000)
    f = instance_stuck(s, NOW, STUCK, {"compute-02": healthy()})
    assert f is not None and f"owner {owner}" in f.summary
    assert finding_detail(f).owned_by == owner
    assert owner_cell(s) == owner.replace(" on ", "@")
    assert f"owner {owner};" in five_questions(s, NOW, STUCK, healthy(), None)[1].answer
