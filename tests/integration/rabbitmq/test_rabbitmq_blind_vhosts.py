"""A RabbitMQ user that may not read a vhost is a finding, never silence (the real broker).

OpenStack-Ansible's `monitoring` user (tag `monitoring`) has no permission on the services' vhosts: the
management API lists every vhost to it, counts every queue in /api/overview, but lists none of those vhosts'
queues. Each test makes such a user (unique name, deleted afterwards) beside a vhost of its own holding a queue.
"""

from __future__ import annotations

import secrets
import urllib.parse
from collections.abc import Iterator

import pytest

from tests.integration.rabbitmq.conftest import Amqp, poll_until
from tests.testbed.rabbitmq import Broker
from tui.collectors.rabbitmq import RabbitMQCollector
from tui.rules.queues import rabbitmq_findings

pytestmark = pytest.mark.integration


def _q(name: str) -> str:
    return urllib.parse.quote(name, safe="")


@pytest.fixture
def monitoring_user(rabbitmq_broker: Broker) -> Iterator[tuple[str, str]]:
    """A user tagged `monitoring` with no permission on any vhost: (name, password)."""
    name, password = f"stacktop-mon-{secrets.token_hex(4)}", secrets.token_hex(8)
    with rabbitmq_broker.api() as c:
        c.put(f"/api/users/{_q(name)}", json={"password": password, "tags": "monitoring"}).raise_for_status()
    try:
        yield name, password
    finally:
        with rabbitmq_broker.api() as c:
            c.delete(f"/api/users/{_q(name)}")


def _blind(collector: RabbitMQCollector):
    async def collect():
        snap = await collector.collect()
        return snap, rabbitmq_findings(snap, snap.taken_at, 1)
    return collect


def _names(vhost: str):
    def check(result) -> bool:
        _, findings = result
        return any(f.kind == "rabbitmq.vhost_not_readable" and vhost in f.evidence["vhosts"] for f in findings)
    return check


async def test_unreadable_vhost_is_a_finding_naming_it(vb, amqp: Amqp, monitoring_user):
    """No [rabbitmq] vhosts: the broker counts the vhost's queue, the user sees none, the finding names it."""
    amqp.declare("conductor")
    user, password = monitoring_user
    c = RabbitMQCollector(vb.mgmt_url, user, password, interval=1, timeout=10)
    try:
        snap, findings = await poll_until(_blind(c), _names(vb.vhost), deadline_s=40,
                                          what=f"a finding naming {vb.vhost}")
    finally:
        await c.aclose()
    [finding] = [f for f in findings if f.kind == "rabbitmq.vhost_not_readable"]
    assert finding.severity == "warning"
    assert vb.vhost in finding.subject and f"user '{user}'" in finding.summary
    assert f"rabbitmqctl set_permissions -p {vb.vhost} {user} '' '' ''" in finding.next_step
    assert not any(q.vhost == vb.vhost for q in snap.queues)


async def test_configured_vhost_refused_is_a_finding_not_a_login_error(vb, amqp: Amqp, monitoring_user):
    """[rabbitmq] vhosts names a vhost the user may not read: the poll succeeds and says so (the management
    API answers 401 for it, which is not a wrong password)."""
    amqp.declare("conductor")
    user, password = monitoring_user
    c = RabbitMQCollector(vb.mgmt_url, user, password, vhosts=[vb.vhost], interval=1, timeout=10)
    try:
        snap = await c.collect()
    finally:
        await c.aclose()
    assert snap.unreadable_vhosts == (vb.vhost,)
    [finding] = [f for f in rabbitmq_findings(snap, snap.taken_at, 1) if f.kind == "rabbitmq.vhost_not_readable"]
    assert finding.subject == vb.vhost


async def test_the_named_fix_is_enough(vb, amqp: Amqp, monitoring_user, rabbitmq_broker: Broker):
    """After the finding's own command (no configure, write or read right), the queue is listed and the
    finding is gone."""
    amqp.declare("conductor")
    user, password = monitoring_user
    with rabbitmq_broker.api() as api:
        api.put(f"/api/permissions/{_q(vb.vhost)}/{_q(user)}",
                json={"configure": "", "write": "", "read": ""}).raise_for_status()
    c = RabbitMQCollector(vb.mgmt_url, user, password, vhosts=[vb.vhost], interval=1, timeout=10)
    try:
        snap = await c.collect()
    finally:
        await c.aclose()
    assert snap.unreadable_vhosts == ()
    assert [q.name for q in snap.queues] == ["conductor"]
    assert not [f for f in rabbitmq_findings(snap, snap.taken_at, 1) if f.kind == "rabbitmq.vhost_not_readable"]
