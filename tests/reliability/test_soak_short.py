"""The soak in its short form (bench/soak.py --short): hundreds of poll cycles with churn and faults; RSS and
open file descriptors must not grow by 5 % after warm-up. The full 10,000-cycle run is manual
(bench/results/soak.md)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def test_short_soak_does_not_grow() -> None:
    proc = subprocess.run([sys.executable, str(ROOT / "bench" / "soak.py"), "--short", "--json"], cwd=ROOT,
                          capture_output=True, text=True, timeout=300)
    assert proc.returncode in (0, 1), proc.stderr[-2000:]
    result = json.loads(proc.stdout.strip().splitlines()[-1])
    assert result["failed_polls"] > 0, "faults were injected (else the soak proves little)"
    assert set(result["marks"]) == {"start (after warm-up)", "middle", "end"}
    assert result["rss_growth"] < 0.05, result["marks"]
    assert result["fd_growth"] < 0.05, result["marks"]
    assert "Traceback" not in proc.stderr, proc.stderr[-2000:]
