"""Hostile names in a real terminal: `stacktop --demo --hostile` in a pty, as a user runs it. The bytes written
to the terminal carry the names as text: no window-title (OSC 0) or clipboard (OSC 52) sequence from a name, no
C1 control, no hyperlink (OSC 8), and the dashboard quits cleanly afterwards."""

from __future__ import annotations

import fcntl
import os
import pty
import struct
import subprocess
import sys
import termios
import time
from pathlib import Path

from tests.testbed.pty import read_for

ROOT = Path(__file__).resolve().parents[2]


def test_hostile_demo_in_a_pty_writes_names_as_text(tmp_path: Path) -> None:
    env = {k: v for k, v in os.environ.items() if k not in ("COLORTERM", "TEXTUAL_COLOR_SYSTEM", "NO_COLOR")}
    env.update(TERM="tmux-256color", XDG_STATE_HOME=str(tmp_path), HOME=str(tmp_path), TZ="UTC")
    master, slave = pty.openpty()
    fcntl.ioctl(slave, termios.TIOCSWINSZ, struct.pack("HHHH", 48, 160, 0, 0))
    proc = subprocess.Popen([sys.executable, "-m", "tui", "--demo", "--hostile", "--speed", "4"], stdin=slave,
                            stdout=slave, stderr=slave, env=env, cwd=ROOT, close_fds=True, start_new_session=True)
    os.close(slave)
    out = b""
    try:
        # the storyline's stuck boot is named with a screen clear and a window title (sim ~13 s)
        deadline = time.monotonic() + 120
        while b"pwned" not in out and proc.poll() is None and time.monotonic() < deadline:
            out += read_for(master, 0.5)
        assert b"pwned" in out, out[-800:]
        for key in (b"\t", b"\t", b"\t", b"a", b"\t", b"a"):  # every pane, every row
            os.write(master, key)
            out += read_for(master, 0.5)
        os.write(master, b"\x11")  # ctrl+q
        deadline = time.monotonic() + 20
        while proc.poll() is None and time.monotonic() < deadline:
            out += read_for(master, 0.2)
        assert proc.wait(timeout=5) == 0
    finally:
        if proc.poll() is None:
            proc.kill()
        os.close(master)
    assert b"\\x1b]0;pwned\\x07" in out, "the name is shown with its controls written out"
    assert b"\x1b]0;pwned" not in out and b"\x1b]0;title" not in out, "a name set the window title"
    assert b"\x1b]52;" not in out, "a name wrote to the clipboard"
    assert b"\x1b]8;" not in out, "a name became a hyperlink"
    assert b"\xc2\x9b" not in out and b"\x07x" not in out, "a C1 control or BEL from a name reached the terminal"
    assert b"Traceback" not in out
