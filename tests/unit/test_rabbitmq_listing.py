"""How the RabbitMQ collector lists queues: the query of each listing (rabbitmq_params), and, against the
simulator, unpaged full listings and, over light_max_queues queues, light polls asking statistics queue by
queue."""

from __future__ import annotations

import re

import pytest

from tui.collectors.rabbitmq import RabbitMQCollector
from tui.collectors.rabbitmq_params import light_listing, name_regexes, queue_path, stats_by_name, stats_listing
from tui.collectors.rabbitmq_payload import LIGHT_QUEUE_COLUMNS, QUEUE_COLUMNS, parse_queue
from tui.sim import start_demo

START = 1_790_000_000.0


def test_stats_listing_is_unpaged_with_the_parsers_columns():
    params = stats_listing()
    assert params == {"columns": ",".join(QUEUE_COLUMNS)}
    assert "page" not in params and "page_size" not in params
    assert stats_listing(trim_columns=False) == {}  # every field
    columns = set(params["columns"].split(","))
    # everything parse_queue and the rules read from a row with statistics
    assert {"name", "vhost", "messages", "messages_ready", "messages_unacknowledged", "consumers", "arguments",
            "idle_since", "type", "state", "node", "leader", "members", "online", "delivery_limit"} <= columns


def test_light_listing_is_unpaged_without_statistics():
    params = light_listing()
    assert params["disable_stats"] == "true" and params["enable_queue_totals"] == "true"
    assert params["columns"].split(",") == list(LIGHT_QUEUE_COLUMNS)
    assert not {"consumers", "idle_since"} & set(params["columns"].split(","))
    assert "page" not in params


def test_stats_by_name_is_paged_because_the_broker_filters_only_pages():
    params = stats_by_name("^(?:a)$", 2, 500)
    assert params == {**stats_listing(), "name": "^(?:a)$", "use_regex": "true", "page": 2, "page_size": 500}


def test_queue_path_quotes_every_name_and_refuses_dot_segments():
    assert queue_path("/", "reply_a/b?c#d%e") == "/api/queues/%2F/reply_a%2Fb%3Fc%23d%25e"
    assert queue_path("/", "a..b") == "/api/queues/%2F/a..b"
    assert [queue_path(v, n) for v, n in (("/", "."), ("/", ".."), (".", "q"), ("..", "q"))] == [None] * 4


def test_name_regexes_match_exactly_the_names_within_the_budget():
    names = [f"reply_{i:040d}" for i in range(100)] + ["a.b", "c|d", "x(y)"]
    regexes = name_regexes(names, budget=300)
    assert len(regexes) > 1 and all(len(r) <= 300 + len("^(?:)$") for r in regexes)
    matched = [n for n in [*names, "a-b", "c", "reply_", "xa.b"] if any(re.search(r, n) for r in regexes)]
    assert sorted(matched) == sorted(names)  # escaped: `.` and `|` are literal, no prefix or suffix matches
    assert name_regexes([]) == []
    assert name_regexes(["x" * 50], budget=10) == ["^(?:" + "x" * 50 + ")$"]  # alone, over the budget


def test_a_light_row_and_a_stats_row_parse_with_what_their_columns_give():
    stats_row = {"name": "compute.c1", "vhost": "/", "messages": 3, "messages_ready": 3, "messages_unacknowledged": 0,
                 "consumers": 0, "arguments": {}, "idle_since": "2026-12-02T10:26:22.305+00:00", "type": "classic",
                 "state": "running", "node": "rabbit@a"}
    light_row = {k: v for k, v in stats_row.items() if k in LIGHT_QUEUE_COLUMNS}
    full, light = parse_queue(stats_row), parse_queue(light_row)
    assert full is not None and light is not None
    assert (full.messages, full.consumers, full.idle_since is not None) == (3, 0, True)
    assert (light.messages, light.consumers, light.idle_since) == (3, None, None)  # unknown, not zero


@pytest.fixture
def demo():
    d = start_demo(instances=20, hosts=3, queues=40, churn=0, storyline=False, manual=True, start=START)
    d.advance(12)  # past a statistics tick: every queue has its numbers
    yield d
    d.stop()


def _collector(demo, **kw) -> RabbitMQCollector:  # type: ignore[no-untyped-def]
    rq = demo.config().rabbitmq
    return RabbitMQCollector(rq.management_url, rq.user, rq.password.value or "", timeout=10, **kw)


async def test_over_light_max_queues_light_polls_ask_statistics_queue_by_queue(demo):
    c = _collector(demo, full_every=4, light_max_queues=10)
    reference = _collector(demo, full_every=1)
    try:
        snaps = [await c.collect() for _ in range(3)]
        full = await reference.collect()
    finally:
        await c.aclose()
        await reference.aclose()
    assert [s.fetch["queues"]["mode"] for s in snaps] == ["full", "light", "light"]
    light = snaps[1]
    info = light.fetch["queues"]
    assert info["detail_by"] == "queue" and light.detail_by_queue == 10
    assert info["detail_queues"] > 1 and info["detail_found"] == info["detail_queues"]
    assert light.fetch["queue_pages"] == 1 + info["detail_queues"], "one listing, then one GET per queue"
    assert len(light.queues) > 10
    def seen(snap):  # type: ignore[no-untyped-def]
        return {(q.vhost, q.name): (q.messages, q.consumers, q.idle_since) for q in snap.queues}

    assert seen(light) == seen(full), "the light poll's queues read as a full listing's"


async def test_under_light_max_queues_the_polls_between_full_ones_are_light(demo):
    c = _collector(demo, full_every=4)
    try:
        modes = []
        for _ in range(3):
            snap = await c.collect()
            modes.append(snap.fetch["queues"]["mode"])
            assert snap.detail_by_queue is None
    finally:
        await c.aclose()
    assert modes == ["full", "light", "light"]
    assert snap.fetch["queues"]["detail_by"] == "name"
