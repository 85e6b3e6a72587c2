"""The queue listings the RabbitMQ collector asks (tui.collectors.rabbitmq_params) against the real RabbitMQ 4.0
cluster: quorum, stream and classic rows carry what the parser needs in the unpaged listings, and the broker
filters by name only when paged. One vhost for the module, deleted after."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Iterator
from urllib.parse import quote

import pika
import pytest

from tests.testbed.rabbit4 import Rabbit4Cluster
from tests.testbed.rabbitmq import Broker, temporary_vhost
from tui.collectors.rabbitmq import RabbitMQCollector
from tui.collectors.rabbitmq_params import light_listing, name_regexes, stats_by_name, stats_listing
from tui.collectors.rabbitmq_payload import LIGHT_QUEUE_COLUMNS, QUEUE_COLUMNS, parse_queue

pytestmark = pytest.mark.integration

QUORUM = "compute.cmp-9"  # 2 messages, nobody consuming
STREAM = "scheduler_fanout"
CLASSIC = "reply_cmp-9:nova-api:1"
NAMES = (CLASSIC, QUORUM, STREAM)


@pytest.fixture(scope="module")
def vb(rabbitmq4_cluster: Rabbit4Cluster) -> Iterator[Broker]:
    with temporary_vhost(rabbitmq4_cluster.broker(1), prefix="stacktop-test-r4p") as broker:
        conn = pika.BlockingConnection(broker.pika_parameters())
        try:
            ch = conn.channel()
            ch.confirm_delivery()
            ch.queue_declare(QUORUM, durable=True, arguments={"x-queue-type": "quorum"})
            ch.queue_declare(STREAM, durable=True, arguments={"x-queue-type": "stream", "x-max-age": "1h"})
            ch.queue_declare(CLASSIC, arguments={"x-expires": 1_800_000})
            for i in range(2):
                ch.basic_publish("", QUORUM, f"msg {i}".encode(), pika.BasicProperties(delivery_mode=2))
        finally:
            conn.close()
        yield broker


def _get(vb: Broker, params: dict) -> object:
    with vb.api() as http:
        resp = http.get(f"/api/queues/{quote(vb.vhost, safe='')}", params=params)
        resp.raise_for_status()
        return resp.json()


async def _until(vb: Broker, params: dict, check, what: str, deadline_s: float = 60.0) -> list:  # type: ignore[no-untyped-def]
    end = time.monotonic() + deadline_s
    while True:
        rows = _get(vb, params)
        if isinstance(rows, list) and check({r["name"]: r for r in rows}):
            return rows
        if time.monotonic() > end:
            pytest.fail(f"{what} not seen within {deadline_s:g}s; last: {rows!r}"[:2000], pytrace=False)
        await asyncio.sleep(1.0)


async def test_stats_listing_unpaged_on_rabbitmq_4(vb):
    rows = await _until(vb, stats_listing(), lambda by: set(by) == set(NAMES) and by[QUORUM].get("messages") == 2
                        and all("consumers" in r for r in by.values()), "statistics for every queue")
    by = {r["name"]: r for r in rows}
    assert all(set(r) <= set(QUEUE_COLUMNS) for r in rows), rows
    quorum = parse_queue(by[QUORUM])
    assert (quorum.queue_type, quorum.messages, quorum.consumers, quorum.state) == ("quorum", 2, 0, "running")
    assert quorum.leader and quorum.members and len(quorum.members) == 3 and quorum.online
    assert quorum.has_majority
    stream = parse_queue(by[STREAM])
    assert stream.queue_type == "stream" and stream.leader and stream.members
    classic = parse_queue(by[CLASSIC])
    assert (classic.queue_type, classic.x_expires_ms, classic.consumers) == ("classic", 1_800_000, 0)
    assert classic.node


async def test_light_listing_unpaged_on_rabbitmq_4(vb):
    rows = await _until(vb, light_listing(), lambda by: set(by) == set(NAMES) and by[QUORUM].get("messages") == 2,
                        "the quorum queue's 2 messages in the light listing")
    by = {r["name"]: r for r in rows}
    assert all(set(r) <= set(LIGHT_QUEUE_COLUMNS) for r in rows), rows
    assert all("consumers" not in r and "idle_since" not in r for r in rows)
    quorum = parse_queue(by[QUORUM])
    assert (quorum.queue_type, quorum.messages, quorum.consumers) == ("quorum", 2, None)
    assert quorum.leader and quorum.members and len(quorum.members) == 3 and quorum.has_majority
    assert parse_queue(by[STREAM]).queue_type == "stream"


async def test_name_filter_only_when_paged_on_rabbitmq_4(vb):
    [regex] = name_regexes([QUORUM])
    page = _get(vb, stats_by_name(regex, 1, 500))
    assert [r["name"] for r in page["items"]] == [QUORUM]  # type: ignore[index]
    unpaged = _get(vb, {**stats_listing(), "name": regex, "use_regex": "true"})
    assert sorted(r["name"] for r in unpaged) == sorted(NAMES)  # type: ignore[union-attr]


async def test_collector_over_light_max_queues_on_rabbitmq_4(vb):
    """Light polls ask each queue's statistics with its own GET: quorum, stream and classic queues answer it."""
    c = RabbitMQCollector(vb.mgmt_url, vb.user, vb.password, vhosts=[vb.vhost], interval=1, timeout=10,
                          full_every=10**6, light_max_queues=2)
    try:
        snaps = [await c.collect() for _ in range(2)]
        rows, requests, _ = await c._rows_by_queue([(vb.vhost, name) for name in NAMES])
    finally:
        await c.aclose()
    assert [s.fetch["queues"]["mode"] for s in snaps] == ["full", "light"]
    light = snaps[-1]
    assert light.fetch["queues"]["detail_by"] == "queue" and light.detail_by_queue == 2
    assert {q.name for q in light.queues} == set(NAMES)
    quorum = light.queue(QUORUM)
    assert quorum is not None and (quorum.messages, quorum.consumers) == (2, 0)
    assert requests == 3 and sorted(r["name"] for r in rows) == sorted(NAMES)
    assert all(set(r) <= set(QUEUE_COLUMNS) and "consumers" in r for r in rows), rows
