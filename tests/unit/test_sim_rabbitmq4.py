"""The simulator's RabbitMQ 4.0 cluster (demo-west of `stacktop --demo`) read by the real collector: quorum
topic and reply queues, stream fanouts, a node stopped and started, as the real 4.0 cluster behaves
(tests/integration/rabbitmq4 runs the same scenario on it)."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from tui.collectors.rabbitmq import RabbitMQCollector
from tui.sim import start_demo
from tui.sim.demo import start_demo_clouds

START = 1_790_000_000.0


@pytest.fixture
def demo4():
    demo = start_demo(instances=20, hosts=3, queues=60, churn=0, storyline=False, rabbitmq4=True, manual=True,
                      start=START)
    demo.advance(12)
    yield demo
    demo.stop()


async def _poll(demo, collector: RabbitMQCollector):  # type: ignore[no-untyped-def]
    snap = await collector.collect()
    return snap, collector.findings(snap, datetime.fromtimestamp(demo.engine.clock.time(), UTC))


async def test_demo_west_is_a_rabbitmq_4_cluster_with_quorum_queues():
    clouds = start_demo_clouds(instances=20, hosts=3, queues=60, churn=0, manual=True, start=START)
    try:
        west = clouds.demos["demo-west"]
        west.advance(12)
        snap, found = await _poll(west, RabbitMQCollector.from_config(west.config().rabbitmq))
    finally:
        clouds.stop()
    assert snap.rabbitmq_version == "4.0.5" and len(snap.nodes) == 3
    types = {q.queue_type for q in snap.queues}
    assert types == {"quorum", "stream"}
    assert all(n.sockets_total is None for n in snap.nodes)
    replies = [q for q in snap.queues if q.name.startswith("reply_")]
    assert replies and all(":" in q.name and q.queue_type == "quorum" for q in replies)
    stream = snap.queue("compute_fanout")
    assert stream is not None and stream.queue_type == "stream" and (stream.messages or 0) > 0 and stream.consumers
    assert not [f for f in found if f.subject in ("compute_fanout", "scheduler_fanout")]
    assert not [f for f in found if f.kind.startswith("rabbitmq.") and f.kind != "rabbitmq.queue_no_consumer"]


async def test_node_stopped_then_second_then_back(demo4):
    collector = RabbitMQCollector.from_config(demo4.config().rabbitmq)
    demo4.inject("rabbit_node_down", node="rabbit@ctl-2")
    demo4.advance(6)
    snap, found = await _poll(demo4, collector)
    about = [f for f in found if "rabbit@ctl-2" in f.subject or "rabbit@ctl-2" in f.summary]
    assert [f.kind for f in about] == ["rabbitmq.node_down"]
    conductor = snap.queue("conductor")
    assert conductor is not None and conductor.leader != "rabbit@ctl-2" and len(conductor.online or ()) == 2
    demo4.inject("rabbit_node_down", node="rabbit@ctl-3")
    demo4.advance(6)
    snap, found = await _poll(demo4, collector)
    lost = {f.subject for f in found if f.kind == "rabbitmq.quorum_lost"}
    assert "conductor" in lost and "compute.compute-01" in lost
    assert all(f.severity == "critical" for f in found if f.kind == "rabbitmq.quorum_lost")
    for node in ("rabbit@ctl-2", "rabbit@ctl-3"):
        demo4.inject("rabbit_node_up", node=node)
    demo4.advance(6)
    snap, found = await _poll(demo4, collector)
    assert not [f for f in found if f.kind in ("rabbitmq.node_down", "rabbitmq.quorum_lost")]
    assert all(n.running for n in snap.nodes)
