"""Soak: many poll cycles of every collector against the simulator, with churn and faults; RSS and open file
descriptors sampled all along, judged between the end of the warm-up and the end.

    .venv/bin/python bench/soak.py --out bench/results/soak.md   # 10,000 cycles (~15-25 min)
    .venv/bin/python bench/soak.py --short --json                # 600 cycles, a smaller cloud (CI:
                                                                 # tests/reliability/test_soak_short.py)
    .venv/bin/python bench/soak.py --cycles 2000 --trace         # + tracemalloc: what grew, by traceback

The simulator runs in a child process (its memory is not ours); stacktop's side is measured here, as the app
runs it without the screen: the four collectors (services, instances, rabbitmq, galera) polled through their
runners, concurrently, once per cycle (a cycle is one poll of every source, back to back: far faster than
the default intervals), every observation fed to the recorder (change tracker + journal in a temporary
folder, rotating) and followed by the app's GC policy (tui.gcpolicy.after_poll: gc.freeze()). The Textual
UI is not in the loop.

Faults: every --fault-every cycles (at mid-period) one fault, round robin over FAULT_PLAN (HTTP 500/401,
refused, hang, malformed, truncated, cut, wrong content type; Galera node refused/login refused), held for
--fault-cycles cycles, then cleared.

Measurement, the same way at every sample (every --sample-every cycles, a multiple of --fault-every, so
always the same number of cycles after a fault was cleared): the journal's queue drained, RSS read ("before
collection"), then the GC policy's periodic full collection (tui.gcpolicy.full_collection: what the app
does every 15 minutes: unfreeze, collect, return free heap pages to the system), then RSS, pymalloc's
allocated blocks (sys.getallocatedblocks: Python objects), open file descriptors by kind, threads.
Idle keep-alive connections are closed before the fds are counted (expire_idle_connections: the app's poll
intervals outlast the keep-alive expiry; back-to-back cycles do not), and the HTTP connection pools counted:
one more pool after the warm-up fails the run. The simulator runs without its storyline (its episodes are not
aligned with the samples). Warm-up: one full round of the fault plan and at least a tenth of the run, rounded
to a sample. Judged: RSS (after collection) and open fds from the end of the warm-up to the end, along the
least-squares trend of every sample in between (the allocator's RSS goes up and down by several MB between
two samples: two end points alone judge that noise); the end-point growth is reported beside it. Exit status 1
at 5 % or more.
"""

from __future__ import annotations

import argparse
import asyncio
import ctypes
import ctypes.util
import gc
import itertools
import json
import os
import shutil
import subprocess
import sys
import tempfile
import threading
import time
from collections import Counter
from dataclasses import replace
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

FAULT_PLAN = [("nova", "500"), ("rabbitmq", "refused"), ("neutron", "malformed"), ("keystone", "hang"),
              ("cinder", "cut"), ("placement", "401"), ("rabbitmq", "content_type"), ("nova", "truncated"),
              ("galera", "refused"), ("nova", "hang"), ("rabbitmq", "hang"), ("galera", "auth")]
LIMIT = 0.05


def rss_kib() -> int:
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1])
    return 0


def _mallocstats() -> dict[str, int]:
    """sys._debugmallocstats' totals (it prints to fd 2): '# arenas allocated current', '# bytes in allocated
    blocks' ..."""
    with tempfile.TemporaryFile("w+") as out:
        saved = os.dup(2)
        sys.stderr.flush()
        os.dup2(out.fileno(), 2)
        try:
            sys._debugmallocstats()
        finally:
            os.dup2(saved, 2)
            os.close(saved)
        out.seek(0)
        return {name.strip(): int(value.replace(",", "")) for name, _, value in
                (line.partition("=") for line in out if line.startswith("# ") and "=" in line)}


def pymalloc_kib() -> int:
    """Memory held in pymalloc's arenas (Python's small objects, used or free)."""
    return _mallocstats().get("# arenas allocated current", 0) * 1024  # 1 MiB arenas (Python 3.10+)


