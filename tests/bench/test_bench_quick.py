"""`python -m bench --quick` runs every section end to end at small scale, so the benchmark code cannot rot.

Benchmarks are not tests: nothing here asserts a timing or a goal, only that each measurement was taken
(the RabbitMQ broker section may say it was skipped when no local broker runs; the five-command baseline
uses whichever of its commands this machine has).
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = pytest.mark.slow

ROOT = Path(__file__).resolve().parents[2]
MEASURES = ("first full triage", "stacktop snapshot: spawn to report", "time to first paint (`stacktop --config`",
            "time to first paint (`stacktop --demo`", "time to first paint (`stacktop --demo --instances 10000",
            "time to first paint (`stacktop --demo` without bytecode",
            "keypress to paint p99", "RSS after",
            "RSS after that, once the GC policy's full collection ran",
            "steady-state poll, client CPU", "steady-state poll, HTTP requests", "idle CPU",
            "terminal output while nothing changes", "journal per 24 h at this scale", "key to paint with",
            "placement audit in the background: client CPU per audit")


def test_bench_quick_measures_every_section(tmp_path: Path) -> None:
    out = tmp_path / "bench.json"
    proc = subprocess.run([sys.executable, "-m", "bench", "--quick", "--out", str(out)], cwd=ROOT,
                          capture_output=True, text=True, timeout=900, check=False)
    assert proc.returncode == 0, proc.stdout[-2000:] + proc.stderr[-4000:]
    doc = json.loads(out.read_text())
    assert doc["quick"] and doc["failures"] == []
    assert doc["machine"]["cpus"] and doc["machine"]["python"]
    moment = doc["machine"]["moment"]  # the host's speed at the start and end of the run, read beside every figure
    assert moment["minimal_app_first_paint_ms_at_start"] and moment["minimal_app_first_paint_ms_at_end"], moment
    assert doc["scale"] == {"instances": 300, "hosts": 10, "queues": 100, "galera_nodes": 3}
    values = {r["measure"]: r["value"] for r in doc["results"]}
    for name in MEASURES:
        found = [v for k, v in values.items() if k.startswith(name)]
        assert found and found[0] is not None, f"{name}: not measured ({values})"
    triage = next(r for r in doc["results"] if r["measure"].startswith("first full triage"))
    assert "stacktop panes filled at" in triage["note"], triage["note"]  # the per-pane timeline was recorded
    snapshot = next(r for r in doc["results"] if r["section"] == "snapshot")
    assert "services" in snapshot["note"] and "rabbitmq" in snapshot["note"], snapshot["note"]  # per-source times
    broker = next(r for r in doc["results"] if r["section"] == "broker")
    assert broker["value"] is not None or "skipped" in broker["note"], broker
    assert "| measure | stacktop | baseline |" in proc.stdout


def test_bench_quick_wholeapp_measures_the_running_app(tmp_path: Path) -> None:
    """`--only wholeapp` (on request only): the three app runs end to end, every figure taken."""
    out = tmp_path / "wholeapp.json"
    proc = subprocess.run([sys.executable, "-m", "bench", "--quick", "--only", "wholeapp", "--out", str(out)],
                          cwd=ROOT, capture_output=True, text=True, timeout=1200, check=False)
    assert proc.returncode == 0, proc.stdout[-2000:] + proc.stderr[-4000:]
    doc = json.loads(out.read_text())
    assert doc["failures"] == []
    values = {r["measure"]: r["value"] for r in doc["results"]}
    for name in ("whole app per 10 s cycle, changing cloud", "whole app per 10 s cycle, quiet cloud",
                 "whole app per 10 s cycle with 10,000 findings of one kind", "RSS after the first placement audit",
                 "journal in the session's first 60 s"):
        found = [v for k, v in values.items() if k.startswith(name)]
        assert found and found[0] is not None, f"{name}: not measured ({values})"
    flood = next(r for r in doc["results"] if "findings of one kind" in r["measure"])
    assert flood["baseline"] is not None  # set against the same cloud without the flood
