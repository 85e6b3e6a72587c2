"""Pure control-plane liveness rules: boundaries, clock skew, countdown, per-service kinds, fleet flip."""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta

import pytest

from tui.config import Thresholds
from tui.jsonable import to_jsonable
from tui.models.services import (
    EndpointCheck,
    KeystoneCheck,
    SectionRead,
    ServiceRow,
    ServicesSnapshot,
)
from tui.rules.liveness import (
    assess,
    assess_section,
    find_fleets,
    heartbeat_age,
    row_rank,
    services_findings,
)

NOW = datetime(2026, 1, 1, 12, 0, 0, tzinfo=UTC)
TH = Thresholds(service_down_time=60, agent_down_time=75, volume_service_down_time=60, fleet_down_fraction=0.5)


def svc(host: str, binary: str = "nova-compute", age: float | None = 5, section: str = "compute",
        **kw) -> ServiceRow:
    kw.setdefault("id", f"{binary}-{host}")
    kw.setdefault("updated_at", None if age is None else NOW - timedelta(seconds=age))
    return ServiceRow(section=section, binary=binary, host=host, zone="nova", age_at_read_s=age, **kw)  # type: ignore[arg-type]


def snap(compute=(), network=(), volume=(), *, keystone_ok: bool = True, catalog=(), missing=(),
         read_at: datetime = NOW, errors: dict[str, str] | None = None) -> ServicesSnapshot:
    errors = errors or {}
    return ServicesSnapshot(
        taken_at=NOW,
        keystone=KeystoneCheck(auth_url="http://ks:5000/v3", cloud="prod", ok=keystone_ok,
                               error=None if keystone_ok else "connection refused"),
        compute=SectionRead("compute", tuple(compute), read_at, errors.get("compute")),
        network=SectionRead("network", tuple(network), read_at, errors.get("network")),
        volume=SectionRead("volume", tuple(volume), read_at, errors.get("volume")),
        catalog=tuple(catalog), missing_types=tuple(missing))


def kinds(findings) -> list[tuple[str, str, str]]:
    return sorted((f.kind, f.subject, f.severity) for f in findings)


# ------------------------------------------------------------------------------------------- assess
def test_age_exactly_at_down_time_is_still_up_and_counts_down_to_zero() -> None:
    live = assess(svc("c1", age=60), NOW, NOW, 60)
    assert not live.down, "nova: up while now - last_seen_up <= service_down_time"
    assert live.late and live.remaining_s == 0


def test_age_just_over_down_time_is_down_by_heartbeat() -> None:
    live = assess(svc("c1", age=60.5), NOW, NOW, 60)
    assert live.down and not live.late and live.remaining_s is None
    assert live.why == "no heartbeat for 1m"  # coarse (shown in the pane): changes once a minute, not per poll


def test_negative_age_from_clock_skew_is_age_zero_not_late() -> None:
    live = assess(svc("c1", age=-7), NOW, NOW, 60)
    assert live.age_s == 0 and live.skew_s == 7
    assert not live.down and not live.late and live.label == "up"


def test_negative_age_ages_normally_from_there() -> None:
    row = svc("c1", age=-7)
    assert heartbeat_age(row, NOW, NOW + timedelta(seconds=10)) == 3
    assert assess(row, NOW, NOW + timedelta(seconds=10), 60).skew_s == 0


@pytest.mark.parametrize(("age", "late", "remaining"), [
    (10, False, None), (30, False, None), (30.5, True, 29.5), (45, True, 15), (59, True, 1),
])
def test_countdown_once_the_heartbeat_is_late(age: float, late: bool, remaining: float | None) -> None:
    live = assess(svc("c1", age=age), NOW, NOW, 60)
    assert (live.late, live.remaining_s) == (late, remaining)


def test_age_extrapolates_with_the_local_clock_since_the_read() -> None:
    row = svc("c1", age=20)
    live = assess(row, NOW, NOW + timedelta(seconds=25), 60)
    assert live.age_s == 45 and live.late and live.remaining_s == 15


def test_forced_down_is_down_regardless_of_heartbeat() -> None:
    live = assess(svc("c1", age=1, forced_down=True), NOW, NOW, 60)
    assert live.down and live.why == "forced down"


def test_api_down_is_trusted_even_with_a_fresh_heartbeat() -> None:
    live = assess(svc("c1", age=2, state="down"), NOW, NOW, 60)
    assert live.down and live.why == "the API reports it down"