class _MallInfo2(ctypes.Structure):
    _fields_ = [(name, ctypes.c_size_t) for name in
                ("arena", "ordblks", "smblks", "hblks", "hblkhd", "usmblks", "fsmblks", "uordblks", "fordblks",
                 "keepcost")]


def _mallinfo2() -> Any:
    try:
        libc = ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6")
        fn = libc.mallinfo2  # glibc 2.33+
    except (OSError, AttributeError):
        return None
    fn.restype = _MallInfo2
    return fn


_MALLINFO2 = _mallinfo2()


def heap_in_use_kib() -> int:
    """Memory held by live allocations: malloc's chunks in use (C libraries, Python's large objects, mmapped
    chunks) plus the bytes in pymalloc's allocated blocks. Unlike RSS, it does not count what the allocators
    keep free for later (fragmentation, arenas of threads, pages not yet handed back), which takes thousands
    of cycles to settle: a leak is live memory. 0 where glibc's mallinfo2 is missing."""
    if _MALLINFO2 is None:
        return 0
    info = _MALLINFO2()
    return (info.uordblks + info.hblkhd + _mallocstats().get("# bytes in allocated blocks", 0)) // 1024


def fd_targets() -> list[str]:
    """What every open file descriptor points at ("/path", "socket:[inode]", "pipe:[inode]" ...)."""
    targets = []
    for fd in os.listdir("/proc/self/fd"):
        try:
            targets.append(os.readlink(f"/proc/self/fd/{fd}"))
        except OSError:  # the listing's own fd, already closed
            continue
    return targets


def open_fds(targets: list[str]) -> dict[str, int]:
    """Open file descriptors by kind (socket, pipe, anon_inode, file ...)."""
    kinds = Counter("file" if t.startswith("/") else t.split(":", 1)[0] for t in targets)
    return dict(sorted(kinds.items()))


TCP_STATES = {"01": "established", "06": "time_wait", "08": "close_wait", "0A": "listen"}


def socket_peers(targets: list[str]) -> dict[str, int]:
    """Open sockets by peer ("port/state" of TCP, "unix", "listen:port"): which connection a wandering count is."""
    by_inode: dict[str, str] = {}
    for table in ("tcp", "tcp6", "unix"):
        try:
            rows = Path(f"/proc/self/net/{table}").read_text().splitlines()[1:]
        except OSError:
            continue
        for row in rows:
            f = row.split()
            if table == "unix":
                by_inode[f[6]] = "unix"
                continue
            local, remote, state = int(f[1].rsplit(":", 1)[1], 16), int(f[2].rsplit(":", 1)[1], 16), f[3]
            by_inode[f[9]] = f"{remote}/{TCP_STATES.get(state, state)}" if remote else f"listen:{local}"
    peers = Counter(by_inode.get(t[8:-1], "other") for t in targets if t.startswith("socket:["))
    return dict(sorted(peers.items()))


def expire_idle_connections() -> int:
    """Close the idle keep-alive connections of every live HTTP connection pool (httpcore's for httpx, urllib3's
    for openstacksdk's requests session); the number of pools.

    Between the app's polls (10 s and more) the keep-alive expiry (httpx: 5 s) or the server's own timeout
    retires them; the soak's cycles are back to back, so a sample would count however many connections the
    pools' peak concurrency happened to leave open since a fault last dropped some: 15-19 sockets wandering in
    one short run, where one socket is over the 5 % limit. A connection a pool holds is bounded by the pool, not
    leaked; a leaked pool (a client or session made per poll and kept) is caught by the number of pools, judged
    beside the fds. Called between cycles, when no request is in flight."""
    import queue

    import httpcore
    from urllib3.connectionpool import HTTPConnectionPool

    pools = [o for o in gc.get_objects() if isinstance(o, (httpcore.ConnectionPool, HTTPConnectionPool))]
    for pool in pools:
        if isinstance(pool, HTTPConnectionPool):  # idle connections wait in its queue; closed, they reconnect
            waiting = []
            while True:
                try:
                    waiting.append(pool.pool.get(block=False))
                except (queue.Empty, AttributeError):  # AttributeError: a closed pool (its queue is None)
                    break
            for connection in waiting:
                if connection is not None:
                    connection.close()
                pool.pool.put(connection)
            continue
        with pool._optional_thread_lock:  # as the pool's own expiry does, under its lock
            idle = [c for c in pool._connections if c.is_idle()]
            for connection in idle:
                pool._connections.remove(connection)
        for connection in idle:
            connection.close()
    return len(pools)


