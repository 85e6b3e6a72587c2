"""The read-only gate every Galera statement passes, and error descriptions."""

from __future__ import annotations

import pytest

from tui.collectors.galera_sql import (
    STATUS_SQL,
    VARIABLES_SQL,
    ReadOnlyViolation,
    check_read_only,
    describe_error,
    run_query,
    split_address,
)


class Recorder:
    """A Connection that only records what reached it."""

    def __init__(self) -> None:
        self.sent: list[str] = []

    def query(self, sql: str) -> list[tuple]:
        self.sent.append(sql)
        return [("wsrep_ready", "ON")]

    def close(self) -> None:
        pass


@pytest.mark.parametrize("sql", [
    STATUS_SQL,
    VARIABLES_SQL,
    "SELECT 1",
    "  select VARIABLE_VALUE from information_schema.GLOBAL_STATUS where VARIABLE_NAME = 'WSREP_READY'",
    "show global status where Variable_name in ('wsrep_ready', 'wsrep_cluster_status')",
    "\nSHOW PROCESSLIST",
])
def test_reads_pass(sql: str) -> None:
    assert check_read_only(sql) == sql


@pytest.mark.parametrize("sql", [
    "SET GLOBAL wsrep_desync=ON",
    "SET GLOBAL wsrep_provider_options='pc.bootstrap=YES'",
    "INSERT INTO t VALUES (1)",
    "UPDATE t SET v = 1",
    "DELETE FROM t",
    "DROP TABLE t",
    "FLUSH STATUS",
    "KILL 12",
    "LOCK TABLES t WRITE",
    "CALL p()",
    "DO SLEEP(1)",
    "WITH x AS (SELECT 1) DELETE FROM t",
    "SELECT 1; DROP TABLE t",
    "SHOW STATUS; SET GLOBAL wsrep_desync=ON",
    "SELECT 1 /*!50000 , (SELECT 1) */",
    "SELECT 1 -- comment",
    "SELECT 1 # comment",
    "SELECT * FROM t INTO OUTFILE '/tmp/x'",
    "SELECT * FROM t FOR UPDATE",
    "SELECT * FROM t LOCK IN SHARE MODE",
    "SELECT GET_LOCK('x', 10)",
    "SELECT SLEEP(10)",
    "SELECT BENCHMARK(100000000, MD5('x'))",
    "",
    "   ",
    "(SELECT 1)",
    "SHOWSTATUS",
])
def test_everything_else_is_refused(sql: str) -> None:
    with pytest.raises(ReadOnlyViolation):
        check_read_only(sql)


def test_refused_before_reaching_the_connection() -> None:
    conn = Recorder()
    with pytest.raises(ReadOnlyViolation):
        run_query(conn, "SET GLOBAL wsrep_desync=ON")
    assert conn.sent == []
    assert run_query(conn, STATUS_SQL) == [("wsrep_ready", "ON")]
    assert conn.sent == [STATUS_SQL]


def test_non_string_refused() -> None:
    with pytest.raises(ReadOnlyViolation):
        check_read_only(b"SHOW STATUS")  # type: ignore[arg-type]


def test_collector_sends_only_gated_statements() -> None:
    """Every statement the collector module uses passes the gate (it sends nothing else)."""
    import tui.collectors.galera as mod

    for sql in (mod.STATUS_SQL, mod.VARIABLES_SQL):
        check_read_only(sql)
    with open(mod.__file__) as fh:
        source = fh.read()
    assert ".query(" not in source, "the collector must send SQL only through run_query()"


def test_describe_error_auth_and_refused() -> None:
    line, auth = describe_error(Exception(1045, "Access denied for user 'stacktop'@'127.0.0.1' (using password: YES)"))
    assert auth and line.startswith("(1045) Access denied")
    refused = "Can't connect to MySQL server on '127.0.0.1' ([Errno 111] Connection refused)"
    line, auth = describe_error(Exception(2003, refused))
    assert not auth and line.startswith("(2003)")
    line, auth = describe_error(TimeoutError())
    assert line == "TimeoutError: timed out" and not auth
    line, _ = describe_error(RuntimeError("first line\nsecond line"))
    assert line == "RuntimeError: first line"


def test_split_address() -> None:
    assert split_address("127.0.0.1:3311") == ("127.0.0.1", 3311)
    assert split_address("[::1]:3306") == ("::1", 3306)
    assert split_address("db-1.example:3306") == ("db-1.example", 3306)
