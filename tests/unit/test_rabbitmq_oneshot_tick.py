"""`stacktop snapshot`'s RabbitMQ read reaches the 2-poll verdict in one run, on the simulator (which answers
the real broker's history query params with its payload shape: samples newest first on the 5 s tick grid,
zeros before the queue existed, a deliveries counter while a consumer is attached).

A suspect whose sample history shows it held with no consumer and no delivery for the window is confirmed from
that history at once; when the history does not cover the window (here: a window longer than any history), the
second sample comes as soon as the broker's statistics ticked once more (the newest sample timestamp of a
suspect queue's length moved), not after a fixed wait."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from datetime import UTC, datetime
from typing import Any

import pytest

from tui.collectors import rabbitmq as rabbitmq_module
from tui.collectors.rabbitmq import RabbitMQCollector
from tui.collectors.rabbitmq_history import HistoryVerdict
from tui.collectors.registry import build_collectors
from tui.sim import start_demo


@pytest.fixture
def demo() -> Iterator[Any]:
    demo = start_demo(instances=20, hosts=3, queues=30, churn=0, storyline=False, manual=True)
    try:
        yield demo
    finally:
        demo.stop()


def oneshot(demo: Any) -> RabbitMQCollector:
    [rabbit] = [c for c in build_collectors(demo.config()) if c.name == "rabbitmq"]
    assert isinstance(rabbit, RabbitMQCollector)
    rabbit.prepare_oneshot()
    rabbit.confirm_delay_s = 3600.0  # a fixed wait would be an hour
    return rabbit


def no_tick_wait(rabbit: RabbitMQCollector) -> None:
    async def refused(queue: Any) -> None:
        raise AssertionError(f"waited for the statistics tick (suspect {queue.name})")

    rabbit._next_statistics_tick = refused  # type: ignore[method-assign]


def critical_subjects(rabbit: RabbitMQCollector, snap: Any) -> list[str]:
    return [f.subject for f in rabbit.findings(snap, datetime.now(UTC)) if f.severity == "critical"]


async def test_a_suspect_held_for_the_window_is_confirmed_from_its_history(demo: Any) -> None:
    host = demo.engine.hosts[0].name
    demo.inject("kill_compute", host=host)  # its compute queue loses its consumer
    demo.advance(30)
    rabbit = oneshot(demo)
    no_tick_wait(rabbit)
    try:
        snap = await asyncio.wait_for(rabbit.collect(), timeout=600)
    finally:
        await rabbit.aclose()
    assert snap.confirmation == "history"
    q = snap.queue(f"compute.{host}")
    assert q.history_s is not None and q.history_s >= 10 and q.stuck_polls == 2
    assert critical_subjects(rabbit, snap) == [f"compute.{host}"]
    [f] = [f for f in rabbit.findings(snap, datetime.now(UTC)) if f.severity == "critical"]
    assert f.evidence["history_s"] == q.history_s
    suspects = [q for q in snap.queues if q.no_consumer_with_messages]
    assert snap.fetch["history"] == {"asked": len(suspects), "held": len(suspects), "clear": 0,
                                     "left_unconfirmed": 0}


async def test_a_history_that_contradicts_the_listing_is_not_reported(demo: Any, monkeypatch) -> None:
    host = demo.engine.hosts[0].name
    demo.inject("kill_compute", host=host)
    demo.advance(30)
    judge = rabbitmq_module.judge_history

    def consumer_back(payload: Any) -> HistoryVerdict:  # the GET after the listing sees a consumer again
        if isinstance(payload, dict) and payload.get("messages", 0) < 100:
            return judge({**payload, "consumers": 1})
        return judge(payload)

    monkeypatch.setattr(rabbitmq_module, "judge_history", consumer_back)
    rabbit = oneshot(demo)
    no_tick_wait(rabbit)
    try:
        snap = await asyncio.wait_for(rabbit.collect(), timeout=600)
    finally:
        await rabbit.aclose()
    assert snap.confirmation == "history"
    assert snap.queue(f"compute.{host}").stuck_polls == 1  # one poll saw it: not confirmed
    assert critical_subjects(rabbit, snap) == []
    assert snap.fetch["history"]["clear"] == 1


async def test_suspects_beyond_the_cap_are_left_unconfirmed_and_counted(demo: Any, monkeypatch) -> None:
    hosts = [h.name for h in demo.engine.hosts[:2]]
    for host in hosts:
        demo.inject("kill_compute", host=host)
    demo.advance(30)
    monkeypatch.setattr(rabbitmq_module, "MAX_HISTORY_CHECKS", 1)
    rabbit = oneshot(demo)
    no_tick_wait(rabbit)
    try:
        snap = await asyncio.wait_for(rabbit.collect(), timeout=600)
    finally:
        await rabbit.aclose()
    suspects = [q for q in snap.queues if q.no_consumer_with_messages]
    assert len(suspects) >= 3  # the two compute queues and the notifications nobody reads
    assert snap.fetch["history"]["asked"] == 1 and snap.fetch["history"]["left_unconfirmed"] == len(suspects) - 1
    confirmed = [q.name for q in suspects if q.history_s is not None]
    assert len(confirmed) == 1 and confirmed[0] in {f"compute.{h}" for h in hosts}  # service queues first
    assert len(critical_subjects(rabbit, snap)) == 1


async def test_a_history_shorter_than_the_window_falls_back_to_the_next_statistics_tick(demo: Any,
                                                                                      monkeypatch) -> None:
    host = demo.engine.hosts[0].name
    demo.inject("kill_compute", host=host)
    demo.advance(30)
    judge = rabbitmq_module.judge_history
    # a window of an hour: every history the simulator keeps (60 s) falls short of it
    monkeypatch.setattr(rabbitmq_module, "judge_history", lambda payload: judge(payload, window_s=3600))
    rabbit = oneshot(demo)
    asked: list[Any] = []
    newest = rabbit._newest_sample

    async def watched(queue: Any) -> Any:
        stamp = await newest(queue)
        asked.append(stamp)
        if len(asked) == 2:  # the broker's statistics tick between the second and third look
            demo.advance(5)
        return stamp

    rabbit._newest_sample = watched  # type: ignore[method-assign]
    try:
        snap = await asyncio.wait_for(rabbit.collect(), timeout=600)
    finally:
        await rabbit.aclose()
    assert snap.confirmation == "second-sample"
    assert len(asked) == 3 and asked[0] == asked[1] != asked[2], asked
    assert all(isinstance(a, int) for a in asked), "the samples' timestamps were read, not guessed"
    assert snap.queue(f"compute.{host}").history_s is None
    assert critical_subjects(rabbit, snap) == [f"compute.{host}"]
