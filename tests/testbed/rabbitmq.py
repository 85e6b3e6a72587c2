"""RabbitMQ scenario helpers: per-run vhost, OpenStack-like queues, pika consumers, publish, memory alarm.

The broker is the machine's own (127.0.0.1:5672, guest/guest) with its management API on :15672
(scripts/testcloud up rabbitmq). Each run gets its own vhost so runs never see each other's queues. The
management API shows a change 4-9 s later: use wait_for() on it, never a fixed sleep.
"""

from __future__ import annotations

import contextlib
import secrets
import subprocess
import threading
import urllib.parse
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field

import httpx
import pika

from tests.testbed.wait import wait_for

# declared by OpenStack services on a real cloud; the zero-consumer scenario uses these names
OPENSTACK_LIKE_QUEUES = (
    "scheduler",
    "conductor",
    "compute.compute-01",
    "compute.compute-02",
    "notifications.info",
)


def openstack_like_queues() -> list[str]:
    """The OpenStack-like names, plus a fanout and a reply queue with fresh hex suffixes."""
    return [*OPENSTACK_LIKE_QUEUES, f"scheduler_fanout_{secrets.token_hex(16)}", f"reply_{secrets.token_hex(16)}"]


@dataclass(frozen=True)
class Broker:
    """Where the broker answers. amqp_url (with credentials, for pika) points at `vhost`."""

    mgmt_url: str = "http://127.0.0.1:15672"
    user: str = "guest"
    password: str = "guest"
    host: str = "127.0.0.1"
    port: int = 5672
    vhost: str = "/"

    @property
    def amqp_url(self) -> str:
        """amqp://user:password@host:port/<vhost> (vhost percent-encoded), for pika.URLParameters."""
        vh = urllib.parse.quote(self.vhost, safe="")
        return f"amqp://{self.user}:{self.password}@{self.host}:{self.port}/{vh}"

    @property
    def amqp_address(self) -> str:
        """amqp://host:port without credentials (what a stacktop config holds)."""
        return f"amqp://{self.host}:{self.port}"

    def with_vhost(self, vhost: str) -> Broker:
        return Broker(self.mgmt_url, self.user, self.password, self.host, self.port, vhost)

    def api(self) -> httpx.Client:
        return httpx.Client(base_url=self.mgmt_url, auth=(self.user, self.password), timeout=10.0)

    def get(self, path: str) -> object:
        with self.api() as c:
            r = c.get(path)
            r.raise_for_status()
            return r.json()

    def pika_parameters(self) -> pika.URLParameters:
        return pika.URLParameters(self.amqp_url)


def _q(name: str) -> str:
    return urllib.parse.quote(name, safe="")


def create_vhost(broker: Broker, name: str) -> Broker:
    """Create vhost `name` with full permissions for the broker's user; return the Broker for it."""
    with broker.api() as c:
        c.put(f"/api/vhosts/{_q(name)}").raise_for_status()
        c.put(f"/api/permissions/{_q(name)}/{_q(broker.user)}",
              json={"configure": ".*", "write": ".*", "read": ".*"}).raise_for_status()
    return broker.with_vhost(name)


def delete_vhost(broker: Broker, name: str) -> None:
    with broker.api() as c:
        r = c.delete(f"/api/vhosts/{_q(name)}")
        if r.status_code not in (204, 404):
            r.raise_for_status()


@contextlib.contextmanager
def temporary_vhost(broker: Broker, prefix: str = "stacktop-test") -> Iterator[Broker]:
    """A fresh vhost `<prefix>-<hex>` for the block, deleted afterwards (queues and all)."""
    name = f"{prefix}-{secrets.token_hex(4)}"
    vb = create_vhost(broker, name)
    try:
        yield vb
    finally:
        delete_vhost(broker, name)


def declare_queues(broker: Broker, names: Iterable[str], *, durable: bool = False) -> list[str]:
    """Declare queues (not exclusive, not auto-delete: they outlive the connection) in broker.vhost."""
    names = list(names)
    conn = pika.BlockingConnection(broker.pika_parameters())
    try:
        ch = conn.channel()
        for n in names:
            ch.queue_declare(queue=n, durable=durable)
    finally:
        conn.close()
    return names


def publish(broker: Broker, queue: str, body: bytes = b"stacktop test", count: int = 1) -> None:
    """Publish `count` messages to `queue` through the default exchange, on a connection closed at once: the
    queue's messages show, its `message_stats` may not (see Publisher)."""
    conn = pika.BlockingConnection(broker.pika_parameters())
    try:
        ch = conn.channel()
        for _ in range(count):
            ch.basic_publish(exchange="", routing_key=queue, body=body)
    finally:
        conn.close()


class Publisher:
    """A publishing connection kept open, as an OpenStack service keeps its own. A queue's publish counts
    (`message_stats.publish`) reach the management API from the publishing channel's metrics, sampled once a
    statistics interval; a channel closed before its sample takes them along, and the queue then shows
    messages with no `message_stats` at all. Close it when the statistics the test reads have shown."""

    def __init__(self, broker: Broker) -> None:
        params = broker.pika_parameters()
        params.heartbeat = 0  # idle between publishes, never pumped: no heartbeat to miss
        self._conn = pika.BlockingConnection(params)
        self._ch = self._conn.channel()
        self._ch.confirm_delivery()

    def publish(self, queue: str, count: int = 1, body: bytes | None = None) -> None:
        for i in range(count):
            self._ch.basic_publish("", queue, body if body is not None else f"msg {i}".encode())

    def close(self) -> None:
        with contextlib.suppress(Exception):
            self._conn.close()


