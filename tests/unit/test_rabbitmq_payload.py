"""Payload parsing (field names as RabbitMQ 3.10 sends them) and the collector's per-queue streaks."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from tui.collectors.rabbitmq import password_key
from tui.collectors.rabbitmq_payload import parse_alarms, parse_cluster_status, parse_node, parse_queue, parse_time
from tui.config import Secret
from tui.models.rabbitmq import QueueInfo
from tui.rules.queues import apply_history

T0 = datetime(2026, 1, 1, 12, 0, tzinfo=UTC)


def test_fresh_queue_row_is_unknown_not_zero():
    # what /api/queues returns for a queue declared a moment ago (no stats keys yet)
    row = {"arguments": {}, "auto_delete": False, "durable": False, "exclusive": False,
           "name": "compute.compute-02", "node": "rabbit@localhost", "type": "classic", "vhost": "/"}
    q = parse_queue(row)
    assert q is not None
    assert (q.messages, q.consumers, q.messages_ready) == (None, None, None)
    assert not q.no_consumer_with_messages


def test_queue_row_with_stats_and_expiry():
    row = {"arguments": {"x-expires": 1800000}, "consumers": 0, "idle_since": "2026-12-02T10:26:22.305+00:00",
           "messages": 4, "messages_ready": 4, "messages_unacknowledged": 0,
           "name": "reply_0123456789abcdef0123456789abcdef", "vhost": "openstack"}
    q = parse_queue(row)
    assert q.x_expires_ms == 1800000 and q.messages == 4 and q.consumers == 0 and q.vhost == "openstack"
    assert q.idle_since == datetime(2026, 12, 2, 10, 26, 22, 305000, tzinfo=UTC)
    assert q.no_consumer_with_messages


def test_rabbitmqctl_arguments_and_vhost_given_separately():
    row = {"name": "r", "messages": 0, "consumers": 0, "arguments": [["x-expires", "signedint", 1800000]]}
    assert parse_queue(row, vhost="v").x_expires_ms == 1800000
    assert parse_queue({"name": "x"}) is None  # no vhost anywhere


def test_old_idle_since_format():
    assert parse_time("2021-03-03 12:34:56") == datetime(2021, 3, 3, 12, 34, 56, tzinfo=UTC)
    assert parse_time("garbage") is None and parse_time(None) is None


def test_stopped_node_row_has_few_keys():
    n = parse_node({"name": "rabbit@b", "running": False, "type": "disc"})
    assert n.running is False and n.fd_used is None and n.mem_alarm is None and n.partitions == ()


def test_local_alarms_body():
    body = {"alarms": [{"node": "rabbit@localhost", "resource": "memory"}],
            "reason": "There are alarms in effect on the node", "status": "failed"}
    [a] = parse_alarms(body)
    assert (a.node, a.resource, a.via) == ("rabbit@localhost", "memory", "local-alarms")
    assert parse_alarms({"status": "ok"}) == ()


def test_cluster_status():
    status = {"alarms": [{"node": "rabbit@a", "resource": "disk"}], "disk_nodes": ["rabbit@a", "rabbit@b"],
              "ram_nodes": [], "running_nodes": ["rabbit@a"], "partitions": {"rabbit@a": ["rabbit@c"]}}
    nodes, alarms = parse_cluster_status(status)
    by = {n.name: n for n in nodes}
    assert by["rabbit@a"].running is True and by["rabbit@a"].disk_free_alarm is True
    assert by["rabbit@a"].partitions == ("rabbit@c",)
    assert by["rabbit@b"].running is False and by["rabbit@b"].disk_free_alarm is None
    assert [a.resource for a in alarms] == ["disk"]


def _q(messages, consumers, name="conductor"):
    return QueueInfo(vhost="/", name=name, messages=messages, consumers=consumers)


def test_history_counts_consecutive_polls_and_keeps_since():
    h, [q] = apply_history({}, [_q(3, 0)], T0)
    assert (q.stuck_polls, q.stuck_since) == (1, T0)
    h, [q] = apply_history(h, [_q(5, 0)], T0 + timedelta(seconds=15))
    assert (q.stuck_polls, q.stuck_since) == (2, T0)


def test_history_unknown_numbers_neither_count_nor_reset():
    h, _ = apply_history({}, [_q(3, 0)], T0)
    h, [q] = apply_history(h, [_q(None, None)], T0 + timedelta(seconds=15))
    assert (q.stuck_polls, q.stuck_since) == (1, T0)
    h, [q] = apply_history(h, [_q(3, 0)], T0 + timedelta(seconds=30))
    assert (q.stuck_polls, q.stuck_since) == (2, T0)


def test_history_resets_on_consumer_or_empty_or_gone():
    for later in ([_q(3, 1)], [_q(0, 0)], []):
        h, _ = apply_history({}, [_q(3, 0)], T0)
        h, out = apply_history(h, later, T0 + timedelta(seconds=15))
        assert h == {} and all(q.stuck_polls == 0 and q.stuck_since is None for q in out)


def test_password_key_names_where_it_came_from():
    assert password_key(Secret("x", "$RABBIT_PW")) == "[rabbitmq] password_env ($RABBIT_PW)"
    assert password_key(Secret("x", "config file")) == "[rabbitmq] password"
    assert password_key(Secret("x", "/etc/stacktop/rabbit.pw")) == "[rabbitmq] password_file"
    assert "no password" in password_key(Secret())


def test_parse_reuses_the_queue_info_of_an_unchanged_row() -> None:
    """2,000 queue rows every poll, nearly all unchanged: an equal row gives back last poll's QueueInfo (the
    same object), a changed one is parsed again, a vanished one is forgotten; the result is parse_queues'."""
    from tui.collectors.rabbitmq_payload import parse_queues, parse_queues_reusing

    def q(name: str, messages: int, consumers: int = 1) -> dict:
        return {"name": name, "vhost": "/", "messages": messages, "messages_ready": messages,
                "messages_unacknowledged": 0, "consumers": consumers, "arguments": {"x-expires": 1800000},
                "idle_since": "2026-12-02 10:00:00"}

    rows = [q("a", 0), q("b", 3, 0), q("c", 0), {"name": ["odd"], "vhost": "/"}, "not a row"]
    first, parsed = parse_queues_reusing(rows, {})
    assert first == parse_queues(rows)
    again = [q("a", 0), q("b", 4, 0), dict(q("c", 0))]
    second, parsed = parse_queues_reusing(again, parsed)
    assert second == parse_queues(again)
    assert second[0] is first[0] and second[2] is first[2], "equal rows: the same QueueInfo"
    assert second[1] is not first[1] and second[1].messages == 4, "a changed row is parsed again"
    third, parsed = parse_queues_reusing([q("c", 0)], parsed)
    assert third[0] is first[2] and set(parsed) == {("/", "c")}, "vanished queues are forgotten"
