"""AMQP use is passive only, proved on the real broker: asking about a queue that does not exist twice finds it
missing both times (a non-passive declare would have created it the first time), and an existing queue's
message count is unchanged by the check."""

from __future__ import annotations

import pytest

from tests.testbed.rabbitmq import Broker
from tui.collectors.rabbitmq_amqp import passive_check

pytestmark = pytest.mark.integration


def test_passive_check_creates_nothing_and_consumes_nothing(vb: Broker, amqp) -> None:  # type: ignore[no-untyped-def]
    amqp.declare("compute.passive-proof")
    amqp.publish("compute.passive-proof", count=3)
    keys = [(vb.vhost, "stacktop-never-created"), (vb.vhost, "compute.passive-proof")]
    for _ in range(2):
        live = passive_check(vb.amqp_url, vb.user, vb.password, keys, timeout=5)
        assert live[keys[0]].missing, "the check created the queue it asked about"
        assert live[keys[1]].messages == 3 and live[keys[1]].consumers == 0
