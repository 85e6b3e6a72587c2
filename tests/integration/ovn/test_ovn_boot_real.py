"""A real boot through nova on the ML2/OVN profile (testcloud/ovn_nova.sh: the profile's own nova, whose compute-02
asks the OVN neutron-server for its ports). While neutron's IPAM table is held, the port create waits in
neutron-server and the build stays in task_state `networking` on compute-02; stacktop's snapshot names the owner
as an on-call engineer on OVN needs it: neutron-server and its OVN mechanism driver first, then ovn-controller on
compute-02 (never an "L2 agent"). Once released, the port is bound to compute-02 by the OVN driver and the
server turns ACTIVE."""

from __future__ import annotations

import json
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.testbed.ovn import BOOT_NETWORK, NOVA_CLOUD, NOVA_REGION, OvnNova, run_snapshot
from tests.testbed.wait import wait_for

pytestmark = pytest.mark.integration

STUCK_AFTER_S = 5  # [thresholds.stuck] networking for this test (default 300 s)


def stuck_finding(config: Path, server_id: str) -> tuple[dict[str, Any], dict[str, Any]] | None:
    report: dict[str, Any] = json.loads(run_snapshot(config, "--json").stdout)
    found = [f for f in report["findings"] if f["kind"] == "instance.stuck" and f["subject"] == server_id]
    return (report, found[0]) if found else None


@pytest.fixture
def conn(ovn_nova: OvnNova) -> Iterator[Any]:
    c = ovn_nova.connect()
    yield c
    c.close()


def task(conn: Any, server_id: str) -> tuple[str, str | None, str | None]:
    s = conn.compute.get_server(server_id)
    return s.status, s.task_state, s.compute_host


def test_a_boot_on_compute02_held_in_networking_names_neutron_ovn_then_ovn_controller_on_compute02(
        ovn_nova: OvnNova, conn: Any, tmp_path: Path) -> None:
    config = ovn_nova.config(tmp_path / "ovn-nova.toml", stuck={"networking": STUCK_AFTER_S})
    net = conn.network.find_network(BOOT_NETWORK)
    assert net is not None, f"network {BOOT_NETWORK} of testcloud/ovn_nova.sh is missing"
    image, flavor = conn.image.find_image("tiny"), conn.compute.find_flavor("m1.tiny")
    # a test that killed compute-02's ovn-controller leaves its agents dead for up to agent_down_time after
    # the restart: start from a host whose ports can bind, so the finding is about the wait alone
    wait_for(lambda: {(a.binary, a.is_alive) for a in conn.network.agents(host="compute-02")}
             == {("ovn-controller", True), ("neutron-ovn-agent", True)}, timeout=90,
             what="compute-02's OVN agents alive")
    server = None
    t0 = time.monotonic()
    try:
        with ovn_nova.ipam_held():
            server = conn.compute.create_server(name="stacktop-ovn-networking", image_id=image.id,
                                                flavor_id=flavor.id, networks=[{"uuid": net.id}], host="compute-02")
            wait_for(lambda: task(conn, server.id) == ("BUILD", "networking", "compute-02"), timeout=120,
                     what="the build in task_state networking on compute-02")
            in_networking = time.monotonic() - t0
            report, finding = wait_for(lambda: stuck_finding(config, server.id), timeout=120,
                                       what=f"instance.stuck (networking > {STUCK_AFTER_S} s)")
            found_at = time.monotonic() - t0
            ev = finding["evidence"]
            assert ev["task_state"] == "networking" and ev["phase"] == "networking", ev
            assert ev["host"] == "compute-02", ev
            assert ev["owner"] == "neutron-server", ev
            assert ev["first_log"] == "neutron-server (on the controllers: its OVN mechanism driver)", ev
            assert ev["then"] == "ovn-controller on compute-02", ev
            assert ev["host_problems"] == [] and finding["severity"] == "warning", finding
            assert "waiting on neutron creating and binding ports; owner neutron-server" in finding["summary"]
            assert finding["next_step"].startswith(
                "open the log of neutron-server (on the controllers: its OVN mechanism driver) first, then "
                "ovn-controller on compute-02"), finding["next_step"]
            # stacktop read the OVN neutron of RegionOVNNova: its agents are OVN's, and nothing speaks of L2
            assert report["data"]["services"]["keystone"]["cloud"] == NOVA_CLOUD
            network = [c for c in report["data"]["services"]["catalog"] if c["service_type"] == "network"]
            assert [c["region"] for c in network] == [NOVA_REGION], network
            assert "L2 agent" not in json.dumps(report) and "openvswitch-agent" not in json.dumps(report)
            plain = run_snapshot(config).stdout
            assert "stuck in networking" in plain and "ovn-controller on compute-02" in plain, plain
            assert task(conn, server.id)[1] == "networking"  # still held: the finding was about this wait
        # released: the OVN driver binds the port to compute-02, the build goes on to ACTIVE
        wait_for(lambda: task(conn, server.id)[0] == "ACTIVE", timeout=180, what="the server ACTIVE once released")
        ports = list(conn.network.ports(device_id=server.id))
        assert [(p.binding_host_id, p.binding_vif_type) for p in ports] == [("compute-02", "ovs")], ports
        print(f"\n[timing] networking after {in_networking:.1f} s, instance.stuck after {found_at:.1f} s, "
              f"ACTIVE after {time.monotonic() - t0:.1f} s")
    finally:
        if server is not None:
            conn.compute.delete_server(server.id, ignore_missing=True)
            conn.compute.wait_for_delete(server, wait=120)
