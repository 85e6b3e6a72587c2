"""The services source against the real OpenStack test cloud: baseline, a killed nova-compute (late ->
countdown -> enabled-but-down -> clears), a killed neutron agent, a stopped nova-conductor (one fleet
finding), Keystone refusing connections, credentials refused.

Every test restores what it killed (tests/testbed/openstack.py context managers restart it in `finally` and
wait until every service is up again). Waits are polls with deadlines.
"""

from __future__ import annotations

import itertools
import signal
import time
from pathlib import Path
from typing import Any

import pytest

from tests.integration.services.conftest import (
    POLL_S,
    TEST_THRESHOLDS,
    KeystoneProxy,
    make_collector,
    os_config,
    rewrite_clouds_yaml,
    services_poller,
)
from tests.testbed.openstack import KillGuard, OpenStackCloud, service_killed
from tests.testbed.poller import Poll, Poller
from tui.errors import SourceError
from tui.rules.liveness import assess, down_time_for

pytestmark = pytest.mark.integration

DOWN = TEST_THRESHOLDS.service_down_time




def row_of(poll: Poll, section: str, host: str, binary: str) -> Any:
    rows = [r for r in poll.snapshot.section(section).rows if r.host == host and r.binary == binary]
    assert len(rows) == 1, f"expected one {binary} on {host}, got {rows}"
    return rows[0]


def liveness(poll: Poll, section: str, host: str, binary: str) -> Any:
    sec = poll.snapshot.section(section)
    return assess(row_of(poll, section, host, binary), sec.read_at, sec.read_at, down_time_for(section,
                                                                                                TEST_THRESHOLDS))


async def test_baseline_rows_microversion_catalog_and_no_findings(healthy: Any, poller: Poller) -> None:
    def settled(p: Poll) -> bool:  # another test may have just restarted a service: wait for fresh heartbeats
        rows = [r for s in p.snapshot.sections for r in s.rows]
        return not p.findings and all(r.age_at_read_s is not None and r.age_at_read_s < 10 for r in rows)

    poll = await poller.until(settled, timeout=60, what="a poll without findings, every heartbeat fresh")
    snap = poll.snapshot
    assert snap.keystone.ok and snap.keystone.auth_url and snap.keystone.cloud == "stacktop-testcloud"
    mv = tuple(int(x) for x in (snap.compute_microversion or "0.0").split("."))
    assert mv >= (2, 53), snap.compute_microversion
    computes = sorted(r.host for r in snap.compute.rows if r.binary == "nova-compute")
    assert computes == ["compute-01", "compute-02"]
    assert all(len(r.id) == 36 for r in snap.compute.rows), "UUID ids (microversion >= 2.53)"
    assert all(r.forced_down is False for r in snap.compute.rows)
    agents = sorted(r.host for r in snap.network.rows if r.agent_type == "Open vSwitch agent")
    assert agents == ["compute-01", "compute-02"]
    assert {r.binary for r in snap.volume.rows} >= {"cinder-volume", "cinder-scheduler"}
    for section in snap.sections:
        assert section.error is None and section.read_at is not None
        for r in section.rows:  # report_interval=5: ages on the API's clock stay well under 10 s
            assert r.age_at_read_s is not None and -2 <= r.age_at_read_s < 10, r
    types = {c.service_type: c for c in snap.catalog}
    assert {"identity", "compute", "network", "image", "placement", "block-storage"} <= set(types)
    assert all(c.ok for c in snap.catalog), [c for c in snap.catalog if not c.ok]
    assert snap.missing_types == ()
    assert poll.took < 5, f"a warm poll took {poll.took:.2f} s"


