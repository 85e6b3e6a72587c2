"""The dashboard's first OpenStack reads without openstacksdk (tui.openstack.light) against the real test
cloud's Keystone, nova, neutron and cinder: the same rows and the same error lines as the openstacksdk path.
Read-only: a token POST and GETs."""

from __future__ import annotations

import socket
from pathlib import Path
from typing import Any

from tests.integration.services.conftest import TEST_THRESHOLDS, os_config, rewrite_clouds_yaml
from tests.testbed.openstack import OpenStackCloud
from tui.collectors.instances import InstancesCollector
from tui.collectors.services import ServicesCollector
from tui.config import OpenStackConfig
from tui.openstack.client import connect
from tui.openstack.triage import TriageClient, triage_client
from tui.runner import CollectorRunner


def light(cfg: OpenStackConfig) -> TriageClient:
    client = triage_client(cfg, handover_after_s=10_000)
    assert client is not None, "the test cloud's clouds.yaml is the common shape"
    return client


async def _read(cfg: OpenStackConfig, client: Any) -> dict[str, Any]:
    services = await ServicesCollector(cfg, TEST_THRESHOLDS, client_factory=lambda: client).collect()
    instances = InstancesCollector(cfg, client_factory=lambda: client, attention_first=True)
    first = await instances.collect()
    full = await instances.collect()
    return {
        "rows": {s.name: sorted((r.binary, r.host, r.id, r.status) for r in s.rows) for s in services.sections},
        "keystone": services.keystone.ok, "microversion": services.compute_microversion,
        "catalog": sorted(c.service_type for c in services.catalog),
        "attention": first.poll.mode, "servers": sorted(s.id for s in full.servers),
    }


async def test_light_path_reads_the_same_as_openstacksdk(openstack_cloud: OpenStackCloud) -> None:
    cfg = os_config(openstack_cloud.clouds_yaml, openstack_cloud.cloud)
    sdk, lite = connect(cfg), light(cfg)
    try:
        want, got = await _read(cfg, sdk), await _read(cfg, lite)
        assert got == want
        assert got["keystone"] and got["rows"]["compute"] and got["rows"]["network"] and got["rows"]["volume"]
        assert lite.backend == "light", "the real cloud needed nothing the light path does not handle"
    finally:
        sdk.close()
        lite.close()


async def _errors(cfg: OpenStackConfig, client: Any) -> dict[str, str | None]:
    out: dict[str, str | None] = {}
    for c in (ServicesCollector(cfg, TEST_THRESHOLDS, client_factory=lambda: client),
              InstancesCollector(cfg, client_factory=lambda: client, attention_first=True)):
        obs = await CollectorRunner(c).run_once()
        out[c.name] = obs.error
        if obs.snapshot is not None and c.name == "services":
            out["keystone"] = obs.snapshot.keystone.error
            out.update({s.name: s.error for s in obs.snapshot.sections})
    return out


async def test_refused_credentials_same_line(openstack_cloud: OpenStackCloud, tmp_path: Path) -> None:
    path = rewrite_clouds_yaml(openstack_cloud.clouds_yaml, tmp_path / "clouds.yaml", openstack_cloud.cloud,
                               username="stacktop-no-such-user")
    cfg = os_config(path, openstack_cloud.cloud)
    sdk, lite = connect(cfg), light(cfg)
    try:
        want, got = await _errors(cfg, sdk), await _errors(cfg, lite)
        assert got == want
        assert got["services"] and "401" in got["services"] and openstack_cloud.cloud in got["services"]
    finally:
        sdk.close()
        lite.close()


async def test_keystone_closed_port_same_lines(openstack_cloud: OpenStackCloud, tmp_path: Path) -> None:
    with socket.socket() as s:  # a port nobody listens on
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    path = rewrite_clouds_yaml(openstack_cloud.clouds_yaml, tmp_path / "clouds.yaml", openstack_cloud.cloud,
                               auth_url=f"http://127.0.0.1:{port}/v3")
    cfg = os_config(path, openstack_cloud.cloud, timeout=10)
    sdk, lite = connect(cfg), light(cfg)
    try:
        want, got = await _errors(cfg, sdk), await _errors(cfg, lite)
        assert got == want
        assert got["keystone"] and "connection refused" in got["keystone"]
    finally:
        sdk.close()
        lite.close()
