"""`stacktop init --kolla / --osa` writes the release's per-host log sources: the hosts of each service's
inventory group, the container (kolla) or unit (OpenStack-Ansible) in a `{host}` / `{container}` template read
over ssh with the operator's own ssh user; the config loader reads them back; a host name that is not a
plain name is left out with a note, never written into a command."""

from __future__ import annotations

import json
import shutil
import tomllib
from pathlib import Path

import pytest

from tui.cli import main
from tui.config import load_config

DATA = Path(__file__).resolve().parents[1] / "data" / "deploy"

KOLLA_GROUPS = """
[nova:children]
control

[nova-api:children]
nova

[nova-conductor:children]
nova

[neutron-server:children]
control

[neutron:children]
network

[neutron-l3-agent:children]
neutron
"""


def run(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str]:
    code = main(["init", *args])
    return code, capsys.readouterr().err


def by_service(path: Path) -> dict[str, dict]:
    data = tomllib.loads(path.read_text())
    return {s["service"]: s for s in data["recorder"]["log_sources"]}


def test_kolla_writes_each_services_container_log_on_the_hosts_of_its_group(tmp_path: Path, capsys) -> None:
    kolla = Path(shutil.copytree(DATA / "kolla", tmp_path / "kolla"))
    with (kolla / "multinode").open("a") as fh:
        fh.write(KOLLA_GROUPS)
    out = tmp_path / "stacktop.toml"
    code, err = run(capsys, "--kolla", str(kolla), "-o", str(out))
    assert code == 0, err
    sources = by_service(out)
    compute = sources["nova-compute"]
    assert compute == {"service": "nova-compute", "hosts": ["compute01", "compute02"], "container": "nova_compute",
                       "command": "ssh {host} sudo docker exec {container} tail -n 200000 "
                                  "/var/log/kolla/nova/nova-compute.log", "timeout": 20}
    assert sources["nova-conductor"]["hosts"] == ["control01", "control02", "control03"]
    assert sources["nova-api"]["container"] == "nova_api"
    # the Open vSwitch agent runs on the computes and on the hosts of the DHCP, L3 and metadata agents
    assert sources["neutron-openvswitch-agent"]["hosts"] == ["compute01", "compute02", "network01"]
    assert sources["neutron-openvswitch-agent"]["command"].endswith(
        "/var/log/kolla/neutron/neutron-openvswitch-agent.log")
    assert "glance" not in sources, "a group the inventory does not have gets no source"
    text = out.read_text()
    assert "USER@{host}" in text and "ssh {host}" in text  # the ssh user is left to the operator
    config = load_config(str(out), env={})
    loaded = {s.service: s for s in config.recorder.log_sources}
    assert loaded["nova-compute"].argv_for("compute02") == [
        "ssh", "compute02", "sudo", "docker", "exec", "nova_compute", "tail", "-n", "200000",
        "/var/log/kolla/nova/nova-compute.log"]


def test_kolla_with_podman_reads_through_podman(tmp_path: Path, capsys) -> None:
    kolla = Path(shutil.copytree(DATA / "kolla", tmp_path / "kolla"))
    with (kolla / "globals.yml").open("a") as fh:
        fh.write('\nkolla_container_engine: "podman"\n')
    out = tmp_path / "stacktop.toml"
    code, err = run(capsys, "--kolla", str(kolla), "-o", str(out))
    assert code == 0, err
    assert by_service(out)["nova-compute"]["command"].startswith("ssh {host} sudo podman exec {container} ")


def test_osa_writes_journald_units_on_the_hosts_of_each_group(tmp_path: Path, capsys) -> None:
    osa = Path(shutil.copytree(DATA / "osa", tmp_path / "osa"))
    inv_path = osa / "openstack_inventory.json"
    inventory = json.loads(inv_path.read_text())
    inventory["compute_hosts"] = {"hosts": ["compute1", "compute2"], "children": []}
    inventory["nova_compute"] = {"hosts": ["compute1", "compute2"], "children": []}
    inventory["nova_conductor"] = {"hosts": ["infra1_nova_conductor_container-1a2b3c4d"], "children": []}
    inventory["neutron_server"] = {"hosts": [], "children": ["neutron_server_container"]}
    inventory["neutron_server_container"] = {"hosts": ["infra1_neutron_server_container-5e6f7a8b"]}
    inventory["cinder_volume"] = {"hosts": ["storage1", "storage1;reboot", "-oProxyCommand=x"], "children": []}
    inv_path.write_text(json.dumps(inventory))
    out = tmp_path / "stacktop.toml"
    code, err = run(capsys, "--osa", str(osa), "-o", str(out))
    assert code == 0, err
    sources = by_service(out)
    assert sources["nova-compute"] == {
        "service": "nova-compute", "hosts": ["compute1", "compute2"], "container": "nova-compute",
        "command": "ssh {host} sudo journalctl -u {container} --since -2h --no-pager -o short-iso", "timeout": 20}
    assert sources["nova-conductor"]["hosts"] == ["infra1_nova_conductor_container-1a2b3c4d"]
    assert sources["neutron-server"]["hosts"] == ["infra1_neutron_server_container-5e6f7a8b"]
    assert sources["cinder-volume"]["hosts"] == ["storage1"], "names that are not plain host names are left out"
    text = out.read_text()
    assert "'storage1;reboot' of group cinder_volume is left out" in text
    config = load_config(str(out), env={})
    assert {s.service for s in config.recorder.log_sources} == set(sources)
