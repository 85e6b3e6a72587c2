"""kolla-ansible's config folder (/etc/kolla) -> a Plan, with the facts of the deployment's release
(release_facts.py; the release from release_detect.py).

What is read, as kolla-ansible lays it out:
- clouds.yaml (written by `kolla-ansible post-deploy`: entries kolla-admin, kolla-admin-internal, ...), else
  admin-openrc.sh;
- globals.yml: kolla_internal_fqdn / kolla_internal_vip_address, kolla_enable_tls_internal, the CA file
  kolla_admin_openrc_cacert (else certificates/ca/root.crt of `kolla-ansible certificates`),
  rabbitmq_management_port, rabbitmq_monitoring_user, mariadb_monitor_user, enable_proxysql, mariadb_port /
  database_port, database_enable_tls_backend / kolla_enable_tls_backend, api_interface / network_interface,
  enable_rabbitmq / enable_mariadb / enable_haproxy, kolla_container_engine, neutron_plugin_agent, queue flags;
  a setting globals.yml leaves out takes the release's default;
- passwords.yml: rabbitmq_monitoring_password and mariadb_monitor_password, never the administrator accounts;
- the inventory (multinode / all-in-one / inventory in the folder, or <configdir>/ansible/inventory/all-in-one,
  kolla-ansible's default since 2025.1; a file or a directory): the [mariadb] hosts for the Galera nodes.

Per release (docs/deployment-facts.md): the RabbitMQ monitoring user exists only when rabbitmq_monitoring_user
is set (empty by default up to 2025.2); the MariaDB account is `monitor`, or up to 2025.1 without ProxySQL
`haproxy` with an empty password; MariaDB serves TLS only from 2025.1 (database_enable_tls_backend), with a
certificate naming each host's api_interface IP address. What the deployment lacks is a gap: one line with the
fix, the rest written, exit EXIT_INCOMPLETE.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from tui.deployinit import localaddr
from tui.deployinit.cloudentry import KOLLA_CLOUDS, from_clouds_yaml, from_openrc
from tui.deployinit.common import (
    InitError,
    Plan,
    brief,
    flag,
    host_port,
    load_yaml,
    one_line,
    password,
    port_number,
    text_value,
)
from tui.deployinit.inventory import Inventory, load_inventory_path
from tui.deployinit.logsources import kolla_log_sources
from tui.deployinit.release_detect import KNOWN, detect_kolla
from tui.deployinit.release_facts import KollaRelease

INVENTORY_NAMES = ("multinode", "all-in-one", "inventory")
DEFAULT_INVENTORY = "ansible/inventory/all-in-one"  # under the config folder: kolla-ansible's default since 2025.1
_FLAGS = ("neutron_plugin_agent", "om_enable_rabbitmq_quorum_queues", "om_enable_rabbitmq_stream_fanout",
          "om_enable_rabbitmq_tls", "rabbitmq_enable_tls")


def read_kolla(folder: Path, *, inventory: Path | None = None, cloud: str | None = None,
               release: str | None = None) -> Plan:
    folder = _folder(folder)
    plan = Plan("kolla-ansible", folder)
    globals_path = folder / "globals.yml"
    passwords_path = folder / "passwords.yml"
    variables = load_yaml(globals_path, "point --kolla at kolla-ansible's config folder (/etc/kolla)")
    secrets = load_yaml(passwords_path, "point --kolla at kolla-ansible's config folder (/etc/kolla)")
    row, how = detect_kolla(variables, globals_path, release)
    ctx = _Release(row, how, globals_path)
    if row is not None:
        plan.notes.append(f"kolla-ansible {row.series} ({how}): that release's defaults apply "
                          "(docs/deployment-facts.md)")
    _openstack(plan, folder, cloud)
    tls = flag(variables, "kolla_enable_tls_internal", False, globals_path)
    cacert = _cacert(folder, variables, globals_path)
    inventory_path = inventory
    if inventory_path is None:
        try:
            inventory_path = _find_inventory(folder, row)
        except InitError:
            if flag(variables, "enable_mariadb", True, globals_path):
                raise
    if flag(variables, "enable_rabbitmq", True, globals_path):
        _rabbitmq(plan, variables, secrets, globals_path, passwords_path, tls, cacert, ctx, inventory_path)
    else:
        plan.notes.append("enable_rabbitmq is off in globals.yml: no [rabbitmq] section")
    if flag(variables, "enable_mariadb", True, globals_path):
        assert inventory_path is not None
        inv = load_inventory_path(inventory_path)
        _galera(plan, variables, secrets, globals_path, passwords_path, inv, cacert, ctx)
    else:
        plan.notes.append("enable_mariadb is off in globals.yml: no [galera] section")
    if inventory_path is not None:
        engine = text_value(variables, "kolla_container_engine", globals_path, default="docker") or "docker"
        plan.log_sources = kolla_log_sources(load_inventory_path(inventory_path).group_hosts, engine, plan.notes)
    flags = [f"{key}={_shown(variables[key])}" for key in _FLAGS if key in variables]
    if flags:
        plan.notes.append("globals.yml: " + ", ".join(flags))
    return plan


class _Release:
    """The detected release, and the one error for a default that needs it when it is unknown."""

    def __init__(self, row: KollaRelease | None, how: str, globals_path: Path) -> None:
        self.row, self.how, self.globals_path = row, how, globals_path

    def need(self, what: str) -> KollaRelease:
        if self.row is None:
            raise InitError(self.globals_path, "openstack_release", f"{self.how}; the release decides {what}",
                            f"set openstack_release in globals.yml or pass --release ({KNOWN})")
        return self.row


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
              tls: bool, cacert: str | None, ctx: _Release, inventory: Path | None) -> None:
    host = _address(variables, file)
    port = port_number(text_value(variables, "rabbitmq_management_port", file, default="15672"), file,
                       "rabbitmq_management_port")
    if "rabbitmq_monitoring_user" in variables:
        user = text_value(variables, "rabbitmq_monitoring_user", file)
        said = "is empty in globals.yml"
    else:
        row = ctx.need("whether a RabbitMQ monitoring user exists (rabbitmq_monitoring_user)")
        user = str(row.rabbitmq_monitoring_user.value) or None
        said = f"is not set and kolla-ansible {row.series} defaults it to \"\""
    if user is None:
        reconfigure = f"kolla-ansible reconfigure{f' -i {inventory}' if inventory else ''} -t rabbitmq"
        plan.gaps.append(one_line(file, "rabbitmq_monitoring_user", f"{said}: RabbitMQ has no monitoring user, "
                                  "[rabbitmq] not written", f"set rabbitmq_monitoring_user: \"openstack-monitoring\" "
                                  f"in globals.yml, run `{reconfigure}`, then rerun stacktop init"))
        return
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
            inv: Inventory, cacert: str | None, ctx: _Release) -> None:
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
    proxysql = _proxysql(variables, file, ctx)
    user, with_password = _monitor_account(plan, variables, file, ctx, proxysql)
    tls = _galera_tls(plan, variables, file, ctx, proxysql)
    nodes, names = [], []
    for host in hosts:
        address = _host_address(plan, variables, file, inv, host, single=len(hosts) == 1, proxysql=proxysql)
        if not localaddr.is_ip(address):
            names.append(host)
        nodes.append(host_port(address, _mariadb_port(variables, file, inv, host)))
    if with_password:
        plan.galera_password = password(secrets, "mariadb_monitor_password", secrets_file,
                                        "run `kolla-genpwd` and redeploy MariaDB so the monitor account exists")
    if names and tls:
        plan.gaps.append(one_line(inv.path, ", ".join(names), "MariaDB's backend TLS certificate (`kolla-ansible "
                                  "certificates`) names each host's api_interface IP address, not its name: the "
                                  "TLS check would fail", f"add ansible_host=<its api_interface IP> to the line of "
                                  f"{names[0]}{' and the others' if len(names) > 1 else ''} (or pass --inventory "
                                  "with addresses), then rerun stacktop init"))
    elif names:
        plan.notes.append("Galera nodes: the inventory's [mariadb] host names; kolla binds MariaDB to each host's "
                          "api_interface address: edit nodes if the names resolve elsewhere")
    section: dict[str, Any] = {"nodes": nodes, "user": user, "expected_size": len(nodes)}
    if tls:
        section["tls"] = True
        if cacert:
            section["cacert"] = cacert
    plan.galera = section


def _proxysql(variables: dict[str, Any], file: Path, ctx: _Release) -> bool | None:
    """enable_proxysql as the deployment has it: globals.yml, else the release's default (None: unknown)."""
    if "enable_proxysql" in variables:
        return flag(variables, "enable_proxysql", True, file)
    if ctx.row is None:
        return None
    default = ctx.row.enable_proxysql.value
    return True if default == "enable_mariadb" else bool(default)  # [galera] is read only with enable_mariadb on


