"""Keys read in one burst from a real terminal (tmux send-keys, a paste, a fast typist): everything typed after
`:` or `/` lands in the line it opened, none of it runs as a shortcut. `stacktop --demo` in a pty, each line
written with one os.write; checked on what reaches the screen and in the recorder's journal."""

from __future__ import annotations

import fcntl
import json
import os
import pty
import re
import select
import struct
import subprocess
import sys
import termios
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
CONTROL = re.compile(rb"\x1b\[[0-?]*[ -/]*[@-~]|\x1b\][^\x07\x1b]*(?:\x07|\x1b\\)|\x1b[PX^_][^\x1b]*\x1b\\|\x1b.")


def read_for(master: int, seconds: float) -> bytes:
    data = b""
    end = time.monotonic() + seconds
    while time.monotonic() < end:
        ready, _, _ = select.select([master], [], [], 0.1)
        if ready:
            try:
                chunk = os.read(master, 65536)
            except OSError:
                break
            if not chunk:
                break
            data += chunk
    return data


def text_of(out: bytes) -> str:
    """What the terminal was told to print, control sequences left out."""
    return CONTROL.sub(b"", out).decode("utf-8", "replace")


def near(text: str, word: str) -> list[str]:
    """The printed runs holding `word` (what an assertion shows)."""
    return [part for part in re.split(r"[\r\n]", text) if word in part][:4]


def test_lines_typed_in_one_burst_land_in_the_line(tmp_path: Path) -> None:
    env = {k: v for k, v in os.environ.items() if k not in ("COLORTERM", "TEXTUAL_COLOR_SYSTEM", "NO_COLOR")}
    # the demo's [recorder] dir is the default one, ~/.local/share/stacktop/recordings: here under tmp_path
    env.update(TERM="tmux-256color", XDG_STATE_HOME=str(tmp_path), HOME=str(tmp_path), TZ="UTC")
    master, slave = pty.openpty()
    fcntl.ioctl(slave, termios.TIOCSWINSZ, struct.pack("HHHH", 48, 160, 0, 0))
    proc = subprocess.Popen([sys.executable, "-m", "tui", "--demo"], stdin=slave, stdout=slave, stderr=slave,
                            env=env, cwd=ROOT, close_fds=True, start_new_session=True)
    os.close(slave)
    out = b""

    def until(wanted: str, what: str, timeout: float = 90) -> None:
        nonlocal out
        deadline = time.monotonic() + timeout
        start = len(out)
        while wanted not in text_of(out[start:]) and proc.poll() is None and time.monotonic() < deadline:
            out += read_for(master, 0.3)
        seen = text_of(out[start:])
        assert wanted in seen, f"{what}: {near(seen, 'BUILD')}"

    try:
        until("compute-02", "the first poll's rows")
        os.write(master, b":instances\r")
        until("instances", "the instances pane")
        os.write(master, b"/BUILD\r")
        until("/BUILD", "the breadcrumb: the instances pane filtered by BUILD")  # its changed part may come alone
        os.write(master, b":host compute-02\r")
        until("Read again", "the host screen (its footer)")
        os.write(master, b"\x11")  # ctrl+q
        deadline = time.monotonic() + 30
        while proc.poll() is None and time.monotonic() < deadline:
            out += read_for(master, 0.2)
        assert proc.wait(timeout=5) == 0
    finally:
        if proc.poll() is None:
            proc.kill()
        os.close(master)
    assert b"Traceback" not in out
    journals = list((tmp_path / ".local/share/stacktop/recordings").glob("*.jsonl"))
    assert journals, "the demo writes a journal"
    kinds = {json.loads(line).get("type") for path in journals
             for line in path.read_text(encoding="utf-8").splitlines() if line.strip()}
    assert "note" not in kinds, "a key typed after : wrote a note"
    assert "cloud_switched" not in kinds, "a key typed after : switched the cloud"
