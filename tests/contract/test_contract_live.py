"""Contract: the same tui.openstack calls against the simulator and the real test cloud return the same keys
and value types for every resource kind stacktop reads. On drift the test fails naming kind and field.

The real side is built by the test bed's scenario helpers (each undoes itself): an ACTIVE server with a port
and an attached volume on compute-01, an ERROR server (x.huge), and a cold migration (confirmed) so that
os-migrations has a row.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator

import pytest

from tests.contract.kinds import KINDS, ids_for, read_all, report, sim_ids
from tests.testbed.openstack import attached_volume, error_server, migrations, server_on, wait_all_healthy
from tests.testbed.wait import wait_for
from tui.config import OpenStackConfig
from tui.openstack import connect
from tui.sim import start_demo

pytestmark = pytest.mark.integration
START = 1_790_000_000.0


@contextlib.contextmanager
def _confirmed_migration(conn) -> Iterator[str]:  # type: ignore[no-untyped-def]
    """A server cold-migrated compute-01 -> compute-02 and confirmed: a 'confirmed' os-migrations row."""
    with server_on(conn, "compute-01") as srv:
        conn.compute.migrate_server(srv)
        wait_for(lambda: conn.compute.get_server(srv.id).status == "VERIFY_RESIZE", timeout=180,
                 what=f"server {srv.id} to reach VERIFY_RESIZE")
        conn.compute.confirm_server_resize(srv)
        wait_for(lambda: any(m["status"] == "confirmed" for m in migrations(conn, srv.id)), timeout=60,
                 what="the migration to be confirmed")
        yield srv.id


@pytest.fixture(scope="module")
def shapes(openstack_cloud):  # type: ignore[no-untyped-def]
    conn = openstack_cloud.connect()
    wait_all_healthy(conn, timeout=300)  # the cloud is shared: another test may have a service down
    real_client = connect(OpenStackConfig(cloud=openstack_cloud.cloud, clouds_file=str(openstack_cloud.clouds_yaml)))
    demo = start_demo(instances=120, hosts=6, queues=60, seed=1, manual=True, start=START)
    try:
        demo.advance(20)
        sim_client = connect(demo.config().openstack)
        sim = read_all(sim_client, sim_ids(sim_client))
        with _confirmed_migration(conn), server_on(conn, "compute-01", network="provider") as active, \
                attached_volume(conn, active), error_server(conn) as err:
            real = read_all(real_client, ids_for(real_client, active.id, err.id))
        yield real, sim
    finally:
        demo.stop()
        real_client.close()


@pytest.mark.parametrize("kind", [k.name for k in KINDS])
def test_simulator_matches_the_real_cloud(shapes, kind):
    real, sim = shapes
    assert "$" in real[kind] and "$" in sim[kind]
    lines = report({kind: real[kind]}, {kind: sim[kind]}, IGNORE)
    assert not lines, "the simulator drifted from the real cloud:\n" + "\n".join(lines)


# Differences that are the test cloud's, not drift: its fake virt driver has no uptime and no real CPU
# traits; nothing else is excused here.
IGNORE: dict[str, tuple[str, ...]] = {}