async def test_killed_compute_goes_late_counts_down_then_enabled_but_down_and_clears(
        healthy: Any, poller: Poller) -> None:
    await poller.once()  # warm: token, discovery
    host = "compute-02"
    with service_killed(healthy, "nova-compute-02", wait_down=False):
        guard = KillGuard("nova-compute-02")

        def raised(p: Poll) -> bool:
            return guard.check() or any(f.subject == host for f in p.kinds("nova.service_enabled_but_down"))

        found = await poller.until(raised, timeout=2 * DOWN + 30,
                                   what=f"nova.service_enabled_but_down for {host}")
        killed_at = guard.killed_at
        elapsed = found.t + found.took - (killed_at - poller.t0)
        after_kill = [p for p in poller.polls if p.t >= killed_at - poller.t0]
        timeline = [(round(p.t - (killed_at - poller.t0), 1), liveness(p, "compute", host, "nova-compute"))
                    for p in after_kill]
        late = [(t, lv.remaining_s) for t, lv in timeline if lv.late]
        assert len(late) >= 2, f"the row should be late for several polls before down: {timeline}"
        assert all(a[1] > b[1] for a, b in itertools.pairwise(late)), f"countdown must go down: {late}"
        first_down = next(t for t, lv in timeline if lv.down)
        assert late[0][0] < first_down
        longest_poll = max(p.took for p in after_kill)
        assert elapsed <= DOWN + 2 * (POLL_S + longest_poll), (
            f"finding {elapsed:.1f} s after the kill; allowed service_down_time + 2 polls")
        f = found.kinds("nova.service_enabled_but_down")[0]
        assert f.severity == "critical" and f.evidence["host"] == host
        assert not found.kinds("nova.fleet_down"), "one host down of two is not a fleet flip here"
        print(f"\n[timing] compute-02 killed -> late at {late[0][0]} s, "
              f"countdown {[r for _, r in late]}, critical at {elapsed:.1f} s")
    restarted_at = time.monotonic()
    cleared = await poller.until(lambda p: not p.kinds("nova.service_enabled_but_down"), timeout=120,
                                 what="the finding to clear after the restart")
    assert liveness(cleared, "compute", host, "nova-compute").label == "up"
    print(f"[timing] cleared {time.monotonic() - restarted_at:.1f} s after the cloud was healthy again")


async def test_killed_neutron_agent_is_neutron_agent_down_for_that_host(healthy: Any, poller: Poller) -> None:
    await poller.once()
    host = "compute-01"
    with service_killed(healthy, "neutron-agent-compute-01", wait_down=False):
        guard = KillGuard("neutron-agent-compute-01")
        found = await poller.until(
            lambda p: guard.check() or any(f.evidence.get("host") == host for f in p.kinds("neutron.agent_down")),
            timeout=2 * TEST_THRESHOLDS.agent_down_time + 40, what=f"neutron.agent_down for {host}")
        killed_at = guard.killed_at
        f = next(f for f in found.kinds("neutron.agent_down") if f.evidence.get("host") == host)
        assert f.severity == "critical" and f.subject == f"neutron-openvswitch-agent@{host}"
        assert not found.kinds("neutron.fleet_down")
        print(f"\n[timing] agent killed -> neutron.agent_down after {time.monotonic() - killed_at:.1f} s")
    await poller.until(lambda p: not p.kinds("neutron.agent_down"), timeout=120, what="the agent finding to clear")


async def test_stopped_conductor_is_one_fleet_finding_not_host_findings(healthy: Any, poller: Poller) -> None:
    await poller.once()
    with service_killed(healthy, "nova-conductor", sig=signal.SIGTERM, wait_down=False):
        guard = KillGuard("nova-conductor", signal.SIGTERM)
        found = await poller.until(lambda p: guard.check() or p.kinds("nova.fleet_down"), timeout=2 * DOWN + 40,
                                   what="nova.fleet_down")
        stopped_at = guard.killed_at
        during = [p for p in poller.polls if p.t >= stopped_at - poller.t0]
        fleet = found.kinds("nova.fleet_down")
        assert len(fleet) == 1, fleet
        f = fleet[0]
        assert f.subject == "nova-compute" and f.severity == "critical"
        assert "nova-conductor" in f.next_step and "RabbitMQ" in f.next_step
        assert f.evidence["hosts"] == ["compute-01", "compute-02"]
        host_findings = [(p.t, g.subject) for p in during for g in p.kinds("nova.service_enabled_but_down")]
        assert host_findings == [], f"no per-host criticals while the fleet flips: {host_findings}"
        print(f"\n[timing] conductor stopped -> nova.fleet_down after {time.monotonic() - stopped_at:.1f} s "
              f"(down {f.evidence['down']}, late {f.evidence['late']})")
        # it stays one fleet finding on the next poll as well (both down by then or soon)
        again = await poller.once()
        assert len(again.kinds("nova.fleet_down")) == 1 and not again.kinds("nova.service_enabled_but_down")
    healthy_at = time.monotonic()
    await poller.until(lambda p: not p.kinds("nova.fleet_down") and not p.kinds("nova.service_down"),
                       timeout=120, what="the fleet finding to clear after the conductor is back")
    print(f"[timing] cleared {time.monotonic() - healthy_at:.1f} s after the cloud was healthy again")


