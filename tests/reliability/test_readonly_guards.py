"""Each read-only guard refuses, and a refused request never reaches the server.

HTTP: tui.readonly.check_method, wired into the SDK session (keystoneauth -> requests), the RabbitMQ httpx
client and fastget. SQL: tui.collectors.galera_sql.run_query. AMQP: rabbitmq_amqp.PassiveChannel.
The simulator records every request it receives (method, path): a refused write must not be there.
"""

from __future__ import annotations

from typing import Any

import pytest

from tui.collectors import galera_sql
from tui.collectors.rabbitmq import RabbitMQCollector
from tui.collectors.rabbitmq_amqp import AmqpError, PassiveChannel
from tui.openstack import fastget
from tui.openstack.client import connect
from tui.readonly import WriteRefused, allowed, check_method
from tui.sim import start_demo


@pytest.mark.parametrize(("method", "url", "ok"), [
    ("GET", "http://nova:8774/v2.1/servers/detail?all_tenants=1", True),
    ("get", "http://nova:8774/v2.1/os-services", True),
    ("POST", "http://keystone:5000/v3/auth/tokens", True),
    ("POST", "https://cloud/identity/v3/auth/tokens/", True),
    ("POST", "http://nova:8774/v2.1/servers", False),
    ("POST", "http://keystone:5000/v3/auth/tokens/extra", False),
    ("POST", "http://nova:8774/v2.1/servers/x/action?x=/v3/auth/tokens", False),
    ("PUT", "http://placement/resource_providers/x/inventories", False),
    ("DELETE", "http://keystone:5000/v3/auth/tokens", False),
    ("DELETE", "http://nova:8774/v2.1/servers/abc", False),
    ("PATCH", "http://neutron:9696/v2.0/ports/p", False),
    ("HEAD", "http://nova:8774/v2.1", False),
    ("OPTIONS", "http://nova:8774/v2.1", False),
    ("", "http://nova:8774/v2.1", False),
])
def test_http_guard_decides(method: str, url: str, ok: bool) -> None:
    assert allowed(method, url) is ok
    if ok:
        check_method(method, url)
    else:
        with pytest.raises(WriteRefused) as err:
            check_method(method, url)
        assert "read-only" in str(err.value) and "\n" not in str(err.value)
        assert "?" not in str(err.value), "the refused URL is shown without its query"


@pytest.fixture(scope="module")
def demo() -> Any:
    d = start_demo(storyline=False, instances=5, hosts=2, queues=5)
    yield d
    d.stop()


def _writes(demo: Any) -> list[tuple[str, str, str]]:
    return [(svc, m, t) for svc, m, t, _, _ in demo.stats.log
            if m != "GET" and not (m == "POST" and t.split("?")[0].endswith("/v3/auth/tokens"))]


def test_sdk_session_refuses_writes_before_sending(demo: Any) -> None:
    client = connect(demo.config().openstack)
    try:
        assert client.compute_services(), "reads work through the guarded session"
        before = len(demo.stats.log)
        attempts = [
            lambda: client.conn.compute.post("/servers", json={"server": {}}),
            lambda: client.conn.compute.delete("/servers/abc"),
            lambda: client.conn.network.put("/ports/p", json={}),
            lambda: client.conn.placement.delete("/allocations/c"),
            lambda: client.conn.session.post(demo.url("compute") + "/os-services/disable", json={}),
            lambda: client.conn.session.request(demo.auth_url + "/auth/tokens", "DELETE"),
        ]
        for attempt in attempts:
            with pytest.raises(WriteRefused):
                attempt()
        # (building a proxy may GET its version document: reads are fine)
        assert [e for e in list(demo.stats.log)[before:] if e[1] != "GET"] == [], "a refused request was sent"
        assert _writes(demo) == []
    finally:
        client.close()