def test_no_timestamp_is_unknown_age_and_not_late() -> None:
    live = assess(svc("c1", age=None), NOW, NOW, 60)
    assert live.age_s is None and not live.late and not live.down


def test_stale_section_is_judged_as_of_its_read() -> None:
    read_at = NOW - timedelta(minutes=10)
    section = SectionRead("compute", (svc("c1", age=5),), read_at, error="Keystone unreachable")
    (_row, live), = assess_section(section, NOW, TH)
    assert live.age_s == 5 and not live.down


def test_rank_puts_down_then_late_first() -> None:
    up = svc("a", age=1)
    late = svc("b", age=40)
    down = svc("c", age=90)
    disabled = svc("d", age=1, status="disabled")
    ranks = {r.host: row_rank(assess(r, NOW, NOW, 60), r) for r in (up, late, down, disabled)}
    assert sorted(ranks, key=ranks.get) == ["c", "b", "d", "a"]


# --------------------------------------------------------------------------------------- nova kinds
def test_enabled_but_down_compute_is_critical_about_the_host() -> None:
    s = snap([svc("compute-01", age=3), svc("compute-02", age=61, state="down")])
    (f,) = services_findings(s, NOW, TH)
    assert (f.kind, f.subject, f.severity) == ("nova.service_enabled_but_down", "compute-02", "critical")
    assert f.evidence["heartbeat_age_s"] == 61 and f.evidence["down_time_s"] == 60
    assert "no heartbeat for 1m (down after 60 s)" in f.summary and f.source == "services"


def test_late_compute_is_a_warning_with_the_countdown() -> None:
    (f,) = services_findings(snap([svc("compute-01", age=3), svc("compute-02", age=45)]), NOW, TH)
    assert (f.kind, f.subject, f.severity) == ("nova.service_late", "compute-02", "warning")
    assert "heartbeat late (45 s old); nova calls it down in 15 s (after 60 s)" in f.summary
    assert f.evidence["down_in_s"] == 15 and f.evidence["host"] == "compute-02"


def test_a_fresh_heartbeat_has_no_finding() -> None:
    assert services_findings(snap([svc("compute-01", age=3), svc("compute-02", age=29)]), NOW, TH) == []


def test_a_row_just_past_half_the_down_time_is_late_in_the_pane_but_no_finding_yet() -> None:
    # with down = 2 x report_interval, half the down time is one interval: a report lands a little after it
    s = snap([svc("compute-01", age=3), svc("compute-02", age=30.8)])
    assert services_findings(s, NOW, TH) == []
    assert [lv.late for _, lv in assess_section(s.compute, NOW, TH)] == [False, True]
    assert kinds(services_findings(snap([svc("compute-02", age=32.5)]), NOW, TH)) == [
        ("nova.service_late", "compute-02", "warning")]


def test_many_late_of_one_binary_are_one_finding() -> None:
    rows = [svc(f"compute-{i:02d}", age=40 + i) for i in range(6)] + [svc("compute-99", age=1)]
    (f,) = services_findings(snap(rows), NOW, TH)
    assert (f.kind, f.subject, f.evidence["late"]) == ("nova.service_late", "nova-compute", 6)
    assert "6 nova-compute heartbeats are late together" in f.summary and f.evidence["down_in_s"] == 15


def test_conductor_down_alone_is_critical_service_down() -> None:
    s = snap([svc("ctl-1", "nova-conductor", age=80, state="down"), svc("compute-01", age=1)])
    (f,) = services_findings(s, NOW, TH)
    assert (f.kind, f.subject, f.severity) == ("nova.service_down", "nova-conductor@ctl-1", "critical")


def test_one_of_three_schedulers_down_is_a_warning() -> None:
    s = snap([svc(f"ctl-{i}", "nova-scheduler", age=80 if i == 1 else 2) for i in (1, 2, 3)])
    (f,) = services_findings(s, NOW, TH)
    assert (f.kind, f.severity) == ("nova.service_down", "warning")
    assert "2 other nova-scheduler still up" in f.summary


def test_forced_down_compute_is_a_warning_not_enabled_but_down() -> None:
    s = snap([svc("compute-01", age=2, forced_down=True, state="down"), svc("compute-02", age=2)])
    (f,) = services_findings(s, NOW, TH)
    assert (f.kind, f.subject, f.severity) == ("nova.service_down", "compute-01", "warning")
    assert f.evidence["forced_down"] is True


