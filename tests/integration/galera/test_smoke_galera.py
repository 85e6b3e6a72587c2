"""Smoke: each of the test bed's 3-node Galera clusters (10.11, 11.8) answers the real client on every node,
and `up` again is a no-op."""

from __future__ import annotations

import time

import pymysql
import pytest

from tests.integration.conftest import run_script
from tests.testbed import paths

pytestmark = pytest.mark.integration


def test_pymysql_sees_cluster_size_3_on_each_node(galera_cluster) -> None:
    for address in galera_cluster.nodes:
        host, port = address.rsplit(":", 1)
        for user, password in ((galera_cluster.reader_user, galera_cluster.reader_password),
                               (galera_cluster.user, galera_cluster.password)):
            conn = pymysql.connect(host=host, port=int(port), user=user, password=password, ssl_disabled=True,
                                   connect_timeout=3)
            try:
                with conn.cursor() as cur:
                    cur.execute("SHOW GLOBAL STATUS LIKE 'wsrep_cluster_size'")
                    assert cur.fetchall() == (("wsrep_cluster_size", "3"),), (address, user)
            finally:
                conn.close()


def test_up_again_is_a_quick_no_op_and_status_is_ok(galera_cluster) -> None:
    t0 = time.monotonic()
    rc, out = run_script([str(paths.TESTCLOUD_SCRIPT), "up", galera_cluster.component], 60)
    took = time.monotonic() - t0
    assert rc == 0, out
    assert "starting" not in out and took < 5, (took, out)
    rc, out = run_script([str(paths.TESTCLOUD_SCRIPT), "status", galera_cluster.component], 30)
    assert rc == 0 and out.count("cluster_status=Primary") == 3, out
