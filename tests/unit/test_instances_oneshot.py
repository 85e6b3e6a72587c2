"""`stacktop snapshot`'s instances read (InstancesCollector.prepare_oneshot) on the simulated cloud: the servers
worth attention plus every server of a compute whose nova-compute is down, not every server; the triage's
count of a down compute's instances is the full listing's, and a host it could not list is said unknown."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from tui.collectors.instances import InstancesCollector
from tui.errors import SourceError
from tui.models.instances import InstancesSnapshot, PollInfo
from tui.openstack import connect
from tui.rules.triage import _on_down_host
from tui.sim import start_demo
from tui.sim.demo import Demo

DOWN = 30.0


@pytest.fixture
def demo() -> Iterator[Demo]:
    d = start_demo(instances=120, hosts=4, queues=20, churn=0, storyline=False, manual=True,
                   service_down_time=DOWN)
    try:
        d.advance(6)
        d.inject("kill_compute", host="compute-02")
        d.advance(DOWN + 5)
        yield d
    finally:
        d.stop()


class RefusingHostFilter:
    """A client whose `host=` listings fail (a nova that refuses the filter, or times out on it)."""

    def __init__(self, client: Any) -> None:
        self._client = client

    def get_json(self, service: str, path: str, **kwargs: Any) -> Any:
        if "host=" in path:
            raise SourceError("GET compute /servers/detail: HTTP 500")
        return self._client.get_json(service, path, **kwargs)

    def __getattr__(self, name: str) -> Any:
        return getattr(self._client, name)


async def _read(demo: Demo, *, oneshot: bool, wrap: Any = None) -> InstancesSnapshot:
    cfg = demo.config().openstack
    client = connect(cfg)
    collector = InstancesCollector(cfg, client_factory=lambda: wrap(client) if wrap else client, clock=demo.now)
    if oneshot:
        collector.prepare_oneshot()
    try:
        return await collector.collect()
    finally:
        await collector.aclose()
        client.close()


async def test_oneshot_lists_the_down_compute_whole_and_the_rest_by_attention(demo: Demo) -> None:
    full = await _read(demo, oneshot=False)
    one = await _read(demo, oneshot=True)
    assert not full.partial and one.partial and one.listed_hosts == ("compute-02",)
    on_down = full.servers_on("compute-02")
    assert on_down and {s.id for s in one.servers_on("compute-02") or ()} == {s.id for s in on_down}
    assert len(one.servers) < len(full.servers)
    assert {s.id for s in one.attention} == {s.id for s in full.attention}
    assert one.servers_on("compute-01") is None and full.servers_on("compute-01") is not None
    # the triage's words about the down compute are the full listing's
    assert _on_down_host(one.servers_on("compute-02"), 0) == _on_down_host(on_down, 0)
    assert "ACTIVE instance(s) keep running" in _on_down_host(on_down, 0)


async def test_a_down_compute_that_cannot_be_listed_is_unknown_not_empty(demo: Demo) -> None:
    one = await _read(demo, oneshot=True, wrap=RefusingHostFilter)
    assert one.partial and one.listed_hosts == ()
    assert one.servers_on("compute-02") is None
    assert "it runs no instances" not in _on_down_host(one.servers_on("compute-02"), 0)


def test_a_partial_snapshot_knows_a_host_only_when_listed() -> None:
    from datetime import UTC, datetime

    now = datetime.now(UTC)
    partial = InstancesSnapshot(taken_at=now, poll=PollInfo(mode="attention"), listed_hosts=("c2",))
    assert partial.servers_on("c2") == [] and partial.servers_on("c1") is None
    assert InstancesSnapshot(taken_at=now).servers_on("c1") == []


async def test_more_down_computes_than_the_cap_list_every_server_once(demo: Demo,
                                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    """Past DOWN_HOSTS_LISTED down computes (a rack, a region), one listing of every server instead of one per
    host: each down compute's instances are known all the same."""
    from tui.collectors import instances

    monkeypatch.setattr(instances, "DOWN_HOSTS_LISTED", 0)
    full = await _read(demo, oneshot=False)
    one = await _read(demo, oneshot=True)
    assert one.partial and one.listed_hosts == ("compute-02",)
    assert {s.id for s in one.servers} == {s.id for s in full.servers}
    assert {s.id for s in one.servers_on("compute-02") or ()} == {s.id for s in full.servers_on("compute-02") or ()}
