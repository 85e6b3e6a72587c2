"""Early warning: a service queue that lost its consumer, a late heartbeat, and the two told together.

The history (apply_consumer_history) is advanced poll by poll as the collector does; the findings come from the
real rules (rabbitmq_findings, services_findings) and the hint from triage_hints over them."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest

from tui.models.rabbitmq import QueueInfo, RabbitSnapshot
from tui.rules.consumers import ConsumerHistory, apply_consumer_history, consumer_lost_findings
from tui.rules.liveness import services_findings
from tui.rules.queues import rabbitmq_findings
from tui.rules.triage import lost_service_cause, triage_hints

from .test_triage_rules import COMPUTES, NOW, TH, instances, obs, services

T0 = datetime(2026, 3, 1, 11, 59, 0, tzinfo=UTC)


def q(name: str, consumers: int | None, messages: int = 0, **kw: object) -> QueueInfo:
    return QueueInfo("/", name, messages=messages, consumers=consumers, **kw)  # type: ignore[arg-type]


def polls(*consumer_counts: int | None, name: str = "compute.compute-02", every_s: float = 5.0
          ) -> list[QueueInfo]:
    """The queue as each poll judged it, after the collector's history."""
    history: ConsumerHistory = {}
    out = []
    for i, n in enumerate(consumer_counts):
        history, (judged,) = apply_consumer_history(history, [q(name, n)], T0 + timedelta(seconds=i * every_s))
        out.append(judged)
    return out


# ------------------------------------------------------------------------------------------------ the history
def test_a_consumer_that_drops_to_zero_is_lost_since_the_first_poll_without_it() -> None:
    seen = polls(1, 1, 0, 0)
    assert [p.consumer_lost_since for p in seen] == [None, None, T0 + timedelta(seconds=10),
                                                     T0 + timedelta(seconds=10)]


def test_a_queue_never_consumed_is_not_lost() -> None:
    assert [p.consumer_lost_since for p in polls(0, 0, 0)] == [None, None, None]


def test_a_consumer_back_clears_it_and_unknown_counts_keep_the_state() -> None:
    seen = polls(1, 0, None, 1)
    assert [p.consumer_lost_since is not None for p in seen] == [False, True, True, False]


def test_a_live_amqp_answer_wins_over_the_management_count() -> None:
    history: ConsumerHistory = {}
    history, _ = apply_consumer_history(history, [q("compute.compute-02", 1)], T0)
    # the management API still says 1 (its statistics tick is 5 s), the passive declare says 0
    _, (judged,) = apply_consumer_history(history, [q("compute.compute-02", 1, live_consumers=0, live_messages=0)],
                                          T0 + timedelta(seconds=5))
    assert judged.consumer_lost_since == T0 + timedelta(seconds=5)


def test_only_service_topic_queues_are_watched() -> None:
    history: ConsumerHistory = {}
    for i, n in enumerate((1, 0)):
        history, judged = apply_consumer_history(history, [q("reply_0123456789ab", n), q("notifications.info", n)],
                                                 T0 + timedelta(seconds=5 * i))
    assert all(j.consumer_lost_since is None for j in judged)


# ------------------------------------------------------------------------------------------------ the finding
def lost_at(seconds_ago: float, name: str = "compute.compute-02") -> QueueInfo:
    return q(name, 0, consumer_lost_since=NOW - timedelta(seconds=seconds_ago))


def test_lost_is_told_at_once_naming_process_and_host_as_info_within_the_grace() -> None:
    (f,) = consumer_lost_findings([lost_at(2)], NOW, grace_s=5)
    assert (f.kind, f.severity, f.subject) == ("rabbitmq.consumer_lost", "info", "compute.compute-02")
    assert f.summary.startswith("nova-compute on compute-02 stopped consuming compute.compute-02 2 s ago: process "
                                "gone or cut off from the bus")
    assert f.evidence["service"] == "nova-compute" and f.evidence["host"] == "compute-02"


def test_still_lost_after_the_grace_is_critical() -> None:
    (f,) = consumer_lost_findings([lost_at(6)], NOW, grace_s=5)
    assert f.severity == "critical" and "watching" not in f.summary


@pytest.mark.parametrize(("name", "service", "where"), [
    ("conductor.ctl-1", "nova-conductor", "ctl-1"), ("scheduler.ctl-1", "nova-scheduler", "ctl-1"),
    ("cinder-volume.ctl-1@lvm", "cinder-volume", "ctl-1@lvm"), ("dhcp_agent.net-1", "neutron-dhcp-agent", "net-1"),
])
def test_every_service_names_its_process_and_host(name: str, service: str, where: str) -> None:
    (f,) = consumer_lost_findings([lost_at(30, name)], NOW, grace_s=5)
    assert f.summary.startswith(f"{service} on {where} stopped consuming {name}")


