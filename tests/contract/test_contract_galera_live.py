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


def _real(cluster, sql: str, node: int = 0) -> dict[str, str]:
    host, port = cluster.nodes[node].rsplit(":", 1)
    conn = pymysql.connect(host=host, port=int(port), user=cluster.reader_user, password=cluster.reader_password,
                           ssl_disabled=True, connect_timeout=5)
    try:
        with conn.cursor() as cur:
            cur.execute(sql)
            return dict(cur.fetchall())
    finally:
        conn.close()


def _sim(sql: str, **options) -> dict[str, str]:
    demo = start_demo(instances=10, hosts=2, queues=20, churn=0, storyline=False, **options)
    try:
        cfg = demo.config().galera
        return dict(demo.galera_connector(cfg.nodes[0], cfg.user, cfg.password.value, 5.0).query(sql))
    finally:
        demo.stop()


def test_mariadb_11_8_answers_what_the_collector_reads_like_10_11(galera11_cluster):
    """11.8's status names are 10.11's (the simulator's); its variables add only wsrep_provider_* (provider options
    as read-only variables) and drop wsrep_causal_reads and wsrep_load_data_splitting; the parser reads the same
    fields from both."""
    from tui.collectors.galera_parse import node_fields

    status, variables = (_real(galera11_cluster, sql) for sql in STATEMENTS)
    sim_status, sim_variables = (_sim(sql) for sql in STATEMENTS)
    assert set(status) == set(sim_status), sorted(set(status) ^ set(sim_status))
    assert set(sim_variables) - set(variables) == {"wsrep_causal_reads", "wsrep_load_data_splitting"}
    added = set(variables) - set(sim_variables)
    assert added and all(name.startswith("wsrep_provider_") for name in added), sorted(added)
    real_fields, sim_fields = node_fields(status, variables), node_fields(sim_status, sim_variables)
    assert {k for k, v in real_fields.items() if v is None} == {k for k, v in sim_fields.items() if v is None}
    assert real_fields["cluster_size"] == 3 and real_fields["cluster_status"] == "Primary"


def test_two_nodes_and_garbd_as_the_simulator_shows_them(galera_arb_cluster):
    """The data nodes of the real 2 + garbd cluster and of the simulator's (demo-west) report garbd alike: counted
    in wsrep_cluster_size, an empty entry in wsrep_incoming_addresses; the same status and variable names."""
    real = {sql: _real(galera_arb_cluster, sql) for sql in STATEMENTS}
    sim = {sql: _sim(sql, galera_arbitrator=True) for sql in STATEMENTS}
    for sql in STATEMENTS:
        assert set(real[sql]) == set(sim[sql]), (sql, sorted(set(real[sql]) ^ set(sim[sql])))
    real_status, sim_status = real[STATEMENTS[0]], sim[STATEMENTS[0]]
    for status in (real_status, sim_status):
        entries = status["wsrep_incoming_addresses"].split(",")
        assert status["wsrep_cluster_size"] == "3" and len(entries) == 3 and entries.count("") == 1, status
