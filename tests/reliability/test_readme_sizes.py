"""The README's terminal sizes, in a real terminal: `stacktop --demo` in a pty, drawn by a terminal emulator
(pyte) from the bytes it writes, resized 160x48 -> 120x34 -> 80x24 as a tmux window is. At each size, once the
storyline has a triage hint: the triage row is whole, every pane shows at least 3 rows, the columns that
matter are on screen, and the findings table's first row is the triage hint. Every check waits for its
condition on the screen (a loaded machine draws late), none sleeps."""

from __future__ import annotations

import fcntl
import os
import re
import signal
import struct
import termios
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pyte
import pytest

from tests.testbed.pty import quit_cleanly, read_for, stacktop_in_pty

pytestmark = pytest.mark.slow

PANES = {"control plane": "binary", "instances": "name", "RabbitMQ": "queue", "Galera": "node", "findings": "severity"}
# the storyline's placement cell comes last in the triage row: on screen whole, the row is whole
TRIAGE_END = "placement 1 stale allocation (compute-02)"
SCROLLBAR = re.compile(r"^[\s▁▂▃▄▅▆▇█▉▊▋▌▍▎▏]*$")


class Terminal:
    """The pty's screen as pyte draws it, fed from the program's output."""

    def __init__(self, proc: Any, master: int, cols: int, rows: int) -> None:
        self.proc, self.master = proc, master
        self.screen = pyte.Screen(cols, rows)
        self.stream = pyte.ByteStream(self.screen)
        self.out = b""

    @property
    def lines(self) -> list[str]:
        return list(self.screen.display)

    def text(self) -> str:
        return "\n".join(self.lines)

    def pump(self, seconds: float = 0.3) -> None:
        chunk = read_for(self.master, seconds)
        self.out += chunk
        self.stream.feed(chunk)

    def until(self, check: Callable[[], object], what: str, timeout: float = 60) -> None:
        """Read until check() passes (an AssertionError or a false result: not yet)."""
        deadline = time.monotonic() + timeout
        problem = ""
        while True:
            try:
                if check() is not False:
                    return
                problem = "not yet"
            except AssertionError as exc:
                problem = str(exc)
            assert time.monotonic() < deadline and self.proc.poll() is None, \
                f"{what}: {problem}\n{self.text()}"
            self.pump()

    def resize(self, cols: int, rows: int) -> None:
        fcntl.ioctl(self.master, termios.TIOCSWINSZ, struct.pack("HHHH", rows, cols, 0, 0))
        self.screen.resize(rows, cols)
        os.kill(self.proc.pid, signal.SIGWINCH)  # the program has no controlling terminal to be told by

    def type(self, keys: str) -> None:
        os.write(self.master, keys.encode())


def box(lines: list[str], title: str) -> list[str] | None:
    """The inner lines of the pane titled `title` (None: not on screen)."""
    for top, line in enumerate(lines):
        at = line.find(f"╭─ {title} ")
        if at < 0:
            continue
        right = line.find("╮", at)
        inner = []
        for row in lines[top + 1:]:
            if row[at:at + 1] == "╰":
                return inner
            inner.append(row[at + 1:right])
        return inner
    return None


def table(lines: list[str], title: str) -> tuple[str, list[str]]:
    """(header line, rows with text) of a pane's table."""
    inner = box(lines, title)
    assert inner is not None, f"no {title} pane"
    label = PANES[title]
    header = next((i for i, line in enumerate(inner) if line.strip().startswith(label)), None)
    assert header is not None, f"{title}: no table header"
    rows = [line for line in inner[header + 1:] if not SCROLLBAR.match(line)]
    return inner[header], rows


def triage_text(lines: list[str]) -> str:
    """The triage row: the lines between the top bar and the breadcrumb, as one line."""
    end = next((i for i, line in enumerate(lines) if line.startswith(" demo-east >")), None)
    assert end is not None, "no breadcrumb line"
    return " ".join(line.strip() for line in lines[1:end])


def check_size(lines: list[str], titles: tuple[str, ...], columns: dict[str, tuple[str, ...]]) -> None:
    assert TRIAGE_END in triage_text(lines), f"triage row cut: {triage_text(lines)!r}"
    for title in titles:
        header, rows = table(lines, title)
        assert len(rows) >= 3, f"{title}: {len(rows)} rows shown"
        for column in columns.get(title, ()):
            assert column in header, f"{title}: no {column!r} column in {header!r}"
    if "findings" in titles:
        _, rows = table(lines, "findings")
        assert "triage." in rows[0], f"findings: the first row is not the triage hint: {rows[0]!r}"


def test_readme_sizes_in_a_real_terminal(tmp_path: Path) -> None:
    with stacktop_in_pty(tmp_path, "--demo", rows=48, cols=160) as (proc, master):
        term = Terminal(proc, master, 160, 48)
        # the storyline's first triage hint comes about a minute in (a compute dies)
        term.until(lambda: "triage hint" in term.text(), "a triage hint", timeout=180)
        every = tuple(PANES)
        term.until(lambda: check_size(term.lines, every, {
            "instances": ("status", "task_state", "host", "owner"), "RabbitMQ": ("messages", "consumers"),
            "findings": ("kind", "subject", "summary", "next step", "since")}), "160x48")

        term.resize(120, 34)
        term.until(lambda: check_size(term.lines, every, {
            "instances": ("status", "host", "owner"), "RabbitMQ": ("messages", "consumers"),
            "findings": ("kind", "subject", "summary", "next step")}), "120x34")

        term.resize(80, 24)  # one pane at a time: each reached by its command
        for command, title, wanted in (("findings", "findings", ("kind", "subject", "summary", "next step")),
                                       ("queues", "RabbitMQ", ("messages", "consumers", "since")),
                                       ("instances", "instances", ("status", "task_state", "host", "owner"))):
            term.type(f":{command}\r")
            term.until(lambda t=title, w=wanted: check_size(term.lines, (t,), {t: w}), f"80x24 {title}")
        out = term.out + quit_cleanly(proc, master)
    assert b"Traceback" not in out
