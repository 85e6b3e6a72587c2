"""Large clouds: the RabbitMQ and control-plane panes show what is worth attention by default (the rest is
one `a` away), and the control-plane tick knows when its next cell change is due."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any

from tui.config import Thresholds
from tui.models.finding import Finding
from tui.models.observation import Observation
from tui.models.rabbitmq import QueueInfo, RabbitSnapshot
from tui.models.services import KeystoneCheck, SectionRead, ServiceRow, ServicesSnapshot
from tui.rules.judge import judge_queues, judge_source
from tui.widgets.rabbitmq_pane import ATTENTION_OVER as QUEUES_OVER
from tui.widgets.rabbitmq_pane import queue_rows
from tui.widgets.services_pane import ATTENTION_OVER as SERVICES_OVER
from tui.widgets.services_pane import build_rows, next_change_s

NOW = datetime(2026, 12, 2, 12, 0, tzinfo=UTC)
TH = Thresholds(service_down_time=60, agent_down_time=75, volume_service_down_time=60)


def rabbit(queues: tuple[QueueInfo, ...]) -> RabbitSnapshot:
    return RabbitSnapshot(endpoint="http://ctl1:15672", taken_at=NOW, queues=queues, nodes=(), alarms=(),
                          alarms_checked=True)


def quiet_queues(n: int) -> tuple[QueueInfo, ...]:
    return tuple(QueueInfo("/", f"reply_{i:032x}", messages=0, consumers=1) for i in range(n))


def test_many_queues_default_view_is_what_needs_attention() -> None:
    busy = QueueInfo("/", "conductor", messages=40, consumers=2)
    orphan = QueueInfo("/", "compute.compute-02", messages=0, consumers=0)  # a service queue nobody reads
    flagged = QueueInfo("/", "reply_flagged", messages=0, consumers=1)
    snap = rabbit((*quiet_queues(QUEUES_OVER), busy, orphan, flagged))
    finding = Finding(severity="warning", kind="rabbitmq.something", subject="reply_flagged", summary="s",
                      source="rabbitmq")
    keys = [k.split("\x1f")[1] for k, _ in queue_rows(snap, judge_queues(snap, [finding]), show_all=False)]
    assert sorted(keys) == ["compute.compute-02", "conductor", "reply_flagged"]
    assert len(queue_rows(snap, judge_queues(snap, [finding]), show_all=True)) == QUEUES_OVER + 3


def test_few_queues_are_all_shown() -> None:
    snap = rabbit(quiet_queues(QUEUES_OVER))
    assert len(queue_rows(snap, judge_queues(snap), show_all=False)) == QUEUES_OVER


def services(n_healthy: int, *, late_age: float | None = None) -> ServicesSnapshot:
    def row(host: str, age: float, **kw: object) -> ServiceRow:
        return ServiceRow(section="compute", binary="nova-compute", host=host, id=host, zone="nova",  # type: ignore[arg-type]
                          status=str(kw.get("status", "enabled")), state=str(kw.get("state", "up")),
                          updated_at=NOW - timedelta(seconds=age), age_at_read_s=age)

    rows = [row(f"compute-{i:03d}", 5) for i in range(n_healthy)]
    rows.append(row("compute-dead", 300, state="down"))
    rows.append(row("compute-maint", 5, status="disabled"))
    if late_age is not None:
        rows.append(row("compute-late", late_age))
    return ServicesSnapshot(taken_at=NOW, keystone=KeystoneCheck("http://ks:5000/v3", "c"),
                            compute=SectionRead("compute", tuple(rows), NOW),
                            network=SectionRead("network", (), NOW), volume=SectionRead("volume", (), NOW))


def judged(snap: ServicesSnapshot, poll: datetime = NOW) -> Any:
    """The sections as the runner's judgement of the poll at `poll` has them (the pane paints from these)."""
    return judge_source(Observation("services", snap, ok_at=poll.timestamp()), TH).detail


def test_many_services_hide_healthy_rows_headers_keep_counts() -> None:
    snap = judged(services(SERVICES_OVER))
    keys = [k for k, _ in build_rows(snap, NOW, hide_healthy=True)]
    assert "compute:nova-compute-compute-000" not in " ".join(keys)
    assert any("compute-dead" in k for k in keys) and any("compute-maint" in k for k in keys)
    header = dict(build_rows(snap, NOW, hide_healthy=True))["hdr:compute"]
    assert str(header[2]).startswith(f"{SERVICES_OVER + 2}, 1 down")
    assert len(build_rows(snap, NOW)) > SERVICES_OVER


def test_next_change_only_for_rows_late_or_down_at_the_poll() -> None:
    # healthy rows wait for the next poll; the down row's "5m ago" changes within a minute
    assert 0 < next_change_s(judged(services(3)), NOW) <= 60
    assert next_change_s(judged(services(3, late_age=40)), NOW) == 0.0, "a countdown ticks every second"
    # 28 s old at the poll, 10 s later: not extrapolated into "late" between polls (no flicker, no repaint)
    later = NOW + timedelta(seconds=10)
    assert next_change_s(judged(services(3, late_age=28)), later, NOW) > 0
    rows = dict(build_rows(judged(services(3, late_age=28)), later, NOW))
    assert "down in" not in str(rows["compute:compute-late"][3])
