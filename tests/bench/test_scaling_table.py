"""The scaling benchmark's shape (bench/scaling.py): clouds in proportion, one table row per scale."""

from __future__ import annotations

import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

from bench.scaling import SCALES, growth_table, scale_of  # noqa: E402


def test_scales_and_proportions() -> None:
    assert SCALES == (1_000, 10_000, 30_000, 100_000)
    assert (scale_of(10_000).hosts, scale_of(10_000).queues) == (500, 2_000), "the default demo's proportions"
    assert (scale_of(100_000).hosts, scale_of(100_000).queues) == (5_000, 2_000)
    assert (scale_of(1_000).hosts, scale_of(1_000).queues) == (50, 200)


def test_growth_table_has_a_row_per_scale() -> None:
    rows = [{"section": "scaling", "measure": f"{n} instances: {label}", "value": v, "unit": unit}
            for n in ("1,000", "10,000")
            for label, v, unit in (("first triage", 1.5, "s"), ("bytes per cycle", 2_500_000.0, "B"),
                                   ("RSS", None, "MB"))]
    rows.append({"section": "steady", "measure": "other", "value": 1.0, "unit": "s"})
    table = growth_table(rows).splitlines()
    assert table[0] == "| instances | first triage | bytes per cycle | RSS |"
    assert table[2] == "| 1,000 | 1.5 s | 2.50 MB | n/a |"
    assert len(table) == 4