def test_disabled_service_is_info() -> None:
    s = snap([svc("compute-01", age=2, status="disabled", disabled_reason="maintenance CHG-1")])
    (f,) = services_findings(s, NOW, TH)
    assert (f.kind, f.subject, f.severity) == ("nova.service_disabled", "compute-01", "info")
    assert f.evidence["driver_disabled"] is False and "maintenance CHG-1" in f.summary


def test_auto_disabled_is_flagged_as_driver_disabled() -> None:
    reason = "AUTO: Connection to libvirt lost: 1"
    s = snap([svc("compute-01", age=2, status="disabled", disabled_reason=reason)])
    (f,) = services_findings(s, NOW, TH)
    assert f.kind == "nova.service_disabled" and f.severity == "info"
    assert f.evidence["driver_disabled"] is True
    assert "driver" in f.summary and "libvirt" in f.next_step


def test_disabled_and_down_is_one_info_finding() -> None:
    s = snap([svc("compute-01", age=500, status="disabled", state="down"), svc("compute-02", age=1)])
    (f,) = services_findings(s, NOW, TH)
    assert f.kind == "nova.service_disabled" and "and down" in f.summary


def test_unknown_cell_service_is_a_warning() -> None:
    s = snap([svc("compute-09", age=None, status="UNKNOWN", state="UNKNOWN")])
    assert kinds(services_findings(s, NOW, TH)) == [("nova.service_unknown", "compute-09", "warning")]


# --------------------------------------------------------------------------------------------- fleet
def test_both_computes_down_together_is_one_fleet_finding_naming_conductor_and_rabbitmq() -> None:
    s = snap([svc("compute-01", age=65, state="down"), svc("compute-02", age=62, state="down"),
              svc("ctl-1", "nova-scheduler", age=2)])
    findings = services_findings(s, NOW, TH)
    assert kinds(findings) == [("nova.fleet_down", "nova-compute", "critical")]
    f = findings[0]
    assert "nova-conductor" in f.next_step and "RabbitMQ" in f.next_step
    assert f.evidence["hosts"] == ["compute-01", "compute-02"] and f.evidence["spread_s"] == 3


def test_fleet_names_a_down_conductor() -> None:
    s = snap([svc("compute-01", age=65), svc("compute-02", age=62), svc("ctl-1", "nova-conductor", age=63)])
    findings = services_findings(s, NOW, TH)
    assert kinds(findings) == [("nova.fleet_down", "nova-compute", "critical"),
                               ("nova.service_down", "nova-conductor@ctl-1", "critical")]
    fleet = next(f for f in findings if f.kind == "nova.fleet_down")
    assert fleet.evidence["conductor_down_on"] == ["ctl-1"] and "nova-conductor itself is down" in fleet.summary


def test_fleet_in_progress_one_down_one_late_is_already_the_fleet() -> None:
    s = snap([svc("compute-01", age=61), svc("compute-02", age=57)])
    f, = services_findings(s, NOW, TH)
    assert f.kind == "nova.fleet_down" and f.evidence["down"] == 1 and f.evidence["late"] == 1


def test_two_late_none_down_is_not_yet_a_fleet() -> None:
    assert kinds(services_findings(snap([svc("compute-01", age=50), svc("compute-02", age=45)]), NOW, TH)) == [
        ("nova.service_late", "compute-01", "warning"), ("nova.service_late", "compute-02", "warning")]


def test_deaths_further_apart_than_the_down_time_are_separate_hosts() -> None:
    s = snap([svc("compute-01", age=3600), svc("compute-02", age=70)])
    assert kinds(services_findings(s, NOW, TH)) == [
        ("nova.service_enabled_but_down", "compute-01", "critical"),
        ("nova.service_enabled_but_down", "compute-02", "critical"),
    ]


def test_spread_exactly_one_down_time_is_still_together() -> None:
    s = snap([svc("compute-01", age=130), svc("compute-02", age=70)])
    assert kinds(services_findings(s, NOW, TH)) == [("nova.fleet_down", "nova-compute", "critical")]


@pytest.mark.parametrize(("total", "down", "fleet"), [(4, 1, False), (4, 2, True), (5, 2, False), (5, 3, True),
                                                      (1, 1, False), (10, 10, True)])
def test_fleet_needs_the_fraction_and_at_least_two(total: int, down: int, fleet: bool) -> None:
    rows = [svc(f"c{i:02d}", age=70 if i < down else 2) for i in range(total)]
    found = find_fleets(assess_section(SectionRead("compute", tuple(rows), NOW), NOW, TH), 60, 0.5)
    assert bool(found) == fleet
    kinds_found = {f.kind for f in services_findings(snap(rows), NOW, TH)}
    assert ("nova.fleet_down" in kinds_found) == fleet
    if not fleet and down:
        assert "nova.service_enabled_but_down" in kinds_found