def test_a_shared_topic_with_no_consumer_left_names_the_service() -> None:
    (f,) = consumer_lost_findings([lost_at(30, "conductor")], NOW, grace_s=5)
    assert f.summary.startswith("no nova-conductor consumes its shared topic conductor") and f.severity == "critical"


def test_a_rolling_restart_is_one_grouped_finding() -> None:
    queues = [lost_at(1 + i, f"compute.compute-{i:02d}") for i in range(8)]
    (f,) = consumer_lost_findings(queues, NOW, grace_s=10)
    assert (f.kind, f.severity, f.evidence["count"]) == ("rabbitmq.consumers_lost", "info", 8)
    assert f.evidence["hosts"][:2] == ["compute-00", "compute-01"] and "within the restart grace" in f.summary


def test_a_lost_queue_holding_messages_is_told_once_by_its_backlog_finding() -> None:
    held = q("compute.compute-02", 0, messages=3, stuck_polls=3, stuck_since=NOW - timedelta(seconds=20),
             consumer_lost_since=NOW - timedelta(seconds=20))
    snap = RabbitSnapshot("http://rmq:15672", NOW, queues=(held,))
    (f,) = rabbitmq_findings(snap, NOW, consumer_grace_s=5)
    assert f.kind == "rabbitmq.queue_no_consumer" and f.evidence["consumer_lost_since"] == held.consumer_lost_since


# ------------------------------------------------------------------------------------------- the cause matrix
@pytest.mark.parametrize(("consumer", "heartbeat", "says"), [
    ("gone", "late", "the process died or lost the bus"),
    ("gone", "down", "the process died or lost the bus"),
    ("present", "late", "it runs but cannot report"),
    ("present", "down", "it runs but cannot report"),
    ("gone", "fresh", "it lost its queue only"),
    ("gone", "unknown", "gone or cut off from the bus"),
    ("unknown", "late", "its heartbeat stopped"),
    ("leaving", "late", "restarting?"),
    ("leaving", "fresh", "a restart?"),
    ("restarted", "late", "restarting: a new process consumes its queue again"),
    ("restarted", "down", "has not reported since"),
])
def test_cause_matrix(consumer: str, heartbeat: str, says: str) -> None:
    cause = lost_service_cause(consumer, heartbeat)
    assert cause is not None and says in cause


@pytest.mark.parametrize(("consumer", "heartbeat"), [("present", "fresh"), ("unknown", "fresh"),
                                                     ("present", "unknown"), ("unknown", "unknown")])
def test_nothing_wrong_is_no_cause(consumer: str, heartbeat: str) -> None:
    assert lost_service_cause(consumer, heartbeat) is None


# ----------------------------------------------------------------------------------- the two signals merged
def observations(compute_02_age: float, compute_02_consumers: int, lost_s: float | None) -> dict:
    svc = services(compute_ages={"compute-02": compute_02_age})
    queues = [q(f"compute.{h}", 1) for h in COMPUTES if h != "compute-02"]
    queues.append(q("compute.compute-02", compute_02_consumers,
                    consumer_lost_since=None if lost_s is None else NOW - timedelta(seconds=lost_s)))
    rmq = RabbitSnapshot("http://rmq:15672", NOW, queues=tuple(queues))
    return {"services": obs("services", svc, services_findings(svc, NOW, TH)),
            "rabbitmq": obs("rabbitmq", rmq, rabbitmq_findings(rmq, NOW, consumer_grace_s=5)),
            "instances": obs("instances", instances(), [])}


def hint(world: dict):
    hints = [h for h in triage_hints(world) if h.kind == "triage.service_lost"]
    assert len(hints) == 1, [(h.kind, h.subject) for h in triage_hints(world)]
    return hints[0]


def test_consumer_gone_and_heartbeat_late_is_one_finding_telling_both() -> None:
    h = hint(observations(compute_02_age=40, compute_02_consumers=0, lost_s=30))
    assert (h.subject, h.severity, h.evidence["consumer"], h.evidence["heartbeat"]) == (
        "nova-compute@compute-02", "critical", "gone", "late")
    assert "the process died or lost the bus" in h.summary and "heartbeat late" in h.summary
    assert "stopped consuming compute.compute-02" in h.summary
    assert ("rabbitmq.consumer_lost", "compute.compute-02") in h.evidence["derived_from"]
    assert ("nova.service_late", "compute-02") in h.evidence["derived_from"]


