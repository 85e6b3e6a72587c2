"""tui.abandon: reads given up on never hold the process (daemon pool as the loop's executor, an exit that
joins nothing), a runner's close is bounded, and a Galera node that trickles is cut off at its
deadline with its socket shut down. Time bounds are generous (a loaded 2-core box): the old behaviour is a
process that never ends, or a close that waits until the read does."""

from __future__ import annotations

import asyncio
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from tests.testbed.hostile_servers import Server, greeting, trickle
from tests.unit.fakes import ScriptedCollector
from tui.abandon import DaemonThreadPool, install
from tui.collectors.galera import GaleraCollector
from tui.errors import SourceError
from tui.runner import CollectorRunner

ROOT = Path(__file__).resolve().parents[2]
LIMIT = 10.0  # seconds a subprocess may take before the test calls it hung (it should take well under 1 s)


def _run(code: str) -> tuple[int, str, float]:
    t0 = time.monotonic()
    try:
        out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=LIMIT, cwd=ROOT)
    except subprocess.TimeoutExpired:
        pytest.fail(f"still running after {LIMIT:g}s: a thread that never ends held the exit")
    return out.returncode, out.stdout + out.stderr, time.monotonic() - t0


async def test_the_pool_runs_work_and_returns_results_and_errors() -> None:
    install()
    assert isinstance(asyncio.get_running_loop()._default_executor, DaemonThreadPool)  # type: ignore[attr-defined]
    results = await asyncio.gather(*(asyncio.to_thread(pow, 2, n) for n in range(50)))
    assert results == [2 ** n for n in range(50)]
    with pytest.raises(ZeroDivisionError):
        await asyncio.to_thread(lambda: 1 / 0)
    names = await asyncio.gather(*(asyncio.to_thread(lambda: threading.current_thread().daemon) for _ in range(5)))
    assert all(names), "every worker is a daemon thread"


def test_a_read_that_never_ends_does_not_hold_asyncio_run_or_the_exit() -> None:
    code = ("import asyncio, threading\n"
            "from tui.abandon import install\n"
            "async def main():\n"
            "    install()\n"
            "    forever = threading.Event()\n"
            "    task = asyncio.ensure_future(asyncio.to_thread(forever.wait))\n"
            "    await asyncio.sleep(0.1)\n"
            "    task.cancel()\n"
            "asyncio.run(main())\n"
            "print('returned')\n")
    rc, out, took = _run(code)
    assert rc == 0 and "returned" in out, out
    assert took < LIMIT


def test_leave_ends_the_process_with_the_code_after_flushing_the_log(tmp_path: Path) -> None:
    log = tmp_path / "stacktop.log"
    code = ("import logging, threading, sys\n"
            "from tui.abandon import leave\n"
            f"logging.basicConfig(filename={str(log)!r}, level=logging.INFO)\n"
            "logging.getLogger('stacktop').info('the last line before the exit')\n"
            "threading.Thread(target=threading.Event().wait).start()  # joinable, never ends\n"
            "sys.stdout.write('answer')\n"
            "leave(7)\n"
            "print('not reached')\n")
    rc, out, _ = _run(code)
    assert rc == 7, out
    assert "answer" in out and "not reached" not in out
    text = log.read_text()
    assert "the last line before the exit" in text and "not waiting for 1 thread(s) still running" in text


class _HangingClose(ScriptedCollector):
    async def aclose(self) -> None:
        await asyncio.Event().wait()


async def test_a_runner_stopped_does_not_wait_for_a_close_that_hangs() -> None:
    runner = CollectorRunner(_HangingClose("src", [1]))
    task = asyncio.ensure_future(runner.run())
    await asyncio.sleep(0.1)
    task.cancel()
    t0 = time.monotonic()
    await asyncio.wait([task], timeout=LIMIT)
    assert task.done(), "the runner's stop waited for its collector's close"
    assert time.monotonic() - t0 < 5.0


@pytest.mark.parametrize("length", [0xFFFFFF, 86], ids=["16MB-greeting", "90-byte-greeting"])
async def test_a_trickling_galera_node_is_cut_off_at_its_deadline(length: int) -> None:
    server = Server(trickle(greeting(length)))
    try:
        collector = GaleraCollector([server.address], "monitor", "x", timeout=2.0)
        t0 = time.monotonic()
        with pytest.raises(SourceError) as caught:
            await asyncio.wait_for(collector.collect(), LIMIT)
        took = time.monotonic() - t0
        assert "timed out: no complete answer within 1.6s" in caught.value.message, caught.value.message
        assert "check [galera] nodes, user and password" not in caught.value.message
        assert took < 5.0, f"the node's read took {took:.1f}s (deadline 1.6s)"
        assert collector._states[0].lock.acquire(blocking=False), "the read ended: its thread let the node go"
        collector._states[0].lock.release()
        await asyncio.wait_for(collector.aclose(), 5.0)
    finally:
        server.stop()


async def test_closing_galera_does_not_wait_for_a_node_still_reading() -> None:
    """A runner stops (a quit) while a node's read trickles: the close returns at once, the read ends at its own
    deadline and leaves nothing open."""
    server = Server(trickle(greeting(0xFFFFFF)))
    try:
        collector = GaleraCollector([server.address], "monitor", "x", timeout=5.0)  # node deadline 4 s
        reading = asyncio.ensure_future(collector.collect())
        until = time.monotonic() + LIMIT
        while collector._states[0].lock.acquire(blocking=False):  # until the node's read holds its lock
            collector._states[0].lock.release()
            assert time.monotonic() < until, "the node's read never started"
            await asyncio.sleep(0.05)
        t0 = time.monotonic()
        await asyncio.wait_for(collector.aclose(), LIMIT)
        assert time.monotonic() - t0 < 2.0, "the close waited for the read in flight"
        with pytest.raises(SourceError, match="timed out"):
            await asyncio.wait_for(reading, LIMIT)
        assert collector._states[0].conn is None
    finally:
        server.stop()
