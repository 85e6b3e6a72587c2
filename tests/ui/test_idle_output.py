"""A still cloud leaves the terminal alone (#12: no terminal output when nothing changes).

The dashboard on a simulated cloud where nothing changes (no churn, no storyline, notification queues at a
constant count; heartbeats keep arriving as in any cloud), every source polled at the app's own pace of the
sim clock (the gallery's tour: one poll of each source per 5 sim seconds), the 1 s timers run between polls.
After the first polls (they *are* changes: rows arrive, findings are raised), a minute and a half of polls
must hand no frame to the terminal but the top bar's clock (HH:MM, one frame a minute): counted by the app itself
(StacktopApp.frames), not by wall time. (A border showing the age of its data, "ok 4s", makes it fail: 63
frames.)
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from tui.gallery import START, STEP, GalleryApp, Tour
from tui.sim import Demo, start_demo
from tui.widgets.triage_row import TriageRow

SETTLE_S = 40.0  # a queue with messages and no consumer is a finding from its 2nd RabbitMQ poll on
STILL_S = 90.0  # crosses minute boundaries: coarse ages ("<1m" -> "1m") must not tick on screen


@pytest.fixture
def still_demo() -> Iterator[Demo]:
    demo = start_demo(instances=300, hosts=10, queues=100, churn=0.0, storyline=False, queue_growth=False,
                      manual=True, seed=0, start=START)
    try:
        yield demo
    finally:
        demo.stop()


async def still_walk(app: GalleryApp, tour: Tour, pilot: Any, until: float) -> None:
    """Like Tour.walk, and between two polls the 1 s timers run at the advanced sim time (ages, STALE marks,
    countdowns): what a wall-clock second does between two polls."""
    while tour.elapsed < until:
        tour.demo.advance(min(STEP, until - tour.elapsed))
        app._tick()
        app.screen_stack[0].query_one(TriageRow).refresh_summary()
        await pilot.pause()
        await tour.poll()


@pytest.mark.slow
async def test_nothing_changing_writes_no_frame_over_many_polls(still_demo: Demo) -> None:
    app = GalleryApp(still_demo)
    async with app.run_test(size=(160, 48)) as pilot:
        tour = Tour(app, pilot)
        await tour.walk(SETTLE_S)
        await tour.settle()
        polls, frames, minute = dict(app.polls), app.frames, int(app.clock() // 60)
        assert frames > 0, "the first polls filled the panes: frames were counted (headless, nothing is written)"
        await still_walk(app, tour, pilot, SETTLE_S + STILL_S)
        await tour.settle()
        done = {source: n - polls.get(source, 0) for source, n in app.polls.items()}
        assert min(done.values()) >= STILL_S / 5, f"every source polled through the window: {done}"
        clock_ticks = int(app.clock() // 60) - minute  # the top bar's clock moved on (HH:MM)
        assert app.frames - frames <= clock_ticks, \
            f"{app.frames - frames} frames while nothing changed but {clock_ticks} clock minutes (polls: {done})"
