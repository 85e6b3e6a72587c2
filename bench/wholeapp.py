"""Whole-app figures: what the running app costs, not only its collectors.

stacktop's own app (bench/app_child.py: StacktopApp with the recorder on, as `stacktop` runs it) in a pty at the
default intervals against a simulator at the bench's scale in its own process, so render, journal, the GC
policy and the placement audit are all counted, from /proc of the app's process:
- steady cost per 10 s cycle on a changing cloud (~1 % of the servers change per cycle) and on a quiet one,
  measured over a window that opens once the first placement audit has been judged;
- RSS right after the first placement audit and at the end of the window (the run's duration is stated);
- journal bytes of the session's first 60 s (the session start: full snapshots of every source) and per hour
  from the window;
- the same changing cloud with a flood of FLOOD stale allocations (the simulator's `stale_allocations` fault):
  CPU per cycle against the cloud without them (goal: within 1.5x).
With STACKTOP_BENCH_BASE_TREE set to another checkout (`git worktree add /tmp/base <rev>`), the three runs are
made with that checkout's app too, after this one's, against the same kind of simulator: before/after in one
run.
"""

from __future__ import annotations

import os
import time
from pathlib import Path
from typing import Any

from bench.appruns import AppRun
from bench.common import ROOT, Result, Scale, log, proc_cpu_s, proc_rss_mb, spawn_sim

FLOOD = 10_000
CYCLE_S = 10.0
SESSION_START_S = 60.0


def _dir_bytes(path: Path) -> int:
    return sum(f.stat().st_size for f in path.rglob("*") if f.is_file()) if path.exists() else 0


def app_run(scale: Scale, *, churn: float, flood: int, window: float, root: Path = ROOT,
            audit_timeout: float = 600.0) -> dict[str, Any]:
    """One app against a fresh simulator: CPU, RSS and journal figures (see the module's doc)."""
    demo = spawn_sim(scale, churn=churn, storyline=False, queue_growth=False)
    try:
        if flood:
            demo.inject("stale_allocations", count=str(flood))
        run = AppRun(demo, root=root)
        journal = run.dir / "recordings"
        try:
            if run.wait_mark("all_filled", timeout=300) is None:
                raise RuntimeError("the app never filled every pane: " + "; ".join(run.errors()))
            time.sleep(max(0.0, run.spawned_at + SESSION_START_S - time.time()))
            start_bytes = _dir_bytes(journal)
            deadline = time.time() + audit_timeout
            while run.obs_count("placement") < 1 and time.time() < deadline and run.pty.alive():
                time.sleep(0.5)
            if run.obs_count("placement") < 1:
                raise RuntimeError("no placement audit within the timeout: " + "; ".join(run.errors()))
            time.sleep(2 * CYCLE_S)  # the audit's findings through the panes, the journal and the GC
            pid = run.pty.pid
            rss_audit = proc_rss_mb(pid)
            b0, c0, t0 = _dir_bytes(journal), proc_cpu_s(pid) or 0.0, time.perf_counter()
            time.sleep(window)
            b1, c1, t1 = _dir_bytes(journal), proc_cpu_s(pid) or 0.0, time.perf_counter()
            rss_end = proc_rss_mb(pid)
            errors = run.errors()
            elapsed = time.time() - run.spawned_at
        finally:
            run.stop()
    finally:
        demo.stop()
    per_s = (c1 - c0) / (t1 - t0)
    return {"cycle_s": per_s * CYCLE_S, "core_pct": per_s * 100, "rss_audit_mb": rss_audit, "rss_end_mb": rss_end,
            "journal_start_b": start_bytes, "journal_per_h_b": (b1 - b0) / (t1 - t0) * 3600,
            "run_s": elapsed, "window_s": t1 - t0, "errors": errors}


def bench_wholeapp(scale: Scale, window: float, churn: float) -> list[Result]:
    base = os.environ.get("STACKTOP_BENCH_BASE_TREE")
    trees = [("", ROOT)] + ([(" (base)", Path(base))] if base else [])
    runs: dict[tuple[str, str], dict[str, Any]] = {}
    for label, root in trees:
        for kind, kw in (("changing", {"churn": churn, "flood": 0}), ("flood", {"churn": churn, "flood": FLOOD}),
                         ("quiet", {"churn": 0.0, "flood": 0})):
            log(f"  whole app{label}: {kind} cloud ...")
            runs[(label, kind)] = got = app_run(scale, window=window, root=root, **kw)
            log(f"    {got['cycle_s'] * 1000:.0f} ms per cycle, RSS {got['rss_audit_mb']:.0f} -> "
                f"{got['rss_end_mb']:.0f} MB, journal {got['journal_start_b']:,} B in the first 60 s")
    out: list[Result] = []
    for label, _root in trees:
        changing, flood, quiet = runs[(label, "changing")], runs[(label, "flood")], runs[(label, "quiet")]
        where = f"{window:.0f} s window after the first audit, run {changing['run_s']:.0f} s"
        r = Result("wholeapp", f"whole app per 10 s cycle, changing cloud, recorder on{label}", changing["cycle_s"],
                   "s", goal="< 0.1 s (1 % of a core)", note=f"{changing['core_pct']:.2f} % of a core; {where}"
                   + (f"; errors: {'; '.join(changing['errors'])[:200]}" if changing["errors"] else ""))
        r.met = changing["cycle_s"] < 0.1
        out.append(r)
        r = Result("wholeapp", f"whole app per 10 s cycle, quiet cloud{label}", quiet["cycle_s"], "s",
                   goal="< 0.1 s", note=f"{quiet['core_pct']:.2f} % of a core")
        r.met = quiet["cycle_s"] < 0.1
        out.append(r)
        r = Result("wholeapp", f"whole app per 10 s cycle with {FLOOD:,} findings of one kind{label}",
                   flood["cycle_s"], "s", baseline=changing["cycle_s"], baseline_label="the same cloud without them",
                   goal="within 1.5x", note=f"{flood['core_pct']:.2f} % of a core; RSS {flood['rss_audit_mb']:.0f} "
                   f"MB after the audit, {flood['rss_end_mb']:.0f} MB at the end; journal "
                   f"{flood['journal_per_h_b'] / 1e6:.1f} MB/h")
        r.met = flood["cycle_s"] <= 1.5 * changing["cycle_s"]
        out.append(r)
        r = Result("wholeapp", f"RSS after the first placement audit{label}", changing["rss_audit_mb"], "MB",
                   goal="< 150 MB", note=f"{changing['rss_end_mb']:.0f} MB at the end of the run "
                   f"({changing['run_s']:.0f} s)")
        r.met = changing["rss_audit_mb"] is not None and max(changing["rss_audit_mb"], changing["rss_end_mb"]) < 150
        out.append(r)
        out.append(Result("wholeapp", f"journal in the session's first 60 s{label}", changing["journal_start_b"], "B",
                          note=f"then {changing['journal_per_h_b'] / 1e6:.1f} MB/h on the changing cloud, "
                               f"{quiet['journal_per_h_b'] / 1e6:.1f} MB/h on the quiet one"))
    return out
