"""Benchmark (not a test): what the simulated cloud itself costs at 10,000 instances / 500 hosts / 2,000 queues.

The simulator runs in its own process (tui.sim.spawn_demo), as a benchmark of stacktop should run it. For
each call stacktop makes it reports the simulator's CPU (thread time of its handler threads, from its
/stats), the bytes served, and this process's wall time and CPU for the round trip through tui.openstack
(plain HTTP for RabbitMQ). The point: the simulator must stay cheap next to the client, so benchmarks
against it measure stacktop, not the simulator.

    .venv/bin/python bench/bench_sim.py [--instances 10000] [--hosts 500] [--queues 2000] [--rounds 5]
                                        [--out bench/results/sim.md]
"""

from __future__ import annotations

import argparse
import asyncio
import base64
import json
import platform
import statistics
import sys
import time
import urllib.request
from collections.abc import Callable
from datetime import timedelta
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from tui.openstack import connect  # noqa: E402
from tui.sim import spawn_demo  # noqa: E402


def measure(demo: Any, fn: Callable[[], Any], rounds: int) -> dict[str, float]:
    sim_cpu, wall, proc, size, reqs = [], [], [], [], []
    for _ in range(rounds):
        demo.reset_stats()
        t0, c0 = time.perf_counter(), time.process_time()
        fn()
        wall.append(time.perf_counter() - t0)
        proc.append(time.process_time() - c0)
        snap = demo.stats()
        sim_cpu.append(sum(snap["cpu_s"].values()))
        size.append(sum(snap["bytes"].values()))
        reqs.append(sum(snap["requests"].values()))
    med = statistics.median
    return {"requests": med(reqs), "bytes": med(size), "sim_cpu": med(sim_cpu), "wall": med(wall),
            "proc_cpu": med(proc)}


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--instances", type=int, default=10_000)
    ap.add_argument("--hosts", type=int, default=500)
    ap.add_argument("--queues", type=int, default=2_000)
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--out", default=None)
    args = ap.parse_args()

    t0 = time.perf_counter()
    demo = spawn_demo(instances=args.instances, hosts=args.hosts, queues=args.queues, churn=60, seed=0,
                      warm=True)
    start_wall = time.perf_counter() - t0
    try:
        client = connect(demo.config().openstack)
        client.compute_services()  # token + discovery outside the measurements
        client.placement_microversion()
        auth = base64.b64encode(b"guest:guest").decode()

        def rabbit(path: str) -> Callable[[], Any]:
            def get() -> Any:
                req = urllib.request.Request(demo.rabbitmq_url + path, headers={"Authorization": f"Basic {auth}"})
                with urllib.request.urlopen(req) as resp:
                    return json.loads(resp.read())
            return get

        providers = [p["uuid"] for p in client.resource_providers()]
        paths = [f"/resource_providers/{u}/{what}" for u in providers for what in ("inventories", "usages",
                                                                                    "allocations")]
        host = "compute-008" if args.hosts >= 100 else "compute-01"
        calls: list[tuple[str, Callable[[], Any]]] = [
            ("servers: full list (all pages)", lambda: client.servers()),
            ("servers: changes-since 30 s", lambda: client.servers(changes_since=demo.now() - timedelta(seconds=30))),
            ("compute services", lambda: client.compute_services()),
            ("hypervisors with_servers", lambda: client.hypervisors(with_servers=True)),
            ("network agents", lambda: client.network_agents()),
            (f"ports on one host ({host})", lambda: client.ports(host=host)),
            ("volumes (all pages)", lambda: client.volumes()),
            (f"placement: {len(paths)} per-provider GETs (async, 32 in flight)",
             lambda: asyncio.run(client.aget_json_many("placement", paths, microversion="1.39"))),
            ("rabbitmq /api/queues full", rabbit("/api/queues")),
            ("rabbitmq /api/queues columns=name,vhost,messages,consumers",
             rabbit("/api/queues?columns=name,vhost,messages,consumers")),
            ("rabbitmq /api/queues 4 pages of 500 (columns)",
             lambda: [rabbit(f"/api/queues?page={p}&page_size=500&columns=name,vhost,messages,consumers")()
                      for p in range(1, (args.queues + 499) // 500 + 1)]),
            ("rabbitmq /api/nodes", rabbit("/api/nodes")),
        ]
        rows = [(name, measure(demo, fn, args.rounds)) for name, fn in calls]
    finally:
        demo.stop()

    lines = [
        f"# Simulator cost at {args.instances:,} instances / {args.hosts:,} hosts / {args.queues:,} queues",
        "",
        f"`bench/bench_sim.py`, {platform.machine()} {platform.python_implementation()} "
        f"{platform.python_version()}, median of {args.rounds} rounds, churn 60/min running. "
        "The simulator runs in a child process; sim CPU = thread time of its handler threads; client CPU = "
        "this process (tui.openstack / urllib, JSON decoding included).",
        "",
        f"Start-up of the child (engine build, pre-rendered server JSON, listeners): {start_wall:.2f} s wall.",
        "",
        "| call | requests | bytes | sim CPU s | round trip wall s | client CPU s | sim CPU / client CPU |",
        "| --- | ---: | ---: | ---: | ---: | ---: | ---: |",
    ]
    for name, m in rows:
        share = m["sim_cpu"] / m["proc_cpu"] if m["proc_cpu"] else 0.0  # proc_cpu: this process only
        lines.append(f"| {name} | {m['requests']:.0f} | {m['bytes']:,.0f} | {m['sim_cpu']:.3f} | {m['wall']:.3f} "
                     f"| {m['proc_cpu']:.3f} | {share:.0%} |")
    text = "\n".join(lines) + "\n"
    print(text)
    if args.out:
        Path(args.out).write_text(text)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
