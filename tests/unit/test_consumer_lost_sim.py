"""Early warning with production timers on the simulated cloud (report_interval 10 s, service_down_time 60 s,
[rabbitmq] interval 15 s as shipped, no AMQP): a killed nova-compute is named by its lost consumer at the first
RabbitMQ poll after the broker's statistics show it, 15 s at most, 45 s before nova calls it down; a compute that
comes back consumes on a new connection, and the restart is seen."""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterator

import pytest

from tui.sim import start_demo
from tui.sim.demo import Demo

from .test_triage_sim import Cloud

PRODUCTION_DOWN = 60.0
RABBITMQ_INTERVAL = 15.0  # RabbitMQConfig's default


@pytest.fixture
def demo() -> Iterator[Demo]:
    d = start_demo(instances=24, hosts=4, queues=30, churn=0, storyline=False, manual=True,
                   service_down_time=PRODUCTION_DOWN)
    try:
        yield d
    finally:
        d.stop()


@pytest.fixture
async def cloud(demo: Demo) -> AsyncIterator[Cloud]:
    c = Cloud(demo)
    try:
        yield c
    finally:
        await c.aclose()


def about_compute_02(cloud: Cloud) -> list[tuple[str, str]]:
    return sorted((f.kind, f.severity) for o in cloud.observations.values() for f in o.findings
                  if f.evidence.get("host") == "compute-02")


async def test_a_killed_compute_is_named_within_one_rabbitmq_interval(cloud: Cloud) -> None:
    assert cloud.config.rabbitmq.interval == RABBITMQ_INTERVAL and not cloud.config.rabbitmq.amqp_url
    cloud.demo.advance(6)
    for _ in range(3):
        await cloud.poll()
    assert about_compute_02(cloud) == []
    cloud.demo.inject("kill_compute", host="compute-02")
    cloud.demo.advance(RABBITMQ_INTERVAL)  # the kill right after a poll: the next one is a full interval away
    hints = await cloud.poll()
    lost = [f for o in cloud.observations.values() for f in o.findings if f.kind == "rabbitmq.consumer_lost"]
    assert [(f.subject, f.evidence["service"], f.evidence["host"]) for f in lost] == [
        ("compute.compute-02", "nova-compute", "compute-02")]
    # named at once; an info while a restart could still bring it back (the first poll that saw it gone)
    assert lost[0].severity == "info" and "nova-compute on compute-02 stopped consuming" in lost[0].summary
    assert ("nova.service_enabled_but_down", "critical") not in about_compute_02(cloud)  # nova: not before 60 s
    (hint,) = [h for h in hints if h.kind == "triage.service_lost"]
    assert hint.evidence["host"] == "compute-02" and hint.evidence["consumer"] == "leaving"
    cloud.demo.advance(RABBITMQ_INTERVAL)  # still gone a poll later: past the grace, critical, still before nova
    hints = await cloud.poll()
    # critical: as consumer_lost, or as queue_no_consumer once messages wait for it (told once, with since when)
    told = {k for k, sev in about_compute_02(cloud) if sev == "critical"}
    assert told & {"rabbitmq.consumer_lost", "rabbitmq.queue_no_consumer"}, about_compute_02(cloud)
    assert ("nova.service_enabled_but_down", "critical") not in about_compute_02(cloud)
    (hint,) = [h for h in hints if h.kind == "triage.service_lost"]
    assert (hint.severity, hint.evidence["consumer"]) == ("critical", "gone")
    assert "the process died or lost the bus" in hint.summary


async def test_a_compute_back_is_a_restart_on_a_new_connection(cloud: Cloud) -> None:
    cloud.demo.advance(6)
    for _ in range(3):
        await cloud.poll()
    cloud.demo.inject("kill_compute", host="compute-02")
    cloud.demo.advance(RABBITMQ_INTERVAL)
    await cloud.poll()
    cloud.demo.inject("start_compute", host="compute-02")
    cloud.demo.advance(6)
    await cloud.poll()
    snap = cloud.observations["rabbitmq"].snapshot
    q = snap.queue("compute.compute-02")
    assert q is not None and q.consumer_lost_since is None and q.consumer_restarted_at is not None
    assert [f for o in cloud.observations.values() for f in o.findings if f.kind == "rabbitmq.consumer_lost"] == []
