"""Contract: the simulator's RabbitMQ 4.0 cluster (start_demo(rabbitmq4=True)) against the real 3-node RabbitMQ
4.0 cluster of the test bed (scripts/testcloud up rabbitmq4), in a vhost of this run: queue rows per type
(classic, quorum, stream), a paged listing with columns, the light listing, nodes, overview, local alarms.
Drift fails by field."""

from __future__ import annotations

import base64
import json
import urllib.request
from typing import Any
from urllib.parse import quote, urlencode

import pika
import pytest

from tests.contract.shape import drift, shape
from tests.testbed.rabbit4 import Rabbit4Cluster
from tests.testbed.rabbitmq import Broker, Consumer, temporary_vhost
from tests.testbed.wait import wait_for
from tui.collectors.rabbitmq_history import HISTORY_PARAMS
from tui.sim import start_demo

pytestmark = pytest.mark.integration
MAPS = ("[].arguments", "[].effective_policy_definition", "[].open_files", "[].readers", "items[].arguments")
IGNORE = ("[].applications[]", "[].auth_mechanisms[]", "[].exchange_types[]", "[].contexts[]",
          "exchange_types[]", "listeners[]", "contexts[]", "churn_rates", "message_stats",
          "[].metrics_gc_queue_length.", "[].ra_open_file_metrics.", "[].message_stats.",
          "[].single_active_consumer_tag")
HISTORY = urlencode(HISTORY_PARAMS)  # a suspect queue's sample history: the one-shot confirmation's GET
LIGHT = "columns=name,vhost,messages,messages_ready,messages_unacknowledged,arguments,type,state,node,leader," \
        "members,online,delivery_limit&disable_stats=true&enable_queue_totals=true"


def _sim_get(demo: Any, path: str) -> Any:
    auth = base64.b64encode(b"guest:guest").decode()
    req = urllib.request.Request(demo.rabbitmq_url + path, headers={"Authorization": f"Basic {auth}"})
    with urllib.request.urlopen(req) as resp:
        return json.load(resp)


def _declare(vb: Broker) -> None:
    conn = pika.BlockingConnection(vb.pika_parameters())
    try:
        ch = conn.channel()
        ch.confirm_delivery()
        ch.queue_declare("compute.contract-host", durable=True, arguments={"x-queue-type": "quorum"})
        ch.queue_declare("conductor", durable=True, arguments={"x-queue-type": "quorum"})
        ch.queue_declare("reply_ctl-1:nova-api:1", durable=True,
                         arguments={"x-queue-type": "quorum", "x-expires": 1_800_000})
        ch.queue_declare("scheduler_fanout", durable=True, arguments={"x-queue-type": "stream"})
        ch.queue_declare("classic.contract")
        for name in ("compute.contract-host", "scheduler_fanout", "classic.contract"):
            for _ in range(3):
                ch.basic_publish("", name, b"stacktop test")
    finally:
        conn.close()


@pytest.fixture(scope="module")
def both(rabbitmq4_cluster: Rabbit4Cluster) -> Any:
    with temporary_vhost(rabbitmq4_cluster.broker(0), prefix="stacktop-test-c4") as vb:
        _declare(vb)
        vh = quote(vb.vhost, safe="")
        reader = Consumer(vb, "conductor").start()
        demo = start_demo(instances=20, hosts=3, queues=60, churn=0, storyline=False, rabbitmq4=True)
        try:
            rows = wait_for(lambda: (r := vb.get(f"/api/queues/{vh}")) and len(r) == 5
                            and all("messages" in q for q in r)
                            and next(q for q in r if q["name"] == "conductor").get("consumers") == 1
                            # the publish counters (message_stats) come a statistics tick after the messages
                            and all(any("message_stats" in q for q in _typed(r, t))
                                    for t in ("classic", "quorum", "stream")) and r,
                            timeout=90, what="statistics (messages, publishes, the consumer) for the five queues")
            assert isinstance(rows, list)
            real = {
                "queues": rows,
                "page": vb.get(f"/api/queues/{vh}?page=1&page_size=2&columns=name,vhost,messages,consumers"),
                "light": vb.get(f"/api/queues/{vh}?{LIGHT}"),
                "nodes": vb.get("/api/nodes"),
                "overview": vb.get("/api/overview"),
                "alarms": vb.get("/api/health/checks/local-alarms"),
                "history": vb.get(f"/api/queues/{vh}/compute.contract-host?{HISTORY}"),  # quorum, never consumed
            }
            wait_for(lambda: all("messages" in q for q in _sim_get(demo, "/api/queues")), timeout=30,
                     what="the simulator's first statistics tick")
            with demo.engine.lock:  # the 4.0 profile has no classic queue of its own: one to compare
                demo.engine._queue("classic.contract", demo.engine.clock.time() - 30, qtype="classic")
            sim = {
                "queues": _sim_get(demo, "/api/queues"),
                "page": _sim_get(demo, "/api/queues?page=1&page_size=2&columns=name,vhost,messages,consumers"),
                "light": _sim_get(demo, f"/api/queues?{LIGHT}"),
                "nodes": _sim_get(demo, "/api/nodes"),
                "overview": _sim_get(demo, "/api/overview"),
                "alarms": _sim_get(demo, "/api/health/checks/local-alarms"),
                "history": _sim_get(demo, f"/api/queues/%2F/notifications.info?{HISTORY}"),  # the same
            }
            yield real, sim
        finally:
            demo.stop()
            reader.stop()


def _typed(rows: list[dict[str, Any]], kind: str) -> list[dict[str, Any]]:
    return [r for r in rows if r.get("type") == kind]


@pytest.mark.parametrize("what", ["classic", "quorum", "stream", "page", "nodes", "overview", "alarms"])
def test_simulator_matches_the_real_rabbitmq_4_cluster(both: Any, what: str) -> None:
    real, sim = both
    if what in ("classic", "quorum", "stream"):
        r, s = _typed(real["queues"], what), _typed(sim["queues"], what)
        assert r and s
    else:
        r, s = real[what], sim[what]
    lines = drift(shape(r, MAPS), shape(s, MAPS), ignore=IGNORE)
    assert not lines, f"the simulator drifted from the real RabbitMQ 4.0 ({what}):\n" + "\n".join(lines)


@pytest.mark.parametrize("kind", ["classic", "quorum", "stream"])
def test_light_listing_matches_per_type(both: Any, kind: str) -> None:
    real, sim = both
    r, s = _typed(real["light"], kind), _typed(sim["light"], kind)
    assert r and s
    lines = drift(shape(r, MAPS), shape(s, MAPS), ignore=IGNORE)
    assert not lines, f"the simulator's light listing drifted ({kind}):\n" + "\n".join(lines)


def test_history_answer_matches(both: Any) -> None:
    """A quorum queue's sample history (lengths and message rates): every field, message_stats included."""
    real, sim = both
    lines = drift(shape(real["history"], MAPS), shape(sim["history"], MAPS))
    assert not lines, "the simulator's history answer drifted (RabbitMQ 4.0):\n" + "\n".join(lines)
    assert len(real["history"]["messages_details"]["samples"]) == len(sim["history"]["messages_details"]["samples"])
