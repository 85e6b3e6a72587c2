"""The ML2/OVN profile of the test bed (testcloud/ovn.sh): OVN central, chassis compute-01 and compute-02, a
private neutron-server with the OVN driver reached through the shared Keystone as region RegionOVN."""

from __future__ import annotations

import os
import signal
import time
from dataclasses import dataclass
from pathlib import Path

from tests.testbed import paths
from tests.testbed.testcloud import testcloud

CLOUD = "stacktop-testcloud-ovn"
REGION = "RegionOVN"
HOSTS = ("compute-01", "compute-02")
NEUTRON_URL = f"http://127.0.0.1:{os.environ.get('STACKTOP_OVN_NEUTRON_PORT', '16696')}"


@dataclass(frozen=True)
class OvnTestbed:
    """The files and daemons of the OVN profile, under <cache>/ovn."""

    folder: Path

    @property
    def clouds_yaml(self) -> Path:
        return self.folder / "clouds.yaml"

    def controller_pid(self, host: str) -> int | None:
        """The pid of HOST's ovn-controller when it runs, else None."""
        try:
            pid = int((self.folder / "run" / host / "ovn-controller.pid").read_text().strip())
            os.kill(pid, 0)
        except (OSError, ValueError):
            return None
        return pid

    def kill_controller(self, host: str, timeout: float = 10) -> int:
        """SIGKILL HOST's ovn-controller (its chassis rows stay in the southbound database); its pid, once gone."""
        pid = self.controller_pid(host)
        if pid is None:
            raise RuntimeError(f"ovn-controller of {host} is not running")
        os.kill(pid, signal.SIGKILL)
        deadline = time.monotonic() + timeout
        while Path(f"/proc/{pid}").exists() and time.monotonic() < deadline:
            time.sleep(0.05)  # a killed child of init is reaped at once; only zombies linger
        return pid

    def restore(self) -> None:
        """`scripts/testcloud up ovn`: restarts what is missing (a killed ovn-controller), waits until neutron
        lists every OVN agent alive again."""
        testcloud("up", "ovn", 400)

    def config(self, path: Path) -> Path:
        """Write a stacktop config reading the OpenStack sources of cloud stacktop-testcloud-ovn to path."""
        lines = [
            "[openstack]", f'cloud = "{CLOUD}"', f'clouds_file = "{self.clouds_yaml}"', "interval = 5",
            "timeout = 20",
            "", "[thresholds]", "service_down_time = 20", "agent_down_time = 20", "volume_service_down_time = 20",
        ]
        path.write_text("\n".join(lines) + "\n")
        path.chmod(0o600)
        return path


def ovn_testbed() -> OvnTestbed:
    return OvnTestbed(folder=Path(os.environ.get("STACKTOP_OVN_HOME") or paths.testcloud_home() / "ovn"))
