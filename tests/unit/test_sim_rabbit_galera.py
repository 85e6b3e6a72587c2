"""The simulator's RabbitMQ management API and Galera connector answer like the real ones."""

from __future__ import annotations

import base64
import json
import urllib.error
import urllib.request

import pymysql
import pytest

from tui.sim import start_demo

START = 1_790_000_000.0


@pytest.fixture(scope="module")
def demo():
    d = start_demo(instances=30, hosts=3, queues=1200, churn=0, storyline=False, manual=True, start=START)
    yield d
    d.stop()


def _get(demo, path: str, password: str = "guest") -> tuple[int, object]:
    auth = base64.b64encode(f"guest:{password}".encode()).decode()
    req = urllib.request.Request(demo.rabbitmq_url + path, headers={"Authorization": f"Basic {auth}"})
    try:
        with urllib.request.urlopen(req) as resp:
            return resp.status, json.load(resp)
    except urllib.error.HTTPError as err:
        return err.code, json.load(err)


def test_queue_pages_of_at_most_500_with_columns(demo):
    status, body = _get(demo, "/api/queues?page=1&page_size=500&columns=name,vhost,messages,consumers")
    assert status == 200
    assert body["total_count"] == 1200 and body["page_count"] == 3 and body["item_count"] == 500
    assert set(body["items"][0]) == {"name", "vhost", "messages", "consumers"}
    names = []
    for page in (1, 2, 3):
        names += [q["name"] for q in _get(demo, f"/api/queues?page={page}&page_size=500&columns=name")[1]["items"]]
    assert len(set(names)) == 1200
    status, body = _get(demo, "/api/queues?page=1&page_size=1000")
    assert status == 400 and body["error"] == "invalid_pagination_parameters"
    status, body = _get(demo, "/api/queues?page=9&page_size=500")
    assert status == 400 and body["error"] == "page_out_of_range"


def test_unpaged_list_bad_password_and_vhost_path(demo):
    status, rows = _get(demo, "/api/queues/%2F?columns=name,consumers")
    assert status == 200 and isinstance(rows, list) and len(rows) == 1200
    assert _get(demo, "/api/overview", password="nope")[0] == 401


def test_service_queue_loses_consumers_with_stats_lag(demo):
    host = demo.engine.hosts[0].name
    demo.inject("kill_compute", host=host)
    demo.advance(6)  # past the next 5 s stats tick
    row = next(q for q in _get(demo, "/api/queues?columns=name,messages,consumers")[1]
               if q["name"] == f"compute.{host}")
    assert row["consumers"] == 0 and row["messages"] >= 1
    demo.inject("start_compute", host=host)
    demo.advance(6)
    row = next(q for q in _get(demo, "/api/queues?columns=name,messages,consumers")[1]
               if q["name"] == f"compute.{host}")
    assert row == {"name": f"compute.{host}", "messages": 0, "consumers": 1}


def test_memory_alarm_health_check_at_once_nodes_later(demo):
    assert _get(demo, "/api/health/checks/local-alarms") == (200, {"status": "ok"})
    with demo.engine.lock:
        demo.engine.storyline.rabbit_memory_alarm()
    status, body = _get(demo, "/api/health/checks/local-alarms")
    assert status == 503 and body["alarms"] == [{"node": "rabbit@ctl-1", "resource": "memory"}]
    assert _get(demo, "/api/nodes")[1][0]["mem_alarm"] is False  # lags ~8 s like the real one
    demo.advance(9)
    assert _get(demo, "/api/nodes")[1][0]["mem_alarm"] is True
    with demo.engine.lock:
        demo.engine.storyline.rabbit_memory_alarm_clears()
    assert _get(demo, "/api/health/checks/local-alarms")[0] == 200


