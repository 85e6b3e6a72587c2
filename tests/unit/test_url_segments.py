"""What the user types after :server / :trace-request goes into a request path percent-encoded (issue #22):
`../os-services` cannot climb out of /servers/, and an unknown server is named as typed, without the URL."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator

import pytest

from tui.collectors.instances import InstancesCollector
from tui.errors import SourceError
from tui.openstack.client import connect
from tui.openstack.errors import NotFound
from tui.openstack.paging import segment
from tui.sim import start_demo
from tui.sim.demo import Demo


@pytest.fixture(scope="module")
def demo() -> Iterator[Demo]:
    sim = start_demo(storyline=False, instances=3, hosts=2, queues=3, churn=0.0)
    yield sim
    sim.stop()


def test_segment_encodes_every_separator() -> None:
    assert segment("../os-services") == "..%2Fos-services"
    for dots in ("..", ".", ""):
        with pytest.raises(NotFound):
            segment(dots)
    assert segment(";;garbage$$") == "%3B%3Bgarbage%24%24"
    assert segment("a?b#c d") == "a%3Fb%23c%20d"
    assert segment("7f01ec30-1b2c-4d5e-8f90-123456789abc") == "7f01ec30-1b2c-4d5e-8f90-123456789abc"


def _compute_targets(demo: Demo, since: int) -> list[str]:
    """The compute paths asked since `since` (the version discovery GET of /v2.1 left out)."""
    return [target for service, _m, target, _s, _b in list(demo.stats.log)[since:]
            if service == "compute" and target.rstrip("/") != "/v2.1"]


@pytest.mark.parametrize("typed", ["../os-services", "..", ";;garbage$$", "x/../../os-hypervisors?all=1"])
def test_server_detail_path_is_encoded(demo: Demo, typed: str) -> None:
    collector = InstancesCollector(demo.config().openstack)
    since = len(demo.stats.log)
    with pytest.raises(SourceError) as err:
        asyncio.run(collector.instance_detail(typed))
    targets = _compute_targets(demo, since)
    assert targets == ([] if typed == ".." else [f"/v2.1/servers/{segment(typed)}"]), targets
    message = str(err.value)
    assert isinstance(err.value, NotFound)
    assert message == f"no server '{typed}' in nova - give a server id, an id prefix or a name from the " \
                      "instances pane"
    assert "http" not in message
    asyncio.run(collector.aclose())


def test_openstacksdk_client_encodes_server_and_request_ids(demo: Demo) -> None:
    client = connect(demo.config().openstack)
    try:
        since = len(demo.stats.log)
        with pytest.raises(NotFound):
            client.server("../os-services")
        with pytest.raises(SourceError):
            client.instance_action("../..", "req-1/../../os-services")
        with pytest.raises(NotFound):
            client.instance_action("..", "req-1")
        targets = _compute_targets(demo, since)
        assert "/v2.1/servers/..%2Fos-services" in targets
        assert "/v2.1/servers/..%2F../os-instance-actions/req-1%2F..%2F..%2Fos-services" in targets
        assert not any(t.rstrip("/").endswith("/os-services") and "%2F" not in t for t in targets), targets
    finally:
        client.close()
