"""`stacktop snapshot` text when stdout is not a terminal (a pipe, a file, a cron mail): one line per item,
never wrapped, so `grep` and `cut` see whole findings.

    triage  catalog 6/6 | compute 1 down | ...
    source services: ok in 0.41s
    CRITICAL nova.service_down compute-01: <summary> - next: <next step>

On a terminal the same report is wrapped between tokens at its width (tui.snapshot_terminal).
"""

from __future__ import annotations

from typing import Any

from tui.models.finding import Finding
from tui.models.observation import Observation
from tui.safetext import clean
from tui.snapshot import all_findings, triage_row


def finding_line(f: Finding) -> str:
    line = f"{f.severity.upper()} {clean(f.kind)} {clean(f.subject)}: {clean(f.summary)}"
    return f"{line} - next: {clean(f.next_step)}" if f.next_step else line


def source_line(obs: Observation) -> str:
    took = "" if obs.duration_s is None else f" in {obs.duration_s:.2f}s"
    state = "ok" if obs.ok else f"ERROR {clean(obs.error or 'no answer')}"
    return f"source {clean(obs.source)}: {state}{took}"


def render_plain(observations: list[Observation], thresholds: Any = None, now: float | None = None) -> str:
    """The report as lines, newline-terminated: the triage row, one line per source, one per finding."""
    if not observations:
        return "No source is configured: see config.example.toml, or try --demo.\n"
    lines = []
    row = triage_row(observations, thresholds, now)
    if row is not None:
        lines.append("triage  " + " | ".join(f"{clean(c.label)} {clean(c.text)}" for c in row.cells))
    lines += [source_line(obs) for obs in observations]
    findings = all_findings(observations)
    lines += [finding_line(f) for f in findings]
    if not findings:
        lines.append("No findings.")
    return "\n".join(lines) + "\n"
