"""The queue listings the RabbitMQ collector asks (tui.collectors.rabbitmq_params) against the real RabbitMQ 3.10:
each answers in the shape and with the fields the parser needs, and over light_max_queues queues the light
polls ask statistics queue by queue. One vhost per test."""

from __future__ import annotations

from urllib.parse import quote

import pytest

from tests.integration.rabbitmq.conftest import poll_until
from tui.collectors.rabbitmq import RabbitMQCollector
from tui.collectors.rabbitmq_params import light_listing, name_regexes, stats_by_name, stats_listing
from tui.collectors.rabbitmq_payload import LIGHT_QUEUE_COLUMNS, QUEUE_COLUMNS, parse_queue

pytestmark = pytest.mark.integration

NAMES = ("compute.compute-01", "compute.compute-02", "conductor", "reply_0123456789abcdef", "scheduler")


def _get(vb, params):  # type: ignore[no-untyped-def]
    with vb.api() as http:
        resp = http.get(f"/api/queues/{quote(vb.vhost, safe='')}", params=params)
        resp.raise_for_status()
        return resp.json()


async def _listed(vb, params):  # type: ignore[no-untyped-def]
    return _get(vb, params)


def _with_stats(rows) -> bool:  # type: ignore[no-untyped-def]
    return len(rows) == len(NAMES) and all("messages" in r and "consumers" in r for r in rows)


async def test_stats_listing_unpaged_has_every_field_the_parser_reads(vb, amqp):
    amqp.declare(*NAMES)
    amqp.publish("compute.compute-02", 3)
    amqp.consume("conductor")
    rows = await poll_until(lambda: _listed(vb, stats_listing()),
                            lambda rows: _with_stats(rows) and next(
                                r for r in rows if r["name"] == "compute.compute-02")["messages"] == 3,
                            what="statistics for every queue, compute-02's 3 messages counted")
    assert isinstance(rows, list)  # unpaged: a list, not a page object
    for row in rows:
        assert set(row) <= set(QUEUE_COLUMNS), row  # trimmed to the columns asked
        # a classic queue on 3.10 (no leader/members/online/delivery_limit: quorum and 4.x fields)
        assert {"name", "vhost", "messages", "messages_ready", "messages_unacknowledged", "consumers", "arguments",
                "type", "state", "node"} <= set(row), row
    parsed = {q.name: q for q in (parse_queue(r) for r in rows) if q is not None}
    assert set(parsed) == set(NAMES)
    stuck = parsed["compute.compute-02"]
    assert (stuck.messages, stuck.messages_ready, stuck.consumers, stuck.queue_type) == (3, 3, 0, "classic")
    assert stuck.state == "running" and stuck.node
    await poll_until(lambda: _listed(vb, stats_listing()),
                     lambda rows: next(r for r in rows if r["name"] == "conductor").get("consumers") == 1,
                     what="conductor's consumer in the statistics")
    idle = [r for r in _get(vb, stats_listing()) if r["name"] != "conductor"]
    assert all(parse_queue(r).idle_since is not None for r in idle)  # idle_since: the x-expires bound


async def test_light_listing_unpaged_has_totals_and_topology_without_statistics(vb, amqp):
    amqp.declare(*NAMES)
    amqp.publish("compute.compute-02", 3)
    rows = await poll_until(lambda: _listed(vb, light_listing()),
                            lambda rows: len(rows) == len(NAMES) and next(
                                r for r in rows if r["name"] == "compute.compute-02").get("messages") == 3,
                            what="compute-02's 3 messages in the light listing")
    assert isinstance(rows, list)
    for row in rows:
        assert set(row) <= set(LIGHT_QUEUE_COLUMNS), row
        assert {"name", "vhost", "messages", "messages_ready", "messages_unacknowledged", "arguments", "type",
                "state", "node"} <= set(row), row
        assert "consumers" not in row and "idle_since" not in row
    q = parse_queue(next(r for r in rows if r["name"] == "compute.compute-02"))
    assert (q.messages, q.messages_ready, q.consumers) == (3, 3, None)  # consumers unknown, not zero


async def test_statistics_by_name_must_be_paged_the_broker_ignores_name_unpaged(vb, amqp):
    amqp.declare(*NAMES)
    [regex] = name_regexes(["compute.compute-02", "scheduler"])
    page = _get(vb, stats_by_name(regex, 1, 500))
    assert sorted(r["name"] for r in page["items"]) == ["compute.compute-02", "scheduler"]
    assert page["page_count"] == 1 and set(page["items"][0]) <= set(QUEUE_COLUMNS)
    unpaged = _get(vb, {**stats_listing(), "name": regex, "use_regex": "true"})
    assert sorted(r["name"] for r in unpaged) == sorted(NAMES)  # every queue: hence the paged request


async def test_over_light_max_queues_light_polls_ask_statistics_queue_by_queue(vb, amqp):
    amqp.declare(*NAMES)
    amqp.publish("compute.compute-02", 3)
    c = RabbitMQCollector(vb.mgmt_url, vb.user, vb.password, vhosts=[vb.vhost], interval=1, timeout=10,
                          full_every=10**6, light_max_queues=3)
    under = RabbitMQCollector(vb.mgmt_url, vb.user, vb.password, vhosts=[vb.vhost], interval=1, timeout=10,
                              full_every=10**6)  # the first poll full, then light once statistics know every queue

    def held(snap) -> bool:  # type: ignore[no-untyped-def]
        q = snap.queue("compute.compute-02")
        return snap.fetch["queues"]["mode"] == "light" and q is not None and (q.messages, q.consumers) == (3, 0)

    try:
        last = await poll_until(under.collect, held, what="a light poll (by name) with compute-02's 3 messages")
        snap = await poll_until(c.collect, held, what="a light poll (by queue) with compute-02's 3 messages")
        # a queue deleted since the listing answers 404: left out, the others read; a queue named `..` is not
        # asked (its GET would be a listing of every queue)
        amqp.declare("..")
        rows, requests, _ = await c._rows_by_queue([(vb.vhost, "compute.compute-02"), (vb.vhost, "no-such-queue"),
                                                    (vb.vhost, "..")])
    finally:
        await c.aclose()
        await under.aclose()
    assert last.fetch["queues"]["detail_by"] == "name" and last.detail_by_queue is None
    info = snap.fetch["queues"]
    assert info["detail_by"] == "queue" and snap.detail_by_queue == 3
    assert snap.fetch["queue_pages"] == 1 + info["detail_queues"], "one listing, then one GET per queue"
    assert {q.name for q in snap.queues} == set(NAMES)
    assert requests == 2 and [r["name"] for r in rows] == ["compute.compute-02"]
    assert set(rows[0]) <= set(QUEUE_COLUMNS) and (rows[0]["messages"], rows[0]["consumers"]) == (3, 0)
