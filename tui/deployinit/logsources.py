"""The per-host log sources `stacktop init` writes: for each service on the request path and each agent on
the computes, where a release keeps its log, on which hosts (the inventory group that runs it) and how it is
read over ssh. The ssh user is the operator's: the command says `ssh {host}`, and their ssh config (or an
edit to `ssh USER@{host}`) supplies it.

kolla-ansible (every release from 2024.1 to master): each service runs in a container named after it
(`nova_compute`, `neutron_openvswitch_agent`; ansible/roles/<role>/defaults/main.yml, `container_name`) on the
hosts of its inventory group (nova-compute on `compute`: nova-cell defaults `nova_cell_compute_group`) and
logs to /var/log/kolla/<project>/<service>.log inside the container (the `kolla_logs` volume, which on the
host lives under the container engine's volume folder): it is read with `<engine> exec <container> tail`.

OpenStack-Ansible (2024.1 to master): each service is a systemd unit of its own name in the hosts of its
group (os_nova defaults/main.yml `nova_services`: nova-compute in group nova_compute, nova-conductor in
nova_conductor, nova-api-os-compute in nova_api_os_compute ...), logging to journald: read with
`journalctl -u <unit>`. The hosts are the inventory names (for the containers, the names nova and neutron
report as their hosts); ssh reaches them as the deploy host does.
"""

from __future__ import annotations

from typing import Any

from tui.config import log_value_problem

# (service as stacktop names it, container, kolla inventory groups whose hosts run it, log file inside the
# container). The Open vSwitch agent has no group of its own: it runs on the computes and on the hosts of the
# DHCP, L3 and metadata agents (ansible/roles/neutron/defaults/main.yml, its `host_in_groups`).
KOLLA_LOGS: tuple[tuple[str, str, tuple[str, ...], str], ...] = (
    ("keystone", "keystone", ("keystone",), "/var/log/kolla/keystone/keystone.log"),
    ("nova-api", "nova_api", ("nova-api",), "/var/log/kolla/nova/nova-api.log"),
    ("nova-scheduler", "nova_scheduler", ("nova-scheduler",), "/var/log/kolla/nova/nova-scheduler.log"),
    ("placement", "placement_api", ("placement-api",), "/var/log/kolla/placement/placement-api.log"),
    ("nova-conductor", "nova_conductor", ("nova-conductor",), "/var/log/kolla/nova/nova-conductor.log"),
    ("nova-compute", "nova_compute", ("compute",), "/var/log/kolla/nova/nova-compute.log"),
    ("glance", "glance_api", ("glance-api",), "/var/log/kolla/glance/glance-api.log"),
    ("neutron-server", "neutron_server", ("neutron-server",), "/var/log/kolla/neutron/neutron-server.log"),
    ("neutron-openvswitch-agent", "neutron_openvswitch_agent",
     ("compute", "neutron-dhcp-agent", "neutron-l3-agent", "neutron-metadata-agent"),
     "/var/log/kolla/neutron/neutron-openvswitch-agent.log"),
    ("ovn-controller", "ovn_controller", ("ovn-controller",), "/var/log/kolla/openvswitch/ovn-controller.log"),
    ("cinder-volume", "cinder_volume", ("cinder-volume",), "/var/log/kolla/cinder/cinder-volume.log"),
)

# (service as stacktop names it, systemd unit, OpenStack-Ansible inventory group)
OSA_LOGS: tuple[tuple[str, str, str], ...] = (
    ("keystone", "keystone-wsgi-public", "keystone_all"),
    ("nova-api", "nova-api-os-compute", "nova_api_os_compute"),
    ("nova-scheduler", "nova-scheduler", "nova_scheduler"),
    ("placement", "placement-api", "placement_api"),
    ("nova-conductor", "nova-conductor", "nova_conductor"),
    ("nova-compute", "nova-compute", "nova_compute"),
    ("glance", "glance-api", "glance_api"),
    ("neutron-server", "neutron-server", "neutron_server"),
    ("neutron-openvswitch-agent", "neutron-openvswitch-agent", "neutron_openvswitch_agent"),
    ("ovn-controller", "ovn-controller", "neutron_ovn_controller"),
    ("cinder-volume", "cinder-volume", "cinder_volume"),
)

SSH_NOTE = ("log sources: `ssh {host}` uses your ssh user and keys (write ssh USER@{host}, or a Host entry in "
            "your ssh config); sudo must not ask for a password (or drop it where your user may read the logs)")


def _plain(hosts: list[str], group: str, notes: list[str]) -> list[str]:
    good = []
    for host in hosts:
        if log_value_problem("host", host) is None:
            good.append(host)
        else:
            notes.append(f"log sources: host {host!r} of group {group} is left out: not a plain host name")
    return good


def kolla_log_sources(group_hosts: Any, engine: str, notes: list[str]) -> list[dict[str, Any]]:
    """One source per service whose group has hosts: `ssh {host} sudo <engine> exec {container} tail ...`."""
    out = []
    for service, container, groups, path in KOLLA_LOGS:
        every = [h for group in groups for h in group_hosts(group)]
        hosts = _plain(list(dict.fromkeys(every)), "/".join(groups), notes)
        if hosts:
            out.append({"service": service, "hosts": hosts, "container": container,
                        "command": f"ssh {{host}} sudo {engine} exec {{container}} tail -n 200000 {path}",
                        "timeout": 20})
    if out:
        notes.append(SSH_NOTE)
    return out


def osa_log_sources(group_hosts: Any, notes: list[str]) -> list[dict[str, Any]]:
    """One source per service whose group has hosts: `ssh {host} sudo journalctl -u {container} ...`."""
    out = []
    for service, unit, group in OSA_LOGS:
        hosts = _plain(group_hosts(group), group, notes)
        if hosts:
            out.append({"service": service, "hosts": hosts, "container": unit,
                        "command": "ssh {host} sudo journalctl -u {container} --since -2h --no-pager -o short-iso",
                        "timeout": 20})
    if out:
        notes.append(SSH_NOTE)
    return out
