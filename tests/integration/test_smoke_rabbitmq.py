"""Smoke: the machine's real RabbitMQ answers the real clients (pika, management API) in the per-run vhost."""

from __future__ import annotations

import pika
import pytest

from tests.testbed.rabbitmq import Broker, consumers, declare_queues, publish, queue_info, wait_consumers
from tests.testbed.wait import wait_for

pytestmark = pytest.mark.integration


def test_management_api_answers(rabbitmq_broker: Broker) -> None:
    overview = rabbitmq_broker.get("/api/overview")
    assert isinstance(overview, dict)
    assert overview["rabbitmq_version"]
    vhosts = rabbitmq_broker.get("/api/vhosts?columns=name")
    assert isinstance(vhosts, list)
    assert rabbitmq_broker.vhost in {v["name"] for v in vhosts}


def test_pika_connects_to_the_per_run_vhost(rabbitmq_broker: Broker) -> None:
    conn = pika.BlockingConnection(rabbitmq_broker.pika_parameters())
    try:
        assert conn.is_open
        ch = conn.channel()
        ok = ch.queue_declare(queue="smoke", durable=False)
        assert ok.method.queue == "smoke"
    finally:
        conn.close()


def test_consumer_and_publish_show_in_management_api(rabbitmq_broker: Broker) -> None:
    (queue,) = declare_queues(rabbitmq_broker, ["smoke.consumed"])
    with consumers(rabbitmq_broker, [queue]) as (consumer,):
        wait_consumers(rabbitmq_broker, queue, 1)
        publish(rabbitmq_broker, queue, b"hello", count=3)
        wait_for(lambda: len(consumer.received) == 3, timeout=15, what="3 messages delivered to the consumer")
    wait_consumers(rabbitmq_broker, queue, 0)
    assert queue_info(rabbitmq_broker, queue)["name"] == queue
