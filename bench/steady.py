"""Steady-state poll of every OpenStack pane at ~1 % churn: stacktop's collectors vs a naive SDK poller.

The simulator runs in its own process on a manual clock: each cycle advances sim time by one poll interval
(10 s, the default [openstack] interval; boots and deletes run underneath), then polls once with stacktop's
services + instances collectors (collect + rules, exactly what the runner does; the services pane and the
instances pane are all the OpenStack panes) and once with a naive poller that lists everything as
openstacksdk Resource objects (compute services, network agents, volume services, every server). Client CPU
is this process's CPU time over the poll (all threads); requests and bytes are what the simulator served.
"""

from __future__ import annotations

import asyncio
import time
from datetime import UTC, datetime
from typing import Any

from bench.common import Result, log, median, spread

INTERVAL = 10.0


class SimTime:
    """The sim's manual clock as seen from here: advanced only by us."""

    def __init__(self, demo: Any) -> None:
        self.demo = demo
        self.t = float(demo._call("POST", "/advance?seconds=0", {})["now"])

    def advance(self, seconds: float) -> None:
        self.t = float(self.demo._call("POST", f"/advance?seconds={seconds}", {})["now"])

    def now(self) -> datetime:
        return datetime.fromtimestamp(self.t, UTC)


def naive_connection(demo: Any) -> Any:
    import openstack.connection
    from openstack.config import loader

    region = loader.OpenStackConfig(config_files=[str(demo.clouds_file)]).get_one(cloud=demo.info["cloud"])
    return openstack.connection.Connection(config=region)


def naive_poll(conn: Any) -> dict[str, tuple[str, str, str | None]]:
    """What a straightforward SDK dashboard does every cycle: every list, as Resource objects."""
    list(conn.compute.services())
    list(conn.network.agents())
    list(conn.block_storage.services())
    servers = list(conn.compute.servers(details=True, all_projects=True))
    return {s.id: (str(s.updated_at), str(s.status), s.task_state) for s in servers}


def measure(demo: Any, fn: Any) -> tuple[Any, float, float, int, int]:
    demo.reset_stats()
    c0, w0 = time.process_time(), time.perf_counter()
    out = fn()
    cpu, wall = time.process_time() - c0, time.perf_counter() - w0
    snap = demo.stats()
    return out, cpu, wall, sum(snap["requests"].values()), sum(snap["bytes"].values())



def bench_steady(demo: Any, cycles: int, naive_cycles: int, instances: int) -> list[Result]:
    from tui.collectors.instances import InstancesCollector
    from tui.collectors.services import ServicesCollector
    from tui.openstack import OpenStackSession

    clock = SimTime(demo)
    cfg = demo.config()
    session = OpenStackSession(cfg.openstack)  # the cloud's session, shared by both sources as in the app
    services = ServicesCollector(cfg.openstack, cfg.thresholds, clock=clock.now, session=session)
    inst = InstancesCollector(cfg.openstack, stuck=cfg.thresholds.stuck, clock=clock.now, session=session)
    loop = asyncio.new_event_loop()

    async def both() -> tuple[Any, Any]:
        # one after the other: in the app each runs every interval, so whichever polls second finds the other's
        # listing of this cycle, and whichever polls first the last cycle's (< one interval old). Run together
        # here, with minutes of naive polling between cycles, neither would find a fresh one.
        s_snap = await services.collect()
        return s_snap, await inst.collect()

    def stacktop_poll() -> int:
        s_snap, i_snap = loop.run_until_complete(both())
        now = clock.now()
        services.findings(s_snap, now)
        inst.findings(i_snap, now)
        return len(i_snap.servers)

    try:
        stacktop_poll()  # first poll: token, discovery, the full server list (that is the triage's cost)
        conn = naive_connection(demo) if naive_cycles else None
        prev = naive_poll(conn) if conn is not None else {}  # token + discovery of the naive poller, not measured
        ours: dict[str, list[float]] = {"cpu": [], "wall": [], "req": [], "bytes": []}
        theirs: dict[str, list[float]] = {"cpu": [], "wall": [], "req": [], "bytes": []}
        churn: list[int] = []
        for i in range(cycles):
            clock.advance(INTERVAL)
            order = ("ours", "naive") if i % 2 == 0 else ("naive", "ours")
            for who in order:
                if who == "ours":
                    _, cpu, wall, req, size = measure(demo, stacktop_poll)
                    for k, v in zip(("cpu", "wall", "req", "bytes"), (cpu, wall, req, size), strict=True):
                        ours[k].append(v)
                elif i < naive_cycles:
                    cur, cpu, wall, req, size = measure(demo, lambda: naive_poll(conn))
                    changed = sum(1 for k, v in cur.items() if prev.get(k) != v) + sum(1 for k in prev if k not in cur)
                    churn.append(changed)
                    prev = cur
                    for k, v in zip(("cpu", "wall", "req", "bytes"), (cpu, wall, req, size), strict=True):
                        theirs[k].append(v)
            log(f"steady cycle {i + 1}/{cycles}: stacktop {ours['cpu'][-1] * 1000:.0f} ms CPU "
                f"{ours['req'][-1]:.0f} req" + (f"; naive {theirs['cpu'][-1]:.2f} s CPU, {churn[-1]} servers changed"
                                                  if i < naive_cycles else ""))
    finally:
        loop.run_until_complete(services.aclose())
        loop.run_until_complete(inst.aclose())
        loop.close()
        session.close()
    churn_pct = (median(churn) or 0) / max(1, instances) * 100
    note = (f"churn per {INTERVAL:g} s cycle: median {median(churn) or 0:.0f} servers changed/added/deleted "
            f"({churn_pct:.1f} % of {instances:,}); {cycles} stacktop cycles, {naive_cycles} naive cycles, "
            f"alternating order. Wall per poll: stacktop {median(ours['wall']) * 1000:.0f} ms, naive "
            f"{median(theirs['wall']) or 0:.2f} s. CPU spread (max-min)/median: stacktop {spread(ours['cpu'])}, "
            f"naive {spread(theirs['cpu'])}. Mean requests per stacktop cycle "
            f"{sum(ours['req']) / max(1, len(ours['req'])):.1f} (max {max(ours['req'], default=0):.0f})")
    cpu = Result("steady", "steady-state poll, client CPU per cycle (services + instances panes)",
                 median(ours["cpu"]), "s", median(theirs["cpu"]), "naive SDK poller (Resource objects)",
                 goal=">= 100x cheaper", note=note, samples=ours["cpu"])
    cpu.met = None if cpu.ratio is None else cpu.ratio >= 100
    mean_req = sum(ours["req"]) / max(1, len(ours["req"]))
    most = max(ours["req"], default=None)
    req = Result("steady", "steady-state poll, HTTP requests per cycle (the most in any cycle)", most, "req",
                 median(theirs["req"]), "naive SDK poller", goal="<= 6 in every cycle", samples=ours["req"],
                 note=f"per cycle: median {median(ours['req']):.0f}, mean {mean_req:.1f}, max {most or 0:.0f}. "
                      "One cycle in three (every 30 s, build_list_s) the instances pane also lists status=BUILD "
                      "(builds changes-since cannot see) and the services pane skips its endpoint check's turn; "
                      "a server newly stuck or in ERROR adds one os-instance-actions read (its request id), at "
                      "most 10 a poll")
    req.met = most is not None and most <= 6
    size = Result("steady", "steady-state poll, bytes per cycle", median(ours["bytes"]), "B",
                  median(theirs["bytes"]), "naive SDK poller", samples=ours["bytes"])
    return [cpu, req, size]
