"""A clouds.yaml that is not valid YAML is reported as such, with its line (issue #22): openstacksdk skips
the file silently, and the error used to say "cloud 'x' is not in bad.yaml (clouds there: defaults)"."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from tui.config import OpenStackConfig
from tui.errors import SourceError
from tui.openstack.client import connect

BAD = "clouds:\n  x:\n    auth:\n      auth_url: http://h:5000/v3\n     username: admin\n"


def test_connect_names_the_yaml_error_and_its_line(tmp_path: Path) -> None:
    bad = tmp_path / "bad.yaml"
    bad.write_text(BAD)
    with pytest.raises(SourceError) as err:
        connect(OpenStackConfig(cloud="x", clouds_file=str(bad)))
    assert str(err.value) == (f"{bad} is not valid YAML at line 5, column 6: did not find expected key - fix "
                              "that line of [openstack] clouds_file")


def test_snapshot_reports_it_as_the_services_error(tmp_path: Path) -> None:
    bad = tmp_path / "bad.yaml"
    bad.write_text(BAD)
    config = tmp_path / "config.toml"
    config.write_text(f'[openstack]\ncloud = "x"\nclouds_file = "{bad}"\n')
    env = {k: v for k, v in os.environ.items() if k not in ("STACKTOP_CONFIG", "OS_CLOUD")}
    proc = subprocess.run([sys.executable, "-m", "tui", "snapshot", "--json", "--config", str(config)],
                          capture_output=True, text=True, env=env, timeout=120, stdin=subprocess.DEVNULL)
    assert proc.returncode == 3 and "Traceback" not in proc.stderr
    errors = [s["error"] for s in json.loads(proc.stdout)["sources"].values() if s["error"]]
    assert errors and all("is not valid YAML at line 5, column 6" in e for e in errors), errors
