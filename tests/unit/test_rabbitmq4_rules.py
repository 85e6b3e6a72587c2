"""RabbitMQ 4.0 shapes, from payloads captured on the real 3-node cluster (tests/data/payloads/rabbitmq4):
queue types, queue-manager and stream fanout names, quorum members online, the sparse row of a stopped node,
sockets no longer counted, rows without `messages`."""

from __future__ import annotations

import dataclasses
import json
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from tui.collectors.rabbitmq_payload import parse_node, parse_queues
from tui.models.rabbitmq import QueueInfo, RabbitSnapshot
from tui.rules.judge import judge_queues
from tui.rules.queues import classify_queue, rabbitmq_findings
from tui.widgets.rabbitmq_pane import queue_rows, status_line

DATA = Path(__file__).parents[1] / "data" / "payloads"
R4 = DATA / "rabbitmq4"
NOW = datetime(2026, 12, 4, 21, 0, tzinfo=UTC)


def _load(name: str, folder: Path = R4) -> Any:
    return json.loads((folder / name).read_text())


def snapshot(queues: str, nodes: str, **kw: Any) -> RabbitSnapshot:
    parsed = [n for n in (parse_node(r) for r in _load(nodes)) if n]
    return RabbitSnapshot(endpoint="http://127.0.0.1:15673", taken_at=NOW, queues=tuple(parse_queues(_load(queues))),
                          nodes=tuple(parsed), node="rabbit4a@localhost", rabbitmq_version="4.0.5", **kw)


def stuck(s: RabbitSnapshot, polls: int = 3) -> RabbitSnapshot:
    """Every queue seen with messages and no consumer for `polls` polls (what the 2-poll history would say)."""
    return dataclasses.replace(s, queues=tuple(dataclasses.replace(q, stuck_polls=polls, stuck_since=NOW)
                                               for q in s.queues))


def test_queue_manager_and_stream_fanout_names_are_reply_and_fanout():
    assert classify_queue("reply_ctl-1:nova-api:3").cls == "reply"
    kind = classify_queue("scheduler_fanout_ctl-2:nova-scheduler:1")
    assert (kind.cls, kind.topic, kind.service, kind.host, kind.process) == (
        "fanout", "scheduler", "nova-scheduler", "ctl-2", "nova-scheduler")
    assert classify_queue("scheduler_fanout").cls == "fanout"
    assert classify_queue("q-agent-notifier-port-update_fanout_net-1.example:neutron-openvswitch-agent:12").cls \
        == "fanout"
    assert classify_queue("reply_0123456789abcdef0123456789abcdef").cls == "reply"
    assert classify_queue("reply_notahexname").cls == "other"


def test_real_4_0_rows_parse_type_leader_members_online():
    qs = {q.name: q for q in parse_queues(_load("queues.json"))}
    assert qs["classic.q"].queue_type == "classic" and qs["classic.q"].members is None
    quorum = qs["compute.host1"]
    assert quorum.queue_type == "quorum" and quorum.leader == "rabbit4a@localhost" and quorum.delivery_limit == 20
    assert len(quorum.members or ()) == 3 and quorum.has_majority is True and quorum.offline_members == ()
    stream = qs["scheduler_fanout"]
    assert stream.queue_type == "stream" and stream.messages == 3
    assert not stream.no_consumer_with_messages  # retention, not a backlog


def test_fresh_quorum_and_stream_rows_are_unknown_not_zero():
    qs = parse_queues(_load("queues_fresh.json"))
    assert qs and all(q.messages is None and q.consumers is None for q in qs)
    s = stuck(snapshot("queues_fresh.json", "nodes.json"))
    assert rabbitmq_findings(s, NOW) == []
    cells = {k.split("\x1f")[1]: c for k, c in queue_rows(s, judge_queues(s))}
    assert cells["compute.host1"][1] == "?" and cells["compute.host1"][2] == "?"  # messages, consumers
    assert str(cells["compute.host1"][4]) == "quorum 3/3"


def test_4_0_sockets_are_not_shown_as_zero():
    s = snapshot("queues.json", "nodes.json")
    node = s.nodes[0]
    assert node.sockets_total is None and node.sockets_used is None and node.fd_total is not None
    line = status_line(s)
    assert "sockets" not in line and "fd " in line
    old = [parse_node(r) for r in _load("nodes.json", DATA / "rabbitmq")]
    assert old[0] is not None and old[0].sockets_total  # 3.10 still counts them
    assert "sockets" in status_line(dataclasses.replace(s, nodes=(old[0],)))


