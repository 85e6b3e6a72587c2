"""Soak: many poll cycles of every collector against the simulator, with churn and faults; RSS and open file
descriptors at the start (after warm-up), the middle and the end.

    .venv/bin/python bench/soak.py                 # 10,000 cycles (~15-25 min), writes bench/results/soak.md
    .venv/bin/python bench/soak.py --short         # 360 cycles, half of them warm-up (CI: tests/reliability/
                                                   # test_soak_short.py)

The simulator runs in a child process (its memory is not ours); stacktop's side is measured here: the four
collectors (services, instances, rabbitmq, galera) each polled once per cycle through their runners, every
observation fed to the recorder (change tracker + journal in a temporary folder). Every `--fault-every`
cycles one fault (round robin over sources and kinds, hangs included) is held for a few cycles, then cleared.
Exit status 1 when RSS or fds grew by 5 % or more between the end of warm-up and the end.
"""

from __future__ import annotations

import argparse
import asyncio
import gc
import itertools
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from dataclasses import replace
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

FAULT_PLAN = [("nova", "500"), ("rabbitmq", "refused"), ("neutron", "malformed"), ("keystone", "hang"),
              ("cinder", "cut"), ("placement", "401"), ("rabbitmq", "content_type"), ("nova", "truncated"),
              ("galera", "refused"), ("nova", "hang"), ("rabbitmq", "hang"), ("galera", "auth")]


def rss_kib() -> int:
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1])
    return 0


def open_fds() -> int:
    return len(os.listdir("/proc/self/fd"))


# ------------------------------------------------------------------------------------ the simulator child
def serve(args: argparse.Namespace) -> None:
    """Child: a demo with churn, its control API, and fault commands read from stdin ("set nova 500",
    "clear"). Exits when stdin closes."""
    from tui.sim import start_demo
    from tui.sim.control import serve as serve_control
    from tui.sim.faults import Faults

    demo = start_demo(instances=args.instances, hosts=args.hosts, queues=args.queues, churn=args.churn,
                      speed=args.speed, seed=1)
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


# ------------------------------------------------------------------------------------------ the soak
async def soak(args: argparse.Namespace) -> dict[str, Any]:
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
    runners = [CollectorRunner(c) for c in collectors]
    tmp = tempfile.mkdtemp(prefix="stacktop-soak-")
    recorder = Recorder(Journal(tmp, secrets=[cfg.rabbitmq.password.value, cfg.galera.password.value],
                                max_bytes=2 * 1024 * 1024, keep=2))
    plan = itertools.cycle(FAULT_PLAN)
    warm = max(20, int(args.cycles * args.warm))
    middle = (warm + args.cycles) // 2
    marks: dict[str, dict[str, float]] = {}
    failed_polls = 0
    fault: tuple[str, str] | None = None
    started = time.monotonic()
    try:
        for cycle in range(1, args.cycles + 1):
            if cycle % args.fault_every == 0:
                fault = next(plan)
                if fault[0] == "galera":
                    galera.set_node(cfg.galera.nodes[cycle % len(cfg.galera.nodes)], fault[1])
                else:
                    child.command(f"set {fault[0]} {fault[1]}")
            elif fault is not None and cycle % args.fault_every == args.fault_cycles:
                galera.clear()
                child.command("clear")
                fault = None
            observations = await asyncio.gather(*(r.run_once() for r in runners))
            failed_polls += sum(1 for o in observations if o.error)
            for obs in observations:
                recorder.observe(obs)
            if cycle in (warm, middle, args.cycles):
                gc.collect()
                name = {warm: "start (after warm-up)", middle: "middle", args.cycles: "end"}[cycle]
                marks[name] = {"cycle": cycle, "rss_kib": rss_kib(), "fds": open_fds(),
                               "elapsed_s": round(time.monotonic() - started, 1)}
                if args.verbose:
                    print(name, marks[name], flush=True)
    finally:
        galera.clear()
        for c in collectors:
            await c.aclose()
        client.close()
        recorder.close()
        child.stop()
        shutil.rmtree(tmp, ignore_errors=True)
    start, end = marks["start (after warm-up)"], marks["end"]
    return {
        "cycles": args.cycles, "warm_up_cycles": warm, "marks": marks, "failed_polls": failed_polls,
        "rss_growth": (end["rss_kib"] - start["rss_kib"]) / start["rss_kib"],
        "fd_growth": (end["fds"] - start["fds"]) / start["fds"],
        "sim": {"instances": args.instances, "hosts": args.hosts, "queues": args.queues, "churn": args.churn,
                "speed": args.speed},
        "seconds": round(time.monotonic() - started, 1),
    }


def markdown(result: dict[str, Any]) -> str:
    lines = [
        "# Soak: RSS and open file descriptors over many poll cycles", "",
        f"`bench/soak.py`: {result['cycles']:,} poll cycles of the four collectors (services, instances, rabbitmq, "
        f"galera; every observation through the recorder) against the simulator in a child process "
        f"({result['sim']['instances']} instances, {result['sim']['hosts']} hosts, {result['sim']['queues']} "
        f"queues, churn {result['sim']['churn']:g}/min at {result['sim']['speed']:g}x), a fault held for a few "
        f"cycles every so often (HTTP 500/401, refused, hang, malformed, cut, wrong content type, Galera node "
        f"refused/login refused). {result['failed_polls']:,} source polls failed on purpose. Took "
        f"{result['seconds']:,} s.", "",
        "| point | cycle | RSS (MiB) | open fds |", "| --- | ---: | ---: | ---: |",
    ]
    for name, m in result["marks"].items():
        lines.append(f"| {name} | {m['cycle']:,} | {m['rss_kib'] / 1024:.1f} | {m['fds']} |")
    lines += ["", f"Growth after warm-up ({result['warm_up_cycles']:,} cycles): RSS {result['rss_growth']:+.1%}, "
              f"open fds {result['fd_growth']:+.1%} (limit: under 5 %).", ""]
    return "\n".join(lines)


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--cycles", type=int, default=10_000)
    p.add_argument("--short", action="store_true", help="360 cycles (half warm-up), smaller cloud (CI)")
    p.add_argument("--warm", type=float, default=0.1, help="warm-up share of the cycles (not measured)")
    p.add_argument("--fault-every", type=int, default=50)
    p.add_argument("--fault-cycles", type=int, default=4, help="cycles a fault is held")
    p.add_argument("--instances", type=int, default=300)
    p.add_argument("--hosts", type=int, default=10)
    p.add_argument("--queues", type=int, default=100)
    p.add_argument("--churn", type=float, default=30.0)
    p.add_argument("--speed", type=float, default=10.0)
    p.add_argument("--out", help="write the Markdown result there")
    p.add_argument("--json", action="store_true", help="print the result as JSON")
    p.add_argument("--verbose", action="store_true")
    p.add_argument("--serve", action="store_true", help=argparse.SUPPRESS)
    args = p.parse_args()
    if args.serve:
        serve(args)
        return 0
    if args.short:
        args.cycles, args.warm, args.instances, args.hosts, args.queues, args.fault_every = 360, 0.5, 60, 4, 30, 30
    import logging

    logging.basicConfig(handlers=[logging.NullHandler()], force=True)  # failed polls are the point: no noise
    result = asyncio.run(soak(args))
    text = markdown(result)
    if args.out:
        Path(args.out).write_text(text)
    print(json.dumps(result) if args.json else text)
    return 0 if result["rss_growth"] < 0.05 and result["fd_growth"] < 0.05 else 1


if __name__ == "__main__":
    raise SystemExit(main())
