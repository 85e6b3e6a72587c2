"""Journal size at scale: the recorder the app runs (ChangeTracker + Journal, the snapshot codec) fed by every
source's collector on the simulated cloud with its default churn and storyline, sim time advanced one poll
interval per cycle (manual clock); the bytes written after a warm-up, extrapolated to 24 h, plain and gzipped
(rotated files are gzipped). Baseline in the same run: the same snapshots written in full at every poll."""

from __future__ import annotations

import asyncio
import gzip
import tempfile
import time
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from bench.common import Result, log

INTERVAL = 10.0
DAY_S = 86400.0


def bench_journal(demo: Any, cycles: int, warm: int) -> list[Result]:
    import json

    from tui.collectors.registry import build_collectors
    from tui.journal_codec import Encoder
    from tui.recorder import Journal, Recorder
    from tui.runner import CollectorRunner

    now = [float(demo._call("POST", "/advance?seconds=0", {})["now"])]
    collectors = build_collectors(demo.config(), galera_connector=getattr(demo, "galera_connector", None),
                                  dashboard=True)
    for c in collectors:  # the snapshots' own time is sim time too (heartbeats are written as ages against it)
        if hasattr(c, "_clock"):
            c._clock = lambda: datetime.fromtimestamp(now[0], UTC)
    full_bytes = [0]
    encoders: dict[str, Encoder] = {}

    with tempfile.TemporaryDirectory(prefix="stacktop-bench-journal-") as tmp:
        recorder = Recorder(Journal(tmp, name="j.jsonl", max_bytes=1 << 40))
        counting = [False]

        def publish(obs: Any) -> None:
            recorder.observe(obs)
            if counting[0] and obs.error is None and obs.snapshot is not None:
                enc = encoders.setdefault(obs.source, Encoder())
                full_bytes[0] += len(json.dumps({"type": "snapshot", "full": enc.encode(obs.snapshot),
                                                 "findings": [f.to_dict() for f in obs.findings]}))

        runners = [CollectorRunner(c, publish, clock=lambda: now[0]) for c in collectors]
        loop = asyncio.new_event_loop()
        path = Path(tmp) / "j.jsonl"
        start_at = 0
        try:
            for i in range(cycles):
                if i == warm:  # the window starts once everything queued so far is written
                    while recorder.journal.pending():
                        time.sleep(0.05)
                    time.sleep(0.2)
                    start_at = path.stat().st_size
                    counting[0] = True
                now[0] = float(demo._call("POST", f"/advance?seconds={INTERVAL}", {})["now"])
                for r in runners:
                    if i % max(1, round(r.collector.interval / INTERVAL)) == 0:
                        loop.run_until_complete(r.run_once())
                if (i + 1) % 30 == 0:
                    log(f"journal cycle {i + 1}/{cycles}: {path.stat().st_size / 1e6:.1f} MB")
        finally:
            recorder.close()
            for c in collectors:
                loop.run_until_complete(c.aclose())
            loop.close()
        data = path.read_bytes()[start_at:]
    window_s = (cycles - warm) * INTERVAL
    plain = len(data) / window_s * DAY_S
    packed = len(gzip.compress(data, 6)) / window_s * DAY_S
    naive = full_bytes[0] / window_s * DAY_S
    note = (f"{cycles - warm} cycles of {INTERVAL:g} s after {warm} of warm-up ({window_s / 3600:.2f} h of sim time), "
            f"default churn and storyline; plain {plain / 1e6:,.0f} MB/24h, gzipped (rotated files) "
            f"{packed / 1e6:,.0f} MB/24h; the baseline writes every poll's snapshot in full")
    res = Result("journal", "journal per 24 h at this scale (gzipped as rotated)", packed, "B", naive,
                 "every snapshot in full", goal="<= 100 MB / 24 h", note=note)
    res.met = packed <= 100e6
    plain_res = Result("journal", "journal per 24 h, plain (the file being written)", plain, "B", naive,
                       "every snapshot in full")
    return [res, plain_res]