def test_healthy_cluster_with_stuck_queue_manager_queues_raises_only_the_service_queue():
    s = stuck(snapshot("queues.json", "nodes.json"))
    found = rabbitmq_findings(s, NOW)
    by = {f.subject.split("/")[-1]: f for f in found}
    # compute.host1 (quorum, 3 messages, no consumer): critical naming the host; classic.q: "other" warning;
    # the stream fanout with 3 messages is not paged
    assert by["compute.host1"].severity == "critical" and by["classic.q"].severity == "warning"
    assert "host1" in by["compute.host1"].summary
    assert "scheduler_fanout" not in by
    assert {f.kind for f in found} == {"rabbitmq.queue_no_consumer"}
    types = {k.split("\x1f")[1]: str(c[4]) for k, c in queue_rows(s, judge_queues(s))}
    assert types == {"classic.q": "classic", "compute.host1": "quorum 3/3", "conductor": "quorum 3/3",
                     "reply_ctl-1:nova-api:3": "quorum 3/3", "scheduler_fanout": "stream 3/3"}


def test_one_node_down_is_one_finding_naming_it():
    s = snapshot("queues_one_down.json", "nodes_one_down.json")
    sparse = next(n for n in s.nodes if n.running is False)
    assert sparse.name == "rabbit4b@localhost" and sparse.mem_used is None and sparse.partitions == ()
    found = rabbitmq_findings(s, NOW)
    assert len(found) == 1, [f.summary for f in found]
    f = found[0]
    assert f.kind == "rabbitmq.node_down" and f.subject == "rabbit4b@localhost" and f.severity == "critical"
    assert "4 quorum queues/streams run without their member there (4 led elsewhere)" in f.summary
    assert "reported by rabbit4a@localhost" in f.summary
    cells = {k.split("\x1f")[1]: c for k, c in queue_rows(s, judge_queues(s, found))}
    assert str(cells["compute.host1"][4]) == "quorum 2/3"
    assert "rabbit4b@localhost DOWN" in status_line(s)


def test_two_nodes_down_replicated_queues_without_majority_are_critical():
    s = snapshot("queues_two_down.json", "nodes_two_down.json")
    found = rabbitmq_findings(s, NOW)
    down = sorted(f.subject for f in found if f.kind == "rabbitmq.node_down")
    assert down == ["rabbit4b@localhost", "rabbit4c@localhost"]
    lost = {f.subject: f for f in found if f.kind == "rabbitmq.quorum_lost"}
    assert set(lost) == {"stcap4/compute.host1", "stcap4/conductor", "stcap4/reply_ctl-1:nova-api:3",
                         "stcap4/scheduler_fanout"}
    assert all(f.severity == "critical" for f in lost.values())
    compute = lost["stcap4/compute.host1"]
    assert "nova-compute on host1" in compute.summary and "1 of 3 members online" in compute.summary
    assert "rabbit4b@localhost, rabbit4c@localhost" in compute.summary
    # the stream's `online` still lists a stopped node: the node list and `minority` tell the truth
    assert "1 of 3" in lost["stcap4/scheduler_fanout"].summary
    assert len(found) == 6


def test_members_offline_without_a_node_down_is_info_and_queue_down_elsewhere_is_reported():
    q = QueueInfo("/", "conductor", messages=0, consumers=1, queue_type="quorum", state="running", leader="a@x",
                  members=("a@x", "b@x", "c@x"), online=("a@x", "b@x"))
    classic = QueueInfo("/", "scheduler", messages=0, consumers=0, queue_type="classic", state="down", node="c@x")
    s = RabbitSnapshot(endpoint="e", taken_at=NOW, queues=(q, classic))
    found = {f.kind: f for f in rabbitmq_findings(s, NOW)}
    assert found["rabbitmq.members_offline"].severity == "info" and "c@x" in found["rabbitmq.members_offline"].subject
    assert found["rabbitmq.queue_down"].severity == "critical" and "on c@x" in found["rabbitmq.queue_down"].summary


def test_drained_node_is_a_warning():
    row = {"name": "b@x", "type": "disc", "running": True, "being_drained": True}
    node = parse_node(row)
    assert node is not None
    found = rabbitmq_findings(RabbitSnapshot(endpoint="e", taken_at=NOW, nodes=(node,)), NOW)
    assert [(f.kind, f.severity) for f in found] == [("rabbitmq.node_drained", "warning")]


def test_classic_queue_down_on_the_stopped_node_is_told_in_the_node_finding():
    s = snapshot("queues_one_down.json", "nodes_one_down.json")
    bent = tuple(dataclasses.replace(q, state="down", node="rabbit4b@localhost") if q.name == "classic.q" else q
                 for q in s.queues)
    found = rabbitmq_findings(dataclasses.replace(s, queues=bent), NOW)
    assert [f.kind for f in found] == ["rabbitmq.node_down"]
    assert "1 queue on it down: stcap4/classic.q" in found[0].summary
    bent_snap = dataclasses.replace(s, queues=bent)
    cells = {k.split("\x1f")[1]: c for k, c in queue_rows(bent_snap, judge_queues(bent_snap, found))}
    assert str(cells["classic.q"][4]) == "classic down"
