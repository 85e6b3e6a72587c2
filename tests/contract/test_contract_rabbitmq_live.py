"""Contract: the simulator's RabbitMQ management API against the real broker (a per-run vhost): queue rows
(with stats, paged with columns), nodes, overview, the local-alarms health check. Drift fails by field."""

from __future__ import annotations

import base64
import contextlib
import itertools
import json
import urllib.request
from urllib.parse import quote, urlencode

import pika
import pytest

from tests.contract.shape import drift, shape
from tests.testbed.rabbitmq import (
    Publisher,
    consumers,
    declare_queues,
    queue_info,
    temporary_vhost,
    wait_consumers,
    wait_for,
)
from tui.collectors.rabbitmq_history import HISTORY_PARAMS
from tui.sim import start_demo

pytestmark = pytest.mark.integration
MAPS = ("[].arguments", "[].effective_policy_definition", "items[].arguments", "arguments")
# per-node lists whose elements nothing in stacktop reads (plugins, listeners, auth mechanisms)
IGNORE = ("[].applications[]", "[].auth_mechanisms[]", "[].exchange_types[]", "[].contexts[]",
          "exchange_types[]", "listeners[]", "contexts[]", "churn_rates", "message_stats",
          "[].metrics_gc_queue_length.", "[].ra_open_file_metrics.")


def _sim_get(demo, path: str) -> object:  # type: ignore[no-untyped-def]
    auth = base64.b64encode(b"guest:guest").decode()
    req = urllib.request.Request(demo.rabbitmq_url + path, headers={"Authorization": f"Basic {auth}"})
    with urllib.request.urlopen(req) as resp:
        return json.load(resp)


@pytest.fixture(scope="module")
def both(rabbitmq_broker):  # type: ignore[no-untyped-def]
    broker = rabbitmq_broker
    vh = quote(broker.vhost, safe="")
    declare_queues(broker, ["compute.contract-host", "conductor", "reply_0123456789abcdef0123456789abcdef"])
    # message_stats (publish counts) reach a queue row from the publishing channel's metrics, sampled once a
    # statistics interval; a channel closed before a sample takes its counts with it (a publisher closed at once
    # left none ~1 run in 9: the wait below timed out). So the publisher stays open until they show.
    publisher = pika.BlockingConnection(broker.pika_parameters())
    channel = publisher.channel()
    for _ in range(3):
        channel.basic_publish(exchange="", routing_key="compute.contract-host", body=b"stacktop test")
    demo = start_demo(instances=20, hosts=3, queues=40, churn=0, storyline=False)
    try:
        with consumers(broker, ["conductor"]):
            wait_consumers(broker, "conductor", 1)
            # message_stats may lag the `messages` key: wait for both, or the shapes compare a moment apart
            wait_for(lambda: all("messages" in q for q in broker.get(f"/api/queues/{vh}"))
                     and any("message_stats" in q for q in broker.get(f"/api/queues/{vh}")), timeout=60,
                     what="stats (messages and message_stats) for the queues of the vhost")
            real = {
                "queues": [q for q in broker.get(f"/api/queues/{vh}")],
                "page": broker.get(f"/api/queues/{vh}?page=1&page_size=2&columns=name,vhost,messages,consumers"),
                "queue": broker.get(f"/api/queues/{vh}/conductor"),
                "nodes": broker.get("/api/nodes"),
                "overview": broker.get("/api/overview"),
                "alarms": broker.get("/api/health/checks/local-alarms"),
            }
        # the simulator's rows carry statistics from its first statistics tick after the queue was declared,
        # as the broker's do: compare once its conductor has them
        wait_for(lambda: "messages" in _sim_get(demo, "/api/queues/%2F/conductor"), timeout=30,
                 what="the simulator's first queue statistics")
        sim = {
            "queues": [q for q in _sim_get(demo, "/api/queues/%2F") if "messages" in q],
            "page": _sim_get(demo, "/api/queues/%2F?page=1&page_size=2&columns=name,vhost,messages,consumers"),
            "queue": _sim_get(demo, "/api/queues/%2F/conductor"),
            "nodes": _sim_get(demo, "/api/nodes"),
            "overview": _sim_get(demo, "/api/overview"),
            "alarms": _sim_get(demo, "/api/health/checks/local-alarms"),
        }
        yield real, sim
    finally:
        demo.stop()
        publisher.close()


@pytest.mark.parametrize("what", ["queues", "page", "queue", "nodes", "overview", "alarms"])
def test_simulator_matches_the_real_broker(both, what):
    real, sim = both
    lines = drift(shape(real[what], MAPS), shape(sim[what], MAPS), ignore=IGNORE)
    assert not lines, f"the simulator drifted from the real RabbitMQ ({what}):\n" + "\n".join(lines)


HISTORY = urlencode(HISTORY_PARAMS)


@pytest.fixture(scope="module")
def histories(rabbitmq_broker):  # type: ignore[no-untyped-def]
    """One queue's sample history (the one-shot confirmation's GET) from both: a queue that was never consumed
    (notifications nobody reads) and one a consumer takes messages from (conductor)."""
    with temporary_vhost(rabbitmq_broker, prefix="stacktop-contract-history") as vb:
        vh = quote(vb.vhost, safe="")
        declare_queues(vb, ["notifications.info", "conductor"])
        with contextlib.closing(Publisher(vb)) as pub, consumers(vb, ["conductor"]):
            pub.publish("notifications.info", count=2)
            wait_consumers(vb, "conductor", 1)
            pub.publish("conductor", count=2)
            wait_for(lambda: {"deliver_get", "publish"} <= set(queue_info(vb, "conductor").get("message_stats") or {})
                     and "publish" in (queue_info(vb, "notifications.info").get("message_stats") or {}), timeout=60,
                     what="publish and delivery statistics of the vhost's queues")
            real = {name: vb.get(f"/api/queues/{vh}/{name}?{HISTORY}") for name in ("notifications.info", "conductor")}
    demo = start_demo(instances=20, hosts=3, queues=40, churn=0, storyline=False)
    try:
        sim = wait_for(lambda: (got := {name: _sim_get(demo, f"/api/queues/%2F/{name}?{HISTORY}")
                                        for name in ("notifications.info", "conductor")})
                       and "deliver_get" in got["conductor"].get("message_stats", {}) and got, timeout=30,
                       what="the simulator's first delivery statistics")
    finally:
        demo.stop()
    return real, sim


@pytest.mark.parametrize("name", ["notifications.info", "conductor"])
def test_simulator_answers_the_history_query_as_the_real_broker(histories, name):
    real, sim = histories
    lines = drift(shape(real[name], MAPS), shape(sim[name], MAPS))
    assert not lines, f"the simulator drifted from the real RabbitMQ (history of {name}):\n" + "\n".join(lines)
    for answer in (real[name], sim[name]):  # newest first, 60 s every 5 s
        stamps = [s["timestamp"] for s in answer["messages_details"]["samples"]]
        assert len(stamps) == 13 and stamps == sorted(stamps, reverse=True)
        assert {a - b for a, b in itertools.pairwise(stamps)} == {5000}