def _monitor_account(plan: Plan, variables: dict[str, Any], file: Path, ctx: _Release,
                     proxysql: bool | None) -> tuple[str, bool]:
    """(the MariaDB account kolla created for monitoring, whether it has a password)."""
    what = "which MariaDB monitoring account exists (mariadb_monitor_user, enable_proxysql)"
    if not proxysql:  # unknown, or off: up to 2025.1 the account then has an empty password
        ctx.need(what)
    if "mariadb_monitor_user" in variables:
        user = text_value(variables, "mariadb_monitor_user", file)
        if user is None:
            raise InitError(file, "mariadb_monitor_user", "is empty", "set it back to monitor (kolla's default)")
    else:
        needed = ctx.need(what)
        user = "monitor" if needed.mariadb_monitor_user.value == "monitor" or proxysql else "haproxy"
    row = ctx.row
    if row is not None and row.monitor_password_needs_proxysql.value and not proxysql:
        plan.notes.append(f"Galera: kolla-ansible {row.series} without ProxySQL gives the {user} account an empty "
                          f"password and {row.monitor_grants.value}: enough for SHOW GLOBAL STATUS")
        return user, False
    return user, True


def _galera_tls(plan: Plan, variables: dict[str, Any], file: Path, ctx: _Release, proxysql: bool | None) -> bool:
    """MariaDB's TLS: database_enable_tls_backend (from 2025.1; by default kolla_enable_tls_backend and
    enable_proxysql); never before 2025.1, whatever kolla_enable_tls_backend says."""
    if ctx.row is not None and not ctx.row.database_enable_tls_backend.value:
        if flag(variables, "kolla_enable_tls_backend", False, file):
            plan.notes.append(f"kolla_enable_tls_backend is on, but kolla-ansible {ctx.row.series}'s MariaDB serves "
                              "no TLS (database_enable_tls_backend came in 2025.1): [galera] without tls")
        return False
    given = variables.get("database_enable_tls_backend")
    if "database_enable_tls_backend" in variables and not (isinstance(given, str) and "{{" in given):
        return flag(variables, "database_enable_tls_backend", False, file)
    backend = flag(variables, "kolla_enable_tls_backend", False, file)
    return backend and (proxysql if proxysql is not None else True)


