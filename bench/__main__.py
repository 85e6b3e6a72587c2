"""`python -m bench [--quick] [--only NAMES] [--out FILE]`: stacktop's benchmarks against the simulator.

Full scale: 10,000 instances / 500 hosts / 2,000 queues / 3 Galera nodes (the simulator in its own process,
so its CPU is not counted as stacktop's); --quick: 300 / 10 / 100, a few rounds (CI runs it so this code
cannot rot; its numbers mean little). Prints a table and writes JSON (machine description included) to
bench/results/bench.json (quick: bench/results/bench-quick.json) and, for full runs, bench/results/bench.md.

Sections (--only takes a comma list): triage, snapshot (`stacktop snapshot` against the same five commands),
steady, firstpaint, keypress, keys, idle, rss, broker, journal, audit (keys: `stacktop --demo` itself at the
scale, key to paint over every server shown); and, only when named, wholeapp (the running app's CPU per 10 s
cycle on a changing, a quiet and a findings-flooded cloud, RSS after the first placement audit, journal bytes
including the session start: bench/wholeapp.py; STACKTOP_BENCH_BASE_TREE=<checkout> adds the same runs of
another revision's app, before/after in one run),
scaling (1k / 10k / 30k / 100k instances: first triage, RSS, steady poll, journal per hour; --quick: 300 and
1,000), which writes bench/results/scaling.md, and rabbitmq_scale (one RabbitMQ poll at 20,000 queues on a real
broker against a plain `/api/queues` GET: bench/bench_rabbitmq_scale.py; --quick: 300 queues), and real10k
(the test bed's `scale` profile, 10,000 instances on real Nova and Placement, beside the simulator at 10,000:
bench/real10k.py; needs `scripts/testcloud up scale`).
Baselines run side by side with stacktop in the same run (alternating rounds); figures are medians.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from dataclasses import asdict
from pathlib import Path

from bench.common import FULL, QUICK, RESULTS, Result, log, machine, median, spawn_sim

SECTIONS = ("triage", "snapshot", "firstpaint", "keypress", "keys", "rss", "steady", "idle", "broker", "journal",
            "audit")
# long (the 100k-instance simulator, 20k queues, app runs of minutes each) or on a built test-bed profile: only
# with --only
ON_REQUEST = ("scaling", "rabbitmq_scale", "wholeapp", "real10k")


def fmt(value: float | None, unit: str) -> str:
    if value is None:
        return "n/a"
    if unit == "s":
        return f"{value * 1000:,.0f} ms" if value < 1 else f"{value:,.2f} s"
    if unit == "B":
        return f"{value / 1024:,.0f} KiB" if value < 1024 * 1024 else f"{value / 1024 / 1024:,.1f} MiB"
    if unit in ("req",):
        return f"{value:,.0f}"
    if unit == "% of a core":
        return f"{value:.2f} %"
    return f"{value:,.1f} {unit}"


def table(results: list[Result]) -> str:
    lines = ["| measure | stacktop | baseline | ratio | goal | met |", "| --- | ---: | --- | ---: | --- | :---: |"]
    for r in results:
        base = f"{fmt(r.baseline, r.unit)} ({r.baseline_label})" if r.baseline is not None else ""
        ratio = f"{r.ratio:,.1f}x" if r.ratio is not None else ""
        met = {True: "yes", False: "**no**", None: ""}[r.met]
        lines.append(f"| {r.measure} | {fmt(r.value, r.unit)} | {base} | {ratio} | {r.goal} | {met} |")
    return "\n".join(lines)


def notes(results: list[Result]) -> str:
    return "\n".join(f"- **{r.measure}**: {r.note}" for r in results if r.note)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m bench", description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true", help="small scale, few rounds (CI)")
    ap.add_argument("--only", default="", help="comma list of sections: " + ",".join(SECTIONS + ON_REQUEST))
    ap.add_argument("--out", default=None, help="JSON path (default bench/results/bench[-quick].json)")
    ap.add_argument("--ab-root", type=Path, default=None,
                    help="keys: also walk this checkout (another commit's worktree) in the same run, for an A/B")
    args = ap.parse_args(argv)
    quick = args.quick
    scale = QUICK if quick else FULL
    only = [s.strip() for s in args.only.split(",") if s.strip()] or list(SECTIONS)
    unknown = set(only) - set(SECTIONS) - set(ON_REQUEST)
    if unknown:
        ap.error(f"unknown sections: {', '.join(sorted(unknown))}")
    started = time.time()
    desc = machine()
    results: list[Result] = []
    failures: list[str] = []

    def section(name: str, fn: object, *a: object, **kw: object) -> None:
        if name not in only:
            return
        log(f"{name} ...")
        try:
            got = fn(*a, **kw)  # type: ignore[operator]
            results.extend(got)
            for r in got:
                log(f"  {r.measure}: {fmt(r.value, r.unit)}"
                    + (f" vs {fmt(r.baseline, r.unit)} ({r.ratio:,.1f}x)" if r.ratio is not None else "")
                    + (f" goal {r.goal}: {'met' if r.met else 'NOT met'}" if r.goal else ""))
        except Exception as exc:  # one broken section must not hide the others
            failures.append(f"{name}: {type(exc).__name__}: {exc}")
            results.append(Result(name, name, None, "s", note=f"FAILED: {type(exc).__name__}: {exc}"))
            log(f"{name} FAILED: {exc!r}")

    from bench import broker, journal, keys, snapshot_vs_commands, steady, triage, ui
    from bench.common import ensure_bytecode

    ensure_bytecode()

    def moment(when: str) -> None:
        """The host's speed now (see ui.minimal_app_first_paint): read every figure against it."""
        got = ui.minimal_app_first_paint(1 if quick else 5)
        ms = round(median(got) * 1000) if got else None
        desc.setdefault("moment", {})[f"minimal_app_first_paint_ms_at_{when}"] = ms
        log(f"host's moment at {when}: a minimal Textual app paints in {ms} ms")

    moment("start")

    if {"triage", "snapshot", "firstpaint", "keypress", "rss"} & set(only):
        log(f"simulator: {scale.instances:,} instances / {scale.hosts} hosts / {scale.queues:,} queues, churning")
        demo = spawn_sim(scale, churn=60.0)
        try:
            section("triage", triage.bench_triage, demo, 1 if quick else 5, create_venv=not quick)
            section("snapshot", snapshot_vs_commands.bench_snapshot, demo, 1 if quick else 5, create_venv=not quick)
            section("firstpaint", ui.bench_first_paint, demo, 2 if quick else 9)
            section("keypress", ui.bench_keypress, demo, 8 if quick else 80)
            section("rss", ui.bench_rss, demo, 10 if quick else 1000, 60 if quick else 1800)
        finally:
            demo.stop()
    if "steady" in only:
        # ~1 % of the servers change per 10 s cycle at this churn (measured and reported, not assumed)
        demo = spawn_sim(scale, churn=scale.instances * 0.02, manual=True, storyline=False)
        try:
            section("steady", steady.bench_steady, demo, 3 if quick else 12, 1 if quick else 2, scale.instances)
        finally:
            demo.stop()
    if "idle" in only:
        # nothing changes: no churn, no storyline, notification queues at a constant count
        demo = spawn_sim(scale, churn=0.0, storyline=False, queue_growth=False)
        try:
            section("idle", ui.bench_idle, demo, 4.0 if quick else 60.0)
        finally:
            demo.stop()
    section("keys", keys.bench_keys, scale, 1 if quick else 5, args.ab_root)
    section("broker", broker.bench_broker, scale.queues, 1 if quick else 7)
    if "journal" in only:
        # the demo's default churn and storyline, sim time advanced one poll interval per cycle
        demo = spawn_sim(scale, manual=True)
        try:
            section("journal", journal.bench_journal, demo, 24 if quick else 240, 6 if quick else 30)
        finally:
            demo.stop()
    if "audit" in only:
        from bench import audit

        demo = spawn_sim(scale, manual=True)
        try:
            section("audit", audit.bench_audit, demo, 1 if quick else 3)
        finally:
            demo.stop()
    if "wholeapp" in only:
        from bench import wholeapp

        # ~1 % of the servers change per 10 s cycle (the steady section's churn)
        section("wholeapp", wholeapp.bench_wholeapp, scale, 20.0 if quick else 120.0, scale.instances * 0.02)
    if "scaling" in only:
        from bench import scaling

        scales = scaling.QUICK_SCALES if quick else scaling.SCALES
        section("scaling", scaling.bench_scaling, scales, 3 if quick else 6, 12 if quick else 60, 3 if quick else 12)
    if "rabbitmq_scale" in only:
        from bench import bench_rabbitmq_scale

        section("rabbitmq_scale", bench_rabbitmq_scale.bench_rabbitmq_scale, 300 if quick else 20_000,
                1 if quick else 5)
    if "real10k" in only:
        from bench import real10k

        section("real10k", real10k.bench_real10k, 1 if quick else 3)
    moment("end")

    doc = {"quick": quick, "scale": asdict(scale), "machine": desc, "sections": only,
           "duration_s": round(time.time() - started, 1), "load_average_at_end": [round(x, 2) for x in os.getloadavg()],
           "command": " ".join(["python -m bench", *(["--quick"] if quick else []),
                                *([f"--only {args.only}"] if args.only else [])]),
           "results": [{**asdict(r), "ratio": r.ratio} for r in results], "failures": failures}
    default_name = ("bench-quick.json" if quick else "bench.json") if only != ["real10k"] else (
        "real10k-quick.json" if quick else "real10k.json")  # its own file: the README's "real services" column
    out = Path(args.out) if args.out else RESULTS / default_name
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(doc, indent=1) + "\n")
    text = (f"stacktop benchmarks: {scale.instances:,} instances / {scale.hosts} hosts / {scale.queues:,} queues / "
            f"{scale.galera_nodes} Galera nodes{' (--quick)' if quick else ''}; {desc['cpus']} cores "
            f"({desc['cpu_model']}), load average {desc['load_average_at_start']} at start, "
            f"{doc['duration_s']:.0f} s; the host's moment (a minimal Textual app's first paint) "
            f"{desc['moment'].get('minimal_app_first_paint_ms_at_start')} ms at start, "
            f"{desc['moment'].get('minimal_app_first_paint_ms_at_end')} ms at end\n\n"
            + table(results) + "\n\n" + notes(results) + "\n")
    print(text)
    if not quick and not args.out and not args.only:
        (RESULTS / "bench.md").write_text(text)
    if "scaling" in only and not quick:
        from bench import scaling

        (RESULTS / "scaling.md").write_text(
            f"# Scaling\n\n`{doc['command']}` on {desc['cpus']} cores ({desc['cpu_model']}), load average "
            f"{desc['load_average_at_start']} at start, {doc['duration_s']:.0f} s.\n\n"
            + scaling.growth_table(doc["results"]) + "\n\n" + table(results) + "\n")
    if "real10k" in only and not quick and not args.out:
        (RESULTS / "real10k.md").write_text(
            f"# Real services at 10,000 instances\n\n`{doc['command']}` on {desc['cpus']} cores ({desc['cpu_model']}), "
            f"load average {desc['load_average_at_start']} at start, {doc['duration_s']:.0f} s.\n\n"
            + table([r for r in results if r.section == "real10k"]) + "\n\n"
            + notes([r for r in results if r.section == "real10k"]) + "\n")
    log(f"wrote {out}")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