def test_consumer_present_and_heartbeat_late_follows_the_dependency() -> None:
    h = hint(observations(compute_02_age=40, compute_02_consumers=1, lost_s=None))
    assert (h.evidence["consumer"], h.evidence["heartbeat"], h.severity) == ("present", "late", "warning")
    assert "it runs but cannot report" in h.summary and "nova-conductor" in h.summary


def test_consumer_gone_heartbeat_fresh_within_grace_is_a_restart_info_at_most() -> None:
    world = observations(compute_02_age=2, compute_02_consumers=0, lost_s=2)
    h = hint(world)
    assert (h.evidence["consumer"], h.evidence["heartbeat"], h.severity) == ("leaving", "fresh", "info")
    every = [f for o in world.values() for f in o.findings] + triage_hints(world)
    assert all(f.severity == "info" for f in every), [(f.kind, f.severity) for f in every]


def test_a_healthy_cloud_has_no_such_hint() -> None:
    world = observations(compute_02_age=2, compute_02_consumers=1, lost_s=None)
    assert [h for h in triage_hints(world) if h.kind == "triage.service_lost"] == []



# ------------------------------------------------------------------------------------------------- restarts
def test_a_consumer_connection_replaced_between_two_polls_is_a_restart() -> None:
    key = ("/", "compute.compute-02")
    history: ConsumerHistory = {}
    t1, t2 = T0 + timedelta(seconds=5), T0 + timedelta(seconds=10)
    history, _ = apply_consumer_history(history, [q("compute.compute-02", 1)], T0, {key: frozenset({"c:1"})})
    history, (same,) = apply_consumer_history(history, [q("compute.compute-02", 1)], t1, {key: frozenset({"c:1"})})
    _, (new,) = apply_consumer_history(history, [q("compute.compute-02", 1)], t2, {key: frozenset({"c:2"})})
    assert same.consumer_restarted_at is None and new.consumer_restarted_at == t2
    assert new.consumer_lost_since is None


def test_a_consumer_back_after_none_is_a_restart_and_unlisted_polls_keep_the_connections() -> None:
    key = ("/", "compute.compute-02")
    history: ConsumerHistory = {}
    history, _ = apply_consumer_history(history, [q("compute.compute-02", 1)], T0, {key: frozenset({"c:1"})})
    history, _ = apply_consumer_history(history, [q("compute.compute-02", 1)], T0 + timedelta(seconds=5), None)
    assert history[key].conns == frozenset({"c:1"})
    history, _ = apply_consumer_history(history, [q("compute.compute-02", 0)], T0 + timedelta(seconds=10))
    _, (back,) = apply_consumer_history(history, [q("compute.compute-02", 1)], T0 + timedelta(seconds=15))
    assert back.consumer_restarted_at == T0 + timedelta(seconds=15) and back.consumer_lost_since is None


def restarted_world(compute_02_age: float, restarted_s_ago: float) -> dict:
    svc = services(compute_ages={"compute-02": compute_02_age})
    queues = [q(f"compute.{h}", 1) for h in COMPUTES if h != "compute-02"]
    queues.append(q("compute.compute-02", 1, consumer_restarted_at=NOW - timedelta(seconds=restarted_s_ago)))
    rmq = RabbitSnapshot("http://rmq:15672", NOW, queues=tuple(queues))
    return {"services": obs("services", svc, services_findings(svc, NOW, TH)),
            "rabbitmq": obs("rabbitmq", rmq, rabbitmq_findings(rmq, NOW, consumer_grace_s=5)),
            "instances": obs("instances", instances(), [])}


def test_a_restart_s_late_heartbeat_is_one_info_instead_of_a_warning() -> None:
    from tui.snapshot import all_findings

    world = restarted_world(compute_02_age=40, restarted_s_ago=8)
    h = hint(world)
    assert (h.severity, h.evidence["consumer"], h.evidence["heartbeat"]) == ("info", "restarted", "late")
    assert "restarting" in h.summary
    shown = all_findings(list(world.values()))
    assert [(f.kind, f.severity) for f in shown if f.evidence.get("host") == "compute-02"] == [
        ("triage.service_lost", "info")]


def test_a_restarted_process_that_never_reports_is_not_absorbed() -> None:
    world = restarted_world(compute_02_age=70, restarted_s_ago=30)
    h = next(f for f in triage_hints(world) if f.evidence.get("host") == "compute-02")
    assert h.severity == "critical"


def test_a_restart_long_ago_is_not_an_excuse_for_a_late_heartbeat() -> None:
    h = hint(restarted_world(compute_02_age=40, restarted_s_ago=600))
    assert (h.severity, h.evidence["consumer"]) == ("warning", "present")


