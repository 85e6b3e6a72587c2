"""Where the test bed lives: the repo's scripts and the cache folder (STACKTOP_TESTCLOUD_HOME)."""

from __future__ import annotations

import os
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
TESTCLOUD_SCRIPT = REPO / "scripts" / "testcloud"
OPENSTACK_SCRIPTS = REPO / "testcloud" / "openstack"


def testcloud_home() -> Path:
    return Path(os.environ.get("STACKTOP_TESTCLOUD_HOME") or Path.home() / ".cache" / "stacktop" / "testcloud")


def openstack_root() -> Path:
    """The OpenStack cloud's state folder: venv, rendered etc/, logs/, run/*.pid."""
    return testcloud_home() / "openstack"


def clouds_yaml() -> Path:
    return testcloud_home() / "clouds.yaml"


def pid_file(service: str) -> Path:
    return openstack_root() / "run" / f"{service}.pid"


def hold_file(service: str) -> Path:
    """Written while a test holds `service` down on purpose: `scripts/testcloud up` leaves it down."""
    return openstack_root() / "run" / f"{service}.hold"
