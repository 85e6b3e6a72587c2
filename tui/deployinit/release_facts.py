"""What each kolla-ansible and OpenStack-Ansible release creates that stacktop reads, with the upstream file and
line every fact comes from (docs/deployment-facts.md is the same table for people; a test keeps them equal).

A source is written `repository branch path:line`; repositories are openstack/kolla-ansible (`kolla`),
openstack/openstack-ansible (`osa`), openstack/openstack-ansible-galera_server (`osa-galera`) and
openstack/openstack-ansible-plugins (`osa-plugins`).

How `stacktop init` uses them (tui/deployinit/kolla.py, osa.py): the release is detected (release_detect.py),
its row gives the default of every setting globals.yml / user_variables.yml does not set, and an account the
release does not create is never written."""

from __future__ import annotations

from dataclasses import dataclass, fields


@dataclass(frozen=True)
class Fact:
    value: object
    source: str  # "kolla stable/2025.2 ansible/group_vars/all/rabbitmq.yml:8"


@dataclass(frozen=True)
class KollaRelease:
    series: str  # "2025.2", "master"
    branch: str  # the upstream branch the sources are read from
    major: int | None  # kolla-ansible's version major on that branch (None: master, a development version)
    openstack_release: Fact  # group_vars default of openstack_release: how a deployment names its series
    # RabbitMQ: the read-only user of the definitions template, created only when the name is not empty
    rabbitmq_monitoring_user: Fact  # default name ("" = no user)
    rabbitmq_monitoring_created: Fact  # where the user (tag monitoring, read ".*" on vhost "/") is defined
    rabbitmq_management_port: Fact
    # MariaDB: the monitor account
    enable_proxysql: Fact  # default (True/False; "enable_mariadb" = follows enable_mariadb, on by default)
    mariadb_monitor_user: Fact  # "monitor", or "monitor|haproxy": monitor with ProxySQL, else haproxy
    monitor_password_needs_proxysql: Fact  # True: the account's password is empty unless enable_proxysql
    monitor_grants: Fact  # privileges of the account (SHOW GLOBAL STATUS / VARIABLES need only USAGE)
    database_enable_tls_backend: Fact  # None: no such variable, MariaDB never serves TLS in this release
    mariadb_bind: Fact  # MariaDB listens on the host's api_interface address only (not 127.0.0.1)
    # TLS and addresses
    backend_certificate_names: Fact  # what the backend certificate of `kolla-ansible certificates` names
    api_interface: Fact  # api_interface defaults to network_interface
    default_inventory: Fact  # the inventory kolla-ansible uses without -i


@dataclass(frozen=True)
class OsaRelease:
    series: str
    branch: str
    major: int | None
    version_file: Fact  # where the deployment host records OpenStack-Ansible's version
    rabbitmq_monitoring_user: Fact  # name; created only when rabbitmq_monitoring_password is defined
    rabbitmq_monitoring_permissions: Fact  # what the user may read (None: no permission on any service vhost)
    rabbitmq_management_ssl: Fact  # defaults to haproxy_ssl (on): port 15671, else 15672 on the internal VIP
    galera_monitoring_user: Fact
    galera_use_ssl: Fact


_K = "kolla"
_DEFS = "ansible/roles/rabbitmq/templates/definitions.json.j2"
_REG = "ansible/roles/mariadb/tasks/register.yml"
_CNF = "ansible/roles/mariadb/templates/galera.cnf.j2"
_OLD_CERT = "ansible/roles/certificates/templates/openssl-kolla-backend.cnf.j2:17"
_NEW_CERT = "ansible/roles/certificates/tasks/generate-backend.yml:27"
_CERT_NAMES = "IP:<api_interface address> of each [tls-backend] host"
_OLD_INV = "<kolla-ansible share dir>/ansible/inventory/all-in-one"
_NEW_INV = "<configdir>/ansible/inventory/all-in-one"


def _kolla(series: str, branch: str, major: int | None, *, release: str, monitoring: tuple[str, str],
           defs: str, port: str, proxysql: tuple[object, str], monitor: tuple[str, str], password_needs_proxysql:
           bool, grants: tuple[str, str], db_tls: str | None, bind: str, cert: str, api: str, inventory: tuple[str, str]
           ) -> KollaRelease:
    at = f"{_K} {branch} "
    return KollaRelease(
        series, branch, major,
        openstack_release=Fact(series, at + release),
        rabbitmq_monitoring_user=Fact(monitoring[0], at + monitoring[1]),
        rabbitmq_monitoring_created=Fact("tag monitoring; vhost / configure ^$ write ^$ read .*", at + defs),
        rabbitmq_management_port=Fact(15672, at + port),
        enable_proxysql=Fact(proxysql[0], at + proxysql[1]),
        mariadb_monitor_user=Fact(monitor[0], at + monitor[1]),
        monitor_password_needs_proxysql=Fact(password_needs_proxysql, at + grants[1]),
        monitor_grants=Fact(grants[0], at + grants[1]),
        database_enable_tls_backend=Fact(db_tls is not None, at + db_tls if db_tls else
                                         at + "(no database_enable_tls_backend in ansible/group_vars)"),
        mariadb_bind=Fact("api_interface address", at + bind),
        backend_certificate_names=Fact(_CERT_NAMES, at + cert),
        api_interface=Fact("{{ network_interface }}", at + api),
        default_inventory=Fact(inventory[0], at + inventory[1]),
    )


