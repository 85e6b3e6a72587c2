"""How stacktop's costs grow with the cloud: at each scale (1k / 10k / 30k / 100k instances, hosts and queues in
proportion), the first triage (launch to every pane filled, the real app in a pty with the recorder on), the
app's RSS once every server is listed, the steady poll's client CPU and bytes per cycle (services + instances,
sim time advanced one interval per cycle, 2 % of the servers changing a minute), and the journal's bytes per
hour (the recorder fed by every source, the demo's churn and storyline). Ratios are against the smallest scale
of the same run: growth per instance below 1x per 1x means the cost is not proportional to the cloud."""

from __future__ import annotations

from typing import Any

from bench.appruns import AppRun
from bench.common import Result, Scale, log, proc_rss_mb, spawn_sim

SCALES = (1_000, 10_000, 30_000, 100_000)
QUICK_SCALES = (300, 1_000)


def scale_of(instances: int) -> Scale:
    """Hosts and queues in proportion (the default demo's 10,000 / 500 / 2,000), queues capped at 2,000."""
    return Scale(instances, max(10, instances // 20), min(2_000, max(100, instances // 5)))


def _triage_and_rss(demo: Any) -> tuple[float | None, float | None, float | None, list[str]]:
    """(launch to every pane filled, launch to every server listed, RSS then) of one real app run."""
    run = AppRun(demo)
    try:
        done = run.wait_mark("all_filled", timeout=600)
        every = run.wait_mark("complete", timeout=600, source="instances")
        rss = proc_rss_mb(run.pty.pid) if every else None
        return ((None if done is None else done["t"] - run.spawned_at),
                (None if every is None else every["t"] - run.spawned_at), rss, run.errors())
    finally:
        run.stop()


def bench_scaling(scales: tuple[int, ...], steady_cycles: int, journal_cycles: int, journal_warm: int
                  ) -> list[Result]:
    from bench import journal, steady

    rows: dict[int, dict[str, float | None]] = {}
    notes: list[str] = []
    for n in scales:
        scale = scale_of(n)
        log(f"scaling: {n:,} instances / {scale.hosts} hosts / {scale.queues} queues")
        demo = spawn_sim(scale, churn=n * 0.02, manual=True)
        try:
            triage_s, listed_s, rss, errors = _triage_and_rss(demo)
            if errors:
                notes.append(f"{n:,}: " + " | ".join(errors)[:200])
            got = {r.measure: r for r in steady.bench_steady(demo, steady_cycles, 0, n)}
            cpu = next(r.value for m, r in got.items() if "client CPU" in m)
            size = next(r.value for m, r in got.items() if "bytes per cycle" in m)
            day = journal.bench_journal(demo, journal_cycles, journal_warm)[0].value
        finally:
            demo.stop()
        rows[n] = {"triage": triage_s, "listed": listed_s, "rss": rss, "cpu": cpu, "bytes": size,
                   "journal_h": None if day is None else day / 24}
        log(f"scaling {n:,}: triage {triage_s} s, every server {listed_s} s, RSS {rss} MB, steady CPU {cpu} s, "
            f"{size} B/cycle, journal {rows[n]['journal_h']} B/h")
    base = scales[0]
    measures = (("triage", "first triage: launch to every pane filled", "s"),
                ("listed", "every server listed (the full first read)", "s"),
                ("rss", "RSS with every server listed", "MB"),
                ("cpu", "steady poll: client CPU per cycle", "s"),
                ("bytes", "steady poll: bytes per cycle", "B"),
                ("journal_h", "journal per hour (gzipped as rotated)", "B"))
    out = []
    for n in scales:
        for key, label, unit in measures:
            value, ref = rows[n][key], rows[base][key]
            out.append(Result("scaling", f"{n:,} instances: {label}", value, unit,
                              None if n == base else ref, f"the same at {base:,} instances",
                              note=f"{n / base:.3g}x the instances of the baseline" if n != base else "the baseline"))
    if notes:
        out[0].note += ". Problems seen: " + "; ".join(notes)
    return out


def growth_table(results: list[dict[str, Any]]) -> str:
    """The markdown table of a run's scaling rows: one row per scale, one column per measure."""
    by_scale: dict[str, dict[str, Any]] = {}
    for r in results:
        if r["section"] != "scaling":
            continue
        scale, _, label = r["measure"].partition(" instances: ")
        by_scale.setdefault(scale, {})[label] = r
    labels = [label for label in next(iter(by_scale.values()), {})]
    head = "| instances | " + " | ".join(labels) + " |"
    lines = [head, "| ---: |" + " ---: |" * len(labels)]
    for scale, cols in by_scale.items():
        cells = []
        for label in labels:
            r = cols[label]
            v = r["value"]
            cells.append("n/a" if v is None else _fmt(v, r["unit"]))
        lines.append(f"| {scale} | " + " | ".join(cells) + " |")
    return "\n".join(lines)


def _fmt(v: float, unit: str) -> str:
    if unit == "B":
        return f"{v / 1e6:,.2f} MB" if v >= 1e6 else f"{v / 1e3:,.0f} KB"
    if unit == "s":
        return f"{v * 1000:,.0f} ms" if v < 1 else f"{v:,.1f} s"
    return f"{v:,.0f} {unit}"


__all__ = ["QUICK_SCALES", "SCALES", "bench_scaling", "growth_table", "scale_of"]
