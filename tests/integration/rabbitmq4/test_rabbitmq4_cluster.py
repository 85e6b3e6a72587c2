"""The RabbitMQ collector and rules against the real 3-node RabbitMQ 4.0 cluster (scripts/testcloud up
rabbitmq4), with queues shaped as oslo.messaging 18 declares them with rabbit_quorum_queue,
rabbit_transient_quorum_queue, use_queue_manager and rabbit_stream_fanout. One vhost per module, deleted after.

The management API shows changes seconds late (quorum rows lack `messages` for 5-10 s after a leader change):
every wait polls with a deadline. Node scenarios stop a node's application and start it again in `finally`.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable, Iterator
from datetime import UTC, datetime

import pika
import pytest

from tests.testbed.rabbit4 import Rabbit4Cluster, nodes_stopped
from tests.testbed.rabbitmq import Broker, Consumer, temporary_vhost, wait_history_held
from tui.collectors.rabbitmq import RabbitMQCollector
from tui.models.finding import Finding
from tui.models.rabbitmq import RabbitSnapshot
from tui.snapshot import collect_once

pytestmark = pytest.mark.integration

HOST = "cmp-7"
COMPUTE = f"compute.{HOST}"  # quorum, messages, nobody consuming: nova-compute on cmp-7 stopped listening
CONDUCTOR = "conductor"  # quorum, one consumer
REPLY = "reply_ctl-1:nova-api:3"  # transient quorum (queue manager), a message left, its client gone
FANOUT = "scheduler_fanout_ctl-2:nova-scheduler:1"  # queue-manager fanout (classic), left behind
STREAM = "scheduler_fanout"  # stream fanout: messages are retention, one reader
QUORUM = (COMPUTE, CONDUCTOR, REPLY)


def _declare(broker: Broker) -> None:
    conn = pika.BlockingConnection(broker.pika_parameters())
    try:
        ch = conn.channel()
        ch.confirm_delivery()
        for name in (COMPUTE, CONDUCTOR):
            ch.queue_declare(name, durable=True, arguments={"x-queue-type": "quorum"})
        ch.queue_declare(REPLY, durable=True, arguments={"x-queue-type": "quorum", "x-expires": 1_800_000})
        ch.queue_declare(FANOUT, arguments={"x-expires": 1_800_000})
        ch.queue_declare(STREAM, durable=True, arguments={"x-queue-type": "stream", "x-max-age": "1h"})
        for name, count in ((COMPUTE, 3), (REPLY, 1), (FANOUT, 2), (STREAM, 5)):
            for i in range(count):
                ch.basic_publish("", name, f"msg {i}".encode(), pika.BasicProperties(delivery_mode=2))
    finally:
        conn.close()


@pytest.fixture(scope="module")
def cloud(rabbitmq4_cluster: Rabbit4Cluster) -> Iterator[tuple[Rabbit4Cluster, Broker]]:
    """The cluster with the oslo-shaped queues in a vhost of their own; clients on node 1 (rabbit4b), which
    the node scenarios keep running."""
    with temporary_vhost(rabbitmq4_cluster.broker(1), prefix="stacktop-test-r4") as vb:
        _declare(vb)
        readers = [Consumer(vb, CONDUCTOR).start(),
                   Consumer(vb, STREAM, arguments={"x-stream-offset": "first"}).start()]
        try:
            yield rabbitmq4_cluster, vb
        finally:
            for r in readers:
                r.stop()


class Poll:
    """collect() + findings() against one node's management API."""

    def __init__(self, broker: Broker) -> None:
        self.c = RabbitMQCollector(broker.mgmt_url, broker.user, broker.password, vhosts=[broker.vhost],
                                   interval=1, timeout=10)
        self.snap: RabbitSnapshot | None = None
        self.findings: list[Finding] = []

    async def once(self) -> tuple[RabbitSnapshot, list[Finding]]:
        self.snap = await self.c.collect()
        self.findings = self.c.findings(self.snap, datetime.now(UTC))
        return self.snap, self.findings

    async def until(self, check: Callable[[RabbitSnapshot, list[Finding]], bool], what: str,
                    deadline_s: float = 90.0) -> tuple[RabbitSnapshot, list[Finding]]:
        end = time.monotonic() + deadline_s
        while True:
            snap, found = await self.once()
            if check(snap, found):
                return snap, found
            if time.monotonic() > end:
                pytest.fail(f"{what} not seen within {deadline_s:g}s; findings: "
                            f"{[(f.severity, f.kind, f.subject) for f in found]}", pytrace=False)
            await asyncio.sleep(1.0)


def naming(found: list[Finding], node: str) -> list[Finding]:
    return [f for f in found if node in f.subject or node in f.summary]


def by_queue(found: list[Finding], kind: str) -> dict[str, Finding]:
    return {f.evidence.get("queue"): f for f in found if f.kind == kind}  # type: ignore[misc]


def all_known(snap: RabbitSnapshot) -> bool:
    return all(q.messages is not None for q in snap.queues)


