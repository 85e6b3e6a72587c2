"""The [openstack] part: a cloud entry of the deployment's clouds.yaml (referenced, never copied), or a
clouds.yaml entry made from an openrc (written beside the config, mode 600)."""

from __future__ import annotations

import shlex
from pathlib import Path
from typing import Any

from tui.deployinit.common import InitError, Plan, load_yaml, read_text

# kolla-ansible's post-deploy clouds.yaml entries, the preferred first: project-scoped admin (stacktop reads
# all_tenants, hosts and placement), the internal endpoints as admin-openrc.sh uses them
KOLLA_CLOUDS = ("kolla-admin-internal", "kolla-admin")
CLOUD_NAME = "stacktop-init"  # the entry written from an openrc


def from_clouds_yaml(plan: Plan, path: Path, wanted: str | None, preferred: tuple[str, ...]) -> None:
    data = load_yaml(path, "give the deployment's clouds.yaml")
    clouds = data.get("clouds")
    if not isinstance(clouds, dict) or not clouds:
        raise InitError(path, "clouds", "has no cloud entry", "point at the clouds.yaml the deployment wrote")
    names = [str(n) for n in clouds]
    if wanted is not None:
        if wanted not in clouds:
            raise InitError(path, f"clouds.{wanted}", "no such entry", f"pick one of {', '.join(names)} (--cloud)")
        name = wanted
    else:
        found = [n for n in preferred if n in clouds]
        if found:
            name = found[0]
        elif len(names) == 1:
            name = names[0]
        else:
            raise InitError(path, "clouds", f"{len(names)} entries and none of {', '.join(preferred)}",
                            f"pick the admin entry with --cloud NAME ({', '.join(names)})")
    entry = clouds[name]
    if not isinstance(entry, dict) or (not isinstance(entry.get("auth"), dict) and "auth_type" not in entry):
        raise InitError(path, f"clouds.{name}.auth", "is missing", "pick an entry with credentials (--cloud NAME)")
    plan.openstack = {"cloud": name, "clouds_file": str(path)}


def parse_openrc(path: Path) -> dict[str, str]:
    """The `export OS_*=...` lines of an openrc (shell quoting understood; nothing is executed)."""
    out: dict[str, str] = {}
    for raw in read_text(path, "give the openrc of an admin user").splitlines():
        line = raw.strip()
        if not line.startswith("export "):
            continue
        try:
            words = shlex.split(line[len("export "):], comments=True)
        except ValueError:
            continue
        for word in words:
            key, sep, value = word.partition("=")
            if sep and key.startswith("OS_"):
                out[key] = value
    return out


def from_openrc(plan: Plan, path: Path) -> None:
    """A clouds.yaml entry from the openrc's OS_* variables; a value that needs the shell (`$VAR`) is refused."""
    env = parse_openrc(path)
    for key in ("OS_AUTH_URL", "OS_USERNAME", "OS_PASSWORD"):
        if not env.get(key):
            raise InitError(path, key, "is missing", "give the openrc of an admin user (it exports OS_AUTH_URL, "
                            "OS_USERNAME, OS_PASSWORD, OS_PROJECT_NAME)")
    for key, value in env.items():
        if "$" in value or "`" in value:
            raise InitError(path, key, "is computed by the shell", f"write the value of {key} in the openrc")
    auth: dict[str, Any] = {"auth_url": env["OS_AUTH_URL"], "username": env["OS_USERNAME"],
                            "password": env["OS_PASSWORD"]}
    for key, name in (("OS_PROJECT_NAME", "project_name"), ("OS_USER_DOMAIN_NAME", "user_domain_name"),
                      ("OS_PROJECT_DOMAIN_NAME", "project_domain_name")):
        if env.get(key):
            auth[name] = env[key]
    if "project_name" not in auth and env.get("OS_TENANT_NAME"):
        auth["project_name"] = env["OS_TENANT_NAME"]
    if "project_name" not in auth:
        raise InitError(path, "OS_PROJECT_NAME", "is missing", "give the openrc of a project-scoped admin user")
    entry: dict[str, Any] = {"auth": auth}
    if env.get("OS_REGION_NAME"):
        entry["region_name"] = env["OS_REGION_NAME"]
    if env.get("OS_INTERFACE"):  # openrc files say internalURL as often as internal
        entry["interface"] = env["OS_INTERFACE"].removesuffix("URL")
    if env.get("OS_CACERT"):
        if not Path(env["OS_CACERT"]).is_file():
            raise InitError(path, "OS_CACERT", f"{env['OS_CACERT']} does not exist on this host",
                            "copy the CA file here or fix the path in the openrc")
        entry["cacert"] = env["OS_CACERT"]
    if env.get("OS_INSECURE", "").lower() in ("true", "yes", "1"):
        entry["verify"] = False
    plan.clouds_yaml = {"clouds": {CLOUD_NAME: entry}}
    plan.openstack = {"cloud": CLOUD_NAME}
    if entry.get("verify") is False:
        plan.openstack["insecure"] = True
