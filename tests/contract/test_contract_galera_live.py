"""Contract: the simulated Galera node answers the collector's two statements with the same variable names
(and string values) as a real MariaDB 10.11 / galera-4 node of the test cluster."""

from __future__ import annotations

import pymysql
import pytest

from tui.sim import start_demo

pytestmark = pytest.mark.integration
STATEMENTS = ("SHOW GLOBAL STATUS LIKE 'wsrep%'", "SHOW GLOBAL VARIABLES LIKE 'wsrep%'")


@pytest.mark.parametrize("sql", STATEMENTS)
def test_simulated_node_has_the_real_variables(galera_cluster, sql):
    host, port = galera_cluster.nodes[0].rsplit(":", 1)
    conn = pymysql.connect(host=host, port=int(port), user=galera_cluster.reader_user,
                           password=galera_cluster.reader_password, ssl_disabled=True, connect_timeout=5)
    try:
        with conn.cursor() as cur:
            cur.execute(sql)
            real = dict(cur.fetchall())
    finally:
        conn.close()
    demo = start_demo(instances=10, hosts=2, queues=20, churn=0, storyline=False)
    try:
        cfg = demo.config().galera
        sim_conn = demo.galera_connector(cfg.nodes[0], cfg.user, cfg.password.value, 5.0)
        sim = dict(sim_conn.query(sql))
    finally:
        demo.stop()
    missing, invented = sorted(set(real) - set(sim)), sorted(set(sim) - set(real))
    assert not missing and not invented, f"simulator drift: lacks {missing}, invents {invented}"
    assert all(isinstance(v, str) for v in sim.values())