_ALL = "ansible/group_vars/all.yml"
_GV = "ansible/group_vars/all"
_PY_INV = (_NEW_INV, "kolla_ansible/ansible.py:149-151")

KOLLA: tuple[KollaRelease, ...] = (
    _kolla("2024.1", "unmaintained/2024.1", 18, release=f"{_ALL}:679", monitoring=("", f"{_ALL}:908"),
           defs=f"{_DEFS}:6-7,10-11", port=f"{_ALL}:600", proxysql=(False, f"{_ALL}:839"),
           monitor=("monitor|haproxy", f"{_ALL}:472"), password_needs_proxysql=True,
           grants=("USAGE", f"{_REG}:29-32"), db_tls=None, bind=f"{_CNF}:12", cert=_OLD_CERT,
           api=f"{_ALL}:287", inventory=(_OLD_INV, "tools/kolla-ansible:284")),
    _kolla("2025.1", "stable/2025.1", 20, release=f"{_ALL}:795", monitoring=("", f"{_ALL}:1044"),
           defs=f"{_DEFS}:6-7,10-11", port=f"{_ALL}:707", proxysql=(True, f"{_ALL}:958"),
           monitor=("monitor|haproxy", f"{_ALL}:545"), password_needs_proxysql=True,
           grants=("USAGE, REPLICATION CLIENT", f"{_REG}:29-32"), db_tls=f"{_ALL}:94", bind=f"{_CNF}:12",
           cert=_OLD_CERT, api=f"{_ALL}:300", inventory=_PY_INV),
    _kolla("2025.2", "stable/2025.2", 21, release=f"{_GV}/common.yml:308", monitoring=("", f"{_GV}/rabbitmq.yml:8"),
           defs=f"{_DEFS}:6-7,10-11", port=f"{_GV}/rabbitmq.yml:16",
           proxysql=("enable_mariadb", f"{_GV}/proxysql.yml:2"), monitor=("monitor", f"{_GV}/mariadb.yml:23"),
           password_needs_proxysql=False, grants=("USAGE, REPLICATION CLIENT", f"{_REG}:31-34"),
           db_tls=f"{_GV}/database.yml:10", bind=f"{_CNF}:11", cert=_OLD_CERT, api=f"{_GV}/common.yml:239",
           inventory=_PY_INV),
    _kolla("2026.1", "stable/2026.1", 22, release=f"{_GV}/common.yml:310",
           monitoring=("openstack-monitoring", f"{_GV}/rabbitmq.yml:8"), defs=f"{_DEFS}:7-8,11-12",
           port=f"{_GV}/rabbitmq.yml:16", proxysql=("enable_mariadb", f"{_GV}/proxysql.yml:2"),
           monitor=("monitor", f"{_GV}/mariadb.yml:23"), password_needs_proxysql=False,
           grants=("USAGE, REPLICATION CLIENT", f"{_REG}:31-34"), db_tls=f"{_GV}/database.yml:10",
           bind=f"{_CNF}:11", cert=_NEW_CERT, api=f"{_GV}/common.yml:240", inventory=_PY_INV),
    _kolla("master", "master", None, release=f"{_GV}/common.yml:309",
           monitoring=("openstack-monitoring", f"{_GV}/rabbitmq.yml:8"), defs=f"{_DEFS}:7-8,11-12",
           port=f"{_GV}/rabbitmq.yml:16", proxysql=("enable_mariadb", f"{_GV}/proxysql.yml:2"),
           monitor=("monitor", f"{_GV}/mariadb.yml:23"), password_needs_proxysql=False,
           grants=("USAGE, REPLICATION CLIENT", f"{_REG}:31-34"), db_tls=f"{_GV}/database.yml:10",
           bind=f"{_CNF}:11", cert=_NEW_CERT, api=f"{_GV}/common.yml:239", inventory=_PY_INV),
)

# kolla-ansible's version major -> the row whose facts apply (tags 18.0.0 ... 22.0.0 of openstack/kolla-ansible;
# 2024.2 (19.x) has the facts of 2025.1: rabbitmq_monitoring_user "", enable_proxysql "yes", monitor|haproxy,
# database_enable_tls_backend, per tag 19.8.0 ansible/group_vars/all.yml:1027, 958, 539, 88)
KOLLA_MAJOR = {18: "2024.1", 19: "2025.1", 20: "2025.1", 21: "2025.2", 22: "2026.1"}
KOLLA_SERIES_ALIASES = {"2024.2": "2025.1"}


