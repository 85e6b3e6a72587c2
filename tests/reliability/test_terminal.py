"""Terminal: a clear message below the minimum size, usable at 80x24 with the keyboard alone, the INSECURE
mark in the header, and a real pty run under TERM=screen-256color / tmux-256color (256 colours, clean quit)."""

from __future__ import annotations

import fcntl
import os
import pty
import struct
import subprocess
import sys
import termios
import time
from dataclasses import replace
from pathlib import Path

import pytest

from tests.testbed.pty import read_for as read_pty
from tui.app import StacktopApp
from tui.config import Config
from tui.screens.help import HelpScreen
from tui.widgets.source_pane import SourcePane
from tui.widgets.too_small import TooSmall

ROOT = Path(__file__).resolve().parents[2]


async def test_below_minimum_size_says_so_and_recovers() -> None:
    app = StacktopApp(Config())
    async with app.run_test(size=(50, 12)) as pilot:
        await pilot.pause()
        note = app.query_one(TooSmall)
        assert note.display and app.screen.has_class("-too-small")
        assert "too small: 50x12" in str(note.render()) and "60x16" in str(note.render())
        assert not app.query_one("#panes").display
        await pilot.resize_terminal(80, 24)
        await pilot.pause()
        assert not app.screen.has_class("-too-small") and not note.display
        assert app.query_one("#panes").display


async def test_80x24_everything_by_keyboard() -> None:
    app = StacktopApp(Config())
    async with app.run_test(size=(80, 24)) as pilot:
        await pilot.pause()
        assert not app.screen.has_class("-too-small")
        panes = app.panes
        seen = set()
        for _ in range(len(panes)):
            active = app.active_pane()
            assert active is not None and active.display and active.region.width > 0
            seen.add(active.id)
            await pilot.press("tab")
        assert seen == {p.id for p in panes}, "tab reaches every pane"
        await pilot.press("question_mark")
        assert isinstance(app.screen, HelpScreen)
        await pilot.press("escape")
        await pilot.press("colon")
        assert app.focused is not None and app.focused.id == "command"
        await pilot.press("escape")
        assert all(isinstance(p, SourcePane) for p in panes)


@pytest.mark.parametrize("insecure", [None, "openstack", "rabbitmq", "galera"])
async def test_header_marks_insecure(insecure: str | None) -> None:
    config = Config()
    if insecure is not None:
        config = replace(config, **{insecure: replace(getattr(config, insecure), insecure=True)})
    app = StacktopApp(config)
    async with app.run_test(size=(160, 30)) as pilot:
        await pilot.pause()
        text = str(app.query_one("#topbar").render())
        assert ("INSECURE" in text) is (insecure is not None)
        if insecure is not None:
            assert f"TLS verification off ({insecure})" in text, text


@pytest.mark.parametrize("term", ["screen-256color", "tmux-256color"])
def test_real_terminal_256_colours_and_clean_quit(term: str, tmp_path: Path) -> None:
    env = {k: v for k, v in os.environ.items() if k not in ("COLORTERM", "TEXTUAL_COLOR_SYSTEM", "NO_COLOR")}
    env.update(TERM=term, XDG_STATE_HOME=str(tmp_path), HOME=str(tmp_path))
    code = "from tui.app import StacktopApp; from tui.config import Config; StacktopApp(Config()).run()"
    master, slave = pty.openpty()
    fcntl.ioctl(slave, termios.TIOCSWINSZ, struct.pack("HHHH", 24, 80, 0, 0))
    proc = subprocess.Popen([sys.executable, "-c", code], stdin=slave, stdout=slave, stderr=slave, env=env,
                            cwd=ROOT, close_fds=True, start_new_session=True)
    os.close(slave)
    out = b""

    def read_for(seconds: float) -> bytes:
        return read_pty(master, seconds)

    try:
        deadline = time.monotonic() + 20
        while b"stacktop" not in out and time.monotonic() < deadline:
            out += read_for(0.5)
        assert b"stacktop" in out, out[-500:]
        os.write(master, b"\x11")  # ctrl+q
        deadline = time.monotonic() + 10
        while proc.poll() is None and time.monotonic() < deadline:
            out += read_for(0.2)
        assert proc.wait(timeout=5) == 0
    finally:
        if proc.poll() is None:
            proc.kill()
        os.close(master)
    assert b"\x1b[38;5;" in out or b"\x1b[48;5;" in out, "256-colour sequences expected"
    assert b"\x1b[38;2;" not in out and b"\x1b[48;2;" not in out, f"truecolor sent to a {term} terminal"
    assert b"Traceback" not in out
