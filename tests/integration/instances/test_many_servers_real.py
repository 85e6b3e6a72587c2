"""300 servers on the real test cloud: the listings a user runs still answer, and the test bed still resets.

nova-api's detailed listing asks neutron-server for the ports of up to 150 listed servers in one
`GET /v2.0/ports?device_id=...` (~7 KB of request line): an API server with a smaller request-line limit
answers 400 and the listing fails with 500. 300 servers (multi-creates on the fake drivers, no
port, the smallest flavor, in batches) are listed as `openstack server list --long --all-projects` lists them and as
stacktop's instances source does, then deleted by the test bed's own reset code (cloudctl delete-servers).
"""

from __future__ import annotations

import contextlib
import os
import secrets
import subprocess
from collections.abc import Iterator
from typing import Any

import pytest

from tests.integration.instances.conftest import make_collector
from tests.testbed import paths
from tests.testbed.openstack import OpenStackCloud
from tests.testbed.wait import wait_for

pytestmark = pytest.mark.integration

COUNT = 300
BATCH = 50
BUILD_TIMEOUT_S = 900.0
QUOTAS = ("instances", "cores", "ram")


@contextlib.contextmanager
def unlimited_compute_quota(conn: Any) -> Iterator[None]:
    """The admin project may hold COUNT more servers for the test; its quotas are put back afterwards."""
    project = conn.current_project_id
    before = conn.get_compute_quotas(project)
    conn.set_compute_quotas(project, **{q: -1 for q in QUOTAS})
    try:
        yield
    finally:
        conn.set_compute_quotas(project, **{q: before[q] for q in QUOTAS})


def cloudctl_delete_servers(cloud: OpenStackCloud, name_regex: str) -> str:
    """The test bed's reset, for the servers named like `name_regex` only (other sessions' servers stay)."""
    env = {**os.environ, "OS_CLIENT_CONFIG_FILE": str(cloud.clouds_yaml), "TESTCLOUD_ROOT": str(cloud.root)}
    cmd = [str(cloud.root / "venv" / "bin" / "python"), str(paths.OPENSTACK_SCRIPTS / "py" / "cloudctl.py"),
           "delete-servers", name_regex, "--timeout", "1800"]
    proc = subprocess.run(cmd, env=env, stdin=subprocess.DEVNULL, capture_output=True, text=True, timeout=1860,
                          check=False)
    out = proc.stdout + proc.stderr
    assert proc.returncode == 0, f"cloudctl delete-servers {name_regex} failed ({proc.returncode}):\n{out[-3000:]}"
    return out


def delete_leftovers(conn: Any, name_regex: str) -> None:
    """Whatever the test left (it failed before the reset): deleted from the plain listing, which asks
    neutron nothing, so this works whatever the API servers accept."""
    asked: set[str] = set()

    def gone() -> bool:
        left = list(conn.compute.servers(details=False, all_projects=True, name=name_regex))
        for srv in left:
            if srv.id not in asked:  # one DELETE each: every DELETE casts one more terminate to the compute
                with contextlib.suppress(Exception):
                    conn.compute.delete_server(srv.id)
                    asked.add(srv.id)
        return not left

    wait_for(gone, timeout=1800, what=f"the servers named like {name_regex} to be deleted", interval=10)


def building(conn: Any, name_regex: str) -> int:
    """How many of the test's servers are still BUILD (paged by 50: a page's port lookup is short)."""
    return sum(1 for _ in conn.compute.servers(all_projects=True, name=name_regex, status="BUILD", limit=50))


def test_300_servers_list_in_detail_and_reset(openstack_cloud: OpenStackCloud, healthy: Any) -> None:
    conn = healthy
    name = f"stacktop-300-{secrets.token_hex(3)}"
    name_regex = f"^{name}-"
    flavor = conn.compute.find_flavor("m1.tiny")
    image = conn.image.find_image("tiny")
    assert flavor is not None and image is not None, "flavor m1.tiny / image tiny missing: scripts/testcloud up"
    reset_done = False
    with unlimited_compute_quota(conn):
        try:
            # multi-create through the API in batches: a nova-compute claims its builds one at a time and each
            # claim walks the allocations of the builds still queued on its host (hundreds: minutes)
            for batch in range(COUNT // BATCH):
                conn.compute.create_server(name=f"{name}-b{batch}", flavor_id=flavor.id, image_id=image.id,
                                           networks="none", min_count=BATCH, max_count=BATCH)
                wait_for(lambda: building(conn, name_regex) == 0, timeout=BUILD_TIMEOUT_S, interval=3,
                         what=f"batch {batch} of {BATCH} servers to leave BUILD")

            # `openstack server list --long --all-projects`: GET /servers/detail?all_tenants=1, one page
            listed = [s for s in conn.compute.servers(all_projects=True) if s.name.startswith(f"{name}-")]
            assert len(listed) == COUNT
            assert {s.status for s in listed} == {"ACTIVE"}, {s.status for s in listed}
            assert {s.compute_host for s in listed} <= {"compute-01", "compute-02"}

            # stacktop's instances source: every page of /servers/detail?all_tenants=1
            collector = make_collector(openstack_cloud)
            rows, requests = collector.list_servers()
            ours = {r["id"] for r in rows if r["name"].startswith(f"{name}-")}
            assert ours == {s.id for s in listed}
            assert requests >= 1

            out = cloudctl_delete_servers(openstack_cloud, name_regex)
            assert f"deleted {COUNT} servers" in out, out
            reset_done = True
            assert not list(conn.compute.servers(details=False, all_projects=True, name=name_regex))
        finally:
            if not reset_done:
                delete_leftovers(conn, name_regex)