def test_fleet_fraction_is_configurable() -> None:
    rows = [svc(f"c{i}", age=70 if i < 2 else 2) for i in range(4)]
    strict = Thresholds(fleet_down_fraction=0.75)
    assert "nova.fleet_down" not in {f.kind for f in services_findings(snap(rows), NOW, strict)}


def test_disabled_and_forced_down_services_stay_out_of_the_fleet() -> None:
    rows = [svc("c1", age=70), svc("c2", age=70, status="disabled"), svc("c3", age=70, forced_down=True),
            svc("c4", age=2)]
    found = {f.kind for f in services_findings(snap(rows), NOW, TH)}
    assert "nova.fleet_down" not in found


def test_no_false_fleet_while_keystone_is_down_and_rows_are_old() -> None:
    read_at = NOW - timedelta(minutes=30)
    s = snap([svc("compute-01", age=3), svc("compute-02", age=4)], keystone_ok=False, read_at=read_at,
             errors={"compute": "Keystone at http://ks:5000/v3 unreachable"})
    assert kinds(services_findings(s, NOW, TH)) == [("keystone.unreachable", "http://ks:5000/v3", "critical")]


# ------------------------------------------------------------------------------------ neutron, cinder
def agent(host: str, age: float, alive: bool = True, agent_type: str = "Open vSwitch agent",
          binary: str = "neutron-openvswitch-agent", **kw) -> ServiceRow:
    return svc(host, binary, age=age, section="network", state="up" if alive else "down",
               agent_type=agent_type, **kw)


def test_dead_ovs_agent_is_critical_neutron_agent_down() -> None:
    s = snap(network=[agent("compute-01", 3), agent("compute-02", 80, alive=False)])
    (f,) = services_findings(s, NOW, TH)
    assert (f.kind, f.subject, f.severity) == ("neutron.agent_down", "neutron-openvswitch-agent@compute-02",
                                               "critical")
    assert f.evidence["host"] == "compute-02" and f.evidence["down_time_s"] == 75


def test_agent_uses_agent_down_time() -> None:
    s = snap(network=[agent("compute-01", 3), agent("compute-02", 70)])
    (f,) = services_findings(s, NOW, TH)  # 70 s of 75: late, not down
    assert (f.kind, f.severity, f.evidence["down_in_s"]) == ("neutron.agent_late", "warning", 5)


def test_one_of_two_dhcp_agents_down_is_a_warning() -> None:
    s = snap(network=[agent("net-1", 90, alive=False, agent_type="DHCP agent", binary="neutron-dhcp-agent"),
                      agent("net-2", 2, agent_type="DHCP agent", binary="neutron-dhcp-agent")])
    (f,) = services_findings(s, NOW, TH)
    assert (f.kind, f.severity) == ("neutron.agent_down", "warning")


def test_admin_down_agent_is_not_reported() -> None:
    s = snap(network=[agent("compute-01", 300, alive=False, status="disabled"), agent("compute-02", 2)])
    assert services_findings(s, NOW, TH) == []


def test_all_agents_down_together_is_a_neutron_fleet() -> None:
    s = snap(network=[agent("compute-01", 80, alive=False), agent("compute-02", 78, alive=False)])
    (f,) = services_findings(s, NOW, TH)
    assert (f.kind, f.subject) == ("neutron.fleet_down", "neutron-openvswitch-agent")
    assert "RabbitMQ" in f.next_step and "neutron" in f.next_step


def test_cinder_volume_down() -> None:
    s = snap(volume=[svc("storage@lvm", "cinder-volume", age=61, section="volume", id=""),
                     svc("ctl-1", "cinder-scheduler", age=2, section="volume", id="")])
    (f,) = services_findings(s, NOW, TH)
    assert (f.kind, f.subject, f.severity) == ("cinder.service_down", "cinder-volume@storage@lvm", "critical")


def test_cinder_uses_volume_down_time() -> None:
    th = Thresholds(volume_service_down_time=120)
    s = snap(volume=[svc("storage@lvm", "cinder-volume", age=90, section="volume", id="")])
    (f,) = services_findings(s, NOW, th)  # 90 s of 120: late, not down
    assert (f.kind, f.severity, f.evidence["down_in_s"]) == ("cinder.service_late", "warning", 30)


