"""Keys read in one burst from a real terminal (tmux send-keys, a paste, a fast typist): everything typed after
`:` or `/` lands in the line it opened, none of it runs as a shortcut; a shortcut typed just before them still
runs, for the pane it was typed in. `stacktop --demo` in a pty, each line
written with one os.write; checked on the screen a terminal emulator (pyte) draws from the bytes, and in the
recorder's journal."""

from __future__ import annotations

import json
import os
import re
import time
from pathlib import Path
from typing import Any

import pyte

from tests.testbed.pty import quit_cleanly, read_for, stacktop_in_pty


def test_lines_typed_in_one_burst_land_in_the_line(tmp_path: Path) -> None:
    # the demo's [recorder] dir is the default one, ~/.local/share/stacktop/recordings: here under tmp_path
    with stacktop_in_pty(tmp_path, "--demo") as (proc, master):
        out = burst_session(proc, master)
    assert b"Traceback" not in out
    journals = list((tmp_path / ".local/share/stacktop/recordings").glob("*.jsonl"))
    assert journals, "the demo writes a journal"
    assert len(journals) == 1 and f"journal: {journals[0]}".encode() in out, "the journal's path, said on exit"
    kinds = {json.loads(line).get("type") for path in journals
             for line in path.read_text(encoding="utf-8").splitlines() if line.strip()}
    assert "note" not in kinds, "a key typed after : wrote a note"
    assert "cloud_switched" not in kinds, "a key typed after : switched the cloud"


class Screen:
    """What a terminal emulator (pyte) draws from everything the app wrote."""

    def __init__(self, proc: Any, master: int) -> None:
        self.proc, self.master, self.out = proc, master, b""
        self.screen = pyte.Screen(160, 48)
        self.stream = pyte.ByteStream(self.screen)

    def shown(self) -> str:
        return "\n".join(self.screen.display)

    def until(self, wanted: str, what: str, timeout: float = 90) -> re.Match[str]:
        """Read until the regex `wanted` is on screen."""
        deadline = time.monotonic() + timeout
        while (found := re.search(wanted, self.shown())) is None and self.proc.poll() is None \
                and time.monotonic() < deadline:
            chunk = read_for(self.master, 0.3)
            self.out += chunk
            self.stream.feed(chunk)
        assert found is not None, f"{what}: not on screen:\n{self.shown()}"
        return found


def on_instances(proc: Any, master: int) -> Screen:
    """Once the first poll's rows show, `:instances` written in one go: the instances pane has the focus."""
    term = Screen(proc, master)
    term.until("compute-02", "the first poll's rows")
    os.write(master, b":instances\r")
    term.until("demo-east > instances", "the breadcrumb: the instances pane")
    return term


def burst_session(proc: Any, master: int) -> bytes:
    """Three lines, each written in one go, each checked on the screen before the next; then a clean quit."""
    term = on_instances(proc, master)
    os.write(master, b"/BUILD\r")
    term.until("demo-east > instances /BUILD", "the breadcrumb: the instances pane filtered by BUILD")
    os.write(master, b":host compute-02\r")
    term.until("instances /BUILD > compute-02", "the host screen (its breadcrumb)")
    return term.out + quit_cleanly(proc, master)


def test_shortcuts_typed_just_before_a_line_opens_still_run(tmp_path: Path) -> None:
    """`as/web` in one write on the instances pane: every server (a), sorted by name (s), then filtered: the
    two keys reach the table after the filter line took the focus, and run all the same."""
    with stacktop_in_pty(tmp_path, "--demo") as (proc, master):
        term = on_instances(proc, master)
        os.write(master, b"as/web")
        term.until("demo-east > instances /web", "the breadcrumb: the filter typed after them")
        found = term.until(r"(\d+) of (\d+) match /web", "the pane's title: the filter's count")
        assert int(found.group(2)) > 100, "a before / showed every server: ~200 rows filtered, not attention's few"
        term.until("name ▲", "s before / sorted the table by name (the header's mark)")
        assert b"Traceback" not in term.out + quit_cleanly(proc, master)