def test_galera_quorum_loss_values_and_errors(demo):
    cfg = demo.config().galera
    conn = demo.galera_connector(cfg.nodes[0], cfg.user, cfg.password.value, 2.0)
    rows = conn.query("SHOW GLOBAL STATUS LIKE 'wsrep%'")
    status = dict(rows)
    assert all(isinstance(v, str) for _, v in rows)
    assert (status["wsrep_cluster_status"], status["wsrep_local_state_comment"], status["wsrep_ready"],
            status["wsrep_cluster_size"]) == ("Primary", "Synced", "ON", "3")
    variables = dict(conn.query("SHOW GLOBAL VARIABLES LIKE 'wsrep%'"))
    assert variables["wsrep_node_name"] == "sim-db-1" and "version" not in variables
    assert conn.query("SHOW GLOBAL STATUS LIKE 'wsrep_cluster_s%'") == [
        ("wsrep_cluster_size", "3"), ("wsrep_cluster_state_uuid", status["wsrep_cluster_state_uuid"]),
        ("wsrep_cluster_status", "Primary")]
    with pytest.raises(pymysql.err.ProgrammingError):
        conn.query("DELETE FROM nova.instances")

    with demo.engine.lock:
        demo.engine.storyline.galera_quorum_lost()
    status = dict(conn.query("SHOW GLOBAL STATUS LIKE 'wsrep%'"))
    assert (status["wsrep_cluster_status"], status["wsrep_local_state_comment"], status["wsrep_ready"],
            status["wsrep_connected"], status["wsrep_cluster_size"], status["wsrep_cluster_conf_id"]) == (
        "non-Primary", "Initialized", "OFF", "ON", "1", "18446744073709551615")
    with pytest.raises(pymysql.err.OperationalError) as err:
        conn.query("SELECT * FROM nova.instances")
    assert err.value.args[0] == 1047
    with pytest.raises(pymysql.err.OperationalError) as err:
        demo.galera_connector(cfg.nodes[1], cfg.user, cfg.password.value, 2.0)
    assert err.value.args[0] == 2003

    with demo.engine.lock:
        demo.engine.storyline.galera_quorum_regained()
    other = demo.galera_connector(cfg.nodes[1], cfg.user, cfg.password.value, 2.0)
    assert dict(other.query("SHOW GLOBAL STATUS LIKE 'wsrep%'"))["wsrep_local_state_comment"] == "Joined"
    demo.advance(6)
    assert dict(other.query("SHOW GLOBAL STATUS LIKE 'wsrep%'"))["wsrep_local_state_comment"] == "Synced"
    with pytest.raises(pymysql.err.OperationalError) as err:
        demo.galera_connector(cfg.nodes[1], cfg.user, "wrong", 2.0)
    assert err.value.args[0] == 1045


@pytest.mark.parametrize("growth", [True, False])
def test_notification_queues_grow_unless_told_not_to(growth):
    """The idle benchmark needs a cloud where nothing changes: queue_growth=False keeps the notification
    queues (no consumer) at a constant count."""
    d = start_demo(instances=5, hosts=2, queues=30, churn=0, storyline=False, manual=True, start=START,
                   queue_growth=growth)
    try:
        def count() -> int:
            rows = _get(d, "/api/queues?columns=name,messages")[1]
            return next(q["messages"] for q in rows if q["name"] == "notifications.info")

        d.advance(6)  # past a 5 s stats tick
        before = count()
        d.advance(60)
        assert (count() > before) is growth
    finally:
        d.stop()


def test_name_filter_and_disabled_stats_like_the_broker(demo):
    """What the light RabbitMQ poll asks (checked against RabbitMQ 3.10.8): `name` is a case-insensitive
    substring, a regex with use_regex=true; disable_stats + enable_queue_totals leave message totals only."""
    status, body = _get(demo, "/api/queues?page=1&page_size=500&name=COMPUTE.compute-0")
    assert status == 200 and body["items"] and all("compute.compute-0" in q["name"] for q in body["items"])
    regex = "%5E(%3F%3Ascheduler%7Cconductor)%24"  # ^(?:scheduler|conductor)$
    status, body = _get(demo, f"/api/queues?page=1&page_size=500&use_regex=true&name={regex}&columns=name,consumers")
    assert sorted(q["name"] for q in body["items"]) == ["conductor", "scheduler"]
    assert all("consumers" in q for q in body["items"])
    status, body = _get(demo, "/api/queues?page=1&page_size=500&disable_stats=true&enable_queue_totals=true")
    row = next(q for q in body["items"] if q["name"] == "notifications.info")
    assert row["messages"] > 0 and "consumers" not in row and "idle_since" not in row


def test_name_filter_only_on_paged_listings_like_the_broker(demo):
    """RabbitMQ filters by `name` only when a page is asked: an unpaged listing with `name` lists every queue
    (checked against RabbitMQ 3.10.8), so the collector's name-filtered requests must stay paged."""
    every = {q["name"] for q in _get(demo, "/api/queues?columns=name")[1]}
    status, rows = _get(demo, "/api/queues?name=compute.compute-0&columns=name")
    assert status == 200 and {q["name"] for q in rows} == every
    status, body = _get(demo, "/api/queues?page=1&page_size=500&name=compute.compute-0&columns=name")
    assert body["items"] and all("compute.compute-0" in q["name"] for q in body["items"])
    assert body["filtered_count"] < len(every)
