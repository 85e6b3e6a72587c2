"""Queues without a consumer, grouped per class and service above GROUP_OVER (tui/rules/queue_groups.py): a broker
of 20,000 queues gives a findings list an engineer can read; service topic queues always stay one finding each."""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta

from tui.models.rabbitmq import QueueInfo, RabbitSnapshot
from tui.rules.judge import judge_queues
from tui.rules.queue_groups import GROUP_KIND, GROUP_OVER, group_queue_findings
from tui.rules.queues import queue_findings, rabbitmq_findings
from tui.widgets.rabbitmq_pane import queue_rows

NOW = datetime(2026, 1, 1, 12, 0, 0, tzinfo=UTC)


def q(name: str, messages: int = 3, vhost: str = "/", consumers: int = 0) -> QueueInfo:
    return QueueInfo(vhost=vhost, name=name, messages=messages, messages_ready=messages, messages_unacknowledged=0,
                     consumers=consumers, stuck_polls=2, stuck_since=NOW - timedelta(seconds=30),
                     x_expires_ms=1_800_000)


def replies(n: int, vhost: str = "/") -> list[QueueInfo]:
    return [q(f"reply_{i:032x}", messages=1 + i % 7, vhost=vhost) for i in range(n)]


def test_a_few_queues_stay_one_finding_each() -> None:
    findings = queue_findings(replies(GROUP_OVER), NOW)
    assert group_queue_findings(findings) == findings


def test_two_thousand_reply_queues_are_one_finding_counting_them() -> None:
    queues = [*replies(2000), q("compute.compute-02", 4), q("compute.compute-03", 2),
              *[q(f"scheduler_fanout_{i:032x}") for i in range(GROUP_OVER + 1)],
              *[q(f"notifications.info{i}") for i in range(2)]]
    snap = RabbitSnapshot(endpoint="http://mq:15672", taken_at=NOW, queues=tuple(queues))
    findings = rabbitmq_findings(snap, NOW)
    kinds = [(f.kind, f.subject) for f in findings]
    assert ("rabbitmq.queue_no_consumer", "compute.compute-02") in kinds, "service queues are never grouped"
    assert ("rabbitmq.queue_no_consumer", "compute.compute-03") in kinds
    assert ("rabbitmq.queue_no_consumer", "notifications.info0") in kinds, "a small group stays as it is"
    assert len(findings) == 2 + 2 + 2, kinds
    group = next(f for f in findings if f.subject == "reply_*")
    assert group.kind == GROUP_KIND and group.severity == "info"
    assert group.evidence["count"] == 2000
    assert group.evidence["messages"] == sum(1 + i % 7 for i in range(2000))
    assert len(group.evidence["queues"]) == 10 and group.evidence["more"] == 1990
    assert group.summary.startswith("2,000 reply queues hold 7,995 messages with 0 consumers"), group.summary
    fanouts = next(f for f in findings if f.kind == GROUP_KIND and f.subject != "reply_*")
    assert fanouts.subject == "scheduler_fanout*" and fanouts.evidence["topic"] == "scheduler"
    assert len(json.dumps([f.to_dict() for f in findings], default=str)) < 8_000, "the JSON stays readable"


def test_the_subject_is_stable_while_the_count_moves() -> None:
    a = group_queue_findings(queue_findings(replies(50), NOW))
    b = group_queue_findings(queue_findings(replies(80), NOW))
    assert [f.key for f in a] == [f.key for f in b] == [(GROUP_KIND, "reply_*")]
    assert (a[0].evidence["count"], b[0].evidence["count"]) == (50, 80)


def test_groups_are_per_vhost() -> None:
    findings = group_queue_findings(queue_findings([*replies(10, "/"), *replies(10, "openstack")], NOW))
    assert sorted(f.subject for f in findings) == ["openstack/reply_*", "reply_*"]


def test_the_pane_colours_the_queues_of_a_group() -> None:
    queues = (*replies(20), q("reply_ffffffffffffffffffffffffffffffff", messages=0, consumers=1))
    snap = RabbitSnapshot(endpoint="http://mq:15672", taken_at=NOW, queues=queues)
    rows = dict(queue_rows(snap, judge_queues(snap, rabbitmq_findings(snap, NOW))))
    held = rows["/\x1freply_00000000000000000000000000000000"][0]
    served = rows["/\x1freply_ffffffffffffffffffffffffffffffff"][0]
    assert str(held.style) and not str(served.style), (held.style, served.style)