# ------------------------------------------------------------------------------------ the simulator child
def serve(args: argparse.Namespace) -> None:
    """Child: a demo with churn, its control API, and fault commands read from stdin ("set nova 500",
    "clear"). Exits when stdin closes."""
    from tui.sim import start_demo
    from tui.sim.control import serve as serve_control
    from tui.sim.faults import Faults

    # a stationary workload: stuck builds do not pile up (steady), and no storyline: its episodes (two Galera
    # nodes gone for 30 of every 180 sim seconds, a compute down, an alarm) are not aligned with the samples,
    # so a sample would count two Galera connections fewer, or not, by chance (CI failed on that); the fault
    # plan brings the same troubles, at cycles the samples are aligned with
    demo = start_demo(instances=args.instances, hosts=args.hosts, queues=args.queues, churn=args.churn,
                      speed=args.speed, seed=1, steady=True, storyline=False)
    faults = Faults(demo)
    print(json.dumps(serve_control(demo)), flush=True)
    for line in sys.stdin:
        words = line.split()
        try:
            if words[:1] == ["set"]:
                faults.set(words[1], words[2])
            elif words[:1] == ["clear"]:
                faults.clear()
            print("ok", flush=True)
        except Exception as exc:  # report, keep serving
            print(f"error {exc}", flush=True)
    faults.clear()
    demo.stop()


class Child:
    def __init__(self, args: argparse.Namespace) -> None:
        cmd = [sys.executable, str(Path(__file__).resolve()), "--serve", "--instances", str(args.instances),
               "--hosts", str(args.hosts), "--queues", str(args.queues), "--churn", str(args.churn),
               "--speed", str(args.speed)]
        self.proc = subprocess.Popen(cmd, stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True, cwd=ROOT)
        assert self.proc.stdout is not None
        self.info = json.loads(self.proc.stdout.readline())

    def command(self, line: str) -> None:
        assert self.proc.stdin is not None and self.proc.stdout is not None
        self.proc.stdin.write(line + "\n")
        self.proc.stdin.flush()
        answer = self.proc.stdout.readline().strip()
        if answer != "ok":
            raise RuntimeError(f"simulator: {answer}")

    def stop(self) -> None:
        if self.proc.stdin:
            self.proc.stdin.close()
        try:
            self.proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self.proc.kill()


