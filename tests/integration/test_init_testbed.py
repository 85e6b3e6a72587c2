"""`stacktop init --kolla` on a kolla-shaped folder describing the real test bed (its clouds.yaml, the
broker's management API, the 3-node Galera cluster), then `stacktop snapshot` with the config it wrote:
every source answers."""

from __future__ import annotations

import json
import os
import shutil
import stat
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
import yaml

from tests.integration.conftest import GaleraCluster
from tests.testbed.openstack import OpenStackCloud
from tests.testbed.rabbitmq import Broker

pytestmark = pytest.mark.integration


def kolla_folder(folder: Path, cloud: OpenStackCloud, broker: Broker, galera: GaleraCluster) -> Path:
    """globals.yml, passwords.yml, clouds.yaml and a multinode inventory, in kolla-ansible's shapes, for the
    test bed: the VIP is loopback, the monitoring accounts are the test bed's reader accounts."""
    folder.mkdir()
    shutil.copy(cloud.clouds_yaml, folder / "clouds.yaml")
    os.chmod(folder / "clouds.yaml", 0o600)
    host = broker.mgmt_url.split("://", 1)[1].rsplit(":", 1)
    (folder / "globals.yml").write_text(yaml.safe_dump({
        "kolla_base_distro": "debian",
        "openstack_release": "2025.2",  # its defaults: monitor account with a password, ProxySQL on
        "kolla_internal_vip_address": host[0],
        "rabbitmq_management_port": host[1].rstrip("/"),
        "rabbitmq_monitoring_user": broker.user,
        "mariadb_monitor_user": galera.reader_user,
        "neutron_plugin_agent": "openvswitch",
    }))
    passwords = folder / "passwords.yml"
    passwords.write_text(yaml.safe_dump({
        "database_password": "not-used-by-stacktop",
        "rabbitmq_password": "not-used-by-stacktop",
        "rabbitmq_monitoring_password": broker.password,
        "mariadb_monitor_password": galera.reader_password,
    }))
    os.chmod(passwords, 0o600)
    lines = ["[control]"]
    for i, node in enumerate(galera.nodes, 1):
        address, port = node.rsplit(":", 1)
        lines.append(f"db{i} ansible_host={address} mariadb_port={port}")
    lines += ["", "[mariadb:children]", "control", "", "[rabbitmq:children]", "control", ""]
    (folder / "multinode").write_text("\n".join(lines))
    return folder


def stacktop(*args: str, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "tui", *args], capture_output=True, text=True, timeout=180,
                          env=env)


def test_init_then_snapshot_reaches_every_source(tmp_path: Path, openstack_cloud: OpenStackCloud, healthy: Any,
                                                   rabbitmq_broker: Broker, galera_cluster: GaleraCluster) -> None:
    folder = kolla_folder(tmp_path / "kolla", openstack_cloud, rabbitmq_broker, galera_cluster)
    env = {k: v for k, v in os.environ.items() if not k.startswith(("OS_", "STACKTOP_CONFIG"))}
    config = tmp_path / "out" / "stacktop.toml"
    init = stacktop("init", "--kolla", str(folder), "-o", str(config), env=env)
    assert init.returncode == 0, init.stderr
    assert "not-used-by-stacktop" not in config.read_text()
    for name in ("stacktop.rabbitmq.password", "stacktop.galera.password"):
        assert stat.S_IMODE((config.parent / name).stat().st_mode) == 0o600

    snap = stacktop("snapshot", "--config", str(config), "--json", "--deadline", "120", env=env)
    assert snap.returncode in (0, 1, 2), snap.stdout[-2000:] + snap.stderr  # 3 = a source was not read
    report = json.loads(snap.stdout)
    for source in ("services", "instances", "rabbitmq", "galera"):
        assert report["sources"][source]["ok"], (source, report["sources"][source])
    nodes = report["data"]["galera"]["nodes"]
    assert [n["address"] for n in nodes] == list(galera_cluster.nodes)
    assert all(n["reachable"] and not n["auth_error"] for n in nodes), nodes  # the monitor account logged in
