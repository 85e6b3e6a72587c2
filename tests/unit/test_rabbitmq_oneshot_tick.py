"""`stacktop snapshot`'s second RabbitMQ sample comes as soon as the broker's statistics ticked once more (the
newest sample timestamp of a suspect queue's length moved), not after a fixed wait (the simulator speaks the
real broker's per-queue samples: newest first, on the 5 s tick grid)."""

from __future__ import annotations

import asyncio
from typing import Any

from tui.collectors.registry import build_collectors
from tui.sim import start_demo


async def test_second_sample_follows_the_next_statistics_tick() -> None:
    demo = start_demo(instances=20, hosts=3, queues=30, churn=0, storyline=False, manual=True)
    try:
        demo.inject("kill_compute", host=demo.engine.hosts[0].name)  # its compute queue loses its consumer
        demo.advance(30)
        [rabbit] = [c for c in build_collectors(demo.config()) if c.name == "rabbitmq"]
        rabbit.prepare_oneshot()
        rabbit.confirm_delay_s = 3600.0  # a fixed wait would be an hour
        asked: list[Any] = []
        newest = rabbit._newest_sample

        async def watched(queue: Any) -> Any:
            stamp = await newest(queue)
            asked.append(stamp)
            if len(asked) == 2:  # the broker's statistics tick between the second and third look
                demo.advance(5)
            return stamp

        rabbit._newest_sample = watched  # type: ignore[method-assign]
        snap = await asyncio.wait_for(rabbit.collect(), timeout=600)
        await rabbit.aclose()
    finally:
        demo.stop()
    assert snap.confirmation == "second-sample"
    assert len(asked) == 3 and asked[0] == asked[1] != asked[2], asked
    assert all(isinstance(a, int) for a in asked), "the samples' timestamps were read, not guessed"