async def test_rabbitmq_httpx_client_refuses_writes(demo: Any) -> None:
    collector = RabbitMQCollector(demo.rabbitmq_url, "guest", "guest", timeout=5)
    try:
        await collector.collect()
        before = len(demo.stats.log)
        http = collector._http()
        for call in (lambda: http.put("/api/queues/%2F/x", json={}), lambda: http.delete("/api/queues/%2F/x"),
                     lambda: http.post("/api/exchanges/%2F/amq.default/publish", json={})):
            with pytest.raises(WriteRefused):
                call()
        assert len(demo.stats.log) == before
    finally:
        await collector.aclose()


async def test_fastget_passes_every_request_through_the_guard(demo: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    seen: list[tuple[str, str]] = []
    monkeypatch.setattr(fastget, "check_method", lambda m, u: seen.append((m, u)))
    answers = await fastget.get_many(demo.url("compute"), ["/", "/os-services", "/flavors"], {}, concurrency=2)
    assert len(answers) == 3 and len(seen) == 3 and {m for m, _ in seen} == {"GET"}

    def refuse(method: str, url: str) -> None:
        raise WriteRefused("refused")

    monkeypatch.setattr(fastget, "check_method", refuse)
    before = len(demo.stats.log)
    with pytest.raises(WriteRefused):
        await fastget.get_many(demo.url("compute"), ["/os-services"], {})
    assert len(demo.stats.log) == before, "the guard runs before the request is written"


class _RecordingConnection:
    def __init__(self) -> None:
        self.sent: list[str] = []

    def query(self, sql: str) -> list[tuple[Any, ...]]:
        self.sent.append(sql)
        return []

    def close(self) -> None:
        return None


@pytest.mark.parametrize("sql", [
    "INSERT INTO t VALUES (1)", "UPDATE t SET a=1", "DELETE FROM t", "DROP TABLE t", "SET GLOBAL wsrep_desync=ON",
    "FLUSH STATUS", "CALL p()", "KILL 5", "  replace into t values (1)", "SELECT 1; DROP TABLE t",
    "SELECT * FROM t INTO OUTFILE '/tmp/x'", "SELECT * FROM t FOR UPDATE", "SELECT GET_LOCK('x', 1)",
    "SELECT SLEEP(10)", "SHOW STATUS /* */; DELETE FROM t", "SELECT 1 -- comment", "", "   ",
])
def test_sql_guard_refuses_before_sending(sql: str) -> None:
    conn = _RecordingConnection()
    with pytest.raises(galera_sql.ReadOnlyViolation):
        galera_sql.run_query(conn, sql)
    assert conn.sent == []


def test_sql_guard_lets_the_collectors_statements_through() -> None:
    conn = _RecordingConnection()
    for sql in (galera_sql.STATUS_SQL, galera_sql.VARIABLES_SQL, "SELECT 1"):
        galera_sql.run_query(conn, sql)
    assert conn.sent == [galera_sql.STATUS_SQL, galera_sql.VARIABLES_SQL, "SELECT 1"]


class _RecordingChannel:
    def __init__(self) -> None:
        self.calls: list[tuple[str, dict[str, Any]]] = []

    def queue_declare(self, **kw: Any) -> str:
        self.calls.append(("queue_declare", kw))
        return "ok"

    def basic_publish(self, *a: Any, **kw: Any) -> None:
        self.calls.append(("basic_publish", kw))


def test_amqp_channel_is_passive_only() -> None:
    inner = _RecordingChannel()
    ch = PassiveChannel(inner)
    assert ch.queue_declare("compute.c1", passive=True) == "ok"
    assert inner.calls == [("queue_declare", {"queue": "compute.c1", "passive": True})]
    refused = [
        lambda: ch.queue_declare("q", passive=False),
        lambda: ch.queue_declare("q", passive=True, durable=True),
        lambda: ch.queue_declare("q", arguments={"x-expires": 1}),
        lambda: ch.basic_publish("", "q", b"x"),
        lambda: ch.queue_delete("q"),
        lambda: ch.queue_purge("q"),
        lambda: ch.exchange_declare("x"),
        lambda: ch.basic_get("q"),
        lambda: ch.basic_consume("q", print),
    ]
    for call in refused:
        with pytest.raises(AmqpError, match="read-only"):
            call()
    assert len(inner.calls) == 1, "nothing refused reached the channel"
