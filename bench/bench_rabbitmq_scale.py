"""One RabbitMQ poll at 20,000 queues, on a real broker: wall time, client CPU and bytes, against a plain
unpaged `GET /api/queues/<vhost>` (every field: what a naive poller or the web UI asks) in the same run.

A scratch vhost (`stacktop-bench-<hex>`) with N queues (bench_rabbitmq.setup: OpenStack-like names, one in 100
holding a message, none consumed); once the management API has statistics for all of them, rounds alternate:
one RabbitMQCollector.collect() as the dashboard runs it (vhosts = [the scratch vhost]; every 4th poll a full
listing, the light polls between asking statistics queue by queue over light_max_queues queues), one light poll
asking them in name-filtered pages instead (what that would cost at this scale), and the baseline GET with its
JSON decoded. The dashboard's polls are reported together (median) and by kind (full, light). Client CPU is
this process's (every thread); the broker's CPU is read from /proc when it runs on this machine. The vhost is
deleted at the end.

The broker: $STACKTOP_RABBITMQ_MGMT_URL (default the test bed's, http://127.0.0.1:15672),
$STACKTOP_RABBITMQ_USER / _PASSWORD (guest), AMQP at $STACKTOP_RABBITMQ_AMQP_HOST (127.0.0.1) and
$STACKTOP_RABBITMQ_AMQP_PORT (5672). `python -m bench --only rabbitmq_scale` (--quick: 300 queues, 1 round).
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
AMQP_HOST = os.environ.get("STACKTOP_RABBITMQ_AMQP_HOST", "127.0.0.1")
AMQP_PORT = int(os.environ.get("STACKTOP_RABBITMQ_AMQP_PORT", "5672"))
WALL_GOAL_S = 5.0
CPU_GOAL_S = 1.0


def wait_for_stats(vhost: str, n: int, deadline_s: float = 600) -> float:
    """Seconds until every one of the n queues has `messages` and `consumers` (one unpaged listing a try)."""
    import httpx

    start = time.monotonic()
    with httpx.Client(base_url=MGMT, auth=(USER, PASSWORD), timeout=120) as http:
        while True:
            rows = http.get(f"/api/queues/{quote(vhost, safe='')}", params={"columns": "name,messages,consumers"})
            rows.raise_for_status()
            listed = rows.json()
            ready = sum(1 for q in listed if "messages" in q and "consumers" in q)
            if len(listed) == n and ready == n:
                return time.monotonic() - start
            if time.monotonic() - start > deadline_s:
                raise RuntimeError(f"statistics for {ready}/{n} queues after {deadline_s:g} s")
            time.sleep(2.0)


def bench_rabbitmq_scale(queues: int, rounds: int) -> list[Result]:
    import httpx

    from bench.bench_rabbitmq import broker_cpu_s, setup
    from tui.collectors.rabbitmq import LIGHT_MAX_QUEUES, RabbitMQCollector

    try:
        with httpx.Client(base_url=MGMT, auth=(USER, PASSWORD), timeout=10) as http:
            node = http.get("/api/nodes", params={"columns": "os_pid"}).json()[0]
            version = http.get("/api/overview", params={"columns": "rabbitmq_version"}).json()["rabbitmq_version"]
    except (httpx.HTTPError, ValueError, IndexError, KeyError) as exc:
        return [Result("rabbitmq_scale", "RabbitMQ poll at scale", None, "s",
                       note=f"skipped: no RabbitMQ management API at {MGMT} ({type(exc).__name__})")]
    pid = int(node["os_pid"]) if node.get("os_pid") else None
    if broker_cpu_s(pid) is None:
        pid = None  # not on this machine: no broker CPU
    vhost = f"stacktop-bench-{secrets.token_hex(4)}"
    ours: dict[str, list[float]] = {"wall": [], "cpu": [], "bytes": [], "broker": []}
    by_mode: dict[str, list[float]] = {}  # the dashboard's polls' wall times, by kind (full, light)
    light: dict[str, list[float]] = {"wall": [], "cpu": [], "bytes": [], "broker": []}
    base: dict[str, list[float]] = {"wall": [], "cpu": [], "bytes": [], "broker": []}
    seen: dict[str, object] = {}
    modes: dict[str, int] = {}

    def timed(into: dict[str, list[float]], run) -> None:  # type: ignore[no-untyped-def]
        b0, c0, t0 = broker_cpu_s(pid), time.process_time(), time.perf_counter()
        size = run()
        into["wall"].append(time.perf_counter() - t0)
        into["cpu"].append(time.process_time() - c0)
        into["bytes"].append(float(size))
        b1 = broker_cpu_s(pid)
        if b0 is not None and b1 is not None:
            into["broker"].append(b1 - b0)

    try:
        t0 = time.monotonic()
        setup(MGMT, USER, PASSWORD, AMQP_HOST, AMQP_PORT, vhost, queues)
        declared = time.monotonic() - t0
        waited = wait_for_stats(vhost, queues)
        log(f"rabbitmq_scale: {queues:,} queues declared in {declared:.0f} s, statistics after {waited:.0f} s more")
        loop = asyncio.new_event_loop()
        poller = RabbitMQCollector(MGMT, USER, PASSWORD, vhosts=[vhost], timeout=300)
        # every poll after the first light, statistics by name in pages whatever the queue count
        light_poller = RabbitMQCollector(MGMT, USER, PASSWORD, vhosts=[vhost], timeout=300,
                                         full_every=10**9, light_max_queues=10**9)
        http = httpx.Client(base_url=MGMT, auth=(USER, PASSWORD), timeout=300)
        path = f"/api/queues/{quote(vhost, safe='')}"

        def poll(collector: RabbitMQCollector, key: str):  # type: ignore[no-untyped-def]
            def run() -> int:
                snap = loop.run_until_complete(collector.collect())
                seen[key] = (len(snap.queues), dict(snap.fetch.get("queues", {})), snap.detail_by_queue)
                mode = f"{key} {snap.fetch.get('queues', {}).get('mode')}"
                if key == "ours":
                    by_mode.setdefault(str(snap.fetch.get("queues", {}).get("mode")), []).append(
                        float(snap.fetch.get("seconds", 0.0)))
                modes[mode] = modes.get(mode, 0) + 1
                return int(snap.fetch["bytes"])
            return run

        def plain() -> int:
            resp = http.get(path)
            resp.raise_for_status()
            seen["plain"] = len(resp.json())
            return len(resp.content)

        try:
            loop.run_until_complete(poller.collect())  # warm-up: the first poll, connections opened
            loop.run_until_complete(light_poller.collect())  # its full listing; the rounds' polls are light
            plain()
            for r in range(rounds):
                timed(ours, poll(poller, "ours"))
                timed(light, poll(light_poller, "light"))
                timed(base, plain)
                log(f"rabbitmq_scale round {r + 1}/{rounds}: poll {ours['wall'][-1]:.2f} s (CPU "
                    f"{ours['cpu'][-1]:.2f} s), light poll {light['wall'][-1]:.2f} s, plain GET "
                    f"{base['wall'][-1]:.2f} s (CPU {base['cpu'][-1]:.2f} s)")
        finally:
            loop.run_until_complete(poller.aclose())
            loop.run_until_complete(light_poller.aclose())
            loop.close()
            http.close()
    finally:
        with httpx.Client(base_url=MGMT, auth=(USER, PASSWORD), timeout=300) as http:
            http.delete(f"/api/vhosts/{quote(vhost, safe='')}")

    listed, _info, by_queue = seen["ours"]  # type: ignore[misc]
    light_info = seen["light"][1]  # type: ignore[index]
    where = (f"RabbitMQ {version} at {MGMT}, {queues:,} queues in one vhost ({queues // 100} holding a message, "
             f"none consumed); {rounds} rounds, medians")

    def broker(series: dict[str, list[float]]) -> str:
        return f"{median(series['broker']):.2f} s" if series["broker"] else "n/a (not on this machine)"

    def kib(series: dict[str, list[float]]) -> str:
        return f"{(median(series['bytes']) or 0) / 1024:,.0f} KiB"

    kinds = ", ".join(f"{k} {v}" for k, v in sorted(modes.items()) if k.startswith("ours"))
    kinds_s = "; ".join(f"{mode} {median(v):.2f} s ({', '.join(f'{x:.2f}' for x in v)})"
                        for mode, v in sorted(by_mode.items()))
    common = (f"{where}. stacktop's polls ({kinds.replace('ours ', '')}) list {listed:,} queues (statistics queue "
              f"by queue over {LIGHT_MAX_QUEUES:,}: {'yes' if by_queue else 'no'}), {kib(ours)} received, broker "
              f"CPU {broker(ours)}; by kind, the poll's own seconds: {kinds_s}; a light poll asking statistics "
              f"by name in pages instead: {median(light['wall']):.2f} s wall, "
              f"{median(light['cpu']):.2f} s client CPU, {kib(light)}, broker CPU {broker(light)} ("
              f"{light_info.get('detail_queues')} queues asked statistics by name); plain GET: "
              f"{seen['plain']:,} rows, {kib(base)}, broker CPU {broker(base)}")
    wall = Result("rabbitmq_scale", f"RabbitMQ poll at {queues:,} queues: wall time", median(ours["wall"]), "s",
                  median(base["wall"]), "one plain unpaged /api/queues/<vhost> GET", goal=f"< {WALL_GOAL_S:g} s",
                  note=f"{common}; spread (max-min)/median: poll {spread(ours['wall'])}, plain "
                       f"{spread(base['wall'])}", samples=ours["wall"])
    wall.met = wall.value < WALL_GOAL_S if wall.value is not None else None
    cpu = Result("rabbitmq_scale", f"RabbitMQ poll at {queues:,} queues: client CPU", median(ours["cpu"]), "s",
                 median(base["cpu"]), "the plain GET, its JSON decoded", goal=f"< {CPU_GOAL_S:g} s",
                 note="this process's CPU, every thread (HTTP, JSON, parse, streak history)", samples=ours["cpu"])
    cpu.met = cpu.value < CPU_GOAL_S if cpu.value is not None else None
    size = Result("rabbitmq_scale", f"RabbitMQ poll at {queues:,} queues: bytes received", median(ours["bytes"]),
                  "B", median(base["bytes"]), "the plain GET", note="decoded bodies of the 4 requests (the "
                  "broker gzips them on the wire when asked, as httpx does)", samples=ours["bytes"])
    return [wall, cpu, size]
