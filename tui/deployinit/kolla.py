"""kolla-ansible's config folder (/etc/kolla) -> a Plan.

What is read, as kolla-ansible lays it out:
- clouds.yaml (written by `kolla-ansible post-deploy`: entries kolla-admin, kolla-admin-internal, ...), else
  admin-openrc.sh;
- globals.yml: kolla_internal_fqdn / kolla_internal_vip_address, kolla_enable_tls_internal, the CA file
  kolla_admin_openrc_cacert (else certificates/ca/root.crt of `kolla-ansible certificates`),
  rabbitmq_management_port, rabbitmq_monitoring_user (kolla's default: openstack-monitoring),
  mariadb_monitor_user (default: monitor), mariadb_port / database_port, database_enable_tls_backend,
  enable_rabbitmq / enable_mariadb, kolla_container_engine, neutron_plugin_agent, RabbitMQ queue flags;
- passwords.yml: rabbitmq_monitoring_password (the read-only user with the `monitoring` tag and read-only
  permissions on vhost "/") and mariadb_monitor_password (kolla's `monitor` account: USAGE, REPLICATION
  CLIENT, enough for SHOW GLOBAL STATUS), never the administrator accounts;
- the inventory: the [mariadb] hosts (children resolved) for the Galera nodes and expected_size.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from tui.deployinit.cloudentry import KOLLA_CLOUDS, from_clouds_yaml, from_openrc
from tui.deployinit.common import (
    InitError,
    Plan,
    brief,
    flag,
    host_port,
    load_yaml,
    password,
    port_number,
    text_value,
)
from tui.deployinit.inventory import Inventory, load_inventory

INVENTORY_NAMES = ("multinode", "all-in-one", "inventory")
_FLAGS = ("neutron_plugin_agent", "om_enable_rabbitmq_quorum_queues", "om_enable_rabbitmq_stream_fanout",
          "om_enable_rabbitmq_tls", "rabbitmq_enable_tls")


def read_kolla(folder: Path, *, inventory: Path | None = None, cloud: str | None = None) -> Plan:
    folder = _folder(folder)
    plan = Plan("kolla-ansible", folder)
    globals_path = folder / "globals.yml"
    passwords_path = folder / "passwords.yml"
    variables = load_yaml(globals_path, "point --kolla at kolla-ansible's config folder (/etc/kolla)")
    secrets = load_yaml(passwords_path, "point --kolla at kolla-ansible's config folder (/etc/kolla)")
    _openstack(plan, folder, cloud)
    tls = flag(variables, "kolla_enable_tls_internal", False, globals_path)
    cacert = _cacert(folder, variables, globals_path)
    if flag(variables, "enable_rabbitmq", True, globals_path):
        _rabbitmq(plan, variables, secrets, globals_path, passwords_path, tls, cacert)
    else:
        plan.notes.append("enable_rabbitmq is off in globals.yml: no [rabbitmq] section")
    if flag(variables, "enable_mariadb", True, globals_path):
        inv = load_inventory(inventory or _find_inventory(folder))
        _galera(plan, variables, secrets, globals_path, passwords_path, inv, cacert)
    else:
        plan.notes.append("enable_mariadb is off in globals.yml: no [galera] section")
    flags = [f"{key}={_shown(variables[key])}" for key in _FLAGS if key in variables]
    if flags:
        plan.notes.append("globals.yml: " + ", ".join(flags))
    return plan


def _shown(value: Any) -> str:
    return str(value).lower() if isinstance(value, bool) else brief(value)


def _folder(folder: Path) -> Path:
    folder = folder.expanduser().absolute()  # the config names files in it: valid from any working directory
    if not folder.is_dir():
        raise InitError(folder, "(folder)", "is not a directory", "point --kolla at kolla-ansible's config folder "
                        "(/etc/kolla: globals.yml, passwords.yml, clouds.yaml)")
    return folder


def _openstack(plan: Plan, folder: Path, cloud: str | None) -> None:
    clouds = folder / "clouds.yaml"
    openrc = folder / "admin-openrc.sh"
    if clouds.is_file() or cloud is not None:
        from_clouds_yaml(plan, clouds, cloud, KOLLA_CLOUDS)
    elif openrc.is_file():
        from_openrc(plan, openrc)
    else:
        raise InitError(clouds, "(file)", "does not exist (nor admin-openrc.sh)",
                        "run `kolla-ansible post-deploy` (it writes both) or copy them into the folder")


def _address(variables: dict[str, Any], file: Path) -> str:
    """The internal endpoint's host: kolla_internal_fqdn (which defaults to the VIP), else the VIP."""
    host = text_value(variables, "kolla_internal_fqdn", file) or text_value(variables, "kolla_internal_vip_address",
                                                                            file)
    if host is None:
        raise InitError(file, "kolla_internal_vip_address", "is not set",
                        "set it (or kolla_internal_fqdn) to the internal VIP, as kolla-ansible requires")
    return host


def _cacert(folder: Path, variables: dict[str, Any], file: Path) -> str | None:
    """The CA of the internal endpoints and the TLS backends: kolla_admin_openrc_cacert, else the root CA of
    `kolla-ansible certificates`, else None (verified against the system's CAs). Used only where TLS is on."""
    given = text_value(variables, "kolla_admin_openrc_cacert", file)
    if given:
        if not Path(given).expanduser().is_file():
            raise InitError(file, "kolla_admin_openrc_cacert", f"{given} does not exist on this host",
                            "run stacktop init on the deployment host, or copy the CA file to that path")
        return given
    own = folder / "certificates" / "ca" / "root.crt"
    return str(own) if own.is_file() else None


