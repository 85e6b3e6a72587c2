"""Real RabbitMQ for the RabbitMQ collector tests: the machine's broker, a fresh vhost per test.

`rabbitmq_broker` (session) makes sure the management API answers (testcloud/rabbitmq.sh up) and yields
where it is; `vhost` (function) creates a vhost of its own through the management API, lets guest use it,
and deletes it (and so every queue in it) afterwards. `amqp` declares, publishes and consumes with pika on
that vhost: tests write, stacktop never does.
"""

from __future__ import annotations

import os
import subprocess
import time
import uuid
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import quote

import httpx
import pytest

ROOT = Path(__file__).resolve().parents[3]


@dataclass(frozen=True)
class Broker:
    mgmt_url: str
    user: str
    password: str
    amqp_url: str
    amqp_host: str = "127.0.0.1"
    amqp_port: int = 5672


@pytest.fixture(scope="session")
def rabbitmq_broker() -> Broker:
    subprocess.run(["bash", str(ROOT / "testcloud" / "rabbitmq.sh"), "up"], check=True, capture_output=True,
                   text=True)
    return Broker(
        mgmt_url=os.environ.get("STACKTOP_RABBITMQ_MGMT_URL", "http://127.0.0.1:15672"),
        user=os.environ.get("STACKTOP_RABBITMQ_USER", "guest"),
        password=os.environ.get("STACKTOP_RABBITMQ_PASSWORD", "guest"),
        amqp_url="amqp://127.0.0.1:5672",
    )


def _admin(broker: Broker) -> httpx.Client:
    return httpx.Client(base_url=broker.mgmt_url, auth=(broker.user, broker.password), timeout=10)


def create_vhost(broker: Broker, name: str) -> None:
    with _admin(broker) as http:
        http.put(f"/api/vhosts/{quote(name, safe='')}").raise_for_status()
        http.put(f"/api/permissions/{quote(name, safe='')}/{broker.user}",
                 json={"configure": ".*", "write": ".*", "read": ".*"}).raise_for_status()


def delete_vhost(broker: Broker, name: str) -> None:
    with _admin(broker) as http:
        http.delete(f"/api/vhosts/{quote(name, safe='')}")


@pytest.fixture
def vhost(rabbitmq_broker: Broker) -> Iterator[str]:
    name = f"stacktop-test-{uuid.uuid4().hex[:10]}"
    create_vhost(rabbitmq_broker, name)
    try:
        yield name
    finally:
        delete_vhost(rabbitmq_broker, name)


@dataclass
class Amqp:
    """Test-side AMQP helper (blocking pika) on one vhost: declare, publish, attach consumers."""

    broker: Broker
    vhost: str
    _conns: list[Any] = field(default_factory=list)

    def _connect(self) -> Any:
        import pika

        conn = pika.BlockingConnection(pika.ConnectionParameters(
            self.broker.amqp_host, self.broker.amqp_port, virtual_host=self.vhost,
            credentials=pika.PlainCredentials(self.broker.user, self.broker.password)))
        self._conns.append(conn)
        return conn

    def declare(self, *names: str, expires_ms: int | None = None) -> None:
        ch = self._connect().channel()
        args = {"x-expires": expires_ms} if expires_ms else None
        for name in names:
            ch.queue_declare(name, arguments=args)

    def publish(self, name: str, count: int = 1) -> None:
        ch = self._connect().channel()
        ch.confirm_delivery()
        for i in range(count):
            ch.basic_publish("", name, f"msg {i}".encode())

    def consume(self, name: str) -> Any:
        """Attach a consumer that never acks; returns its connection (close it to detach)."""
        conn = self._connect()
        ch = conn.channel()
        ch.basic_qos(prefetch_count=1)
        ch.basic_consume(name, on_message_callback=lambda *a: None)
        return conn

    def close(self) -> None:
        for conn in self._conns:
            try:
                if conn.is_open:
                    conn.close()
            except Exception:
                pass
        self._conns.clear()


@pytest.fixture
def amqp(rabbitmq_broker: Broker, vhost: str) -> Iterator[Amqp]:
    helper = Amqp(rabbitmq_broker, vhost)
    try:
        yield helper
    finally:
        helper.close()


async def poll_until(collect: Callable[[], Any], check: Callable[[Any], bool], *, deadline_s: float = 30.0,
                     every_s: float = 1.0, what: str = "condition") -> Any:
    """Collect repeatedly until check(snapshot) holds; fail naming `what` after deadline_s."""
    import asyncio

    end = time.monotonic() + deadline_s
    last = None
    while True:
        last = await collect()
        if check(last):
            return last
        if time.monotonic() > end:
            pytest.fail(f"{what} not seen within {deadline_s:g}s; last snapshot: {last!r}"[:2000])
        await asyncio.sleep(every_s)
