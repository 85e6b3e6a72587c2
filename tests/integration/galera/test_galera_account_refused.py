"""A Galera account that lacks what stacktop's read needs, on the real clusters: the two statements stacktop
sends (SHOW GLOBAL STATUS / VARIABLES LIKE 'wsrep%') need no privilege beyond USAGE, so what can really refuse
them is the account itself: a resource limit reached (counted by each node on its own), an expired password, a
lock. Each is a finding (galera.privilege_missing) or the source's error naming the account, what was refused
and the ALTER USER that lifts it, never "does not answer" nor "check user and password". Every account here is a
throwaway created as root for the test and dropped after it."""

from __future__ import annotations

import secrets
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from datetime import UTC, datetime
from typing import Any

import pymysql
import pytest

from tests.integration.galera.scenarios import execute
from tui.collectors.galera import GaleraCollector
from tui.collectors.galera_sql import STATUS_SQL
from tui.errors import SourceError
from tui.rules.quorum import galera_findings

pytestmark = pytest.mark.integration

PASSWORD = "refused-reader-pw"


@contextmanager
def throwaway_account(cluster: Any, options: str) -> Iterator[str]:
    """An account 'stacktop_refused_<random>'@'%' with options, present on every node; dropped after."""
    name = f"stacktop_refused_{secrets.token_hex(3)}"
    execute(cluster, 1, f"CREATE USER '{name}'@'%' IDENTIFIED BY '{PASSWORD}' {options}")
    try:
        deadline = time.monotonic() + 60
        while not all(execute(cluster, n, f"SELECT 1 FROM mysql.user WHERE user = '{name}'")
                      for n in cluster.indexes):
            assert time.monotonic() < deadline, f"{name} did not replicate to every node"
            time.sleep(0.2)
        yield name
    finally:
        execute(cluster, 1, f"DROP USER IF EXISTS '{name}'@'%'")


def login(cluster: Any, node: int, user: str) -> pymysql.connections.Connection:
    return pymysql.connect(host="127.0.0.1", port=cluster.port(node), user=user, password=PASSWORD,
                           connect_timeout=5, read_timeout=10, ssl_disabled=True)


def refusal_finding(snap: Any, address: str) -> Any:
    [finding] = [f for f in galera_findings(snap, datetime.now(UTC)) if f.subject == address]
    return finding


async def test_a_query_limit_reached_on_one_node_is_a_finding(galera_cluster: Any,
                                                             make_collector: Callable[..., GaleraCollector]) -> None:
    with throwaway_account(galera_cluster, "WITH MAX_QUERIES_PER_HOUR 20") as user:
        conn = login(galera_cluster, 3, user)  # the account's hourly quota, used up on node 3 only
        try:
            with conn.cursor() as cur, pytest.raises(pymysql.err.OperationalError) as hit:
                for _ in range(40):
                    cur.execute("SHOW GLOBAL STATUS LIKE 'wsrep_ready'")
            assert hit.value.args[0] == 1226, hit.value
        finally:
            conn.close()
        snap = await make_collector(user=user, password=PASSWORD).collect()
        node3 = galera_cluster.address(3)
        by_address = {n.address: n for n in snap.nodes}
        assert by_address[node3].privilege_error and not by_address[node3].reachable, by_address[node3]
        assert all(by_address[galera_cluster.address(n)].reachable for n in (1, 2)), snap.nodes
        finding = refusal_finding(snap, node3)
        assert finding.kind == "galera.privilege_missing" and finding.severity == "warning", finding
        # a used-up quota refuses the login itself (the server checks it there too)
        assert f"user '{user}' may not log in: (1226)" in finding.summary, finding.summary
        assert "'max_queries_per_hour' resource" in finding.summary
        assert f"ALTER USER '{user}'@'%' WITH MAX_QUERIES_PER_HOUR 0" in finding.summary, finding.summary
        assert "does not answer" not in finding.summary and "ALTER USER" in finding.next_step


async def test_a_connection_limit_reached_on_one_node_is_a_finding(
        galera_cluster: Any, make_collector: Callable[..., GaleraCollector]) -> None:
    with throwaway_account(galera_cluster, "WITH MAX_USER_CONNECTIONS 1") as user:
        held = login(galera_cluster, 2, user)  # another client holds the account's one connection to node 2
        try:
            snap = await make_collector(user=user, password=PASSWORD).collect()
        finally:
            held.close()
        node2 = galera_cluster.address(2)
        assert all(n.reachable for n in snap.nodes if n.address != node2), snap.nodes
        finding = refusal_finding(snap, node2)
        assert finding.kind == "galera.privilege_missing", finding
        assert f"user '{user}' may not log in: (1226)" in finding.summary, finding.summary
        assert f"ALTER USER '{user}'@'%' WITH MAX_USER_CONNECTIONS 0" in finding.summary, finding.summary


@pytest.mark.parametrize(("options", "refused", "fix"), [
    ("ACCOUNT LOCK", "log in: (4151) Access denied, this account is locked", "ACCOUNT UNLOCK"),
    # logged in with an expired password, every statement is refused until the password is set
    ("PASSWORD EXPIRE", f"run {STATUS_SQL}: (1820) ",
     "IDENTIFIED BY '<the password in [galera]>' PASSWORD EXPIRE NEVER"),
], ids=["locked", "password-expired"])
async def test_an_account_refused_on_every_node_names_the_alter_user(
        galera_cluster: Any, make_collector: Callable[..., GaleraCollector], options: str, refused: str,
        fix: str) -> None:
    with throwaway_account(galera_cluster, options) as user, pytest.raises(SourceError) as caught:
        await make_collector(user=user, password=PASSWORD).collect()
    line = str(caught.value)
    assert f"user '{user}' may not {refused}" in line, line
    assert f"ALTER USER '{user}'@'%' {fix}" in line, line
    assert "check [galera] nodes, user and password" not in line and PASSWORD not in line, line