def _rabbitmq(plan: Plan, variables: dict[str, Any], secrets: dict[str, Any], file: Path, secrets_file: Path,
              tls: bool, cacert: str | None) -> None:
    host = _address(variables, file)
    port = port_number(text_value(variables, "rabbitmq_management_port", file, default="15672"), file,
                       "rabbitmq_management_port")
    user = text_value(variables, "rabbitmq_monitoring_user", file, default="openstack-monitoring")
    if user is None:
        raise InitError(file, "rabbitmq_monitoring_user", "is empty (no read-only monitoring user is created)",
                        "set it back to openstack-monitoring and redeploy RabbitMQ, or write [rabbitmq] by hand")
    plan.rabbitmq_password = password(secrets, "rabbitmq_monitoring_password", secrets_file,
                                      "run `kolla-genpwd` and redeploy RabbitMQ so the monitoring user exists")
    section: dict[str, Any] = {"management_url": f"{'https' if tls else 'http'}://{host_port(host, port)}",
                               "user": user, "vhosts": ["/"]}
    if tls and cacert:
        section["cacert"] = cacert
    plan.rabbitmq = section
    if not flag(variables, "enable_haproxy", True, file):
        plan.notes.append("enable_haproxy is off: management_url is the internal VIP address; point it at a "
                          "[rabbitmq] host if no RabbitMQ listens there")
    engine = text_value(variables, "kolla_container_engine", file, default="docker") or "docker"
    plan.notes.append(f'on a RabbitMQ host without the management API: [rabbitmq] cli_command = '
                      f'"{engine} exec rabbitmq rabbitmqctl"')


def _galera(plan: Plan, variables: dict[str, Any], secrets: dict[str, Any], file: Path, secrets_file: Path,
            inv: Inventory, cacert: str | None) -> None:
    if not inv.has_group("mariadb"):
        raise InitError(inv.path, "[mariadb]", "no such group",
                        "give the inventory the deployment uses (--inventory): its [mariadb] group lists the nodes")
    shard = str(text_value(variables, "mariadb_default_database_shard_id", file, default="0"))
    all_hosts = inv.group_hosts("mariadb")
    hosts = [h for h in all_hosts if str(inv.host_var(h, "mariadb_shard_id") or shard) == shard]
    if not hosts:
        raise InitError(inv.path, "[mariadb]", "has no host", "list the MariaDB hosts in it (--inventory)")
    if len(hosts) < len(all_hosts):
        plan.notes.append(f"Galera: the {len(hosts)} nodes of shard {shard}; other shards are other clusters")
    nodes = []
    for host in hosts:
        address = inv.host_var(host, "ansible_host")
        local = inv.host_var(host, "ansible_connection") == "local" or host in ("localhost", "127.0.0.1")
        if not address and local:
            raise InitError(inv.path, f"{host}", "no address for this MariaDB host (a local connection)",
                            f"add ansible_host=<its api_interface address> to the line of {host}")
        nodes.append(host_port(address or host, _mariadb_port(variables, file, inv, host)))
    user = text_value(variables, "mariadb_monitor_user", file, default="monitor")
    if user is None:
        raise InitError(file, "mariadb_monitor_user", "is empty", "set it back to monitor (kolla's default)")
    plan.galera_password = password(secrets, "mariadb_monitor_password", secrets_file,
                                    "run `kolla-genpwd` and redeploy MariaDB so the monitor account exists")
    plan.notes.append("Galera nodes: the inventory's [mariadb] hosts (ansible_host, else the name); kolla binds "
                      "MariaDB to each host's api_interface address: edit nodes if the names resolve elsewhere")
    section: dict[str, Any] = {"nodes": nodes, "user": user, "expected_size": len(nodes)}
    if _galera_tls(variables, file):
        section["tls"] = True
        if cacert:
            section["cacert"] = cacert
    plan.galera = section


def _mariadb_port(variables: dict[str, Any], file: Path, inv: Inventory, host: str) -> int:
    """globals.yml is passed as extra vars (it beats the inventory); else the host's mariadb_port; else
    database_port; else 3306."""
    if "mariadb_port" in variables:
        return port_number(text_value(variables, "mariadb_port", file), file, "mariadb_port")
    own = inv.host_var(host, "mariadb_port")
    if own is not None:
        return port_number(own, inv.path, f"{host} mariadb_port")
    return port_number(text_value(variables, "database_port", file, default="3306"), file, "database_port")


def _galera_tls(variables: dict[str, Any], file: Path) -> bool:
    """kolla: database_enable_tls_backend, by default kolla_enable_tls_backend and enable_proxysql (which
    defaults to enable_mariadb, on)."""
    given = variables.get("database_enable_tls_backend")
    if "database_enable_tls_backend" in variables and not (isinstance(given, str) and "{{" in given):
        return flag(variables, "database_enable_tls_backend", False, file)
    backend = flag(variables, "kolla_enable_tls_backend", False, file)
    proxysql = flag(variables, "enable_proxysql", True, file)
    return backend and proxysql


def _find_inventory(folder: Path) -> Path:
    for name in INVENTORY_NAMES:
        if (folder / name).is_file():
            return folder / name
    raise InitError(folder, "(inventory)", f"no {' / '.join(INVENTORY_NAMES)} in the folder",
                    "pass the inventory the deployment uses with --inventory FILE")
