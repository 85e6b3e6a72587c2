"""RabbitMQ collector tests: a vhost of its own per test, on the test bed's broker.

`rabbitmq_broker` (tests/integration/conftest.py) starts the management API and gives the per-run vhost;
`vb` here is a fresh vhost per test (the same queue names recur across tests), deleted afterwards with all
its queues. `amqp` declares (with x-expires when asked), publishes and attaches consumers: tests write,
stacktop never does.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import Any

import pika
import pytest

from tests.testbed.rabbitmq import Broker, Consumer, Publisher, temporary_vhost


@pytest.fixture
def vb(rabbitmq_broker: Broker) -> Iterator[Broker]:
    with temporary_vhost(rabbitmq_broker, prefix="stacktop-rmq") as broker:
        yield broker


@dataclass
class Amqp:
    """Test-side AMQP helper on one vhost: declare, publish, attach consumers (each on its own thread)."""

    broker: Broker
    _consumers: list[Consumer] = field(default_factory=list)
    _publisher: Publisher | None = None

    def declare(self, *names: str, expires_ms: int | None = None) -> None:
        conn = pika.BlockingConnection(self.broker.pika_parameters())
        try:
            ch = conn.channel()
            for name in names:
                ch.queue_declare(name, arguments={"x-expires": expires_ms} if expires_ms else None)
        finally:
            conn.close()

    def publish(self, name: str, count: int = 1) -> None:
        """Publish on the helper's own publishing connection, open until close() (see Publisher)."""
        if self._publisher is None:
            self._publisher = Publisher(self.broker)
        self._publisher.publish(name, count)

    def consume(self, name: str) -> Consumer:
        """A consumer that never acks (messages stay unacked while it is attached)."""
        consumer = Consumer(self.broker, name, ack=False).start()
        self._consumers.append(consumer)
        return consumer

    def close(self) -> None:
        for consumer in self._consumers:
            consumer.stop()
        self._consumers.clear()
        if self._publisher is not None:
            self._publisher.close()
            self._publisher = None


@pytest.fixture
def amqp(vb: Broker) -> Iterator[Amqp]:
    helper = Amqp(vb)
    try:
        yield helper
    finally:
        helper.close()


async def poll_until(collect: Callable[[], Any], check: Callable[[Any], bool], *, deadline_s: float = 30.0,
                     every_s: float = 1.0, what: str = "condition") -> Any:
    """Collect repeatedly until check(result) holds; fail naming `what` after deadline_s."""
    end = time.monotonic() + deadline_s
    while True:
        last = await collect()
        if check(last):
            return last
        if time.monotonic() > end:
            pytest.fail(f"{what} not seen within {deadline_s:g}s; last: {last!r}"[:2000])
        await asyncio.sleep(every_s)
