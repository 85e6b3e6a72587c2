"""`python -m tui.sim`: run the simulated cloud in this process until stdin closes (or SIGTERM/SIGINT).

Prints one JSON line when ready: clouds_file, cloud, rabbitmq_url, galera_nodes, urls, control_url.
"""

from __future__ import annotations

import argparse
import json
import signal
import sys
import threading

from tui.sim import story
from tui.sim.control import serve
from tui.sim.demo import start_demo


def parser() -> argparse.ArgumentParser:
    ap = argparse.ArgumentParser(prog="python -m tui.sim", description="stacktop's simulated cloud")
    ap.add_argument("--instances", type=int, default=200)
    ap.add_argument("--hosts", type=int, default=8)
    ap.add_argument("--queues", type=int, default=300)
    ap.add_argument("--churn", type=float, default=6.0, help="boots (and as many deletes) per minute")
    ap.add_argument("--speed", type=float, default=1.0)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--manual", action=argparse.BooleanOptionalAction, default=False,
                    help="sim time moves only on /advance")
    ap.add_argument("--start", type=float, default=None, help="sim epoch at start (default: now)")
    ap.add_argument("--service-down-time", type=float, default=60.0)
    ap.add_argument("--agent-down-time", type=float, default=75.0)
    ap.add_argument("--period", type=float, default=story.DEFAULT_PERIOD)
    ap.add_argument("--storyline", action=argparse.BooleanOptionalAction, default=True,
                    help="loop the demo storyline (--no-storyline: nothing happens but churn)")
    ap.add_argument("--queue-growth", action=argparse.BooleanOptionalAction, default=True,
                    help="notification queues grow 0.4 msg/s (--no-queue-growth: constant, for the idle benchmark)")
    ap.add_argument("--hostile", action=argparse.BooleanOptionalAction, default=False,
                    help="hosts, servers, volumes, queues and faults with hostile names (markup, terminal controls)")
    ap.add_argument("--warm", action=argparse.BooleanOptionalAction, default=False,
                    help="pre-render every server's JSON before serving")
    return ap


def main(argv: list[str] | None = None) -> int:
    args = parser().parse_args(argv)
    demo = start_demo(instances=args.instances, hosts=args.hosts, queues=args.queues, churn=args.churn,
                      speed=args.speed, seed=args.seed, manual=args.manual, start=args.start,
                      service_down_time=args.service_down_time, agent_down_time=args.agent_down_time,
                      period=args.period, storyline=args.storyline,
                      queue_growth=args.queue_growth, hostile=args.hostile)
    if args.warm:
        demo.warm()
    done = threading.Event()
    for sig in (signal.SIGTERM, signal.SIGINT):
        signal.signal(sig, lambda *_: done.set())
    threading.Thread(target=lambda: (sys.stdin.read(), done.set()), daemon=True).start()
    sys.stdout.write(json.dumps(serve(demo)) + "\n")
    sys.stdout.flush()
    try:
        done.wait()
    finally:
        demo.stop()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
