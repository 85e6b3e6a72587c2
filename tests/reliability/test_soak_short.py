"""The soak in its short form (bench/soak.py --short): 600 poll cycles with churn and faults; the heap in use (live
memory) and open file descriptors must not grow by 5 % after the warm-up, nor the HTTP connection pools by one.
RSS is judged by the full run: it settles over thousands of cycles, so 600 cannot tell its warm-up from a leak.
The full 10,000-cycle run is manual (bench/results/soak.md).

The short form can only see a fast leak (about 10 KiB a cycle and more; the full run resolves well under 1 KiB):
test_soak_catches_a_leak proves the whole chain (sampling, collection, judging, exit status) fails on one."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

pytestmark = pytest.mark.slow

ROOT = Path(__file__).resolve().parents[2]
SOAK = ROOT / "bench" / "soak.py"


def run_soak(*args: str) -> tuple[int, dict[str, Any], str]:
    proc = subprocess.run([sys.executable, str(SOAK), "--short", "--json", *args], cwd=ROOT,
                          capture_output=True, text=True, timeout=300)
    assert proc.returncode in (0, 1), proc.stderr[-2000:]
    assert "Traceback" not in proc.stderr, proc.stderr[-2000:]
    return proc.returncode, json.loads(proc.stdout.strip().splitlines()[-1]), proc.stderr


def test_short_soak_does_not_grow() -> None:
    code, result, _ = run_soak()
    assert result["failed_polls"] > 0, "faults were injected (else the soak proves little)"
    assert set(result["marks"]) == {"start", "after warm-up", "middle", "end"}
    marks = result["marks"]
    assert marks["start"] < marks["after warm-up"] < marks["middle"] < marks["end"] == result["cycles"] == 600
    assert len(result["samples"]) == 11, "one sample after the first cycle, then every 60"
    assert all(s["rss_kib"] > 0 and s["fds"] > 0 and s["py_blocks"] > 0 and s["pymalloc_kib"] > 0
               for s in result["samples"])
    samples = {s["cycle"]: s for s in result["samples"]}
    assert result["judged"] == ["heap_trend_growth"], "the short run judges live memory (RSS settles for longer)"
    assert all(s["heap_kib"] > 0 for s in result["samples"]), "glibc's mallinfo2 answered"
    assert result["heap_trend_growth"] < 0.05, [(c, s["heap_kib"], s["rss_kib"]) for c, s in samples.items()]
    assert result["fd_trend_growth"] < 0.05, [(c, s["fd_kinds"], s["socket_peers"]) for c, s in samples.items()]
    assert result["http_pools_added"] == 0, [(c, s["http_pools"]) for c, s in samples.items()]
    assert code == 0


def test_soak_catches_a_leak() -> None:
    """16 KiB kept per cycle (one source, so it runs in seconds): the soak must say so and exit 1; the same run
    without the leak passes (so it is the leak that fails it)."""
    code, result, _ = run_soak("--only", "galera")
    assert result["ok"] and code == 0, result["samples"]
    code, result, _ = run_soak("--only", "galera", "--leak-kib", "16")
    assert result["heap_trend_growth"] >= 0.05 and result["heap_growth"] >= 0.05, result["samples"]
    assert not result["ok"]
    assert code == 1


def test_soak_catches_a_leaked_client() -> None:
    """An HTTP client made and kept at every sample: its connection pool holds no socket (idle keep-alive
    connections are closed before the count), so the count of pools must say so."""
    code, result, _ = run_soak("--only", "galera", "--leak-client")
    assert result["http_pools_added"] >= 5, [(s["cycle"], s["http_pools"]) for s in result["samples"]]
    assert not result["ok"]
    assert code == 1


def test_judge_marks_and_growth() -> None:
    sys.path.insert(0, str(ROOT))
    from bench.soak import judge, trend_growth, warm_up_cycles

    assert warm_up_cycles(10_000, 50, 500) == 1_000  # a tenth of the run (a fault-plan round is 600)
    assert warm_up_cycles(600, 20, 60) == 240  # one round of the 12 faults, 20 cycles apart
    assert trend_growth([(0, 100.0), (1, 120.0), (2, 100.0)]) == 0.0, "a bump is not a trend"
    assert round(trend_growth([(0, 100.0), (1, 101.0), (2, 102.0)]), 6) == 0.02
    samples = [{"cycle": c, "rss_kib": kib, "rss_before_kib": kib + 100, "fds": 20, "py_blocks": 1000}
               for c, kib in ((1, 50_000), (60, 80_000), (120, 100_000), (180, 101_000), (240, 104_900))]
    verdict = judge(samples, 120, 240)
    assert verdict["marks"] == {"start": 1, "after warm-up": 120, "middle": 180, "end": 240}
    assert round(verdict["rss_growth"], 3) == 0.049 and round(verdict["rss_trend_growth"], 3) == 0.049
    assert verdict["ok"], "the warm-up (50 -> 100 MB) is not judged"
    samples[-1]["rss_kib"] = 105_000
    assert not judge(samples, 120, 240)["ok"], "5 % is over the limit"
    samples[-1]["rss_kib"], samples[-1]["fds"] = 100_000, 21
    assert not judge(samples, 120, 240)["ok"], "one more fd out of 20 is over the limit"
    samples[-1]["fds"] = 20
    for s in samples:
        s["http_pools"] = 7
    assert judge(samples, 120, 240)["ok"] and judge(samples, 120, 240)["http_pools_added"] == 0
    samples[-1]["http_pools"] = 8
    assert not judge(samples, 120, 240)["ok"], "one more HTTP connection pool is a client leaked"
    samples[-1]["http_pools"] = 7
    for s in samples:  # the heap in use measured: judged too; RSS only where judge_rss
        s["heap_kib"] = 40_000
    samples[-1]["rss_kib"] = 110_000
    assert judge(samples, 120, 240)["judged"] == ["heap_trend_growth", "rss_trend_growth"]
    assert not judge(samples, 120, 240)["ok"], "RSS judged in the full run"
    assert judge(samples, 120, 240, judge_rss=False)["ok"], "RSS settling is not judged in the short run"
    samples[-1]["heap_kib"] = 42_100
    assert not judge(samples, 120, 240, judge_rss=False)["ok"], "live memory up 5 % is a leak"