# ---------------------------------------------------------------------------------- keystone, catalog
def test_keystone_unreachable_names_url_and_cloud() -> None:
    (f,) = services_findings(snap(keystone_ok=False), NOW, TH)
    assert (f.kind, f.severity, f.subject) == ("keystone.unreachable", "critical", "http://ks:5000/v3")
    assert "'prod'" in f.summary and "connection refused" in f.summary
    assert "--os-cloud prod" in f.next_step


def test_endpoint_unreachable_and_identity_left_to_the_keystone_finding() -> None:
    checks = [EndpointCheck("identity", "http://ks:5000/v3", ok=False, error="connection refused"),
              EndpointCheck("network", "http://neutron:9696", name="neutron", ok=False, status=503),
              EndpointCheck("compute", "http://nova:8774/v2.1", ok=True, status=200)]
    found = services_findings(snap(catalog=checks, keystone_ok=False), NOW, TH)
    assert kinds(found) == [("catalog.endpoint_unreachable", "network", "critical"),
                            ("keystone.unreachable", "http://ks:5000/v3", "critical")]
    net = next(f for f in found if f.kind == "catalog.endpoint_unreachable")
    assert "HTTP 503" in net.summary and "http://neutron:9696" in net.summary


def test_catalog_identity_endpoint_down_while_auth_url_works_is_an_endpoint_finding() -> None:
    checks = [EndpointCheck("identity", "https://public.example:5000/v3", ok=False, error="timed out")]
    assert kinds(services_findings(snap(catalog=checks), NOW, TH)) == [
        ("catalog.endpoint_unreachable", "identity", "critical")]


def test_missing_service_type_is_a_warning() -> None:
    assert kinds(services_findings(snap(missing=["placement"]), NOW, TH)) == [
        ("catalog.service_missing", "placement", "warning")]


def test_read_failure_reported_unless_keystone_or_the_endpoint_explains_it() -> None:
    err = {"network": "GET http://neutron:9696/v2.0/agents: 403 Forbidden"}
    assert kinds(services_findings(snap(errors=err), NOW, TH)) == [("services.read_failed", "network", "warning")]
    down = [EndpointCheck("network", "http://neutron:9696", ok=False, error="connection refused")]
    assert [f.kind for f in services_findings(snap(errors=err, catalog=down), NOW, TH)] == [
        "catalog.endpoint_unreachable"]


def test_snapshot_and_findings_are_json_able() -> None:
    s = snap([svc("compute-02", age=70)], catalog=[EndpointCheck("compute", "http://nova:8774", status=200)])
    data = json.loads(json.dumps(to_jsonable(s)))
    assert data["compute"]["rows"][0]["host"] == "compute-02"
    assert data["compute"]["rows"][0]["age_at_read_s"] == 70
    json.dumps([f.to_dict() for f in services_findings(s, NOW, TH)])


