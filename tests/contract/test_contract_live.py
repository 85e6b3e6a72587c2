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
from tests.contract.shape import drift, shape
from tests.testbed.openstack import attached_volume, error_server, migrations, server_on, wait_all_healthy
from tests.testbed.wait import wait_for
from tui.config import OpenStackConfig
from tui.openstack import connect
from tui.sim import start_demo

pytestmark = pytest.mark.integration
START = 1_790_000_000.0


@contextlib.contextmanager
def _confirmed_migration(conn) -> Iterator[str]:  # type: ignore[no-untyped-def]
    """A server cold-migrated off compute-01 and confirmed: a 'confirmed' os-migrations row."""
    with server_on(conn, "compute-01") as srv:
        conn.compute.migrate_server(srv)

        def resized() -> bool:
            failed = [m["status"] for m in migrations(conn, srv.id) if m["status"] in ("error", "failed")]
            assert not failed, f"cold migration of {srv.id} failed ({failed[0]}): is compute-02 up?"
            return conn.compute.get_server(srv.id).status == "VERIFY_RESIZE"

        wait_for(resized, timeout=180, what=f"server {srv.id} to reach VERIFY_RESIZE")
        conn.compute.confirm_server_resize(srv)
        wait_for(lambda: any(m["status"] == "confirmed" for m in migrations(conn, srv.id)), timeout=60,
                 what="the migration to be confirmed")
        yield srv.id


@pytest.fixture(scope="module")
def clients(openstack_cloud):  # type: ignore[no-untyped-def]
    conn = openstack_cloud.connect()
    wait_all_healthy(conn, timeout=300)  # the cloud is shared: another test may have a service down
    real_client = connect(OpenStackConfig(cloud=openstack_cloud.cloud, clouds_file=str(openstack_cloud.clouds_yaml)))
    demo = start_demo(instances=120, hosts=6, queues=60, seed=1, manual=True, start=START)
    demo.advance(20)
    try:
        yield conn, real_client, connect(demo.config().openstack)
    finally:
        demo.stop()
        real_client.close()


@pytest.fixture(scope="module")
def shapes(clients):  # type: ignore[no-untyped-def]
    conn, real_client, sim_client = clients
    sim = read_all(sim_client, sim_ids(sim_client), KINDS_BUT_MIGRATIONS)
    with server_on(conn, "compute-01", network="provider") as active, attached_volume(conn, active), \
            error_server(conn) as err:
        real = read_all(real_client, ids_for(real_client, active.id, err.id), KINDS_BUT_MIGRATIONS)
    return real, sim


KINDS_BUT_MIGRATIONS = tuple(k for k in KINDS if k.name != "migrations")


@pytest.mark.parametrize("kind", [k.name for k in KINDS_BUT_MIGRATIONS])
def test_simulator_matches_the_real_cloud(shapes, kind):
    real, sim = shapes
    assert "$" in real[kind] and "$" in sim[kind]
    lines = report({kind: real[kind]}, {kind: sim[kind]})
    assert not lines, "the simulator drifted from the real cloud:\n" + "\n".join(lines)


def test_migrations_match_the_real_cloud(clients):
    """Separate: a cold migration needs both computes up, the flakiest part of a shared test cloud."""
    conn, real_client, sim_client = clients
    kind = next(k for k in KINDS if k.name == "migrations")
    with _confirmed_migration(conn):
        real = shape(real_client.migrations(), kind.maps)
    sim = shape(sim_client.migrations(), kind.maps)
    assert "[].uuid" in real and "[].status" in real
    lines = drift(real, sim)
    assert not lines, "the simulator drifted from the real cloud:\nmigrations: " + "\nmigrations: ".join(lines)
