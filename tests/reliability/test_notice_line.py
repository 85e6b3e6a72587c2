"""Notices never cover data, in a real terminal: `stacktop --demo` in a pty, drawn by a terminal emulator (pyte)
from the bytes it writes, at 160x48, 120x34, 100x30 and 80x24 (resized as a tmux window is). A new critical
finding (the storyline's), a key's answer (`p`) and a `:` command's error each show on a line of their own: the
notice on the breadcrumb line, the error in the command line's border, never over a pane's rows. Every check
waits for its condition on the screen, none sleeps."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.reliability.test_readme_sizes import Terminal
from tests.testbed.pty import quit_cleanly, stacktop_in_pty

pytestmark = pytest.mark.slow

SIZES = ((160, 48), (120, 34), (100, 30), (80, 24))
CRUMBS = " demo-east > "


def rows_with(lines: list[str], text: str) -> list[int]:
    return [i for i, line in enumerate(lines) if text in line]


def breadcrumb_row(lines: list[str]) -> int:
    rows = [i for i, line in enumerate(lines) if line.startswith(CRUMBS)]
    assert len(rows) == 1, f"one breadcrumb line, not {rows}"
    return rows[0]


def on_the_status_line(lines: list[str], notice: str) -> None:
    """`notice` is on screen, on the breadcrumb line and on no other (no toast over a pane's rows)."""
    found = rows_with(lines, notice)
    assert found, f"{notice!r} not on screen"
    assert found == [breadcrumb_row(lines)], f"{notice!r} on rows {found}, not only on the breadcrumb line"


def in_the_command_line(lines: list[str], error: str, typed: str) -> None:
    """`error` is on the command line's top border, right above what was typed, and nowhere else."""
    found = rows_with(lines, error)
    assert len(found) == 1, f"{error!r} on rows {found}"
    below = lines[found[0] + 1] if found[0] + 1 < len(lines) else ""
    assert below.strip(" ▊▎").startswith(typed), f"{error!r} is not over the command line: {below!r}"


def test_no_notice_covers_a_data_row_at_the_readme_sizes(tmp_path: Path) -> None:
    with stacktop_in_pty(tmp_path, "--demo", rows=48, cols=160) as (proc, master):
        term = Terminal(proc, master, 160, 48)
        # the storyline's first criticals come about a minute in (a compute dies): one notice, on its line
        term.until(lambda: bool(rows_with(term.lines, "new critical")), "a new critical notice", timeout=180)
        on_the_status_line(term.lines, "new critical")
        for cols, rows in SIZES:
            what = f"{cols}x{rows}"
            term.resize(cols, rows)
            term.until(lambda cols=cols: len(term.lines[0]) == cols and breadcrumb_row(term.lines) >= 0,
                       f"{what}: drawn")
            term.type("p")  # pause (or resume): its answer is a notice
            term.until(lambda: bool(rows_with(term.lines, "refresh paused") or
                                    rows_with(term.lines, "refresh resumed")), f"{what}: the answer to p")
            shown = "refresh paused" if rows_with(term.lines, "refresh paused") else "refresh resumed"
            term.until(lambda shown=shown: on_the_status_line(term.lines, shown), f"{what}: p's notice")
            term.type(":bogus\r")
            term.until(lambda: in_the_command_line(term.lines, "unknown command :bogus", "bogus"),
                       f"{what}: the error of :bogus")
            term.type("\x1b")
            term.until(lambda: not rows_with(term.lines, "unknown command"), f"{what}: esc closed the line")
        out = term.out + quit_cleanly(proc, master)
    assert b"Traceback" not in out
