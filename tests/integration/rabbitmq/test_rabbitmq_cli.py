"""The rabbitmqctl source (no management API) against the machine's real broker."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from tests.integration.rabbitmq.conftest import poll_until
from tui.collectors.rabbitmq_cli import RabbitMQCliCollector
from tui.errors import SourceError
from tui.snapshot import collect_once

pytestmark = pytest.mark.integration


async def test_cli_sees_the_stopped_compute(vb, amqp):
    amqp.declare("conductor", "compute.compute-02")
    amqp.consume("conductor")
    amqp.publish("compute.compute-02", 2)
    c = RabbitMQCliCollector("rabbitmqctl", vhosts=[vb.vhost], timeout=30)

    async def poll():
        snap = await c.collect()
        return snap, c.findings(snap, datetime.now(UTC))

    # rabbitmqctl reads the queue processes: no statistics lag, but the 2-poll rule still holds.
    snap, findings = await poll_until(poll, lambda r: (q := r[0].queue("compute.compute-02")) is not None
                                      and q.stuck_polls >= 1, deadline_s=30, what="compute-02 in list_queues")
    assert snap.via == "cli" and snap.queue("conductor").consumers == 1
    assert snap.queue("compute.compute-02").messages == 2
    [node] = snap.nodes
    assert node.running is True and node.partitions == () and snap.alarms == ()
    if snap.queue("compute.compute-02").stuck_polls == 1:
        assert findings == []
        snap, findings = await poll()
    [f] = findings
    assert f.severity == "critical" and f.evidence["host"] == "compute-02"

    [obs] = await collect_once([RabbitMQCliCollector("rabbitmqctl", vhosts=[vb.vhost], timeout=30)])
    assert obs.ok, obs.error
    assert obs.snapshot.confirmation == "second-sample"
    assert [f.subject for f in obs.findings] == [f"{vb.vhost}/compute.compute-02"]


async def test_cli_errors_name_the_key(vb):
    with pytest.raises(SourceError, match=r"vhost '.*-missing' does not exist - check \[rabbitmq\] vhosts"):
        await RabbitMQCliCollector("rabbitmqctl", vhosts=[f"{vb.vhost}-missing"], timeout=30).collect()
    with pytest.raises(SourceError, match=r"cannot start .* - check \[rabbitmq\] cli_command"):
        await RabbitMQCliCollector("/nonexistent/rabbitmqctl").collect()
