"""A sourced openrc (OS_* variables only, no clouds.yaml, no config file) is the cloud `stacktop snapshot` reads,
as the openstack CLI reads it (the real test cloud)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from tests.testbed.openstack import OpenStackCloud

pytestmark = pytest.mark.integration
ROOT = Path(__file__).resolve().parents[3]


def openrc_env(cloud: OpenStackCloud) -> dict[str, str]:
    """The OS_* variables an admin-openrc.sh of the test cloud would export."""
    entry = yaml.safe_load(cloud.clouds_yaml.read_text())["clouds"][cloud.cloud]
    auth = entry["auth"]
    return {"OS_AUTH_URL": auth["auth_url"], "OS_USERNAME": auth["username"], "OS_PASSWORD": auth["password"],
            "OS_PROJECT_NAME": auth["project_name"], "OS_USER_DOMAIN_NAME": auth["user_domain_name"],
            "OS_PROJECT_DOMAIN_NAME": auth["project_domain_name"], "OS_REGION_NAME": entry["region_name"],
            "OS_IDENTITY_API_VERSION": "3", "OS_INTERFACE": entry.get("interface", "public")}


def test_snapshot_reads_the_cloud_of_a_sourced_openrc(openstack_cloud: OpenStackCloud, tmp_path: Path) -> None:
    env = {k: v for k, v in os.environ.items()
           if not k.startswith(("OS_", "STACKTOP_")) and k not in ("XDG_CONFIG_HOME",)}
    env.update(openrc_env(openstack_cloud), HOME=str(tmp_path), PYTHONPATH=str(ROOT))
    proc = subprocess.run([sys.executable, "-m", "tui", "snapshot", "--json", "--deadline", "600"],
                          capture_output=True, text=True, cwd=tmp_path, env=env, timeout=900)
    report = json.loads(proc.stdout)
    assert report["sources"]["services"]["ok"], report["sources"]
    assert report["data"]["services"]["keystone"]["ok"]
    assert env["OS_PASSWORD"] not in proc.stdout + proc.stderr
