"""Benchmark (not a test): one Galera poll of 3 nodes, kept connections vs a reconnect per poll.

Against the test bed's cluster (testcloud/galera.sh up; reader stacktop/stacktop), times, alternately:
  kept       GaleraCollector.collect() on its persistent connections (what stacktop does)
  reconnect  a fresh collector per poll, TLS off (ssl_disabled=True)
  reconnect+defaults  a fresh pymysql connection per node per poll with pymysql's defaults (TLS whenever the
             server offers it; the test bed's nodes do not), then the same two SHOW statements
Per poll: wall time and client CPU (process time). Medians over --rounds polls.

    .venv/bin/python bench/bench_galera.py [--rounds 30] [--out bench/results/galera.md]
"""

from __future__ import annotations

import argparse
import asyncio
import platform
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from tui.collectors.galera import GaleraCollector  # noqa: E402
from tui.collectors.galera_sql import STATUS_SQL, VARIABLES_SQL, run_query, split_address  # noqa: E402

NODES = ("127.0.0.1:3311", "127.0.0.1:3312", "127.0.0.1:3313")
USER, PASSWORD = "stacktop", "stacktop"


class SSLDefaultConnection:
    """pymysql with its defaults (no ssl_disabled): TLS is negotiated when the server offers it."""

    def __init__(self, address: str, user: str, password: str | None, timeout: float) -> None:
        import pymysql

        host, port = split_address(address)
        self._conn = pymysql.connect(host=host, port=port, user=user, password=password or "",
                                     connect_timeout=timeout, read_timeout=timeout)

    def query(self, sql: str) -> list[tuple]:
        with self._conn.cursor() as cur:
            cur.execute(sql)
            return list(cur.fetchall())

    def close(self) -> None:
        self._conn.close()


async def timed(coro_factory) -> tuple[float, float]:  # type: ignore[no-untyped-def]
    w0, c0 = time.perf_counter(), time.process_time()
    await coro_factory()
    return time.perf_counter() - w0, time.process_time() - c0


async def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--rounds", type=int, default=30)
    ap.add_argument("--out", default=str(ROOT / "bench" / "results" / "galera.md"))
    args = ap.parse_args()

    kept = GaleraCollector(NODES, USER, PASSWORD, expected_size=3)
    await kept.collect()  # connect + pymysql import outside the timing

    async def reconnect() -> None:
        c = GaleraCollector(NODES, USER, PASSWORD, expected_size=3)
        await c.collect()
        await c.aclose()

    def ssl_poll() -> None:
        for address in NODES:
            conn = SSLDefaultConnection(address, USER, PASSWORD, 3.0)
            run_query(conn, STATUS_SQL)
            run_query(conn, VARIABLES_SQL)
            conn.close()

    async def ssl_reconnect() -> None:
        await asyncio.to_thread(ssl_poll)

    results: dict[str, list[tuple[float, float]]] = {"kept": [], "reconnect": [], "reconnect+defaults": []}
    ssl_error = None
    for _ in range(args.rounds):
        results["kept"].append(await timed(kept.collect))
        results["reconnect"].append(await timed(reconnect))
        if ssl_error is None:
            try:
                results["reconnect+defaults"].append(await timed(ssl_reconnect))
            except Exception as exc:  # the server may not offer TLS at all
                ssl_error = f"{type(exc).__name__}: {exc}"
    await kept.aclose()

    lines = [
        "# Galera poll cost: kept connections vs reconnect per poll",
        "",
        f"`bench/bench_galera.py --rounds {args.rounds}` on {platform.node()} ({platform.machine()}, "
        f"Python {platform.python_version()}), 3 nodes of testcloud/galera.sh on loopback, reader `stacktop`.",
        "One poll = `SHOW GLOBAL STATUS LIKE 'wsrep%'` + `SHOW GLOBAL VARIABLES LIKE 'wsrep%'` on each node.",
        "",
        "| mode | median wall ms | median client CPU ms |",
        "|---|---:|---:|",
    ]
    for mode, samples in results.items():
        if not samples:
            lines.append(f"| {mode} | n/a ({ssl_error}) | |")
            continue
        wall = statistics.median(s[0] for s in samples) * 1000
        cpu = statistics.median(s[1] for s in samples) * 1000
        lines.append(f"| {mode} | {wall:.1f} | {cpu:.1f} |")
    lines.append("")
    text = "\n".join(lines)
    print(text)
    Path(args.out).write_text(text)


if __name__ == "__main__":
    asyncio.run(main())
