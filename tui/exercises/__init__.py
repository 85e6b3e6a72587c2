"""The on-call exercises, recorded: boot trace, compute-down lag, request trace.

Each exercise is pure bookkeeping (boot_trace.py, down_lag.py, request_trace.py: fed samples with their times,
no I/O) plus a driver in live.py that polls the cloud read-only and feeds it. A finished exercise becomes an
ExerciseResult, written to the journal as an `exercise` event and shown in the export.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

from tui.safetext import clean, markdown


@dataclass(frozen=True)
class ExerciseResult:
    """name: "boot-trace" | "down-lag" | "request-trace"; summary: one line; markdown: the report section;
    data: the measured values (JSON-able) for tests and later analysis."""

    name: str
    summary: str
    markdown: str
    data: dict[str, Any] = field(default_factory=dict)

    def to_event(self) -> dict[str, Any]:
        return {"type": "exercise", "name": self.name, "summary": self.summary, "markdown": self.markdown,
                "data": self.data}


def stamp(epoch: float | None) -> str:
    """Epoch seconds -> '11:22:55.570Z' (UTC, milliseconds): exercises are about sub-second order."""
    if epoch is None:
        return "-"
    return datetime.fromtimestamp(epoch, UTC).strftime("%H:%M:%S.%f")[:-3] + "Z"


def iso(epoch: float | None) -> str | None:
    return None if epoch is None else datetime.fromtimestamp(epoch, UTC).isoformat()


def seconds(value: float | None) -> str:
    return "-" if value is None else f"{value:.1f} s"


def md_cell(value: Any) -> str:
    """A value from outside, inert in Markdown text and table cells."""
    return "" if value is None else markdown(value)


def md_code(value: Any) -> str:
    """A value from outside as an inline code span: controls made visible, a fence longer than any backtick run
    in it (CommonMark), so the value cannot close the span."""
    text = clean("" if value is None else value)
    runs = [len(r) for r in re.findall("`+", text)]
    fence = "`" * (max(runs, default=0) + 1)
    pad = " " if text.startswith("`") or text.endswith("`") else ""
    return f"{fence}{pad}{text}{pad}{fence}"


def md_block(lines: list[str]) -> list[str]:
    """Lines (some from outside) as a fenced code block that none of them can close."""
    cleaned = [clean(line) for line in lines]
    runs = [len(r) for line in cleaned for r in re.findall("`{3,}", line)]
    fence = "`" * max(3, max(runs, default=0) + 1)
    return [fence, *cleaned, fence]


def md_table(header: tuple[str, ...], rows: list[tuple[Any, ...]]) -> list[str]:
    lines = ["| " + " | ".join(header) + " |", "| " + " | ".join("---" for _ in header) + " |"]
    lines += ["| " + " | ".join(md_cell(c) for c in row) + " |" for row in rows]
    return lines


def bars(rows: Sequence[tuple[str, float, float | None]], width: int = 40, now: float | None = None) -> list[str]:
    """A text timeline: one line per (label, start, end) with a bar placed and sized on the common time
    axis; an open end (None) runs to `now` (or to the latest time known)."""
    if not rows:
        return []
    t0 = min(start for _, start, _ in rows)
    ends = [end if end is not None else (now if now is not None else start) for _, start, end in rows]
    t1 = max([*ends, *(start for _, start, _ in rows)])
    span = max(t1 - t0, 1e-9)
    label_w = min(28, max(len(label) for label, _, _ in rows))
    out = []
    for (label, start, _), end in zip(rows, ends, strict=True):
        a = int((start - t0) / span * width)
        b = max(a + 1, int((end - t0) / span * width))
        bar = " " * a + "█" * (min(b, width) - a)
        out.append(f"{label[:label_w]:<{label_w}} |{bar:<{width}}| +{start - t0:5.1f}s {end - start:5.1f}s")
    return out
