"""RabbitMQ pane: status line, keyed queue rows (zero-consumer first), updates in place."""

from __future__ import annotations

import dataclasses
from datetime import UTC, datetime, timedelta

from tui.app import StacktopApp
from tui.collectors.base import BaseCollector
from tui.config import Config
from tui.models.rabbitmq import Alarm, NodeInfo, QueueInfo, RabbitSnapshot
from tui.rules.judge import judge_queues
from tui.rules.queues import rabbitmq_findings
from tui.widgets.rabbitmq_pane import RabbitMQPane, queue_rows, status_line

NOW = datetime(2026, 1, 1, 12, 0, tzinfo=UTC)
NODE = NodeInfo("rabbit@ctl1", running=True, partitions=(), mem_alarm=False, disk_free_alarm=False,
                fd_used=60, fd_total=1024, sockets_used=19, sockets_total=832, mem_used=140 << 20,
                mem_limit=9 << 30)


def snap(*queues: QueueInfo, nodes=(NODE,), alarms=()) -> RabbitSnapshot:
    return RabbitSnapshot(endpoint="http://ctl1:15672", taken_at=NOW, queues=queues, nodes=nodes,
                          alarms=alarms, alarms_checked=True, rabbitmq_version="3.10.8")


STUCK = QueueInfo("/", "compute.compute-02", messages=7, consumers=0, stuck_since=NOW - timedelta(minutes=3),
                  stuck_polls=4)
BUSY = QueueInfo("/", "conductor", messages=500, consumers=2)
FRESH = QueueInfo("/", "scheduler")
REPLY = QueueInfo("/", "reply_0123456789abcdef0123456789abcdef", messages=1, consumers=0, stuck_polls=1,
                  stuck_since=NOW)


def test_rows_zero_consumer_first_unknown_is_question_mark():
    s = snap(BUSY, FRESH, STUCK, REPLY)
    rows = queue_rows(s, judge_queues(s, rabbitmq_findings(s, NOW)))
    names = [str(cells[0]) for _, cells in rows]
    assert names == ["compute.compute-02", "reply_0123456789abcdef0123456789abcdef", "conductor", "scheduler"]
    stuck = rows[0][1]
    assert stuck[5] == "service nova-compute" and stuck[1] == "7" and str(stuck[2]) == "0"
    assert stuck[0].style == "bold red"  # the critical finding colours the name
    assert stuck[3] == (NOW - timedelta(minutes=3)).astimezone(UTC).strftime("%H:%M:%S"), "UTC, as every time"
    assert rows[1][1][0].style == ""  # one poll only: no finding yet
    unknown = rows[3][1]
    assert (unknown[1], unknown[2], unknown[4]) == ("?", "?", "?")  # messages, consumers, type


def test_vhost_shown_only_when_several():
    other = dataclasses.replace(BUSY, vhost="cell1")
    both = snap(BUSY, other)
    names = {str(cells[0]) for _, cells in queue_rows(both, judge_queues(both))}
    assert names == {"conductor", "cell1/conductor"}


def test_status_line():
    line = status_line(snap(STUCK, BUSY))
    assert "rabbit@ctl1" in line and "running" in line and "fd 60/1,024" in line
    assert "no alarms" in line and "2 queues" in line and "1 with messages and no consumer" in line
    bad = status_line(snap(nodes=(dataclasses.replace(NODE, mem_alarm=True, partitions=("rabbit@ctl2",)),
                                  NodeInfo("rabbit@ctl2", running=False))))
    assert "MEMORY ALARM" in bad and "PARTITIONED from rabbit@ctl2" in bad and "rabbit@ctl2 DOWN" in bad
    live = status_line(snap(alarms=(Alarm("rabbit@ctl1", "disk"),)))
    assert "DISK ALARM on rabbit@ctl1" in live and "no alarms" not in live


class Playback(BaseCollector):
    """Hands out prepared snapshots, one per poll (a UI fixture, not a stand-in for the broker)."""

    name = "rabbitmq"

    def __init__(self, snaps: list[RabbitSnapshot]) -> None:
        self.snaps = snaps
        self.calls = 0
        self.interval = 0.05
        self.timeout = 1.0

    async def collect(self) -> RabbitSnapshot:
        s = self.snaps[min(self.calls, len(self.snaps) - 1)]
        self.calls += 1
        return s

    def findings(self, snapshot, now):
        return rabbitmq_findings(snapshot, NOW)


async def test_pane_updates_rows_in_place_and_keeps_the_cursor():
    first = snap(BUSY, STUCK, FRESH)
    healed = snap(dataclasses.replace(BUSY, messages=30), dataclasses.replace(
        STUCK, consumers=1, stuck_since=None, stuck_polls=0), dataclasses.replace(FRESH, messages=0, consumers=1))
    collector = Playback([first, first, healed])
    app = StacktopApp(Config(), collectors=[collector])
    async with app.run_test(size=(160, 48)) as pilot:
        pane = app.query_one(RabbitMQPane)
        for _ in range(100):
            if pane.table is not None and pane.table.row_count == 3:
                break
            await pilot.pause(0.02)
        table = pane.table
        assert table.shown_keys[0] == "/\x1fcompute.compute-02"
        table.move_cursor(row=table.get_row_index("/\x1fscheduler"))
        for _ in range(100):
            if collector.calls >= 3 and table.shown_keys[0] != "/\x1fcompute.compute-02":
                break
            await pilot.pause(0.02)
        await pilot.pause(0.1)
        assert table.shown_keys == ["/\x1fconductor", "/\x1fcompute.compute-02", "/\x1fscheduler"]
        assert table.cursor_key() == "/\x1fscheduler"  # re-sorted, cursor stayed on its row
        assert str(table.get_row("/\x1fcompute.compute-02")[2]) == "1"  # may be flashing (reverse)
        assert "with messages and no consumer" not in str(pane.query_one(".pane-message").render())


def test_brief_status_line_says_only_what_is_wrong_with_a_node() -> None:
    """A narrow pane (120x34: half the width) gets the brief line: a healthy node's fd / socket / memory figures
    wrapped the full one to 7 lines and left no queue row."""
    ctl2, ctl3 = (dataclasses.replace(NODE, name=n) for n in ("rabbit@ctl2", "rabbit@ctl3"))
    alarmed = dataclasses.replace(NODE, mem_alarm=True)
    full = status_line(snap(STUCK, nodes=(alarmed, ctl2, ctl3)))
    brief = status_line(snap(STUCK, nodes=(alarmed, ctl2, ctl3)), brief=True)
    assert "sockets" in full and "v3.10.8" in full
    assert "rabbit@ctl1" in brief and "MEMORY ALARM" in brief and "mem 140.0M/9.0G" in brief
    assert "+2" in brief and "running" in brief and "ctl2" not in brief and "sockets" not in brief
    assert "1 with no consumer" in brief and "v3.10.8" not in brief and len(brief) < len(full) / 2
    assert "rabbit@ctl1" in status_line(snap(STUCK), brief=True), "a lone healthy node is named"
    down = status_line(snap(nodes=(dataclasses.replace(NODE, running=False), ctl2)), brief=True)
    assert "rabbit@ctl1 DOWN" in down and "+1" in down
