"""OpenStack-Ansible's config folder (/etc/openstack_deploy) -> a Plan.

What is read, as OpenStack-Ansible lays it out:
- openstack_user_config.yml: global_overrides.internal_lb_vip_address (HAProxy fronts the RabbitMQ
  management API there: port 15671 with TLS, rabbitmq_management_ssl defaulting to haproxy_ssl, else 15672);
- user_*.yml (user_variables.yml ...: extra vars, they beat global_overrides): rabbitmq_monitoring_userid
  (default monitoring), galera_monitoring_user (default monitoring), haproxy_ssl, rabbitmq_management_ssl,
  galera_use_ssl, haproxy_user_ssl_ca_cert;
- user_secrets.yml: rabbitmq_monitoring_password (the `monitoring`-tagged user) and
  galera_monitoring_user_password (the galera_server role's `monitoring` account, grant USAGE: enough for
  SHOW GLOBAL STATUS), never galera_root_password;
- openstack_inventory.json (written by the dynamic inventory): the hosts of galera_all and their
  management_address / ansible_host, MariaDB on 3306;
- the openrc (--openrc, else openrc in the folder) or a clouds.yaml in the folder (entry `default`);
- the CA: haproxy_user_ssl_ca_cert, else the PKI role's root in pki/roots/NAME/certs/NAME.crt.
The release (release_detect.py: --release, else OSA_VERSION in /usr/local/bin/openstack-ansible) is said in a
note; the facts read here are the same from 2024.1 to master (docs/deployment-facts.md).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from tui.deployinit.cloudentry import from_clouds_yaml, from_openrc
from tui.deployinit.common import InitError, Plan, flag, host_port, load_yaml, password, read_text, text_value
from tui.deployinit.logsources import osa_log_sources
from tui.deployinit.release_detect import detect_osa

OSA_CLOUDS = ("default", "default_project_scope")
GALERA_PORT = 3306  # the galera_server role's my.cnf


def read_osa(folder: Path, *, openrc: Path | None = None, cloud: str | None = None,
             release: str | None = None) -> Plan:
    folder = folder.expanduser().absolute()  # the config names files in it: valid from any working directory
    if not folder.is_dir():
        raise InitError(folder, "(folder)", "is not a directory", "point --osa at OpenStack-Ansible's config "
                        "folder (/etc/openstack_deploy)")
    plan = Plan("OpenStack-Ansible", folder)
    row, how = detect_osa(release)
    plan.notes.append(f"OpenStack-Ansible {row.series} facts ({how}; docs/deployment-facts.md)")
    what = "point --osa at OpenStack-Ansible's config folder (/etc/openstack_deploy)"
    user_config_path = folder / "openstack_user_config.yml"
    secrets_path = folder / "user_secrets.yml"
    user_config = load_yaml(user_config_path, what)
    secrets = load_yaml(secrets_path, what)
    overrides = user_config.get("global_overrides") or {}
    if not isinstance(overrides, dict):
        raise InitError(user_config_path, "global_overrides", "is not a mapping", "fix its layout")
    variables: dict[str, Any] = dict(overrides)
    for extra in sorted(folder.glob("user_*.yml")):
        if extra.name != "user_secrets.yml":
            variables.update(load_yaml(extra, what))
    _openstack(plan, folder, openrc, cloud)
    vip = text_value(variables, "internal_lb_vip_address", user_config_path)
    if vip is None:
        raise InitError(user_config_path, "global_overrides.internal_lb_vip_address", "is not set",
                        "set it to the internal VIP, as OpenStack-Ansible requires")
    cacert = _cacert(folder, variables)
    _rabbitmq(plan, variables, secrets, secrets_path, vip, cacert)
    _galera(plan, folder, variables, secrets, secrets_path, cacert)
    return plan


def _openstack(plan: Plan, folder: Path, openrc: Path | None, cloud: str | None) -> None:
    clouds = folder / "clouds.yaml"
    if openrc is None and (clouds.is_file() or cloud is not None):
        from_clouds_yaml(plan, clouds, cloud, OSA_CLOUDS)
        return
    path = (openrc or folder / "openrc").expanduser()
    if not path.is_file():
        raise InitError(path, "(file)", "does not exist", "pass --openrc FILE (OpenStack-Ansible writes /root/openrc "
                        "on the utility hosts) or copy it into the folder")
    from_openrc(plan, path)


def _cacert(folder: Path, variables: dict[str, Any]) -> str | None:
    file = folder / "user_variables.yml"
    given = text_value(variables, "haproxy_user_ssl_ca_cert", file)
    if given:
        if not Path(given).expanduser().is_file():
            raise InitError(file, "haproxy_user_ssl_ca_cert", f"{given} does not exist on this host",
                            "copy the CA file to that path or run stacktop init on the deployment host")
        return given
    intermediate = text_value(variables, "openstack_pki_service_intermediate_cert_name", file,
                              default="ExampleCorpIntermediate")
    roots = sorted(p for p in (folder / "pki" / "roots").glob("*/certs/*.crt")
                   if p.stem == p.parent.parent.name and p.stem != intermediate)
    if len(roots) > 1:
        raise InitError(folder / "pki" / "roots", "(root CA)", f"{len(roots)} root CAs",
                        "set haproxy_user_ssl_ca_cert in user_variables.yml to the one that signed the internal VIP")
    return str(roots[0]) if roots else None


def _rabbitmq(plan: Plan, variables: dict[str, Any], secrets: dict[str, Any], secrets_path: Path, vip: str,
              cacert: str | None) -> None:
    file = "user_variables.yml"
    tls = flag(variables, "rabbitmq_management_ssl", flag(variables, "haproxy_ssl", True, file), file)
    port = 15671 if tls else 15672
    user = text_value(variables, "rabbitmq_monitoring_userid", file, default="monitoring") or "monitoring"
    plan.rabbitmq_password = password(secrets, "rabbitmq_monitoring_password", secrets_path,
                                      "without it OpenStack-Ansible creates no monitoring user: set it and rerun "
                                      "the rabbitmq-install playbook")
    section: dict[str, Any] = {"management_url": f"{'https' if tls else 'http'}://{host_port(vip, port)}",
                               "user": user}
    if tls and cacert:
        section["cacert"] = cacert
    plan.rabbitmq = section


def _galera(plan: Plan, folder: Path, variables: dict[str, Any], secrets: dict[str, Any], secrets_path: Path,
            cacert: str | None) -> None:
    path = folder / "openstack_inventory.json"
    text = read_text(path, "run OpenStack-Ansible's dynamic inventory once (openstack-ansible ... or "
                     "inventory/dynamic_inventory.py): it writes the Galera containers' addresses there")
    try:
        inventory = json.loads(text)
    except json.JSONDecodeError as exc:
        raise InitError(path, "(syntax)", f"not valid JSON at line {exc.lineno}", "regenerate it") from None
    except RecursionError:
        raise InitError(path, "(syntax)", "nested too deeply to be the dynamic inventory's output",
                        "regenerate it with the dynamic inventory") from None
    except ValueError:  # an integer of more than 4,300 digits (Python's int limit)
        raise InitError(path, "(syntax)", "holds a number too long to read", "regenerate it") from None
    hostvars = (inventory.get("_meta") or {}).get("hostvars") if isinstance(inventory, dict) else None
    if not isinstance(hostvars, dict):
        raise InitError(path, "_meta.hostvars", "is missing", "regenerate it with the dynamic inventory")
    plan.log_sources = osa_log_sources(lambda group: _group_hosts(inventory, group), plan.notes)
    hosts = _group_hosts(inventory, "galera_all")
    if not hosts:
        raise InitError(path, "galera_all", "has no host", "regenerate it with the dynamic inventory")
    nodes = []
    for host in hosts:
        found = hostvars.get(host)
        hv = found if isinstance(found, dict) else {}
        address = hv.get("management_address") or hv.get("ansible_host")
        if not isinstance(address, str) or not address:
            raise InitError(path, f"_meta.hostvars.{host}.management_address", "is missing",
                            "regenerate it with the dynamic inventory")
        nodes.append(host_port(address, GALERA_PORT))
    user = text_value(variables, "galera_monitoring_user", "user_variables.yml", default="monitoring") or "monitoring"
    plan.galera_password = password(secrets, "galera_monitoring_user_password", secrets_path,
                                    "set it and rerun the galera-install playbook so the monitoring account exists")
    section: dict[str, Any] = {"nodes": nodes, "user": user, "expected_size": len(nodes)}
    if flag(variables, "galera_use_ssl", True, "user_variables.yml"):
        section["tls"] = True
        if cacert:
            section["cacert"] = cacert
    plan.galera = section


def _group_hosts(inventory: dict[str, Any], group: str) -> list[str]:
    """The hosts of `group` and of its children, depth first in file order, each once (walked without
    recursion: a chain of thousands of child groups is read like any other)."""
    seen: set[str] = set()
    out: list[str] = []
    known: set[str] = set()
    stack: list[Any] = [group]
    while stack:
        name = stack.pop()
        if not isinstance(name, str) or name in seen or not isinstance(inventory.get(name), dict):
            continue
        seen.add(name)
        entry = inventory[name]
        hosts = entry.get("hosts")
        for host in hosts if isinstance(hosts, list) else []:
            if isinstance(host, str) and host not in known:
                known.add(host)
                out.append(host)
        children = entry.get("children")
        stack += reversed(children) if isinstance(children, list) else []
    return out
