"""AMQP (the live confirmation of suspect queues) under faults: refused, a broker that accepts and never
speaks, one that speaks nonsense, one with an untrusted certificate (amqps). Each is one readable AmqpError
within the timeout; in the collector it only sets confirm_error, the poll itself stands (rules fall back to
the two-poll verdict). The login-refused case runs on the real broker in tests/integration/rabbitmq."""

from __future__ import annotations

import socket
import time
from collections.abc import Iterator
from datetime import UTC, datetime

import pytest

from tests.reliability.world import assert_readable
from tui.collectors.rabbitmq import RabbitMQCollector
from tui.collectors.rabbitmq_amqp import AmqpError, passive_check
from tui.models.rabbitmq import QueueInfo, RabbitSnapshot
from tui.sim.faults import AmqpEndpoint

TIMEOUT = 1.0


def _closed_port() -> int:
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = int(s.getsockname()[1])
    s.close()
    return port


@pytest.fixture(params=["refused", "hang", "garbage", "tls"])
def amqp_url(request: pytest.FixtureRequest) -> Iterator[str]:
    if request.param == "refused":
        yield f"amqp://127.0.0.1:{_closed_port()}/"
        return
    endpoint = AmqpEndpoint(request.param)
    try:
        yield endpoint.url
    finally:
        endpoint.stop()


def test_passive_check_fails_readably_within_the_timeout(amqp_url: str) -> None:
    t0 = time.monotonic()
    with pytest.raises(AmqpError) as err:
        passive_check(amqp_url, "guest", "guest", [("/", "compute.c1")], timeout=TIMEOUT)
    assert time.monotonic() - t0 < TIMEOUT * 4 + 1, "the check outlived its timeout"
    assert_readable(str(err.value), names=("127.0.0.1",))
    assert "guest" not in str(err.value).replace("user 'guest'", ""), "no credentials in the line"


async def test_collector_poll_stands_when_the_confirmation_fails(amqp_url: str) -> None:
    collector = RabbitMQCollector("http://127.0.0.1:1", "guest", "guest", amqp_url=amqp_url, timeout=TIMEOUT)
    suspect = QueueInfo(vhost="/", name="compute.c1", messages=5, consumers=0, stuck_polls=3,
                        stuck_since=datetime.now(UTC))
    snap = RabbitSnapshot(endpoint="http://127.0.0.1:1", taken_at=datetime.now(UTC), queues=(suspect,))
    out = await collector._confirm_live(snap)
    assert out.confirmation is None and out.confirm_error
    assert_readable(out.confirm_error, names=("127.0.0.1",))
    assert out.queues == snap.queues, "the management API's numbers are kept"
