"""Keys read in one burst from a real terminal (tmux send-keys, a paste, a fast typist): everything typed after
`:` or `/` lands in the line it opened, none of it runs as a shortcut. `stacktop --demo` in a pty, each line
written with one os.write; checked on the screen a terminal emulator (pyte) draws from the bytes, and in the
recorder's journal."""

from __future__ import annotations

import json
import os
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


def burst_session(proc: Any, master: int) -> bytes:
    """Three lines, each written in one go, each checked on the screen before the next; then a clean quit."""
    out = b""
    screen = pyte.Screen(160, 48)
    stream = pyte.ByteStream(screen)

    def shown() -> str:
        return "\n".join(screen.display)

    def until(wanted: str, what: str, timeout: float = 90) -> None:
        nonlocal out
        deadline = time.monotonic() + timeout
        while wanted not in shown() and proc.poll() is None and time.monotonic() < deadline:
            chunk = read_for(master, 0.3)
            out += chunk
            stream.feed(chunk)
        assert wanted in shown(), f"{what}: not on screen:\n{shown()}"

    until("compute-02", "the first poll's rows")
    os.write(master, b":instances\r")
    until("demo-east > instances", "the breadcrumb: the instances pane")
    os.write(master, b"/BUILD\r")
    until("demo-east > instances /BUILD", "the breadcrumb: the instances pane filtered by BUILD")
    os.write(master, b":host compute-02\r")
    until("instances /BUILD > compute-02", "the host screen (its breadcrumb)")
    return out + quit_cleanly(proc, master)