# ------------------------------------------------------------------------ one judgement per section and moment
def test_a_section_is_judged_at_each_moment_and_findings_reuse_the_polls_verdicts(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """assess_section keeps nothing between calls (a later moment turns a stopped heartbeat down, another down
    time judges apart); the runner judges a poll once and services_findings reuses those verdicts."""
    from tui.rules import liveness

    calls = []
    real = liveness.assess
    monkeypatch.setattr(liveness, "assess", lambda *a, **kw: calls.append(a) or real(*a, **kw))
    s = snap(compute=[svc("c1", age=10), svc("c2", age=40)])
    first = assess_section(s.compute, NOW, TH)
    assert [live.label for _, live in first] == ["up", "late"] and len(calls) == 2
    later = assess_section(s.compute, NOW + timedelta(seconds=30), TH)
    assert [live.label for _, live in later] == ["late", "down"] and len(calls) == 4
    stricter = assess_section(s.compute, NOW, Thresholds(service_down_time=30))
    assert [live.label for _, live in stricter] == ["up", "down"] and len(calls) == 6
    findings = services_findings(s, NOW, TH, {"compute": first})
    assert len(calls) == 6, "the poll's verdicts, handed in, are not judged again"
    assert kinds(findings) == kinds(services_findings(s, NOW, TH))


def test_judging_the_same_poll_elsewhere_returns_a_list_of_its_own() -> None:
    s = snap(compute=[svc("c1", age=10)])
    first = assess_section(s.compute, NOW, TH)
    first.clear()
    assert len(assess_section(s.compute, NOW, TH)) == 1, "a caller changing its list does not change another call's"


# ------------------------------------------------------------------------------------------- ML2/OVN
def ovn_agents(host: str, *, controller: float = 3, controller_alive: bool = True, follower: float = 3,
               follower_alive: bool = True, metadata: bool = False) -> list[ServiceRow]:
    """A chassis as neutron's OVN driver lists it: its ovn-controller and its OVN Neutron (or Metadata) agent."""
    binary, agent_type = (("neutron-ovn-metadata-agent", "OVN Metadata agent") if metadata
                          else ("neutron-ovn-agent", "OVN Neutron agent"))
    return [agent(host, controller, controller_alive, "OVN Controller agent", "ovn-controller"),
            agent(host, follower, follower_alive, agent_type, binary)]


def test_dead_ovn_controller_is_one_finding_naming_the_controller_as_the_cause() -> None:
    s = snap(network=[*ovn_agents("compute-01", metadata=True),
                      *ovn_agents("compute-02", controller=80, controller_alive=False, follower=4,
                                  follower_alive=False)])
    (f,) = services_findings(s, NOW, TH)
    assert (f.kind, f.subject, f.severity) == ("neutron.agent_down", "ovn-controller@compute-02", "critical")
    assert f.summary.startswith("ovn-controller on compute-02 is down")
    assert "the cause is ovn-controller" in f.summary and "OVN Neutron agent" in f.summary
    assert f.evidence["follow_the_controller"] == ["neutron-ovn-agent"]
    assert "southbound" in f.next_step and "RabbitMQ" in f.next_step  # "not over RabbitMQ"
    assert "L2 agent" not in f.summary + f.next_step


def test_dead_ovn_metadata_agent_alone_is_its_own_finding_not_a_wiring_one() -> None:
    s = snap(network=[*ovn_agents("compute-01", follower=80, follower_alive=False, metadata=True),
                      *ovn_agents("compute-02")])
    (f,) = services_findings(s, NOW, TH)
    assert f.subject == "neutron-ovn-metadata-agent@compute-01"
    assert "metadata" in f.summary and "cannot be wired" not in f.summary
    assert "follow_the_controller" not in f.evidence


def test_dead_ovn_controller_with_its_follower_still_alive_is_the_plain_agent_finding() -> None:
    s = snap(network=[*ovn_agents("compute-01"), *ovn_agents("compute-02", controller=80, controller_alive=False)])
    (f,) = services_findings(s, NOW, TH)
    assert f.subject == "ovn-controller@compute-02" and "cannot be wired" in f.summary
    assert "follow_the_controller" not in f.evidence


def test_all_ovn_controllers_down_is_one_fleet_pointing_at_the_southbound_not_rabbitmq() -> None:
    s = snap(network=[*ovn_agents("compute-01", controller=80, controller_alive=False, follower=5,
                                  follower_alive=False, metadata=True),
                      *ovn_agents("compute-02", controller=78, controller_alive=False, follower=5,
                                  follower_alive=False)])
    (f,) = services_findings(s, NOW, TH)
    assert (f.kind, f.subject) == ("neutron.fleet_down", "ovn-controller")
    assert "southbound" in f.next_step and "q-reports-plugin" not in f.next_step
    assert f.evidence["follow_the_controller"] == ["neutron-ovn-agent", "neutron-ovn-metadata-agent"]


def test_an_old_ovn_heartbeat_is_normal_while_neutron_says_alive() -> None:
    """The OVN agents' heartbeat only moves when neutron bumps nb_cfg: its age is no verdict, and no countdown."""
    s = snap(network=[*ovn_agents("compute-01", controller=300, follower=200, metadata=True),
                      *ovn_agents("compute-02", controller=15, follower=15)])
    assert services_findings(s, NOW, TH) == []
    (row, _), = [(r, lv) for r, lv in assess_section(s.network, NOW, TH) if r.host == "compute-01"
                 and r.binary == "ovn-controller"]
    live = assess(row, NOW, NOW, 75)
    assert (live.down, live.late, live.age_s) == (False, False, 300)


def test_a_dead_ovn_agent_says_neutron_reports_it_dead_and_its_last_heartbeat() -> None:
    s = snap(network=[*ovn_agents("compute-01"), *ovn_agents("compute-02", controller=12, controller_alive=False)])
    (f,) = services_findings(s, NOW, TH)
    assert "neutron reports it dead" in f.summary and "last heartbeat <1m ago" in f.summary
