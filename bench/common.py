"""Shared helpers of the benchmarks: machine description, medians, process CPU/RSS from /proc, the sim."""

from __future__ import annotations

import os
import platform
import statistics
import subprocess
import sys
import time
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
RESULTS = ROOT / "bench" / "results"
TICK = os.sysconf("SC_CLK_TCK")


@dataclass(frozen=True)
class Scale:
    instances: int
    hosts: int
    queues: int
    galera_nodes: int = 3


FULL = Scale(10_000, 500, 2_000)
QUICK = Scale(300, 10, 100)


@dataclass
class Result:
    """One row of the table: a measure, stacktop's figure, the baseline's, and the goal."""

    section: str
    measure: str
    value: float | None
    unit: str
    baseline: float | None = None
    baseline_label: str = ""
    goal: str = ""
    met: bool | None = None
    note: str = ""
    samples: list[float] = field(default_factory=list)

    @property
    def ratio(self) -> float | None:
        if self.value is None or self.baseline is None or self.value == 0:
            return None
        return self.baseline / self.value


def median(values: Iterable[float]) -> float | None:
    vals = [v for v in values if v is not None]
    return statistics.median(vals) if vals else None


def percentile(values: Iterable[float], p: float) -> float | None:
    vals = sorted(v for v in values if v is not None)
    if not vals:
        return None
    k = (len(vals) - 1) * p / 100
    lo, hi = int(k), min(int(k) + 1, len(vals) - 1)
    return vals[lo] + (vals[hi] - vals[lo]) * (k - lo)


def spread(values: Iterable[float]) -> str:
    """min-max as a share of the median: how noisy a series was."""
    vals = [v for v in values if v is not None]
    if len(vals) < 2:
        return "n/a"
    med = statistics.median(vals)
    return f"{(max(vals) - min(vals)) / med:.0%}" if med else "n/a"


def proc_cpu_s(pid: int) -> float | None:
    """utime+stime of a process (all its threads), seconds; None when it is gone."""
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except OSError:
        return None
    return (int(fields[11]) + int(fields[12])) / TICK


def proc_rss_mb(pid: int) -> float | None:
    try:
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024
    except OSError:
        return None
    return None


def load_average() -> tuple[float, float, float]:
    return os.getloadavg()


def machine() -> dict[str, Any]:
    """What the numbers were measured on (committed with the results)."""
    cpu = "?"
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    mem_gb = None
    try:
        for line in Path("/proc/meminfo").read_text().splitlines():
            if line.startswith("MemTotal:"):
                mem_gb = round(int(line.split()[1]) / 1024 / 1024, 1)
    except OSError:
        pass
    try:
        commit = subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=ROOT, capture_output=True, text=True,
                                check=False).stdout.strip() or None
    except OSError:
        commit = None
    import textual

    return {"host": platform.node(), "cpus": os.cpu_count(), "cpu_model": cpu, "mem_gb": mem_gb,
            "os": f"{platform.system()} {platform.release()}", "python": platform.python_version(),
            "textual": getattr(textual, "__version__", "?"), "commit": commit,
            "load_average_at_start": [round(x, 2) for x in load_average()],
            "date": time.strftime("%Y-%m-%dT%H:%M:%S%z"),
            "shared": "2 cores shared with other engineers and a running OpenStack test cloud"}


def spawn_sim(scale: Scale, **kw: Any) -> Any:
    """The simulated cloud in its own process (its CPU is not stacktop's), warmed."""
    from tui.sim import spawn_demo

    kw.setdefault("warm", True)
    return spawn_demo(instances=scale.instances, hosts=scale.hosts, queues=scale.queues, **kw)


def ensure_bytecode() -> None:
    """Compile stacktop's modules once, as an installed package has them: with PYTHONDONTWRITEBYTECODE set
    (as in some shells) every start would compile ~100 modules again (~0.35 s CPU before the first paint)."""
    import compileall

    for sub in ("tui", "bench"):
        compileall.compile_dir(str(ROOT / sub), quiet=1, force=False)


def log(msg: str) -> None:
    print(f"[bench {time.strftime('%H:%M:%S')}] {msg}", file=sys.stderr, flush=True)