@dataclass
class Consumer:
    """A pika consumer on its own connection and thread; ack=False leaves messages unacked."""

    broker: Broker
    queue: str
    ack: bool = True
    received: list[bytes] = field(default_factory=list)
    arguments: dict[str, object] | None = None  # basic.consume arguments (a stream wants x-stream-offset)
    _conn: pika.BlockingConnection | None = None
    _thread: threading.Thread | None = None
    _error: BaseException | None = None

    def start(self) -> Consumer:
        ready = threading.Event()

        def run() -> None:
            try:
                self._conn = pika.BlockingConnection(self.broker.pika_parameters())
                ch = self._conn.channel()
                ch.basic_qos(prefetch_count=10)

                def on_msg(chan, method, _props, body):  # type: ignore[no-untyped-def]
                    self.received.append(body)
                    if self.ack:
                        chan.basic_ack(method.delivery_tag)

                ch.basic_consume(queue=self.queue, on_message_callback=on_msg, arguments=self.arguments)
                ready.set()
                ch.start_consuming()
            except BaseException as exc:  # surfaced by stop() / start()
                self._error = exc
                ready.set()

        self._thread = threading.Thread(target=run, name=f"consumer-{self.queue}", daemon=True)
        self._thread.start()
        if not ready.wait(15):
            raise TimeoutError(f"consumer on {self.queue} did not start within 15 s")
        if self._error:
            raise self._error
        return self

    def stop(self) -> None:
        conn = self._conn
        if conn is not None and conn.is_open:
            def _close() -> None:
                with contextlib.suppress(Exception):
                    conn.close()  # ends start_consuming in the consumer thread

            with contextlib.suppress(Exception):
                conn.add_callback_threadsafe(_close)
        if self._thread is not None:
            self._thread.join(15)
        self._conn = None


@contextlib.contextmanager
def consumers(broker: Broker, queues: Iterable[str], *, ack: bool = True) -> Iterator[list[Consumer]]:
    """Attach one pika consumer to each queue for the block; detached (connection closed) afterwards."""
    started: list[Consumer] = []
    try:
        for q in queues:
            started.append(Consumer(broker, q, ack=ack).start())
        yield started
    finally:
        for c in started:
            c.stop()


def queue_info(broker: Broker, queue: str) -> dict:
    info = broker.get(f"/api/queues/{_q(broker.vhost)}/{_q(queue)}")
    assert isinstance(info, dict)
    return info


def wait_history_held(broker: Broker, queues: Iterable[str], timeout: float = 60.0) -> None:
    """Wait until the broker's own sample history of every queue shows it held with no consumer and no delivery
    for the one-shot window (tui.collectors.rabbitmq_history): the history a `stacktop snapshot` then reads."""
    from tui.collectors.rabbitmq_history import HISTORY_PARAMS, judge_history

    def held(queue: str) -> bool:
        with broker.api() as c:
            answer = c.get(f"/api/queues/{_q(broker.vhost)}/{_q(queue)}", params=HISTORY_PARAMS)
        return answer.status_code == 200 and judge_history(answer.json()).kind == "held"

    names = list(queues)
    wait_for(lambda: all(held(q) for q in names), timeout=timeout,
             what=f"a history of {', '.join(names)} held for the window in the management API")


def wait_consumers(broker: Broker, queue: str, count: int, timeout: float = 30.0) -> dict:
    """Wait until the management API shows `count` consumers on `queue` (it lags 4-9 s)."""
    return wait_for(lambda: (i := queue_info(broker, queue)).get("consumers") == count and i,
                    timeout=timeout, what=f"{count} consumer(s) on {queue} in the management API")


def _rabbitmqctl(*args: str) -> None:
    subprocess.run(["rabbitmqctl", "-q", *args], check=True, capture_output=True, timeout=60)


def memory_alarm_active(broker: Broker) -> bool:
    nodes = broker.get("/api/nodes?columns=name,mem_alarm")
    assert isinstance(nodes, list)
    return any(n.get("mem_alarm") for n in nodes)


@contextlib.contextmanager
def memory_alarm(broker: Broker, *, timeout: float = 30.0, restore: str = "0.4") -> Iterator[None]:
    """Raise the broker-wide memory alarm (vm_memory_high_watermark 0.0001) for the block; restore the
    watermark to `restore` in `finally` and wait until the alarm clears. Broker-wide: publishers in every
    vhost block meanwhile (the OpenStack test cloud's included), so keep the block short."""
    try:
        _rabbitmqctl("set_vm_memory_high_watermark", "0.0001")
        wait_for(lambda: memory_alarm_active(broker), timeout=timeout, what="the memory alarm to be raised")
        yield
    finally:
        _rabbitmqctl("set_vm_memory_high_watermark", restore)
        wait_for(lambda: not memory_alarm_active(broker), timeout=timeout, what="the memory alarm to clear")