def test_a_consumer_leaving_within_the_grace_with_a_late_heartbeat_is_one_info() -> None:
    from tui.snapshot import all_findings

    world = observations(compute_02_age=40, compute_02_consumers=0, lost_s=3)
    h = hint(world)
    assert (h.evidence["consumer"], h.evidence["heartbeat"], h.severity) == ("leaving", "late", "info")
    shown = all_findings(list(world.values()))
    assert all(f.severity == "info" for f in shown if f.evidence.get("host") == "compute-02"), shown


def test_past_the_grace_the_same_is_critical() -> None:
    h = hint(observations(compute_02_age=40, compute_02_consumers=0, lost_s=6))
    assert (h.evidence["consumer"], h.severity) == ("gone", "critical")


def test_a_consumer_missing_from_a_lagging_listing_keeps_its_connection_until_a_new_one_shows() -> None:
    key = ("/", "compute.compute-02")
    history: ConsumerHistory = {}
    ts = [T0 + timedelta(seconds=5 * i) for i in range(3)]
    history, _ = apply_consumer_history(history, [q("compute.compute-02", 1)], ts[0], {key: frozenset({"c:1"})})
    history, (lag,) = apply_consumer_history(history, [q("compute.compute-02", 1)], ts[1], {})  # counted, unlisted
    _, (new,) = apply_consumer_history(history, [q("compute.compute-02", 1)], ts[2], {key: frozenset({"c:2"})})
    assert lag.consumer_restarted_at is None and new.consumer_restarted_at == ts[2]


def test_two_of_one_service_lost_together_are_one_finding_and_each_host_s_hint_cites_it() -> None:
    svc = services(compute_ages={"compute-02": 40, "compute-03": 40})
    queues = [q("compute.compute-01", 1)] + [q(f"compute.{h}", 0, consumer_lost_since=NOW - timedelta(seconds=30))
                                             for h in ("compute-02", "compute-03")]
    rmq = RabbitSnapshot("http://rmq:15672", NOW, queues=tuple(queues))
    lost = rabbitmq_findings(rmq, NOW, consumer_grace_s=5)
    assert [(f.kind, f.evidence["hosts"]) for f in lost] == [
        ("rabbitmq.consumers_lost", ["compute-02", "compute-03"])]
    world = {"services": obs("services", svc, services_findings(svc, NOW, TH)),
             "rabbitmq": obs("rabbitmq", rmq, lost), "instances": obs("instances", instances(), [])}
    hints = [h for h in triage_hints(world) if h.kind == "triage.service_lost"]
    assert [(h.subject, h.evidence["consumer"], h.severity) for h in hints] == [
        ("nova-compute@compute-02", "gone", "critical"), ("nova-compute@compute-03", "gone", "critical")]
    assert all(("rabbitmq.consumers_lost", "nova-compute") in h.evidence["derived_from"] for h in hints)


def test_the_hint_is_the_one_finding_for_both_signals() -> None:
    from tui.snapshot import all_findings

    world = observations(compute_02_age=40, compute_02_consumers=0, lost_s=30)
    shown = [(f.kind, f.severity) for f in all_findings(list(world.values())) if f.evidence.get("host") == "compute-02"]
    assert shown == [("triage.service_lost", "critical")]


def test_computes_late_while_no_conductor_consumes_are_told_in_the_conductor_s_hint() -> None:
    from tui.snapshot import all_findings

    svc = services(compute_ages={"compute-01": 40, "compute-02": 40}, conductor_age=40)
    queues = [q(f"compute.{h}", 1) for h in COMPUTES] + [
        q("conductor", 0, consumer_lost_since=NOW - timedelta(seconds=30)),
        q("conductor.ctl-1", 0, consumer_lost_since=NOW - timedelta(seconds=30))]
    rmq = RabbitSnapshot("http://rmq:15672", NOW, queues=tuple(queues))
    world = {"services": obs("services", svc, services_findings(svc, NOW, TH)),
             "rabbitmq": obs("rabbitmq", rmq, rabbitmq_findings(rmq, NOW, consumer_grace_s=5)),
             "instances": obs("instances", instances(), [])}
    (hint,) = [h for h in triage_hints(world) if h.kind == "triage.service_lost"]
    assert hint.subject == "nova-conductor@ctl-1" and hint.evidence["followers"] == ["compute-01", "compute-02"]
    assert "they report through nova-conductor" in hint.summary
    shown = {(f.kind, f.subject) for f in all_findings(list(world.values()))}
    assert ("nova.service_late", "compute-01") not in shown and ("nova.service_late", "compute-02") not in shown
