"""The background placement audit's cost at scale: the collector the dashboard runs every `[openstack]
audit_interval` (tui.collectors.placement), against the simulator (500 hosts at full scale): requests, bytes,
client CPU and wall per audit, and what that is per interval as a share of one core. Baseline in the same run:
one steady poll of the services + instances sources (what the dashboard does every 10 s), so the ratio says how
many steady polls one audit costs; the goal is the audit's share of a core at the default interval."""

from __future__ import annotations

import asyncio
import time
from typing import Any

from bench.common import Result, log, median


def bench_audit(demo: Any, rounds: int) -> list[Result]:
    from tui.collectors.instances import InstancesCollector
    from tui.collectors.placement import PlacementAuditCollector
    from tui.collectors.services import ServicesCollector
    from tui.config import OpenStackConfig
    from tui.openstack.session import OpenStackSession

    cfg = demo.config()
    interval = OpenStackConfig().audit_interval
    session = OpenStackSession(cfg.openstack)
    audit = PlacementAuditCollector(session, interval)
    services = ServicesCollector(cfg.openstack, cfg.thresholds, session=session)
    inst = InstancesCollector(cfg.openstack, stuck=cfg.thresholds.stuck, session=session)
    loop = asyncio.new_event_loop()
    runs: dict[str, list[float]] = {"cpu": [], "wall": [], "req": [], "bytes": [], "poll_cpu": []}
    providers = consumers = stale = 0
    try:
        loop.run_until_complete(services.collect())  # token, discovery, first full listings: not measured
        loop.run_until_complete(inst.collect())
        for i in range(rounds):
            demo.reset_stats()
            c0, w0 = time.process_time(), time.perf_counter()
            digest = loop.run_until_complete(audit.collect())
            runs["cpu"].append(time.process_time() - c0)
            runs["wall"].append(time.perf_counter() - w0)
            stats = demo.stats()
            runs["req"].append(sum(stats["requests"].values()))
            runs["bytes"].append(sum(stats["bytes"].values()))
            providers, consumers = digest.providers, digest.consumers
            stale = len(audit.findings(digest, digest.taken_at))
            c0 = time.process_time()
            loop.run_until_complete(services.collect())
            loop.run_until_complete(inst.collect())
            runs["poll_cpu"].append(time.process_time() - c0)
            log(f"audit round {i + 1}/{rounds}: {runs['cpu'][-1]:.2f} s CPU, {runs['wall'][-1]:.2f} s, "
                f"{runs['req'][-1]:.0f} requests; a steady poll {runs['poll_cpu'][-1] * 1000:.0f} ms CPU")
    finally:
        loop.run_until_complete(services.aclose())
        loop.run_until_complete(inst.aclose())
        loop.close()
        session.close()
    cpu = median(runs["cpu"])
    share = None if cpu is None else cpu / interval * 100
    note = (f"{providers} providers, {consumers:,} consumers; {stale} findings; per audit: "
            f"{median(runs['req']):.0f} requests, "
            f"{(median(runs['bytes']) or 0) / 1e6:.1f} MB, {median(runs['wall']):.1f} s wall; at the default "
            f"audit_interval ({interval:g} s) its CPU is {share:.2f} % of one core" if share is not None else "")
    res = Result("audit", "placement audit in the background: client CPU per audit", cpu, "s",
                 median(runs["poll_cpu"]), "one steady poll of services + instances", goal="< 0.5 % of a core "
                 f"at audit_interval {interval:g} s", note=note, samples=runs["cpu"])
    res.met = None if share is None else share < 0.5
    req = Result("audit", "placement audit: HTTP requests per audit", median(runs["req"]), "req", note=note,
                 samples=runs["req"])
    return [res, req]

