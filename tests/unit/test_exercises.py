"""The exercises' pure bookkeeping: boot trace steps and owners, compute-down lag arithmetic, request trace
timeline and missing services."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from tui.exercises.boot_trace import BootTrace
from tui.exercises.down_lag import DownLag, ServiceSample
from tui.exercises.request_trace import RequestTrace, parse_log_time, path_slot
from tui.models.instances import ActionEvent, Fault, InstanceAction, Server

T0 = 1_800_000_000.0


def srv(status: str, task: str | None, host: str | None = None, fault: Fault | None = None) -> Server:
    return Server(id="11111111-2222-3333-4444-555555555555", name="vm", status=status, task_state=task, host=host,
                  fault=fault, created=datetime.fromtimestamp(T0 - 1, UTC))


def test_boot_trace_steps_durations_owners() -> None:
    tr = BootTrace(interval=0.5)
    polls = [(0.0, srv("BUILD", "scheduling")), (0.5, srv("BUILD", "scheduling")),
             (1.0, srv("BUILD", None, "compute-02")), (1.5, srv("BUILD", "networking", "compute-02")),
             (2.0, srv("BUILD", "spawning", "compute-02")), (4.0, srv("BUILD", "spawning", "compute-02")),
             (5.0, srv("ACTIVE", None, "compute-02"))]
    for t, s in polls:
        tr.observe(s, T0 + t)
    assert tr.done and tr.outcome == "ACTIVE"
    assert tr.sequence() == ["scheduling", "BUILD (no task_state)", "networking", "spawning", "ACTIVE"]
    assert [s.duration for s in tr.steps] == [1.0, 0.5, 0.5, 3.0, None]
    assert [(s.owner, s.owner_host) for s in tr.steps] == [
        ("nova-scheduler", None), ("nova-compute", "compute-02"), ("neutron-server", None),
        ("nova-compute", "compute-02"), ("(none: settled)", None)]
    assert tr.total_s == 5.0 and tr.host == "compute-02"
    result = tr.result()
    assert result.name == "boot-trace" and "polled every 0.5 s" in result.summary
    assert "| 4 | spawning |" in result.markdown and "nova-scheduler" in result.markdown
    tr.observe(srv("BUILD", "deleting"), T0 + 9)  # ignored once done
    assert len(tr.steps) == 5


def test_boot_trace_error_keeps_fault_and_missed_state_from_events() -> None:
    tr = BootTrace(interval=0.5)
    tr.observe(srv("BUILD", None), T0)
    tr.observe(srv("ERROR", None, fault=Fault(code=500, message="No valid host was found. ")), T0 + 1)
    start = datetime.fromtimestamp(T0, UTC)
    tr.add_events("req-x", (ActionEvent("conductor_schedule_and_build_instances", start,
                                        start + timedelta(seconds=0.4), "Error"),))
    assert tr.outcome == "ERROR" and tr.fault is not None
    assert tr.missed() == ["scheduling"]
    md = tr.markdown()
    assert "No valid host was found." in md and "names nova-scheduler" in md
    assert "`scheduling` was not seen" in md and "conductor_schedule_and_build_instances" in md


def test_boot_first_seen_past_scheduling_records_it_inferred_from_created() -> None:
    """A fast scheduler ends `scheduling` before the first poll (seen in CI: the first poll saw BUILD with no
    task_state). nova-api creates every server in scheduling, so the trace records it from nova's created to
    that poll, flagged inferred, its duration an upper bound."""
    tr = BootTrace(interval=0.25, started_at=T0 - 1.5)
    tr.observe(srv("BUILD", None, "compute-02"), T0 + 0.5)
    tr.observe(srv("BUILD", "spawning", "compute-02"), T0 + 1.0)
    tr.observe(srv("ACTIVE", None, "compute-02"), T0 + 4.0)
    assert tr.sequence() == ["scheduling", "BUILD (no task_state)", "spawning", "ACTIVE"]
    first = tr.steps[0]
    assert first.inferred and first.polls == 0 and (first.owner, first.owner_host) == ("nova-scheduler", None)
    assert first.first_seen == T0 - 1 and first.duration == 1.5  # created .. the first poll
    assert not any(s.inferred for s in tr.steps[1:])
    assert tr.total_s == 3.5, "the total still runs from the first poll"
    assert tr.missed() == ["scheduling"]
    md = tr.markdown()
    assert "| 1 | scheduling (inferred) |" in md and "<= 1.5" in md
    assert "`scheduling` was not seen by any poll: nova-api creates every server in it" in md
    assert "scheduling <=1.5s (inferred)" in tr.summary()
    assert tr.result().data["steps"][0]["inferred"] is True


def test_boot_no_inference_when_scheduling_was_polled_settled_or_older() -> None:
    seen = BootTrace(interval=0.25, started_at=T0 - 2)
    seen.observe(srv("BUILD", "scheduling"), T0)
    assert [s.inferred for s in seen.steps] == [False]
    settled = BootTrace(interval=0.25, started_at=T0 - 2)
    settled.observe(srv("ACTIVE", None, "compute-02"), T0)
    assert settled.sequence() == ["ACTIVE"]
    older = BootTrace(interval=0.25, started_at=T0 + 60)  # picked up a minute after its creation
    older.observe(srv("BUILD", "spawning", "compute-02"), T0 + 61)
    assert older.sequence() == ["spawning"]


def beat(at: float, hb: float, state: str = "up") -> ServiceSample:
    return ServiceSample(at=T0 + at, state=state, updated_at=T0 + hb, api_date=float(int(T0 + at)))


def test_down_lag_from_last_heartbeat_and_timers() -> None:
    lag = DownLag(host="compute-02", service_down_time=20, interval=1.0)
    for t in range(0, 12):  # heartbeats every 5 s until 10, then the service dies
        lag.observe(beat(t, 5 * (t // 5)))
    for t in range(12, 31):
        lag.observe(beat(t, 10, "down" if t >= 31 else "up"))
    lag.observe(beat(31, 10, "down"))
    lag.observe(beat(32, 10, "down"))
    assert lag.last_heartbeat == T0 + 10 and lag.report_interval == 5.0
    assert lag.first_down_poll == T0 + 31 and lag.last_up_poll == T0 + 30
    assert lag.lag_s == 21.0 and lag.failure_at[1] == "last heartbeat"
    assert lag.predicted_flip == T0 + 30 and lag.timers_consistent() is True
    result = lag.result()
    assert "service_down_time 20 s" in result.summary and "report_interval ~5 s" in result.summary
    assert "**Lag: 21.0 s**" in result.markdown
    assert result.data["lag_from_heartbeat_s"] == 21.0


def test_down_lag_operator_mark_and_mismatched_timer() -> None:
    lag = DownLag(host="compute-02", service_down_time=60, interval=1.0)
    lag.observe(beat(0, 0))
    lag.observe(beat(5, 5))
    lag.mark(T0 + 7)
    lag.observe(beat(20, 5))
    lag.observe(beat(26, 5, "down"))  # nova flipped after ~20 s: its service_down_time is not 60
    assert lag.failure_at == (T0 + 7, "operator's mark") and lag.lag_s == 19.0
    assert lag.lag_from_heartbeat_s == 21.0
    assert lag.timers_consistent() is False
    assert "does not match service_down_time = 60" in lag.markdown()


def test_down_lag_follows_servers_on_the_host() -> None:
    lag = DownLag(host="compute-02", service_down_time=20, interval=1.0)
    lag.observe(beat(0, 0, "down"))
    assert lag.down_at_start and lag.lag_s is None
    lag.observe_server(srv("BUILD", "scheduling"), T0 + 1)
    lag.observe_server(srv("BUILD", None, "compute-02"), T0 + 2)
    lag.observe_server(srv("BUILD", None, "compute-02"), T0 + 30)
    lag.observe_server(srv("ERROR", None, "compute-02", Fault(500, "Build of instance aborted")), T0 + 31)
    trace = next(iter(lag.servers.values()))
    assert lag.stopped_in(trace) == "BUILD (no task_state)" and trace.outcome == "ERROR"
    md = lag.markdown()
    assert "already down" in md and "Build of instance aborted" in md


def test_log_times_and_slots() -> None:
    oslo = parse_log_time("2026-12-02 11:22:55.570 30954 INFO nova.api [None req-1] x", UTC)
    assert oslo == datetime(2026, 12, 2, 11, 22, 55, 570000, tzinfo=UTC)
    apache = parse_log_time('127.0.0.1 - - [02/Dec/2026:11:23:31 +0100] "GET /v2.1/os-services HTTP/1.1" 200')
    assert apache == datetime(2026, 12, 2, 10, 23, 31, tzinfo=UTC)
    assert parse_log_time("no time here") is None
    assert [path_slot(s) for s in ("nova-compute-02", "nova_api", "neutron-server", "placement-api", "glance-api",
                                   "cinder-volume", "memcached")] == [
        "nova-compute", "nova-api", "neutron", "placement", "glance", "cinder", "memcached"]


def test_request_trace_timeline_and_missing() -> None:
    rid = "req-7ed12662-4c3e-4cef-8aa9-17daf9f683a2"
    inst = "ff574854-d9c4-4e22-be82-a430787990be"
    tr = RequestTrace(request_id=rid, instance_id=None)
    tr.add_lines("nova-api", "nova-api.log", [
        f'2026-12-02 11:22:55.570 1 INFO nova.api.openstack.requestlog [None {rid} u p] "POST /v2.1/servers"',
        "2026-12-02 11:22:55.600 1 INFO unrelated"], UTC)
    tr.add_lines("nova-scheduler", "nova-scheduler.log",
                 [f"2026-12-02 11:22:56.022 1 INFO nova.scheduler [None {rid}] forcing compute-02"], UTC)
    tr.add_lines("placement", "placement.log", [f"2026-12-02 11:22:56.013 1 INFO placement [{rid} req-2] GET"], UTC)
    tr.add_lines("nova-compute", "nova-compute-02.log",
                 [f"2026-12-02 11:22:56.326 1 INFO nova.compute.claims [None {rid}] [instance: {inst}] Claim",
                  f"2026-12-02 11:22:59.900 1 INFO nova.compute.manager [None {rid}] [instance: {inst}] Took 3 s"],
                 UTC)
    tr.add_lines("glance", "glance.log", [], UTC)
    start = datetime(2026, 12, 2, 11, 22, 55, 900000, tzinfo=UTC)
    tr.action = InstanceAction("create", rid, start_time=datetime(2026, 12, 2, 11, 22, 55, tzinfo=UTC), events=(
        ActionEvent("conductor_schedule_and_build_instances", start, start + timedelta(seconds=0.3), "Success"),))
    rows = tr.timeline()
    assert [r.service for r in rows] == ["nova-api", "nova-conductor", "placement", "nova-scheduler",
                                         "nova-compute"]
    assert rows[0].stage_s == 0.9 and rows[-1].stage_s == rows[-1].span_s
    assert "nova event conductor_schedule_and_build_instances" in rows[1].evidence
    assert tr.missing() == ["keystone", "glance", "neutron", "cinder"]
    assert "neutron" in tr.unsearched() and "glance" not in tr.unsearched()
    md = tr.markdown()
    assert "**glance**: serves the image" in md
    assert "**neutron**: creates and binds the port, wires the network - no log source configured" in md
    # a line naming only the instance, far outside the request's window, is not part of it
    tr.instance_id = inst
    tr.add_lines("nova-compute", "nova-compute-02.log",
                 [f"2026-12-02 13:00:00.000 1 INFO nova.compute.manager [instance: {inst}] Rebooting"], UTC)
    assert [r.entries for r in tr.timeline() if r.service == "nova-compute"] == [2]


def test_down_lag_reports_when_the_dashboard_saw_it() -> None:
    lag = DownLag(host="compute-02", service_down_time=20, interval=1.0)
    lag.observe(beat(0, 0))
    lag.observe(beat(21, 0, "down"))
    lag.dashboard_saw(T0 + 24, "nova.service_enabled_but_down")
    lag.dashboard_saw(T0 + 30, "nova.service_down")  # only the first counts
    md = lag.markdown()
    assert "dashboard raised nova.service_enabled_but_down" in md and "+24.0 s" in md
    assert lag.result().data["dashboard_finding"] == "nova.service_enabled_but_down"


def test_down_lag_reports_when_stacktop_named_it_beside_the_api() -> None:
    lag = DownLag(host="compute-02", service_down_time=20, interval=1.0)
    lag.mark(T0)
    lag.observe(ServiceSample(at=T0 + 1, state="up", updated_at=T0 - 2))
    lag.dashboard_named(T0 + 3, "rabbitmq.consumer_lost")
    lag.dashboard_named(T0 + 9, "nova.service_late")  # only the first counts
    lag.observe(ServiceSample(at=T0 + 19, state="down", updated_at=T0 - 2))
    result = lag.result()
    assert result.data["named_by"] == "rabbitmq.consumer_lost" and result.data["named_lag_s"] == 3.0
    assert "stacktop named it 3.0 s after the operator's mark (rabbitmq.consumer_lost)" in result.summary
    assert "the API reported down 19.0 s after" in result.summary
    assert "stacktop named the process (rabbitmq.consumer_lost)" in result.markdown and "+3.0 s" in result.markdown
