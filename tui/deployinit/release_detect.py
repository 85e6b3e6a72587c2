"""Which release a deployment runs: `--release`, else what the deployment's files say, else the version of the
deployment tool installed on this host (read from its package metadata; nothing is executed).

kolla-ansible: globals.yml `openstack_release` (commented out in the sample globals.yml: the group_vars default
is the branch's series), else the kolla-ansible package of this Python or of the `kolla-ansible` command on PATH
(the `kolla_ansible-X.dist-info` of its virtualenv or prefix). OpenStack-Ansible: `export OSA_VERSION="X"` in the
/usr/local/bin/openstack-ansible wrapper that scripts/bootstrap-ansible.sh writes."""

from __future__ import annotations

import os
import re
import shutil
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from tui.deployinit.common import InitError, brief
from tui.deployinit.release_facts import (
    KOLLA,
    KollaRelease,
    OsaRelease,
    kolla_release,
    kolla_series_of_version,
    osa_release,
    osa_series_of_version,
)

KNOWN = ", ".join(r.series for r in KOLLA)
OSA_WRAPPER = Path("/usr/local/bin/openstack-ansible")


def _dist_version(site: Path, name: str) -> str | None:
    for meta in sorted(site.glob(f"{name}-*.dist-info/METADATA")):
        try:
            for line in meta.read_text(encoding="utf-8", errors="replace").splitlines():
                if line.startswith("Version:"):
                    return line.split(":", 1)[1].strip()
        except OSError:
            continue
    return None


def installed_kolla_version(env: Mapping[str, str] | None = None) -> tuple[str, str] | None:
    """(version, where) of the kolla-ansible installed here, else None."""
    from importlib import metadata

    try:
        return metadata.version("kolla-ansible"), "the kolla-ansible package of this Python"
    except metadata.PackageNotFoundError:
        pass
    env = os.environ if env is None else env
    command = shutil.which("kolla-ansible", path=env.get("PATH"))
    if command is None:
        return None
    venv = Path(os.path.realpath(command)).parent.parent
    for site in sorted([*venv.glob("lib/python3*/site-packages"), *venv.glob("lib/python3*/dist-packages")]):
        version = _dist_version(site, "kolla_ansible")
        if version:
            return version, f"{command} (kolla-ansible {version})"
    return None


def detect_kolla(variables: dict[str, Any], globals_path: Path, explicit: str | None) -> tuple[KollaRelease | None,
                                                                                                 str]:
    """(the facts row, how the release was found); (None, why not) when nothing tells."""
    if explicit is not None:
        row = kolla_release(explicit.strip())
        if row is None:
            raise InitError("--release", explicit, "is not a kolla-ansible series stacktop knows",
                            f"give one of {KNOWN} (2024.2 has 2025.1's facts)")
        return row, f"--release {explicit}"
    given = variables.get("openstack_release")
    if isinstance(given, (str, int, float)) and not isinstance(given, bool) and "{{" not in str(given):
        row = kolla_release(str(given).strip())
        if row is None:
            raise InitError(globals_path, "openstack_release", f"'{brief(given)}' is not a series stacktop knows",
                            f"pass --release with the kolla-ansible series of the deployment ({KNOWN})")
        return row, f"globals.yml openstack_release {brief(given)}"
    found = installed_kolla_version()
    if found is not None:
        version, where = found
        series = kolla_series_of_version(version)
        row = kolla_release(series) if series else None
        if row is not None:
            return row, where
    return None, "openstack_release is not set in globals.yml and no kolla-ansible is installed here"


_OSA_VERSION = re.compile(r'^\s*export\s+OSA_VERSION="?([0-9][^"\s]*)"?', re.MULTILINE)


def detect_osa(explicit: str | None, wrapper: Path | None = None) -> tuple[OsaRelease, str]:
    """OpenStack-Ansible: every fact stacktop reads is the same from 2024.1 to master, so an unknown version
    gets master's row, said in the note."""
    wrapper = OSA_WRAPPER if wrapper is None else wrapper
    if explicit is not None:
        return osa_release(explicit.strip()), f"--release {explicit}"
    try:
        text = wrapper.read_text(encoding="utf-8", errors="replace")
    except OSError:
        return osa_release("master"), f"no {wrapper} here: OpenStack-Ansible's facts of 2024.1 to master"
    match = _OSA_VERSION.search(text)
    series = osa_series_of_version(match.group(1)) if match else None
    if series is None:
        return osa_release("master"), f"no version in {wrapper}: OpenStack-Ansible's facts of 2024.1 to master"
    return osa_release(series), f"{wrapper} OSA_VERSION {match.group(1) if match else ''} ({series})"
