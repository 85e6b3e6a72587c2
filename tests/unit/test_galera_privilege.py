"""A Galera account that logs in but may not run a read is told as such: which statement, the server's answer,
the GRANT that fixes it (finding galera.privilege_missing), never "does not answer" nor a password problem."""

from __future__ import annotations

from datetime import UTC, datetime

import pymysql
import pytest

from tui.collectors.galera import GaleraCollector
from tui.collectors.galera_sql import STATUS_SQL, privilege_missing
from tui.errors import SourceError
from tui.rules.quorum import galera_findings

NEEDS_PROCESS = "Access denied; you need (at least one of) the PROCESS privilege(s) for this operation"


class Refusing:
    """A connection that logs in, then refuses the status read for lack of a privilege."""

    def query(self, sql: str) -> list[tuple]:
        raise pymysql.err.OperationalError(1227, NEEDS_PROCESS)

    def close(self) -> None:
        return None


def refusing(address: str, user: str, password: str | None, timeout: float) -> Refusing:
    return Refusing()


async def test_a_refused_read_names_the_statement_and_the_grant() -> None:
    c = GaleraCollector(["db1:3306", "db2:3306"], "monitor", "pw", connector=refusing)
    with pytest.raises(SourceError) as caught:
        await c.collect()
    line = str(caught.value)
    assert f"user 'monitor' may not run {STATUS_SQL}: (1227) {NEEDS_PROCESS}" in line
    assert "GRANT PROCESS ON *.* TO 'monitor'@'%'" in line
    assert "check [galera] nodes, user and password" not in line  # the line carries its own fix


class Answering:
    """A healthy node of a 2-node cluster."""

    def query(self, sql: str) -> list[tuple]:
        if sql == STATUS_SQL:
            return [("wsrep_cluster_status", "Primary"), ("wsrep_cluster_size", "2"), ("wsrep_ready", "ON"),
                    ("wsrep_connected", "ON"), ("wsrep_local_state_comment", "Synced")]
        return [("wsrep_on", "ON")]

    def close(self) -> None:
        return None


async def test_one_node_refusing_is_a_privilege_finding() -> None:
    def connector(address: str, user: str, password: str | None, timeout: float) -> Answering | Refusing:
        return Refusing() if address == "db2:3306" else Answering()

    c = GaleraCollector(["db1:3306", "db2:3306"], "monitor", "pw", connector=connector)
    snap = await c.collect()
    found = galera_findings(snap, datetime.now(UTC))
    [finding] = [f for f in found if f.subject == "db2:3306"]
    assert finding.kind == "galera.privilege_missing" and finding.severity == "warning"
    assert "GRANT PROCESS ON *.* TO 'monitor'@'%'" in finding.summary and STATUS_SQL in finding.summary
    assert "GRANT" in finding.next_step


def test_privilege_missing_reads_the_account_from_the_answer() -> None:
    denied = pymysql.err.OperationalError(1142, "SELECT command denied to user 'monitor'@'10.0.0.9' for table "
                                          "'GLOBAL_STATUS'")
    missing = privilege_missing(denied, "SELECT 1", "monitor")
    assert missing is not None and str(missing).endswith("GRANT SELECT ON *.* TO 'monitor'@'10.0.0.9'")
    assert privilege_missing(pymysql.err.OperationalError(1045, "Access denied"), "SELECT 1", "m") is None
    assert privilege_missing(ValueError("x"), "SELECT 1", "m") is None


@pytest.mark.parametrize(("code", "message", "fix"), [
    (1226, "User 'monitor' has exceeded the 'max_queries_per_hour' resource (current value: 100)",
     "ALTER USER 'monitor'@'%' WITH MAX_QUERIES_PER_HOUR 0"),
    (1226, "User 'monitor' has exceeded the 'max_user_connections' resource (current value: 1)",
     "ALTER USER 'monitor'@'%' WITH MAX_USER_CONNECTIONS 0"),
    (4151, "Access denied, this account is locked", "ALTER USER 'monitor'@'%' ACCOUNT UNLOCK"),
    (1862, "Your password has expired. To log in you must change it using a client that supports expired "
           "passwords", "ALTER USER 'monitor'@'%' IDENTIFIED BY '<the password in [galera]>' PASSWORD EXPIRE NEVER"),
], ids=["query-limit", "connection-limit", "locked", "expired"])
async def test_an_account_refused_at_login_is_a_privilege_finding(code: int, message: str, fix: str) -> None:
    """The login itself refused by the account (a limit, a lock, an expired password) on one node: a
    galera.privilege_missing finding naming the account, the server's answer and the ALTER USER, not "does not
    answer" (which sends the reader to restart mariadbd)."""
    def connector(address: str, user: str, password: str | None, timeout: float) -> Answering:
        if address == "db2:3306":
            raise pymysql.err.OperationalError(code, message)
        return Answering()

    c = GaleraCollector(["db1:3306", "db2:3306"], "monitor", "pw", connector=connector)
    snap = await c.collect()
    [finding] = [f for f in galera_findings(snap, datetime.now(UTC)) if f.subject == "db2:3306"]
    assert finding.kind == "galera.privilege_missing", finding
    assert f"user 'monitor' may not log in: ({code}) {message}" in finding.summary, finding.summary
    assert fix in finding.summary and "does not answer" not in finding.summary, finding.summary


def test_an_expired_password_refusing_a_statement_names_the_statement() -> None:
    expired = pymysql.err.OperationalError(1820, "You must SET PASSWORD before executing this statement")
    missing = privilege_missing(expired, STATUS_SQL, "monitor")
    assert missing is not None
    assert str(missing).startswith(f"user 'monitor' may not run {STATUS_SQL}: (1820) You must SET PASSWORD")