async def test_oslo_2025_shapes_on_rabbitmq_4(cloud):
    _cluster, vb = cloud
    poll = Poll(vb)

    def ready(snap: RabbitSnapshot, found: list[Finding]) -> bool:
        stream = snap.queue(STREAM)
        return (COMPUTE in by_queue(found, "rabbitmq.queue_no_consumer") and REPLY in by_queue(
            found, "rabbitmq.queue_no_consumer") and FANOUT in by_queue(found, "rabbitmq.queue_no_consumer")
            and stream is not None and stream.consumers == 1 and all_known(snap))

    snap, found = await poll.until(ready, "the oslo-shaped queues judged")
    assert snap.rabbitmq_version and snap.rabbitmq_version.startswith("4.")
    stuck = by_queue(found, "rabbitmq.queue_no_consumer")
    assert stuck[COMPUTE].severity == "critical" and f"nova-compute on {HOST}" in stuck[COMPUTE].summary
    # queue-manager names: reply/fanout left behind are info, never the "other" warning
    assert (stuck[REPLY].severity, stuck[REPLY].evidence["class"]) == ("info", "reply")
    assert (stuck[FANOUT].severity, stuck[FANOUT].evidence["class"]) == ("info", "fanout")
    assert set(stuck) == {COMPUTE, REPLY, FANOUT}  # the stream's 5 messages are retention: not paged
    assert [f for f in found if f.kind != "rabbitmq.queue_no_consumer"] == []
    stream = snap.queue(STREAM)
    assert stream is not None and stream.queue_type == "stream" and stream.messages == 5 and stream.consumers == 1
    for name in QUORUM:
        q = snap.queue(name)
        assert q is not None and q.queue_type == "quorum" and q.leader in _cluster.nodes
        assert q.members is not None and len(q.members) == 3 and q.has_majority
    assert all(n.running for n in snap.nodes) and len(snap.nodes) == 3
    assert all(n.sockets_total is None for n in snap.nodes)  # RabbitMQ 4 counts none: not "0/0"


async def test_oneshot_confirms_from_the_queue_history_on_rabbitmq_4(cloud):
    """`stacktop snapshot` on RabbitMQ 4: quorum and classic queues left with messages are confirmed from their
    sample history in one run, never waiting for the broker's next statistics tick."""
    _cluster, vb = cloud
    await asyncio.to_thread(wait_history_held, vb, [COMPUTE, REPLY, FANOUT])
    collector = RabbitMQCollector(vb.mgmt_url, vb.user, vb.password, vhosts=[vb.vhost], interval=1, timeout=10)

    async def refused(queue) -> None:
        raise AssertionError(f"a one-shot run waited for the statistics tick (suspect {queue.name})")

    collector._next_statistics_tick = refused  # type: ignore[method-assign]
    [obs] = await collect_once([collector])
    assert obs.ok, obs.error
    assert obs.snapshot.confirmation == "history"
    assert obs.snapshot.fetch["history"] == {"asked": 3, "held": 3, "clear": 0, "left_unconfirmed": 0}
    stuck = by_queue(obs.findings, "rabbitmq.queue_no_consumer")
    assert set(stuck) == {COMPUTE, REPLY, FANOUT}
    assert stuck[COMPUTE].severity == "critical" and stuck[COMPUTE].evidence["messages"] == 3
    assert all(f.evidence["history_s"] >= 10 and f.evidence["polls"] == 2 for f in stuck.values())


@pytest.mark.slow
async def test_nodes_stopped_then_back(cloud):
    cluster, vb = cloud
    poll = Poll(vb)  # node 1's management API: it answers while nodes 0 and 2 are stopped
    a, b, c = cluster.nodes
    with nodes_stopped(cluster, 0):
        def one_down(snap: RabbitSnapshot, found: list[Finding]) -> bool:
            quorum = [snap.queue(n) for n in QUORUM]
            return (len(naming(found, a)) == 1 and all(
                q is not None and q.leader not in (None, a) and q.online is not None and len(q.online) == 2
                for q in quorum))

        snap, found = await poll.until(one_down, f"{a} down and the quorum queues re-led")
        (down,) = naming(found, a)
        assert down.kind == "rabbitmq.node_down" and down.severity == "critical"
        assert f"reported by {b}" in down.summary
        assert [f for f in found if f.kind == "rabbitmq.quorum_lost"] == []
        for name in QUORUM:
            q = snap.queue(name)
            assert q is not None and q.has_majority and q.offline_members == (a,)

        with nodes_stopped(cluster, 2):
            def majority_lost(snap: RabbitSnapshot, found: list[Finding]) -> bool:
                return set(QUORUM) <= set(by_queue(found, "rabbitmq.quorum_lost"))

            snap, found = await poll.until(majority_lost, "the quorum queues without a majority")
            lost = by_queue(found, "rabbitmq.quorum_lost")
            assert all(lost[n].severity == "critical" for n in QUORUM)
            assert f"nova-compute on {HOST}" in lost[COMPUTE].summary
            assert a in lost[COMPUTE].summary and c in lost[COMPUTE].summary
            assert {f.subject for f in found if f.kind == "rabbitmq.node_down"} == {a, c}

    def all_clear(snap: RabbitSnapshot, found: list[Finding]) -> bool:
        cluster_kinds = {"rabbitmq.node_down", "rabbitmq.quorum_lost", "rabbitmq.members_offline",
                         "rabbitmq.queue_down"}
        return (not [f for f in found if f.kind in cluster_kinds] and all(n.running for n in snap.nodes)
                and all(len(snap.queue(n).online or ()) == 3 for n in QUORUM))  # type: ignore[union-attr]

    snap, found = await poll.until(all_clear, "the cluster back to 3 nodes, all clear")
    assert len(snap.nodes) == 3