_OSA_GALERA = "osa-galera"
OSA: tuple[OsaRelease, ...] = (
    OsaRelease(
        "2024.1", "stable/2024.1", 29,
        version_file=Fact("/usr/local/bin/openstack-ansible: export OSA_VERSION=\"29.x.y\"",
                          "osa stable/2024.1 scripts/openstack-ansible.sh:23, scripts/bootstrap-ansible.sh:155"),
        rabbitmq_monitoring_user=Fact("monitoring", "osa stable/2024.1 playbooks/rabbitmq-install.yml:97-104"),
        rabbitmq_monitoring_permissions=Fact(None, "osa stable/2024.1 playbooks/rabbitmq-install.yml:97-104 "
                                                   "(rabbitmq_user without vhost/permissions: vhost / with ^$ ^$ ^$)"),
        rabbitmq_management_ssl=Fact(True, "osa stable/2024.1 inventory/group_vars/all/all.yml:149, "
                                           "inventory/group_vars/all/haproxy.yml:16"),
        galera_monitoring_user=Fact("monitoring", f"{_OSA_GALERA} unmaintained/2024.1 defaults/main.yml:70"),
        galera_use_ssl=Fact("yes unless a RedHat distro install",
                            "osa stable/2024.1 inventory/group_vars/all/infra.yml:55"),
    ),
    OsaRelease(
        "master", "master", None,
        version_file=Fact("/usr/local/bin/openstack-ansible: export OSA_VERSION=\"x.y.z\"",
                          "osa master scripts/openstack-ansible.sh:23, scripts/bootstrap-ansible.sh:128"),
        rabbitmq_monitoring_user=Fact("monitoring", "osa-plugins master playbooks/rabbitmq_server.yml:75-82"),
        rabbitmq_monitoring_permissions=Fact(None, "osa-plugins master playbooks/rabbitmq_server.yml:75-82 "
                                                   "(rabbitmq_user without vhost/permissions: vhost / with ^$ ^$ ^$)"),
        rabbitmq_management_ssl=Fact(True, "osa master inventory/group_vars/all/all.yml:155, "
                                           "inventory/group_vars/all/haproxy.yml:16"),
        galera_monitoring_user=Fact("monitoring", f"{_OSA_GALERA} master defaults/main.yml:71"),
        galera_use_ssl=Fact("yes unless a RedHat distro install",
                            "osa master inventory/group_vars/all/infra.yml:65"),
    ),
)
# OpenStack-Ansible's version major -> series (tags 29.0.0 = 2024.1 ... 33.0.0 = 2026.1); the facts stacktop
# reads are the same on every branch from 2024.1 to master, so any known version gets them
OSA_MAJOR = {29: "2024.1", 30: "2024.2", 31: "2025.1", 32: "2025.2", 33: "2026.1"}


def kolla_release(series: str) -> KollaRelease | None:
    """The row for a series ("2025.1", "master", "2024.2" = 2025.1's facts; a later series than the table
    knows = master's); None for a series older than 2024.1 or not a series at all."""
    series = KOLLA_SERIES_ALIASES.get(series, series)
    for row in KOLLA:
        if row.series == series:
            return row
    key, newest = _series_key(series), _series_key(KOLLA[-2].series)
    if key is not None and newest is not None and key > newest:
        return KOLLA[-1]
    return None


def _series_key(series: str) -> tuple[int, int] | None:
    year, dot, half = series.partition(".")
    if not dot or not year.isdigit() or not half.isdigit():
        return None
    return int(year), int(half)


def kolla_series_of_version(version: str) -> str | None:
    """kolla-ansible's package version (20.1.0, 21.0.1.dev3) -> its series; a major newer than the table
    knows -> master."""
    head = version.strip().split(".", 1)[0]
    if not head.isdigit():
        return None
    major = int(head)
    if major in KOLLA_MAJOR:
        return KOLLA_MAJOR[major]
    return "master" if major > max(KOLLA_MAJOR) else None


def osa_series_of_version(version: str) -> str | None:
    head = version.strip().split(".", 1)[0]
    if not head.isdigit():
        return None
    major = int(head)
    if major in OSA_MAJOR:
        return OSA_MAJOR[major]
    return "master" if major > max(OSA_MAJOR) else None


def osa_release(series: str) -> OsaRelease:
    """The facts stacktop reads are equal from 2024.1 to master: the 2024.1 row up to 2025.2, master after."""
    key = _series_key(series)
    return OSA[0] if key is not None and key < (2026, 1) else OSA[-1]


def all_sources() -> list[tuple[str, str, str]]:
    """(deployment series, fact name, source) for every fact of every row: what the doc table must list."""
    out = []
    rows: tuple[KollaRelease | OsaRelease, ...] = (*KOLLA, *OSA)
    for row in rows:
        kind = "kolla-ansible" if isinstance(row, KollaRelease) else "OpenStack-Ansible"
        for f in fields(row):
            value = getattr(row, f.name)
            if isinstance(value, Fact):
                out.append((f"{kind} {row.series}", f.name, value.source))
    return out