# ------------------------------------------------------------------------------------------ judging
def warm_up_cycles(cycles: int, fault_every: int, sample_every: int) -> int:
    """One full round of the fault plan and at least a tenth of the run, rounded up to a sample point."""
    want = max(len(FAULT_PLAN) * fault_every, cycles // 10)
    return min(cycles, -(-want // sample_every) * sample_every)


def trend_growth(points: list[tuple[float, float]]) -> float:
    """Growth along the least-squares line through (cycle, value): from its value at the first cycle to its
    value at the last, relative to the first. A leak is a trend; the allocator's ups and downs are not."""
    n = len(points)
    if n < 2:
        return 0.0
    mx = sum(x for x, _ in points) / n
    my = sum(y for _, y in points) / n
    sxx = sum((x - mx) ** 2 for x, _ in points)
    slope = sum((x - mx) * (y - my) for x, y in points) / sxx if sxx else 0.0
    first, last = points[0][0], points[-1][0]
    start = my + slope * (first - mx)
    return slope * (last - first) / start if start else 0.0


def judge(samples: list[dict[str, Any]], warm: int, cycles: int, judge_rss: bool = True) -> dict[str, Any]:
    """The marks (start, after warm-up, middle, end); growth between the end of the warm-up and the end, both
    end point against end point and along the trend of every sample in between (the verdict: under 5 %).

    Judged: the heap in use (live allocations: a leak), where measured, and RSS unless judge_rss is False. The
    short run judges the heap only: RSS keeps settling for thousands of cycles (allocator arenas and
    fragmentation, more so on a loaded machine), so 600 cycles cannot tell its warm-up from a leak; the full
    run judges both."""
    by_cycle = {s["cycle"]: s for s in samples}
    after = [s for s in samples if s["cycle"] >= warm]
    middle = min(after, key=lambda s: abs(s["cycle"] - (warm + cycles) / 2))
    marks = {"start": samples[0], "after warm-up": by_cycle[warm], "middle": middle, "end": samples[-1]}
    base, end = marks["after warm-up"], marks["end"]

    def growth(key: str) -> float:
        return (end[key] - base[key]) / base[key]

    def trend(key: str) -> float:
        return trend_growth([(s["cycle"], s[key]) for s in after])

    result = {"marks": {name: s["cycle"] for name, s in marks.items()},
              "rss_growth": growth("rss_kib"), "rss_trend_growth": trend("rss_kib"),
              "rss_before_collection_growth": growth("rss_before_kib"),
              "fd_growth": growth("fds"), "fd_trend_growth": trend("fds"),
              "py_blocks_growth": growth("py_blocks"),
              "rss_max_after_warm_up_kib": max(s["rss_before_kib"] for s in after),
              "rss_min_after_warm_up_kib": min(s["rss_kib"] for s in after)}
    if all("http_pools" in s for s in after):  # older results have no count of pools
        result["http_pools_added"] = end["http_pools"] - base["http_pools"]
    heap = all(s.get("heap_kib", 0) > 0 for s in after)
    if heap:
        result.update(heap_growth=growth("heap_kib"), heap_trend_growth=trend("heap_kib"))
    judged = (["heap_trend_growth"] if heap else []) + (["rss_trend_growth"] if judge_rss or not heap else [])
    result["judged"] = judged
    result["ok"] = (all(result[key] < LIMIT for key in judged) and result["fd_trend_growth"] < LIMIT
                    and result.get("http_pools_added", 0) <= 0)  # a pool more is a client leaked
    return result


# ------------------------------------------------------------------------------------------ the soak
async def drain(journal: Any, timeout: float = 10.0) -> None:
    deadline = time.monotonic() + timeout
    while journal.pending() and time.monotonic() < deadline:
        await asyncio.sleep(0.01)
    await asyncio.sleep(0.02)  # the writer finishes the line it took


async def soak(args: argparse.Namespace) -> dict[str, Any]:
    from tui import gcpolicy
    from tui.collectors.galera import GaleraCollector
    from tui.collectors.instances import InstancesCollector
    from tui.collectors.rabbitmq import RabbitMQCollector
    from tui.collectors.services import ServicesCollector
    from tui.openstack.client import connect
    from tui.recorder import Journal, Recorder
    from tui.runner import CollectorRunner
    from tui.sim.control import RemoteDemo
    from tui.sim.faults import FaultyGaleraConnector

    child = Child(args)
    remote = RemoteDemo(child.proc, child.info)  # config and the Galera seam; faults go through child.command
    cfg = remote.config()
    cfg = replace(cfg, openstack=replace(cfg.openstack, timeout=2.0), rabbitmq=replace(cfg.rabbitmq, timeout=1.5),
                  galera=replace(cfg.galera, timeout=2.0))
    client = connect(cfg.openstack)
    galera = FaultyGaleraConnector(remote.galera_connector)
    collectors = [
        ServicesCollector(cfg.openstack, cfg.thresholds, client_factory=lambda: client),
        InstancesCollector(cfg.openstack, client_factory=lambda: client, resync_s=60.0),
        RabbitMQCollector.from_config(cfg.rabbitmq),
        GaleraCollector(cfg.galera.nodes, cfg.galera.user, cfg.galera.password.value, timeout=cfg.galera.timeout,
                        connector=galera, max_backoff_s=0.01),
    ]
    if args.only:
        collectors = [c for c in collectors if c.name in args.only.split(",")]
    runners = [CollectorRunner(c) for c in collectors]
    tmp = tempfile.mkdtemp(prefix="stacktop-soak-")
    journal = Journal(tmp, secrets=[cfg.rabbitmq.password.value, cfg.galera.password.value],
                      max_bytes=2 * 1024 * 1024, keep=2)
    recorder = Recorder(journal)
    plan = itertools.cycle(FAULT_PLAN)
    warm = warm_up_cycles(args.cycles, args.fault_every, args.sample_every)
    samples: list[dict[str, Any]] = []
    traces: dict[int, Any] = {}
    leaked: list[bytes] = []
    leaked_clients: list[Any] = []
    failed_polls = 0
    fault: tuple[str, str] | None = None
    fault_phase = args.fault_every // 2
    started = window_start = time.monotonic()
    window_polls = 0
    try:
        for cycle in range(1, args.cycles + 1):
            phase = cycle % args.fault_every
            if phase == fault_phase:
                fault = next(plan)
                if fault[0] == "galera":  # a round of the plan holds both Galera faults: the next round, the next node
                    node = (cycle // (args.fault_every * len(FAULT_PLAN))) % len(cfg.galera.nodes)
                    galera.set_node(cfg.galera.nodes[node], fault[1])
                else:
                    child.command(f"set {fault[0]} {fault[1]}")
            elif fault is not None and phase == (fault_phase + args.fault_cycles) % args.fault_every:
                galera.clear()
                child.command("clear")
                fault = None
            observations = await asyncio.gather(*(r.run_once() for r in runners))
            for obs in observations:
                failed_polls += obs.error is not None
                recorder.observe(obs)
                gcpolicy.after_poll()  # as the app does after every observation
            if args.leak_kib:
                leaked.append(b"x" * (args.leak_kib * 1024))  # a deliberate leak: proves the judging can fail
            if args.leak_client and cycle % args.sample_every == 0:
                import httpx

                leaked_clients.append(httpx.Client())  # a client made and kept: its pool is the leak
            window_polls += 1
            if cycle == 1 or cycle % args.sample_every == 0:
                await drain(journal)
                now = time.monotonic()
                sample: dict[str, Any] = {"cycle": cycle, "elapsed_s": round(now - started, 1),
                                          "ms_per_cycle": round((now - window_start) * 1000 / window_polls),
                                          "rss_before_kib": rss_kib()}
                sample["garbage_found"] = gcpolicy.full_collection()
                sample["http_pools"] = expire_idle_connections()
                targets = fd_targets()
                fds = open_fds(targets)
                sample.update(rss_kib=rss_kib(), heap_kib=heap_in_use_kib(), py_blocks=sys.getallocatedblocks(),
                              pymalloc_kib=pymalloc_kib(),
                              fds=sum(fds.values()),
                              fd_kinds=fds, socket_peers=socket_peers(targets), threads=threading.active_count(),
                              failed_polls=failed_polls)
                samples.append(sample)
                if args.trace and cycle == warm:
                    import tracemalloc

                    tracemalloc.start(args.trace_frames)
                if args.trace and cycle > warm:
                    import tracemalloc

                    traces[cycle] = tracemalloc.take_snapshot()
                if args.verbose:
                    print(json.dumps(sample), file=sys.stderr, flush=True)
                window_start, window_polls = time.monotonic(), 0
    finally:
        galera.clear()
        for leaked_client in leaked_clients:
            leaked_client.close()
        for c in collectors:
            await c.aclose()
        client.close()
        recorder.close()
        child.stop()
        shutil.rmtree(tmp, ignore_errors=True)
        gcpolicy.release()
    if len(traces) >= 2:
        print_trace_diff(traces)
    verdict = judge(samples, warm, args.cycles, judge_rss=not args.short)
    seconds = time.monotonic() - started
    return {
        "cycles": args.cycles, "warm_up_cycles": warm, "samples": samples, "failed_polls": failed_polls,
        "polls": args.cycles * len(runners), "faults": args.cycles // args.fault_every, **verdict,
        "sim": {"instances": args.instances, "hosts": args.hosts, "queues": args.queues, "churn": args.churn,
                "speed": args.speed},
        "seconds": round(seconds, 1), "ms_per_cycle": round(seconds * 1000 / args.cycles, 1),
        "leak_kib": args.leak_kib,
    }


def print_trace_diff(traces: dict[int, Any]) -> None:
    """tracemalloc, first traced sample after the warm-up -> the end, top growth by traceback (stderr)."""
    first, last = min(traces), max(traces)
    print(f"=== tracemalloc: cycle {first} -> {last}, top growth by traceback", file=sys.stderr)
    for stat in traces[last].compare_to(traces[first], "traceback")[:10]:
        print(stat, file=sys.stderr)
        for line in stat.traceback.format()[-12:]:
            print("   ", line, file=sys.stderr)


def pymalloc(sample: dict[str, Any]) -> str:
    return f"{sample['pymalloc_kib'] / 1024:.0f}" if "pymalloc_kib" in sample else "n/a"  # older results


def heap(result: dict[str, Any]) -> str:
    """The heap in use along the trend (older results have none)."""
    return f"**heap in use {result['heap_trend_growth']:+.1%}**, " if "heap_trend_growth" in result else ""


def pools(result: dict[str, Any]) -> str:
    if "http_pools_added" not in result:  # older results
        return ""
    return f", HTTP connection pools {result['samples'][-1]['http_pools']} ({result['http_pools_added']:+d})"


def markdown(result: dict[str, Any]) -> str:
    sim = result["sim"]
    lines = [
        "# Soak: RSS and open file descriptors over many poll cycles", "",
        f"`bench/soak.py`: {result['cycles']:,} poll cycles of the four collectors (services, instances, rabbitmq, "
        f"galera, concurrently; every observation through the recorder and the app's GC policy) against the "
        f"simulator in a child process ({sim['instances']} instances, {sim['hosts']} hosts, {sim['queues']} "
        f"queues, churn {sim['churn']:g}/min at {sim['speed']:g}x), one fault every so often held for a few "
        f"cycles ({result['faults']:,} faults: HTTP 500/401, refused, hang, malformed, truncated, cut, wrong "
        f"content type, Galera node refused/login refused). {result['failed_polls']:,} of {result['polls']:,} "
        f"source polls failed on purpose. Took {result['seconds']:,.0f} s ({result['ms_per_cycle']:g} ms a cycle).",
        "",
        "Every sample is taken the same way, the same number of cycles after a fault was cleared: journal drained, "
        "RSS read (*before*), then the GC policy's periodic full collection (what the app does every 15 min), "
        "then RSS (*after*), the heap in use (malloc's chunks in use plus pymalloc's allocated blocks: live "
        "memory, without what the allocators keep free), Python's allocated blocks and open fds. Judged along the "
        "trend after the warm-up: RSS and the heap in use (the short run in the test suite: the heap only, "
        "since RSS settles over thousands of cycles), open fds and HTTP connection pools.", "",
        "| point | cycle | wall (s) | ms/cycle | RSS before (MiB) | RSS after (MiB) | pymalloc (MiB) | Python blocks "
        "| open fds |",
        "| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |",
    ]
    names = {cycle: name for name, cycle in result["marks"].items()}
    for s in result["samples"]:
        lines.append(f"| {names.get(s['cycle'], '')} | {s['cycle']:,} | {s['elapsed_s']:,.0f} | {s['ms_per_cycle']} | "
                     f"{s['rss_before_kib'] / 1024:.1f} | {s['rss_kib'] / 1024:.1f} | {pymalloc(s)} | "
                     f"{s['py_blocks']:,} | "
                     f"{s['fds']} |")
    lines += [
        "", f"From the end of the warm-up ({result['warm_up_cycles']:,} cycles) to the end, along the trend of "
        f"the {sum(1 for x in result['samples'] if x['cycle'] >= result['warm_up_cycles'])} samples: **RSS "
        f"{result['rss_trend_growth']:+.1%}**, {heap(result)}**open fds {result['fd_trend_growth']:+.1%}** "
        f"(limit: under 5 %: "
        f"{'met' if result['ok'] else 'NOT met'}). End point against end point: RSS {result['rss_growth']:+.1%}, "
        f"open fds {result['fd_growth']:+.1%}, RSS before the collection "
        f"{result['rss_before_collection_growth']:+.1%}, "
        f"Python blocks {result['py_blocks_growth']:+.1%}{pools(result)}. After the warm-up: lowest RSS "
        f"(after collection) "
        f"{result['rss_min_after_warm_up_kib'] / 1024:.1f} MiB, highest RSS before collection "
        f"{result['rss_max_after_warm_up_kib'] / 1024:.1f} MiB.", ""]
    return "\n".join(lines)


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--cycles", type=int, default=10_000)
    p.add_argument("--short", action="store_true", help="600 cycles, a smaller cloud, denser faults (CI)")
    p.add_argument("--fault-every", type=int, default=50)
    p.add_argument("--fault-cycles", type=int, default=4, help="cycles a fault is held")
    p.add_argument("--sample-every", type=int, default=500, help="a multiple of --fault-every")
    p.add_argument("--instances", type=int, default=300)
    p.add_argument("--hosts", type=int, default=10)
    p.add_argument("--queues", type=int, default=100)
    p.add_argument("--churn", type=float, default=30.0)
    p.add_argument("--speed", type=float, default=10.0)
    p.add_argument("--only", help="comma-separated sources (services,instances,rabbitmq,galera): to bisect")
    p.add_argument("--trace", action="store_true", help="tracemalloc after the warm-up: top growth on stderr")
    p.add_argument("--trace-frames", type=int, default=8)
    p.add_argument("--leak-kib", type=int, default=0, help=argparse.SUPPRESS)  # the test that the judge fails
    p.add_argument("--leak-client", action="store_true", help=argparse.SUPPRESS)  # an HTTP client kept per sample
    p.add_argument("--out", help="write the Markdown result there")
    p.add_argument("--json", action="store_true", help="print the result as JSON")
    p.add_argument("--verbose", action="store_true", help="each sample on stderr as it is taken")
    p.add_argument("--from-json", metavar="FILE", help="judge and render a saved --json result again (no run)")
    p.add_argument("--serve", action="store_true", help=argparse.SUPPRESS)
    args = p.parse_args()
    if args.serve:
        serve(args)
        return 0
    if args.from_json:
        result = json.loads(Path(args.from_json).read_text().strip().splitlines()[-1])
        result.update(judge(result["samples"], result["warm_up_cycles"], result["cycles"]))
        text = markdown(result)
        if args.out:
            Path(args.out).write_text(text)
        print(json.dumps(result) if args.json else text)
        return 0 if result["ok"] else 1
    if args.short:
        args.cycles, args.fault_every, args.sample_every = 600, 20, 60
        args.instances, args.hosts, args.queues = 60, 4, 30
    if args.sample_every % args.fault_every or args.cycles % args.sample_every:
        p.error("--sample-every must be a multiple of --fault-every, and --cycles a multiple of --sample-every")
    import logging

    logging.basicConfig(handlers=[logging.NullHandler()], force=True)  # failed polls are the point: no noise
    gc.collect()
    result = asyncio.run(soak(args))
    text = markdown(result)
    if args.out:
        Path(args.out).write_text(text)
    print(json.dumps(result) if args.json else text)
    return 0 if result["ok"] else 1


if __name__ == "__main__":
    raise SystemExit(main())
