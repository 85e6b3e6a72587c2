"""Layout by size, in a real terminal: `stacktop --demo` in a pty, drawn by a terminal emulator (pyte), started at
80x24 and resized 100x30 -> 120x34 -> 160x48. Small, the findings are the one pane on screen and have the focus
(the table's own keys move its cursor); at every size each pane's identifying columns are in its header, whole
or cut with `…`, and the instances' hosts are whole or end with `…` (never cut by the pane's edge). Every check
waits for its condition on the screen, none sleeps."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from tests.reliability.test_readme_sizes import Terminal, box, table
from tests.testbed.pty import quit_cleanly, stacktop_in_pty

pytestmark = pytest.mark.slow

# each pane's identifying columns: which thing a row is, and its state
IDENTIFYING = {"control plane": ("binary", "host", "state"), "instances": ("name", "status", "host", "owner"),
               "RabbitMQ": ("queue",), "Galera": ("node", "status", "state"), "findings": ("severity", "subject")}
TITLES = {"services": "control plane", "instances": "instances", "queues": "RabbitMQ", "galera": "Galera",
          "findings": "findings"}


def label_at(header: str, label: str) -> int | None:
    """Where `label` starts in a table's header, whole or cut with `…` (None: not there)."""
    whole = re.search(rf"(?<!\S){re.escape(label)}(?!\S)", header)
    if whole:
        return whole.start()
    for keep in range(len(label) - 1, 0, -1):
        cut = re.search(rf"(?<!\S){re.escape(label[:keep])}…", header)
        if cut:
            return cut.start()
    return None


def check_identifying(lines: list[str], title: str) -> None:
    header, rows = table(lines, title)
    missing = [label for label in IDENTIFYING[title] if label_at(header, label) is None]
    assert not missing, f"{title}: {missing} not in the header (whole or cut with …): {header!r}"
    if title == "instances":
        start, end = label_at(header, "host"), label_at(header, "owner")
        assert start is not None and end is not None
        for row in rows:
            host = row[start:end].strip()
            assert host == "" or re.fullmatch(r"compute-\d+", host) or host.endswith("…"), \
                f"instances: host cut without …: {host!r} in {row!r}"


def only_findings(lines: list[str]) -> None:
    assert any(line.startswith(" demo-east > findings") for line in lines), "the breadcrumb: findings"
    assert box(lines, "findings") is not None, "the findings pane on screen"
    shown = [title for title in TITLES.values() if title != "findings" and box(lines, title) is not None]
    assert not shown, f"one pane at a time, the findings: {shown} shown too"
    check_identifying(lines, "findings")


def findings_have_the_focus(term: Terminal) -> None:
    """`G` is the table's own key (the last row): with the focus on the findings table, enter then opens the
    last finding's screen, not the first one's."""
    _, rows = table(term.lines, "findings")
    rows = [row for row in rows if row.strip()]
    assert len(rows) >= 2, "two findings at least"
    last_kind = rows[-1].split()[1].rstrip("…")
    term.type("G")
    term.type("\r")
    term.until(lambda: any(line.startswith(f" demo-east > findings > {last_kind}") for line in term.lines),
               "G then enter: the last finding's screen (the findings table has the focus)")
    term.type("\x1b")
    term.until(lambda: any(line.startswith(" demo-east > findings") and " > " not in line[20:]
                           for line in term.lines), "back on the findings")


def test_small_terminals_start_on_the_findings_and_every_size_keeps_the_identifying_columns(tmp_path: Path) -> None:
    with stacktop_in_pty(tmp_path, "--demo", rows=24, cols=80) as (proc, master):
        term = Terminal(proc, master, 80, 24)
        term.until(lambda: len([r for r in table(term.lines, "findings")[1] if r.strip()]) >= 2, "two findings",
                   timeout=120)
        term.until(lambda: only_findings(term.lines), "80x24: the findings first")
        findings_have_the_focus(term)

        term.resize(100, 30)
        term.until(lambda: only_findings(term.lines), "100x30: the findings first")
        for command in ("instances", "queues", "findings"):
            term.type(f":{command}\r")
            title = TITLES[command]
            term.until(lambda t=title: check_identifying(term.lines, t), f"100x30 {title}")

        for cols, rows in ((120, 34), (160, 48)):
            term.resize(cols, rows)
            for title in IDENTIFYING:
                term.until(lambda t=title: check_identifying(term.lines, t), f"{cols}x{rows} {title}")
        out = term.out + quit_cleanly(proc, master)
    assert b"Traceback" not in out
