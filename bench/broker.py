"""Broker cost: RabbitMQ CPU per stacktop queue poll vs one full `/api/queues` listing, on the real local broker.

bench_rabbitmq's method: a scratch vhost with N queues (a few holding messages with no consumer), wait until
the management API has statistics for all of them, then alternate one RabbitMQCollector.collect() (every
request of a poll: queues, nodes, alarms, overview) and one full `GET /api/queues/<vhost>` (no columns, no
paging: what a naive poller or the web UI asks), reading the broker's CPU (utime+stime of the beam process
named by /api/nodes os_pid) around each. The vhost is deleted at the end.
"""

from __future__ import annotations

import asyncio
import os
import secrets
import time
from urllib.parse import quote

from bench.common import Result, log, median, spread

MGMT = os.environ.get("STACKTOP_RABBITMQ_MGMT_URL", "http://127.0.0.1:15672")
USER = os.environ.get("STACKTOP_RABBITMQ_USER", "guest")
PASSWORD = os.environ.get("STACKTOP_RABBITMQ_PASSWORD", "guest")


def bench_broker(queues: int, rounds: int, polls_per_round: int | None = None) -> list[Result]:
    """A round is one cycle of the collector's polls (one full listing with statistics, then light ones:
    tui.collectors.rabbitmq), so the per-poll figure is the average the dashboard pays."""
    import httpx

    from bench.bench_rabbitmq import broker_cpu_s, setup, wait_for_stats
    from tui.collectors.rabbitmq import FULL_EVERY, RabbitMQCollector

    polls_per_round = polls_per_round or max(1, FULL_EVERY)
    modes: dict[str, int] = {}
    details: list[int] = []

    try:
        with httpx.Client(base_url=MGMT, auth=(USER, PASSWORD), timeout=10) as http:
            pid_text = http.get("/api/nodes", params={"columns": "os_pid"}).json()[0].get("os_pid")
    except (httpx.HTTPError, ValueError, IndexError) as exc:
        return [Result("broker", "RabbitMQ CPU per queue poll", None, "s",
                       note=f"skipped: no RabbitMQ management API at {MGMT} ({type(exc).__name__})")]
    pid = int(pid_text) if pid_text else None
    if pid is None or broker_cpu_s(pid) is None:
        return [Result("broker", "RabbitMQ CPU per queue poll", None, "s",
                       note="skipped: the broker does not run on this machine (its CPU cannot be read)")]
    vhost = f"stacktop-bench-{secrets.token_hex(4)}"
    amqp_host = os.environ.get("STACKTOP_RABBITMQ_AMQP_HOST", "127.0.0.1")
    amqp_port = int(os.environ.get("STACKTOP_RABBITMQ_AMQP_PORT", "5672"))
    ours: list[float] = []
    full: list[float] = []
    try:
        setup(MGMT, USER, PASSWORD, amqp_host, amqp_port, vhost, queues)
        wait = wait_for_stats(MGMT, USER, PASSWORD, vhost, queues)
        log(f"broker: {queues} queues declared, statistics after {wait:.1f} s")

        async def measure() -> None:
            c = RabbitMQCollector(MGMT, USER, PASSWORD, vhosts=[vhost], timeout=60)
            http = httpx.AsyncClient(base_url=MGMT, auth=(USER, PASSWORD), timeout=60)
            try:
                await c.collect()  # warm-up
                for r in range(rounds):
                    # a run of consecutive polls, as the dashboard does them: per-poll cost averaged over it
                    b0 = broker_cpu_s(pid)
                    for _ in range(polls_per_round):
                        snap = await c.collect()
                        info = snap.fetch.get("queues", {})
                        modes[info.get("mode", "?")] = modes.get(info.get("mode", "?"), 0) + 1
                        if "detail_queues" in info:
                            details.append(info["detail_queues"])
                        await asyncio.sleep(0.05)
                    b1 = broker_cpu_s(pid)
                    if b0 is not None and b1 is not None:
                        ours.append((b1 - b0) / polls_per_round)
                    b0 = broker_cpu_s(pid)
                    for _ in range(polls_per_round):
                        (await http.get(f"/api/queues/{quote(vhost, safe='')}")).raise_for_status()
                        await asyncio.sleep(0.05)
                    b1 = broker_cpu_s(pid)
                    if b0 is not None and b1 is not None:
                        full.append((b1 - b0) / polls_per_round)
                    log(f"broker round {r + 1}/{rounds}: poll {ours[-1] * 1000:.0f} ms, full {full[-1] * 1000:.0f} ms")
            finally:
                await c.aclose()
                await http.aclose()

        asyncio.run(measure())
    finally:
        with httpx.Client(base_url=MGMT, auth=(USER, PASSWORD), timeout=60) as http:
            http.delete(f"/api/vhosts/{quote(vhost, safe='')}")
    # the broker's idle burn over the same kind of window, to subtract nothing but to say what the noise is
    b0 = broker_cpu_s(pid)
    time.sleep(2.0)
    idle = ((broker_cpu_s(pid) or 0) - (b0 or 0)) / 2.0
    res = Result("broker", f"RabbitMQ CPU per stacktop poll ({queues:,} queues)", median(ours), "s", median(full),
                 "one full /api/queues listing", goal="<= 40 % of full",
                 note=f"{rounds} rounds of {polls_per_round} polls (polls by kind: "
                      + ", ".join(f"{k} {v}" for k, v in sorted(modes.items()))
                      + (f"; queues asked with statistics in a light poll: median {median(details):.0f}"
                         if details else "")
                      + f"), alternating with as many full listings; spread (max-min)/median: poll "
                      f"{spread(ours)}, full {spread(full)}; the broker burns ~{idle * 1000:.0f} ms/s doing other "
                      "work (the test cloud shares it), included in both", samples=ours)
    res.met = None if res.ratio is None else res.value <= 0.4 * res.baseline  # type: ignore[operator]
    return [res]
