"""bench.ptyapp.PtyApp.quiet_for(since=): the idle benchmark's window must open after 2 s of quiet counted from
its settle point, so a write that lands just after that point (a poll's render, written after the poll's mark)
is waited out instead of falling into the window (the 367 B/s of one session-5 window)."""

from __future__ import annotations

import time

from bench.ptyapp import PtyApp


def test_quiet_for_since_waits_out_a_write_that_lands_just_after_the_settle_point() -> None:
    app = PtyApp(["sh", "-c", "sleep 2; printf written; sleep 5"]).start()
    try:
        time.sleep(1.9)  # quiet for 1.9 s already: counted from the start, the screen looks settled
        settle = time.perf_counter()
        assert app.quiet_for(1.0, timeout=15, since=settle)
        opened = time.perf_counter()
        written = [t for t, data in app.chunks if b"written" in data]
        assert written, "the write just after the settle point was waited for"
        assert opened - written[-1] >= 1.0, "the window opens 1 s after the last write, not before it"
    finally:
        app.stop()
