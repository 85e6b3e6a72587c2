"""Reading what a program in a pseudo-terminal writes (the real-terminal tests)."""

from __future__ import annotations

import contextlib
import fcntl
import os
import pty
import select
import struct
import subprocess
import sys
import termios
import time
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]


def read_for(master: int, seconds: float) -> bytes:
    """Everything the program writes to the pty's master side within `seconds` (less if it closes)."""
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


@contextlib.contextmanager
def stacktop_in_pty(home: Path, *args: str, rows: int = 48, cols: int = 160,
                    program: Sequence[str] = (sys.executable, "-m", "tui"), cwd: Path = ROOT
                    ) -> Iterator[tuple[Any, int]]:
    """`python -m tui ARGS` (or `program ARGS`, run in `cwd`) in a pty of rows x cols, as a user runs it
    (TERM=tmux-256color, UTC, its state and recordings under `home`): yields (process, master fd); killed and
    closed on the way out."""
    env = {k: v for k, v in os.environ.items() if k not in ("COLORTERM", "TEXTUAL_COLOR_SYSTEM", "NO_COLOR",
                                                                "COLUMNS", "LINES")}  # they override the pty's size
    env.update(TERM="tmux-256color", XDG_STATE_HOME=str(home), HOME=str(home), TZ="UTC")
    master, slave = pty.openpty()
    fcntl.ioctl(slave, termios.TIOCSWINSZ, struct.pack("HHHH", rows, cols, 0, 0))
    proc = subprocess.Popen([*program, *args], stdin=slave, stdout=slave, stderr=slave, env=env,
                            cwd=cwd, close_fds=True, start_new_session=True)
    os.close(slave)
    try:
        yield proc, master
    finally:
        if proc.poll() is None:
            proc.kill()
        os.close(master)


def quit_cleanly(proc: Any, master: int, timeout: float = 30) -> bytes:
    """ctrl+q, then what the program writes until it exits; asserts it exits 0."""
    os.write(master, b"\x11")
    out = b""
    deadline = time.monotonic() + timeout
    while proc.poll() is None and time.monotonic() < deadline:
        out += read_for(master, 0.2)
    assert proc.wait(timeout=5) == 0
    return out
