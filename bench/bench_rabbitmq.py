"""Benchmark (not a test): one RabbitMQ poll over 2,000 queues, with vs without `columns` trimming.

Creates a scratch vhost on a real broker (default: the machine's, guest/guest), declares N queues (a few
with messages and no consumer), waits until the management API reports statistics for all of them, then
times RabbitMQCollector.collect() alternately with and without column trimming. Per poll it records wall
time, bytes received (all four endpoints), client CPU, and the broker's CPU (from /proc of the beam process
named by /api/nodes os_pid, when the broker runs on this machine). The vhost is deleted at the end.

    .venv/bin/python bench/bench_rabbitmq.py [--queues 2000] [--rounds 7] [--out bench/results/rabbitmq.md]
"""

from __future__ import annotations

import argparse
import asyncio
import os
import platform
import secrets
import statistics
import sys
import time
from pathlib import Path
from urllib.parse import quote

import httpx
import pika

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from tui.collectors.rabbitmq import RabbitMQCollector  # noqa: E402


def broker_cpu_s(pid: int | None) -> float | None:
    """utime+stime of the broker process, in seconds (None when it is not on this machine)."""
    if pid is None:
        return None
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except OSError:
        return None
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def setup(mgmt: str, user: str, password: str, host: str, port: int, vhost: str, n: int) -> None:
    with httpx.Client(base_url=mgmt, auth=(user, password), timeout=30) as http:
        http.put(f"/api/vhosts/{quote(vhost, safe='')}").raise_for_status()
        http.put(f"/api/permissions/{quote(vhost, safe='')}/{quote(user, safe='')}",
                 json={"configure": ".*", "write": ".*", "read": ".*"}).raise_for_status()
    conn = pika.BlockingConnection(pika.ConnectionParameters(
        host, port, virtual_host=vhost, credentials=pika.PlainCredentials(user, password)))
    try:
        ch = conn.channel()
        hosts = max(1, n // 20)
        for i in range(n):
            kind = i % 4
            if kind == 0:
                name = f"compute.compute-{i:04d}"
            elif kind == 1:
                name = f"reply_{secrets.token_hex(16)}"
            elif kind == 2:
                name = f"conductor_fanout_{secrets.token_hex(16)}"
            else:
                name = f"q-agent-{i % hosts:03d}.{i:04d}"
            ch.queue_declare(name, arguments={"x-expires": 3_600_000} if kind in (1, 2) else None)
            if i % 100 == 0:
                ch.basic_publish("", name, b"stuck")
    finally:
        conn.close()


def wait_for_stats(mgmt: str, user: str, password: str, vhost: str, n: int, deadline_s: float = 120) -> float:
    """Poll until every queue row carries `messages` and `consumers` (fresh rows lack them)."""
    start = time.monotonic()
    with httpx.Client(base_url=mgmt, auth=(user, password), timeout=30) as http:
        while True:
            rows = []
            page = 1
            while True:
                r = http.get(f"/api/queues/{quote(vhost, safe='')}",
                             params={"page": page, "page_size": 500, "columns": "name,messages,consumers"})
                r.raise_for_status()
                data = r.json()
                rows.extend(data["items"])
                if page >= data["page_count"]:
                    break
                page += 1
            ready = sum(1 for q in rows if "messages" in q and "consumers" in q)
            if len(rows) == n and ready == n:
                return time.monotonic() - start
            if time.monotonic() - start > deadline_s:
                raise SystemExit(f"statistics for {ready}/{n} queues after {deadline_s:g}s: giving up")
            time.sleep(1.0)


async def one_poll(c: RabbitMQCollector, pid: int | None) -> dict[str, float | None]:
    cpu0, bcpu0, t0 = time.process_time(), broker_cpu_s(pid), time.perf_counter()
    snap = await c.collect()
    wall = time.perf_counter() - t0
    bcpu1 = broker_cpu_s(pid)
    return {"wall_s": wall, "bytes": float(snap.fetch["bytes"]), "client_cpu_s": time.process_time() - cpu0,
            "broker_cpu_s": None if bcpu0 is None or bcpu1 is None else bcpu1 - bcpu0,
            "queues": float(len(snap.queues)), "pages": float(snap.fetch["queue_pages"])}


COLUMN_SETS = {
    "all columns (no `columns=`)": None,
    "stacktop's columns": "name,vhost,messages,messages_ready,messages_unacknowledged,consumers,arguments,idle_since",
    "without idle_since": "name,vhost,messages,messages_ready,messages_unacknowledged,consumers,arguments",
    "without messages_ready/unacknowledged": "name,vhost,messages,consumers,arguments,idle_since",
    "name,vhost,messages,consumers": "name,vhost,messages,consumers",
}


def column_costs(mgmt: str, user: str, password: str, vhost: str, rounds: int = 3) -> list[tuple[str, float, float]]:
    """/api/queues/<vhost> alone (all pages of 500), per column set: (label, bytes, median wall s)."""
    out = []
    with httpx.Client(base_url=mgmt, auth=(user, password), timeout=60) as http:
        for label, cols in COLUMN_SETS.items():
            walls, size = [], 0
            for _ in range(rounds):
                t0, size, page = time.perf_counter(), 0, 1
                while True:
                    params: dict[str, object] = {"page": page, "page_size": 500}
                    if cols:
                        params["columns"] = cols
                    r = http.get(f"/api/queues/{quote(vhost, safe='')}", params=params)
                    size += len(r.content)
                    if page >= r.json()["page_count"]:
                        break
                    page += 1
                walls.append(time.perf_counter() - t0)
            out.append((label, float(size), statistics.median(walls)))
    return out


def med(values: list[float | None]) -> float | None:
    vals = [v for v in values if v is not None]
    return statistics.median(vals) if vals else None


async def measure(mgmt: str, user: str, password: str, vhost: str, rounds: int) -> dict[bool, dict[str, float | None]]:
    with httpx.Client(base_url=mgmt, auth=(user, password), timeout=10) as http:
        pid_text = http.get("/api/nodes", params={"columns": "os_pid"}).json()[0].get("os_pid")
    pid = int(pid_text) if pid_text and broker_cpu_s(int(pid_text)) is not None else None
    collectors = {trim: RabbitMQCollector(mgmt, user, password, vhosts=[vhost], timeout=60, trim_columns=trim)
                  for trim in (True, False)}
    samples: dict[bool, list[dict[str, float | None]]] = {True: [], False: []}
    try:
        for trim in (True, False):  # warm-up, not counted
            await one_poll(collectors[trim], pid)
        for _ in range(rounds):
            for trim in (True, False):
                samples[trim].append(await one_poll(collectors[trim], pid))
                await asyncio.sleep(0.5)
    finally:
        for c in collectors.values():
            await c.aclose()
    return {trim: {k: med([s[k] for s in rows]) for k in rows[0]} for trim, rows in samples.items()}


def report(result: dict[bool, dict[str, float | None]], n: int, rounds: int, stats_wait: float,
           version: str, costs: list[tuple[str, float, float]], interval: float = 15.0) -> str:
    t, f = result[True], result[False]

    def ratio(key: str) -> str:
        a, b = t[key], f[key]
        return "n/a" if a is None or b is None or a == 0 else f"{b / a:.1f}x"

    def fmt(key: str, v: float | None) -> str:
        if v is None:
            return "n/a"
        return f"{v / 1024:,.0f} KiB" if key == "bytes" else f"{v * 1000:,.0f} ms"

    rows = [("wall time of one poll", "wall_s"), ("bytes received (4 endpoints)", "bytes"),
            ("broker CPU for the poll", "broker_cpu_s"), ("stacktop CPU (parse + build)", "client_cpu_s")]
    lines = [
        "# RabbitMQ: one poll over 2,000 queues",
        "",
        f"`bench/bench_rabbitmq.py --queues {n} --rounds {rounds}` on {platform.node()} "
        f"({os.cpu_count()} cores, shared with a running OpenStack test cloud), RabbitMQ {version}, "
        f"{time.strftime('%Y-%m-%d')}. One poll = RabbitMQCollector.collect(): /api/queues/<vhost> in pages of "
        f"500 ({int(t['pages'] or 0)} pages), /api/nodes, /api/health/checks/local-alarms, /api/overview, "
        "concurrently. Medians of the rounds, trimmed and untrimmed polls alternating after one warm-up each.",
        "",
        "| per poll | columns trimmed | untrimmed (full rows) | untrimmed / trimmed |",
        "| --- | ---: | ---: | ---: |",
    ]
    for label, key in rows:
        lines.append(f"| {label} | {fmt(key, t[key])} | {fmt(key, f[key])} | {ratio(key)} |")
    lines += [
        "",
        f"Queues seen per poll: {int(t['queues'] or 0)} (trimmed) / {int(f['queues'] or 0)} (untrimmed). "
        f"Statistics for all {n} fresh queues appeared {stats_wait:.1f} s after the declares.",
        "",
        "Trimmed columns: `name,vhost,messages,messages_ready,messages_unacknowledged,consumers,arguments,"
        "idle_since` (everything the rules and the pane use). The broker CPU is the beam process's "
        "utime+stime over the poll (it also includes whatever else the broker did meanwhile: the OpenStack test "
        f"cloud uses the same broker). At the default {interval:g} s interval that is "
        f"{_share(t['broker_cpu_s'], interval)} of one broker core trimmed, {_share(f['broker_cpu_s'], interval)} "
        "untrimmed. Wall times on this shared 2-core machine vary by ~30 % between runs; the ratios hold.",
        "",
        "## What each column costs (`/api/queues/<vhost>` alone, all pages, median of 3)",
        "",
        "| columns | bytes | wall |",
        "| --- | ---: | ---: |",
        *(f"| {label} | {size / 1024:,.0f} KiB | {wall * 1000:,.0f} ms |" for label, size, wall in costs),
        "",
        "`messages_ready`/`messages_unacknowledged` (finding evidence) and `idle_since` (the x-expires bound) each "
        "add about a quarter (~90 KiB) to the trimmed payload but little wall time: the broker's cost is "
        "per queue row, not per byte. The issue asks for them, so they stay.",
        "",
    ]
    return "\n".join(lines)


def _share(cpu_s: float | None, interval: float) -> str:
    return "n/a" if cpu_s is None else f"{100 * cpu_s / interval:.1f} %"


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--mgmt", default=os.environ.get("STACKTOP_RABBITMQ_MGMT_URL", "http://127.0.0.1:15672"))
    ap.add_argument("--user", default=os.environ.get("STACKTOP_RABBITMQ_USER", "guest"))
    ap.add_argument("--password-env", default="STACKTOP_RABBITMQ_PASSWORD",
                    help="environment variable holding the password (default guest when unset)")
    ap.add_argument("--amqp-host", default="127.0.0.1")
    ap.add_argument("--amqp-port", type=int, default=5672)
    ap.add_argument("--queues", type=int, default=2000)
    ap.add_argument("--rounds", type=int, default=7)
    ap.add_argument("--out", default=str(ROOT / "bench" / "results" / "rabbitmq.md"))
    args = ap.parse_args()
    password = os.environ.get(args.password_env, "guest")
    vhost = f"stacktop-bench-{secrets.token_hex(4)}"
    try:
        t0 = time.monotonic()
        setup(args.mgmt, args.user, password, args.amqp_host, args.amqp_port, vhost, args.queues)
        print(f"declared {args.queues} queues in {time.monotonic() - t0:.1f}s; waiting for statistics",
              flush=True)
        stats_wait = wait_for_stats(args.mgmt, args.user, password, vhost, args.queues)
        result = asyncio.run(measure(args.mgmt, args.user, password, vhost, args.rounds))
        costs = column_costs(args.mgmt, args.user, password, vhost)
        with httpx.Client(base_url=args.mgmt, auth=(args.user, password), timeout=10) as http:
            version = http.get("/api/overview", params={"columns": "rabbitmq_version"}).json()["rabbitmq_version"]
    finally:
        with httpx.Client(base_url=args.mgmt, auth=(args.user, password), timeout=60) as http:
            http.delete(f"/api/vhosts/{quote(vhost, safe='')}")
    text = report(result, args.queues, args.rounds, stats_wait, version, costs)
    Path(args.out).parent.mkdir(parents=True, exist_ok=True)
    Path(args.out).write_text(text)
    print(text)


if __name__ == "__main__":
    main()