def _api_interface(variables: dict[str, Any], file: Path, inv: Inventory, host: str) -> str:
    """api_interface as Ansible resolves it for the host: globals.yml (extra vars) beats the inventory;
    api_interface defaults to network_interface, network_interface to eth0."""
    for key in ("api_interface", "network_interface"):
        if key in variables:
            value = text_value(variables, key, file)
            if value:
                return value
        own = inv.host_var(host, key)
        if own and "{{" not in own:
            return own
    return "eth0"


def _host_address(plan: Plan, variables: dict[str, Any], file: Path, inv: Inventory, host: str, *, single: bool,
                  proxysql: bool | None) -> str:
    """Where MariaDB listens for this host: ansible_host; else the host itself when written as an IP address;
    else, for the deployment host (ansible_connection=local, localhost), the address of its api_interface on this
    machine (MariaDB binds that address only, never 127.0.0.1); else the name."""
    given = inv.host_var(host, "ansible_host")
    local = inv.host_var(host, "ansible_connection") == "local" or host == "localhost" or localaddr.is_loopback(host)
    if given and not (local and localaddr.is_loopback(given)):
        return given
    if localaddr.is_ip(host) and not localaddr.is_loopback(host):
        return host
    if not local:
        return host
    iface = _api_interface(variables, file, inv, host)
    address = localaddr.interface_ipv4(iface)
    if address is not None:
        plan.notes.append(f"Galera: {host} is this host (a local connection): its api_interface {iface} has "
                          f"{address}, where kolla binds MariaDB")
        return address
    vip = text_value(variables, "kolla_internal_vip_address", file)
    haproxy = flag(variables, "enable_haproxy", True, file)
    if single and vip and (not haproxy or proxysql is False):
        how = ("enable_haproxy is off, so the VIP is the host's own address" if not haproxy else
               "HAProxy forwards the VIP's port 3306 to the only MariaDB node")
        plan.notes.append(f"Galera: {host} is a local connection and {iface} is not on this machine; {how}")
        return vip
    raise InitError(inv.path, host, f"no address for this MariaDB host (a local connection, and api_interface "
                    f"{iface} has no IPv4 address on this machine)",
                    f"run stacktop init on {host} itself, or add ansible_host=<its {iface} address> to its line")


def _mariadb_port(variables: dict[str, Any], file: Path, inv: Inventory, host: str) -> int:
    """globals.yml is passed as extra vars (it beats the inventory); else the host's mariadb_port; else
    database_port; else 3306."""
    if "mariadb_port" in variables:
        return port_number(text_value(variables, "mariadb_port", file), file, "mariadb_port")
    own = inv.host_var(host, "mariadb_port")
    if own is not None:
        return port_number(own, inv.path, f"{host} mariadb_port")
    return port_number(text_value(variables, "database_port", file, default="3306"), file, "database_port")


def _find_inventory(folder: Path, row: KollaRelease | None) -> Path:
    """multinode / all-in-one / inventory in the folder, or kolla-ansible's own default
    <configdir>/ansible/inventory/all-in-one (since 2025.1: looked at first then; a file or a directory)."""
    new_default = row is None or str(row.default_inventory.value).startswith("<configdir>")
    names = (DEFAULT_INVENTORY, *INVENTORY_NAMES) if new_default else (*INVENTORY_NAMES, DEFAULT_INVENTORY)
    for name in names:
        if (folder / name).is_file() or (folder / name).is_dir():
            return folder / name
    raise InitError(folder, "(inventory)", f"no {' / '.join(names)} in the folder",
                    "pass the inventory the deployment uses with --inventory FILE")