async def test_keystone_refusing_connections_is_a_finding_and_the_rows_stay(
        healthy: Any, keystone_proxy: KeystoneProxy) -> None:
    collector = make_collector(os_config(keystone_proxy.clouds_yaml, keystone_proxy.cloud))
    poller = services_poller(collector)
    try:
        first = await poller.until(lambda p: not p.findings, timeout=60, what="a clean poll through the proxy")
        assert first.snapshot.keystone.auth_url == keystone_proxy.auth_url
        keystone_proxy.proxy.close()
        down = await poller.once()
        (f,) = down.kinds("keystone.unreachable")
        assert f.severity == "critical" and f.subject == keystone_proxy.auth_url
        assert keystone_proxy.auth_url in f.summary and f"'{keystone_proxy.cloud}'" in f.summary
        assert "connection refused" in f.summary
        # the session's token is still valid: the listings were read anyway, fresh
        assert down.snapshot.compute.error is None and len(down.snapshot.compute.rows) >= 4
        assert down.snapshot.compute.read_at and down.snapshot.compute.read_at > first.snapshot.compute.read_at
        assert {k.kind for k in down.findings} == {"keystone.unreachable"}
        keystone_proxy.proxy.open()
        await poller.until(lambda p: not p.kinds("keystone.unreachable"), timeout=30, what="Keystone back")
    finally:
        await collector.aclose()


async def test_keystone_closed_port_from_the_start(openstack_cloud: OpenStackCloud, tmp_path: Path) -> None:
    import socket

    with socket.socket() as s:  # a port nobody listens on
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    auth_url = f"http://127.0.0.1:{port}/v3"
    yaml_path = rewrite_clouds_yaml(openstack_cloud.clouds_yaml, tmp_path / "clouds.yaml", openstack_cloud.cloud,
                                    auth_url=auth_url)
    collector = make_collector(os_config(yaml_path, openstack_cloud.cloud, timeout=10))
    try:
        t0 = time.monotonic()
        snap = await collector.collect()
        took = time.monotonic() - t0
        assert not snap.keystone.ok and snap.keystone.auth_url == auth_url
        for section in snap.sections:
            assert section.rows == () and section.error and auth_url in section.error
        findings = collector.findings(snap, snap.taken_at)
        assert [(f.kind, f.subject) for f in findings] == [("keystone.unreachable", auth_url)]
        assert str(yaml_path) == findings[0].evidence["clouds_file"]
        assert took < 5, f"a refused Keystone must not cost the poll its timeout ({took:.1f} s)"
    finally:
        await collector.aclose()


async def test_refused_credentials_are_a_source_error_naming_the_cloud(openstack_cloud: OpenStackCloud,
                                                                       tmp_path: Path) -> None:
    yaml_path = rewrite_clouds_yaml(openstack_cloud.clouds_yaml, tmp_path / "clouds.yaml", openstack_cloud.cloud,
                                    username="stacktop-no-such-user")
    collector = make_collector(os_config(yaml_path, openstack_cloud.cloud))
    try:
        with pytest.raises(SourceError) as err:
            await collector.collect()
        line = str(err.value)
        assert "\n" not in line and openstack_cloud.cloud in line and "401" in line
    finally:
        await collector.aclose()


async def test_hung_compute_api_costs_only_its_section(openstack_cloud: OpenStackCloud, tmp_path: Path) -> None:
    import asyncio
    import socket

    import yaml

    blackhole = socket.socket()  # listens, never accepts: connections succeed, no answer ever comes
    blackhole.bind(("127.0.0.1", 0))
    blackhole.listen(64)
    data = yaml.safe_load(openstack_cloud.clouds_yaml.read_text())
    data["clouds"][openstack_cloud.cloud]["compute_endpoint_override"] = \
        f"http://127.0.0.1:{blackhole.getsockname()[1]}/v2.1"
    yaml_path = tmp_path / "clouds.yaml"
    yaml_path.write_text(yaml.safe_dump(data))
    yaml_path.chmod(0o600)
    collector = make_collector(os_config(yaml_path, openstack_cloud.cloud, timeout=8))
    try:
        t0 = time.monotonic()
        snap = await asyncio.wait_for(collector.collect(), timeout=collector.timeout)
        took = time.monotonic() - t0
        assert took < collector.timeout
        assert snap.compute.error and "timed out" in snap.compute.error
        assert snap.network.error is None and snap.network.rows
        assert snap.volume.error is None and snap.volume.rows
        kinds = {(f.kind, f.subject) for f in collector.findings(snap, snap.taken_at)}
        assert ("services.read_failed", "compute") in kinds
        print(f"\n[timing] hung compute API: poll returned in {took:.1f} s (timeout {collector.timeout:g} s)")
    finally:
        await collector.aclose()
        blackhole.close()
