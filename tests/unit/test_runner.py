"""The collector runner: timeouts, no overlap, last-good retention, backoff, transitions-only logs."""

from __future__ import annotations

import asyncio
import logging

import pytest

from tests.unit.fakes import FakeSnapshot, ScriptedCollector
from tui.models.observation import Observation
from tui.runner import CollectorRunner


class Clock:
    def __init__(self) -> None:
        self.t = 1000.0

    def __call__(self) -> float:
        return self.t


async def test_ok_fail_ok_keeps_last_good_and_recovers() -> None:
    clock = Clock()
    published: list[Observation] = []
    runner = CollectorRunner(ScriptedCollector("src", [1, "fail", 2]), published.append, clock=clock)
    first = await runner.run_once()
    assert first.ok and first.snapshot == FakeSnapshot(1) and first.ok_at == 1000.0
    clock.t = 1010.0
    second = await runner.run_once()
    assert not second.ok
    assert second.snapshot == FakeSnapshot(1), "the last good snapshot must be kept"
    assert second.ok_at == 1000.0 and second.tried_at == 1010.0
    assert second.error == "src at http://example.invalid: 401 Unauthorized - check [x] user"
    assert second.is_stale(1010.0, 10)
    clock.t = 1020.0
    third = await runner.run_once()
    assert third.ok and third.snapshot == FakeSnapshot(2) and third.ok_at == 1020.0
    assert published == [first, second, third]


async def test_hang_past_timeout_becomes_an_error() -> None:
    runner = CollectorRunner(ScriptedCollector("slow", [1, "hang"], timeout=0.05))
    await runner.run_once()
    obs = await runner.run_once()
    assert obs.error == "timed out after 0.05s"
    assert obs.snapshot == FakeSnapshot(1)


async def test_collector_bug_is_one_line_not_a_crash() -> None:
    runner = CollectorRunner(ScriptedCollector("buggy", ["boom"]))
    obs = await runner.run_once()
    assert obs.error == "RuntimeError: collector bug"
    assert obs.snapshot is None and obs.ok_at is None


async def test_backoff_doubles_and_resets() -> None:
    runner = CollectorRunner(ScriptedCollector("b", ["fail", "fail", "fail", 1], interval=10))
    delays = []
    for _ in range(4):
        await runner.run_once()
        delays.append(runner.next_delay())
    assert delays == [10, 20, 40, 10]


async def test_inactive_cloud_polls_at_the_slower_interval_and_at_once_when_active_again() -> None:
    runner = CollectorRunner(ScriptedCollector("s", [1, "fail", "fail", 2], interval=10))
    runner.set_slow(60.0)
    assert runner.next_delay() == 60.0
    await runner.run_once()
    await runner.run_once()
    await runner.run_once()
    assert runner.next_delay() == 120.0  # backoff doubles from the slower interval
    assert not runner._wake.is_set()
    runner.set_slow(None)
    assert runner._wake.is_set() and runner._forced  # back on screen: poll now, not in 120 s
    await runner.run_once()
    assert runner.next_delay() == 10.0
    runner.set_slow(5.0)  # never faster than the collector's own interval
    assert runner.next_delay() == 10.0


async def test_polls_never_overlap_even_with_refresh_now() -> None:
    collector = ScriptedCollector("c", [1], interval=0.001)
    runner = CollectorRunner(collector)
    await asyncio.gather(*(runner.run_once() for _ in range(5)))
    assert collector.calls == 5 and collector.max_active == 1


async def test_run_loop_pause_resume_and_close() -> None:
    collector = ScriptedCollector("loop", [1], interval=0.01)
    runner = CollectorRunner(collector)
    task = asyncio.create_task(runner.run())
    for _ in range(200):
        if collector.calls >= 3:
            break
        await asyncio.sleep(0.01)
    assert collector.calls >= 3
    runner.pause()
    await asyncio.sleep(0.05)
    paused_at = collector.calls
    await asyncio.sleep(0.1)
    assert collector.calls == paused_at, "no polls while paused"
    runner.refresh_now()
    for _ in range(100):
        if collector.calls > paused_at:
            break
        await asyncio.sleep(0.01)
    assert collector.calls == paused_at + 1, "refresh while paused polls exactly once"
    runner.resume()
    for _ in range(100):
        if collector.calls > paused_at + 2:
            break
        await asyncio.sleep(0.01)
    assert collector.calls > paused_at + 2
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    assert collector.closed


async def test_logs_only_on_transitions(caplog: pytest.LogCaptureFixture) -> None:
    runner = CollectorRunner(ScriptedCollector("t", [1, "fail", "fail", "fail", 2, 3]))
    with caplog.at_level(logging.INFO, logger="stacktop.runner"):
        for _ in range(6):
            await runner.run_once()
    messages = [r.getMessage() for r in caplog.records]
    assert len(messages) == 2, messages
    assert messages[0].startswith("t: failed: ")
    assert messages[1] == "t: recovered after 3 failed attempt(s)"


async def test_findings_are_computed_and_kept_on_failure() -> None:
    runner = CollectorRunner(ScriptedCollector("f", [7, "fail"], severity="warning"))
    ok = await runner.run_once()
    assert [f.subject for f in ok.findings] == ["thing-7"]
    failed = await runner.run_once()
    assert failed.findings == ok.findings


async def test_a_partial_snapshot_is_followed_at_once_by_the_next_poll() -> None:
    """The instances source's first dashboard read holds only the servers worth attention (snapshot.partial):
    the runner polls again at once instead of waiting an interval; a failed poll after it waits as usual."""

    class Partial(FakeSnapshot):
        partial = True

    class FirstPartial(ScriptedCollector):
        async def collect(self) -> FakeSnapshot:
            snap = await super().collect()
            return Partial(snap.value) if self.calls == 1 else snap

    collector = FirstPartial("p", [1, 2, "fail", 3], interval=3600)
    runner = CollectorRunner(collector)
    task = asyncio.create_task(runner.run())
    for _ in range(500):
        if collector.calls >= 2:
            break
        await asyncio.sleep(0.01)
    await asyncio.sleep(0.05)
    assert collector.calls == 2, "a partial first poll, then the full one at once, then the 1 h interval"
    assert runner.observation.snapshot == FakeSnapshot(2)
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
