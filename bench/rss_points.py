"""Does the dashboard's memory level off? RSS at several points of a long fast-polling run, each after the GC
policy's full collection, and what grew between the first and the last point, by type.

    .venv/bin/python -m bench.rss_points 1000 2000 3000 4000    # ~8 min at 10,000 instances

The app (bench/app_child.py) polls the instances source every 0.05 s against the simulator at full scale (the
others at their defaults), as the RSS section of `python -m bench` does. At each point it gets SIGUSR1 (the GC
policy's full collection, with STACKTOP_BENCH_GARBAGE=1: the garbage found and the live objects by type); RSS
is read before and after. A diagnostic, not a goal: the RSS section is the goal.
"""

from __future__ import annotations

import json
import os
import signal
import sys
import time

from bench.appruns import AppRun
from bench.common import Scale, spawn_sim
from bench.ui import proc_rss_mb


def _collections(run: AppRun) -> list[dict]:
    return [m for m in run.marks() if m["event"] == "full_collection"]


def main(points: list[int]) -> None:
    os.environ["STACKTOP_BENCH_GARBAGE"] = "1"  # the child inherits it
    demo = spawn_sim(Scale(10_000, 500, 2_000), churn=60.0)
    run = AppRun(demo, interval=0.05, fast="instances")
    rows = []
    try:
        if run.wait_mark("all_filled", timeout=180) is None:
            raise SystemExit("the app never filled every pane: " + "; ".join(run.errors()))
        for point in points:
            while run.obs_count("instances") < point:
                time.sleep(0.3)
            before, seen = proc_rss_mb(run.pty.pid), len(_collections(run))
            os.kill(run.pty.pid, signal.SIGUSR1)
            while len(_collections(run)) <= seen:
                time.sleep(0.1)
            mark = _collections(run)[-1]
            rows.append({"polls": point, "rss_before_mb": before, "rss_after_mb": proc_rss_mb(run.pty.pid),
                         "found": mark["found"], "ms": mark["ms"], "blocks": mark["live"]["blocks"],
                         "garbage": mark["garbage"], "live": mark["live"]["by_type"]})
            r = rows[-1]
            print(f"{point} polls: RSS {r['rss_before_mb']:.1f} MB, after the full collection "
                  f"{r['rss_after_mb']:.1f} MB ({r['found']} unreachable objects, {r['ms']} ms); "
                  f"allocated blocks {r['blocks']}", flush=True)
    finally:
        run.stop()
        demo.stop()
    first, last = rows[0]["live"], rows[-1]["live"]
    grew = sorted(((last.get(k, 0) - first.get(k, 0), k) for k in set(first) | set(last)), reverse=True)[:15]
    print(f"live objects grown from {rows[0]['polls']} to {rows[-1]['polls']} polls: "
          + ", ".join(f"{k} {n:+}" for n, k in grew))
    print(json.dumps([{k: v for k, v in r.items() if k != "live"} for r in rows]), file=sys.stderr)


if __name__ == "__main__":
    try:
        wanted = sorted(int(a) for a in sys.argv[1:])
    except ValueError:
        raise SystemExit("bench.rss_points: points are whole numbers of polls, e.g. 1000 2000 3000 4000") from None
    main(wanted or [1000, 2000, 3000, 4000])
