"""A catalog service hidden from stacktop's user, on the real test bed: the real services collector reads the
real cloud through a client whose catalog lacks the block-storage entries (what Keystone's endpoint filtering
gives a project it leaves cinder out of; the test cloud's Keystone itself is only read), the real RabbitMQ
collector reads the cloud's vhost `openstack`, where the running cinder-scheduler and cinder-volume consume their
topics. triage.catalog_hidden names block-storage and the queues; with the whole catalog there is no such hint
and the volume services are read."""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

import pytest

from tests.integration.triage.conftest import Poll, Triage
from tests.testbed.openstack import OpenStackCloud
from tui.collectors.rabbitmq import RabbitMQCollector
from tui.collectors.services import ServicesCollector
from tui.config import OpenStackConfig, Thresholds
from tui.openstack import connect

pytestmark = pytest.mark.integration

THRESHOLDS = Thresholds(service_down_time=20, agent_down_time=20, volume_service_down_time=20,
                        fleet_down_fraction=0.5)
VOLUME_TYPES = ("block-storage", "volumev3", "volumev2", "volume")


class CatalogWithout:
    """The real client, its catalog without the entries of some service types."""

    def __init__(self, client: Any, hidden: tuple[str, ...]) -> None:
        self._client = client
        self._hidden = hidden

    def catalog(self) -> list[dict[str, Any]]:
        return [s for s in self._client.catalog() if s.get("type") not in self._hidden]

    def __getattr__(self, name: str) -> Any:
        return getattr(self._client, name)


@asynccontextmanager
async def control_plane(cloud: OpenStackCloud, broker: Any, hidden: tuple[str, ...]) -> AsyncIterator[Triage]:
    cfg = OpenStackConfig(cloud=cloud.cloud, clouds_file=str(cloud.clouds_yaml), interval=2, timeout=15)
    client = connect(cfg)
    services = ServicesCollector(cfg, THRESHOLDS, client_factory=lambda: CatalogWithout(client, hidden))
    rabbit = RabbitMQCollector(broker.mgmt_url, broker.user, broker.password, vhosts=("openstack",), timeout=10)
    try:
        yield Triage([services, rabbit])
    finally:
        await rabbit.aclose()
        client.close()


def ready(poll: Poll) -> bool:
    """Keystone answered the services read and cinder's queues have consumers in this poll."""
    svc = poll.observations["services"].snapshot
    return svc is not None and svc.keystone.ok and bool(consumed_cinder_queues(poll))


def consumed_cinder_queues(poll: Poll) -> list[str]:
    """The cinder queues with a consumer in this poll's RabbitMQ snapshot (the cloud is shared: other sessions
    stop cinder's processes at times)."""
    snap = poll.observations["rabbitmq"].snapshot
    return sorted(q.name for q in snap.queues if q.name.startswith("cinder-") and (q.consumers or 0) > 0) \
        if snap is not None else []


async def test_block_storage_hidden_from_the_catalog_while_cinder_runs(openstack_cloud: OpenStackCloud,
                                                                       rabbitmq_broker: Any) -> None:
    async with control_plane(openstack_cloud, rabbitmq_broker, VOLUME_TYPES) as triage:
        poll = await triage.until(ready, timeout=120, what="Keystone answering, cinder's queues with consumers")
    svc = poll.observations["services"].snapshot
    assert svc.keystone.ok and not svc.volume.deployed, svc
    hidden = [h for h in poll.hints if h.kind == "triage.catalog_hidden"]
    assert [(h.subject, h.severity) for h in hidden] == [("block-storage", "warning")], poll.kinds()
    hint = hidden[0]
    assert f"catalog of cloud '{openstack_cloud.cloud}' lists no 'block-storage' endpoint" in hint.summary
    consumed = consumed_cinder_queues(poll)
    assert hint.evidence["queues"] == consumed[:20], (hint.evidence["queues"], consumed)
    assert f"RabbitMQ queues {consumed[0]}" in hint.summary, hint.summary


async def test_no_hint_with_the_whole_catalog(openstack_cloud: OpenStackCloud, rabbitmq_broker: Any) -> None:
    async with control_plane(openstack_cloud, rabbitmq_broker, ()) as triage:
        poll = await triage.until(ready, timeout=120, what="Keystone answering, cinder's queues with consumers")
    svc = poll.observations["services"].snapshot
    assert svc.volume.deployed and svc.volume.rows, svc.volume
    assert "triage.catalog_hidden" not in [k for k, _ in poll.kinds()], poll.kinds()
