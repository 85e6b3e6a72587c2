"""Pure RabbitMQ rules: queue classification, the 2-poll zero-consumer rule, severities, alarms, nodes."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest

from tui.models.rabbitmq import Alarm, NodeInfo, QueueInfo, RabbitSnapshot
from tui.rules.queues import (
    classify_queue,
    expires_in_s,
    is_confirmed,
    queue_findings,
    queue_sort_key,
    rabbitmq_findings,
)

NOW = datetime(2026, 1, 1, 12, 0, 0, tzinfo=UTC)
HEX = "0123456789abcdef0123456789abcdef"


def q(name: str, messages: int | None = 3, consumers: int | None = 0, polls: int = 2, since_s: float = 30,
      vhost: str = "/", **kw) -> QueueInfo:
    return QueueInfo(vhost=vhost, name=name, messages=messages, messages_ready=messages,
                     messages_unacknowledged=0 if messages is not None else None, consumers=consumers,
                     stuck_polls=polls, stuck_since=NOW - timedelta(seconds=since_s) if polls else None, **kw)


@pytest.mark.parametrize(("name", "cls", "service", "host", "backend"), [
    ("scheduler", "service", "nova-scheduler", None, None),
    ("conductor", "service", "nova-conductor", None, None),
    ("compute", "service", "nova-compute", None, None),
    ("compute.compute-02", "service", "nova-compute", "compute-02", None),
    ("compute.node1.example.com", "service", "nova-compute", "node1.example.com", None),
    ("q-plugin", "service", "neutron-server", None, None),
    ("q-reports-plugin", "service", "neutron-server", None, None),
    ("dhcp_agent.net-01", "service", "neutron-dhcp-agent", "net-01", None),
    ("cinder-volume", "service", "cinder-volume", None, None),
    ("cinder-volume.ctl-01@lvm", "service", "cinder-volume", "ctl-01", "lvm"),
    ("cinder-scheduler", "service", "cinder-scheduler", None, None),
    ("ironic.conductor_manager.ir-01", "service", "ironic-conductor", "ir-01", None),
    (f"reply_{HEX}", "reply", None, None, None),
    (f"scheduler_fanout_{HEX}", "fanout", "nova-scheduler", None, None),
    (f"q-agent-notifier-port-update_fanout_{HEX}", "fanout", None, None, None),
    ("notifications.info", "notifications", None, None, None),
    ("notifications.error", "notifications", None, None, None),
    ("versioned_notifications.info", "notifications", None, None, None),
    ("notifications_designate.info", "notifications", None, None, None),
    ("celery", "other", None, None, None),
    ("computer", "other", None, None, None),
    ("reply_nothex", "other", None, None, None),
])
def test_classify_queue(name, cls, service, host, backend):
    kind = classify_queue(name)
    assert (kind.cls, kind.service, kind.host, kind.backend) == (cls, service, host, backend)


def test_fanout_keeps_topic():
    assert classify_queue(f"compute_fanout_{HEX}").topic == "compute"


def test_service_queue_critical_names_service_and_host():
    [f] = queue_findings([q("compute.compute-02", messages=5)], NOW)
    assert f.severity == "critical"
    assert f.kind == "rabbitmq.queue_no_consumer"
    assert f.subject == "compute.compute-02"
    assert "nova-compute on compute-02 stopped listening" in f.summary
    assert "5 messages" in f.summary
    assert " for " not in f.summary, "no ticking duration in the summary (it repainted the findings every poll)"
    assert f.evidence["for_s"] == 30.0
    assert f.evidence["class"] == "service"
    assert f.evidence["host"] == "compute-02"
    assert f.evidence["service"] == "nova-compute"
    assert f.source == "rabbitmq"
    assert "compute-02" in f.next_step


def test_cinder_backend_in_summary():
    [f] = queue_findings([q("cinder-volume.ctl-01@lvm")], NOW)
    assert "cinder-volume on ctl-01@lvm" in f.summary
    assert f.evidence["backend"] == "lvm"


def test_shared_topic_without_host():
    [f] = queue_findings([q("scheduler")], NOW)
    assert f.severity == "critical" and "no nova-scheduler is listening" in f.summary


@pytest.mark.parametrize(("name", "severity"), [
    ("notifications.info", "warning"),
    ("versioned_notifications.info", "warning"),
    (f"reply_{HEX}", "info"),
    (f"conductor_fanout_{HEX}", "info"),
    ("my-app-queue", "warning"),
])
def test_severity_by_class(name, severity):
    [f] = queue_findings([q(name)], NOW)
    assert f.severity == severity


def test_one_poll_is_not_enough():
    assert queue_findings([q("compute.compute-02", polls=1)], NOW) == []
    assert queue_findings([q("compute.compute-02", polls=0)], NOW) == []


def test_min_polls_is_a_parameter():
    assert queue_findings([q("conductor", polls=2)], NOW, min_polls=3) == []
    assert len(queue_findings([q("conductor", polls=3)], NOW, min_polls=3)) == 1


@pytest.mark.parametrize("queue", [
    q("compute.compute-02", messages=0),           # empty
    q("compute.compute-02", consumers=1),          # someone listens
    q("compute.compute-02", messages=None),        # fresh row: unknown, not zero
    q("compute.compute-02", consumers=None),
])
def test_not_suspect(queue):
    assert queue_findings([queue], NOW) == []


def test_live_confirmation_replaces_second_poll():
    live = q("compute.compute-02", polls=1, live_messages=4, live_consumers=0)
    [f] = queue_findings([live], NOW)
    assert f.severity == "critical" and f.evidence["confirmed_live"] is True
    assert "for " not in f.summary.split("consumers")[1]  # one sample cannot say for how long


@pytest.mark.parametrize("queue", [
    q("compute.compute-02", live_messages=4, live_consumers=1),   # a consumer is back: stats were stale
    q("compute.compute-02", live_messages=0, live_consumers=0),   # drained since
    q("compute.compute-02", live_missing=True),                   # deleted since
])
def test_live_answer_vetoes(queue):
    assert not is_confirmed(queue)
    assert queue_findings([queue], NOW) == []


def test_reply_time_left_before_expiry():
    reply = q(f"reply_{HEX}", since_s=600, x_expires_ms=1_800_000)
    assert expires_in_s(reply, NOW) == pytest.approx(1200)
    [f] = queue_findings([reply], NOW)
    assert f.severity == "info"
    assert f.evidence["expires_in_s_at_most"] == pytest.approx(1200)
    assert f.evidence["x_expires_s"] == 1800
    assert "removes it 30m after its last use" in f.summary  # static: a countdown here ticked every poll


def test_idle_since_tightens_expiry_bound():
    reply = q(f"reply_{HEX}", since_s=60, x_expires_ms=1_800_000, idle_since=NOW - timedelta(seconds=900))
    assert expires_in_s(reply, NOW) == pytest.approx(900)
    expired = q(f"reply_{HEX}", since_s=4000, x_expires_ms=1_800_000)
    assert expires_in_s(expired, NOW) == 0


def test_fanout_without_x_expires():
    fan = q(f"scheduler_fanout_{HEX}")
    assert expires_in_s(fan, NOW) is None
    [f] = queue_findings([fan], NOW)
    assert f.evidence["expires_in_s_at_most"] is None and "no x-expires" in f.summary


def test_vhost_in_subject():
    [f] = queue_findings([q("conductor", vhost="nova")], NOW)
    assert f.subject == "nova/conductor" and f.evidence["vhost"] == "nova"


def test_alarms_merge_live_check_and_nodes():
    nodes = (NodeInfo("rabbit@a", running=True, mem_alarm=True, mem_used=9, mem_limit=8),
             NodeInfo("rabbit@b", running=True, disk_free_alarm=True))
    alarms = (Alarm("rabbit@a", "memory"),)
    snap = RabbitSnapshot(endpoint="http://x", taken_at=NOW, nodes=nodes, alarms=alarms)
    found = {f.subject: f for f in rabbitmq_findings(snap, NOW) if f.kind == "rabbitmq.alarm"}
    assert set(found) == {"rabbit@a", "rabbit@b"}
    a = found["rabbit@a"]
    assert a.severity == "critical" and a.evidence["resources"] == ["memory"]
    assert a.evidence["seen_by"] == ["local-alarms", "nodes"] and a.evidence["mem_limit"] == 8
    assert found["rabbit@b"].evidence["resources"] == ["disk"]
    assert "memory alarm on rabbit@a" in a.summary


def test_live_alarm_alone_is_enough():
    snap = RabbitSnapshot(endpoint="x", taken_at=NOW, nodes=(NodeInfo("rabbit@a", running=True,
                          mem_alarm=False),), alarms=(Alarm("rabbit@a", "memory"),))
    [f] = rabbitmq_findings(snap, NOW)
    assert f.kind == "rabbitmq.alarm"


def test_partition_and_node_down():
    nodes = (NodeInfo("rabbit@a", running=True, partitions=("rabbit@b",)),
             NodeInfo("rabbit@b", running=False),
             NodeInfo("rabbit@c", running=None))  # unknown is not down
    snap = RabbitSnapshot(endpoint="x", taken_at=NOW, nodes=nodes)
    kinds = sorted((f.kind, f.subject, f.severity) for f in rabbitmq_findings(snap, NOW))
    assert kinds == [("rabbitmq.node_down", "rabbit@b", "critical"),
                     ("rabbitmq.partition", "rabbit@a", "critical")]


def test_healthy_snapshot_has_no_findings():
    snap = RabbitSnapshot(endpoint="x", taken_at=NOW,
                          nodes=(NodeInfo("rabbit@a", running=True, mem_alarm=False, disk_free_alarm=False),),
                          queues=(q("conductor", consumers=2), q(f"reply_{HEX}", messages=0)))
    assert rabbitmq_findings(snap, NOW) == []


def test_pane_order_zero_consumers_first():
    queues = [q("a", consumers=1, messages=100), q("b", consumers=0, messages=1),
              q("c", consumers=0, messages=50), q("d", consumers=None, messages=None)]
    assert [x.name for x in sorted(queues, key=queue_sort_key)] == ["c", "b", "a", "d"]


def test_findings_are_jsonable():
    import json

    [f] = queue_findings([q("compute.compute-02")], NOW)
    json.dumps(f.to_dict())
