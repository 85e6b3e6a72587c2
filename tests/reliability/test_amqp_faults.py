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
from tests.testbed.faults import AmqpEndpoint, TlsKit
from tui.collectors.rabbitmq import RabbitMQCollector
from tui.collectors.rabbitmq_amqp import AmqpError, passive_check
from tui.models.rabbitmq import QueueInfo, RabbitSnapshot

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


async def test_amqps_confirmation_honours_cacert_and_insecure() -> None:
    """[rabbitmq] cacert / insecure reach the amqps:// confirmation as they reach the management API: a
    private CA's certificate is trusted with cacert, an untrusted one is accepted only with insecure = true.
    Both endpoints go silent after the handshake, so getting past TLS shows as 'no AMQP answer'."""
    kit = TlsKit()
    private = AmqpEndpoint("hang", tls=kit.trusted)  # signed by the kit's CA, which the system does not trust
    self_signed = AmqpEndpoint("tls", kit=kit)
    suspect = QueueInfo(vhost="/", name="compute.c1", messages=5, consumers=0, stuck_polls=3,
                        stuck_since=datetime.now(UTC))
    snap = RabbitSnapshot(endpoint="http://127.0.0.1:1", taken_at=datetime.now(UTC), queues=(suspect,))

    async def error(url: str, **tls: object) -> str:
        collector = RabbitMQCollector("http://127.0.0.1:1", "guest", "guest", amqp_url=url, timeout=TIMEOUT,
                                      **tls)  # type: ignore[arg-type]
        out = await collector._confirm_live(snap)
        assert out.confirm_error, "a silent endpoint cannot confirm anything"
        assert_readable(out.confirm_error, names=("127.0.0.1",))
        return out.confirm_error

    try:
        assert private.url.startswith("amqps://") and self_signed.url.startswith("amqps://")
        not_trusted = await error(private.url)
        assert "TLS certificate not trusted" in not_trusted and "[rabbitmq] cacert" in not_trusted, not_trusted
        assert "no AMQP answer" in await error(private.url, cacert=str(kit.ca_file))
        assert "TLS certificate not trusted" in await error(self_signed.url, cacert=str(kit.ca_file))
        assert "no AMQP answer" in await error(self_signed.url, insecure=True)
    finally:
        private.stop()
        self_signed.stop()
