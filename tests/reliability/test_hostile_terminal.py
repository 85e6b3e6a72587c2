"""Hostile names in a real terminal: `stacktop --demo --hostile` in a pty, as a user runs it. The bytes written
to the terminal carry the names as text: no window-title (OSC 0) or clipboard (OSC 52) sequence from a name, no
C1 control, no hyperlink (OSC 8), and the dashboard quits cleanly afterwards."""

from __future__ import annotations

import os
import time
from pathlib import Path

from tests.testbed.pty import quit_cleanly, read_for, stacktop_in_pty


def test_hostile_demo_in_a_pty_writes_names_as_text(tmp_path: Path) -> None:
    out = b""
    # wide enough for the hostile names whole (in a narrower pane a name is cut with "…" to fit its column)
    with stacktop_in_pty(tmp_path, "--demo", "--hostile", "--speed", "4", cols=240, rows=60) as (proc, master):
        # the storyline's stuck boot is named with a screen clear and a window title (sim ~13 s)
        deadline = time.monotonic() + 120
        while b"pwned" not in out and proc.poll() is None and time.monotonic() < deadline:
            out += read_for(master, 0.5)
        assert b"pwned" in out, out[-800:]
        for key in (b"\t", b"\t", b"\t", b"a", b"\t", b"a"):  # every pane, every row
            os.write(master, key)
            out += read_for(master, 0.5)
        out += quit_cleanly(proc, master, timeout=20)
    assert b"\\x1b]0;pwned\\x07" in out, "the name is shown with its controls written out"
    assert b"\x1b]0;pwned" not in out and b"\x1b]0;title" not in out, "a name set the window title"
    assert b"\x1b]52;" not in out, "a name wrote to the clipboard"
    assert b"\x1b]8;" not in out, "a name became a hyperlink"
    assert b"\xc2\x9b" not in out and b"\x07x" not in out, "a C1 control or BEL from a name reached the terminal"
    assert b"Traceback" not in out
