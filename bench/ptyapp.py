"""Drive a terminal app in a real pseudo-terminal: spawn, read everything it writes (timestamped), send keys.

The reader thread records every chunk the app writes with its arrival time, so a benchmark can ask "when did
the screen first change after this key" or "how many bytes were written in this window".
"""

from __future__ import annotations

import contextlib
import fcntl
import os
import signal
import struct
import subprocess
import termios
import threading
import time
from collections.abc import Sequence
from pathlib import Path


def _die_with_parent() -> None:
    """In the child before exec: SIGTERM when the benchmark dies (Linux), so no app outlives a killed run."""
    try:
        import ctypes

        ctypes.CDLL("libc.so.6", use_errno=True).prctl(1, signal.SIGTERM)  # PR_SET_PDEATHSIG
    except (OSError, AttributeError):
        pass


class PtyApp:
    def __init__(self, argv: Sequence[str], *, cols: int = 160, rows: int = 50, env: dict[str, str] | None = None,
                 cwd: str | Path | None = None) -> None:
        self.argv = list(argv)
        self.cols, self.rows = cols, rows
        self.env = {**os.environ, "TERM": "xterm-256color", "COLORTERM": "truecolor", **(env or {})}
        self.env.pop("NO_COLOR", None)
        # COLUMNS/LINES override the pty's size in the child (shutil.get_terminal_size reads them first); a
        # process started under pytest inherits COLUMNS=80 LINES=24 at C level and gave the app an 80x24 screen
        self.env.pop("COLUMNS", None)
        self.env.pop("LINES", None)
        self.env.pop("PYTHONDONTWRITEBYTECODE", None)  # use the compiled modules, as an installed app does
        self.cwd = cwd
        self.chunks: list[tuple[float, bytes]] = []
        self._lock = threading.Lock()
        self._cond = threading.Condition(self._lock)
        self.proc: subprocess.Popen[bytes] | None = None
        self.started_at = 0.0
        self._fd = -1

    # -- life cycle
    def start(self) -> PtyApp:
        master, slave = os.openpty()
        fcntl.ioctl(slave, termios.TIOCSWINSZ, struct.pack("HHHH", self.rows, self.cols, 0, 0))
        self.started_at = time.perf_counter()
        self.proc = subprocess.Popen(self.argv, stdin=slave, stdout=slave, stderr=slave, env=self.env,
                                     cwd=self.cwd, start_new_session=True, close_fds=True,
                                     preexec_fn=_die_with_parent)
        os.close(slave)
        self._fd = master
        threading.Thread(target=self._read, daemon=True, name="pty-reader").start()
        return self

    def _read(self) -> None:
        while True:
            try:
                data = os.read(self._fd, 1 << 16)
            except OSError:
                data = b""
            now = time.perf_counter()
            with self._cond:
                if not data:
                    self.chunks.append((now, b""))
                    self._cond.notify_all()
                    return
                self.chunks.append((now, data))
                self._cond.notify_all()

    @property
    def pid(self) -> int:
        assert self.proc is not None
        return self.proc.pid

    def alive(self) -> bool:
        return self.proc is not None and self.proc.poll() is None

    def stop(self, quit_key: bytes = b"\x11") -> None:
        """ctrl+q, then SIGTERM, then SIGKILL (only this process group, which we started)."""
        if self.proc is None:
            return
        with contextlib.suppress(OSError):
            self.send(quit_key)
        try:
            self.proc.wait(timeout=5)
        except subprocess.TimeoutExpired:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(self.proc.pid, signal.SIGTERM)
            try:
                self.proc.wait(timeout=5)
            except subprocess.TimeoutExpired:
                with contextlib.suppress(ProcessLookupError):
                    os.killpg(self.proc.pid, signal.SIGKILL)
                self.proc.wait(timeout=5)
        with contextlib.suppress(OSError):
            os.close(self._fd)

    # -- input
    def send(self, keys: bytes) -> float:
        t = time.perf_counter()
        os.write(self._fd, keys)
        return t

    # -- output
    def mark(self) -> int:
        with self._lock:
            return len(self.chunks)

    def wait_output(self, since: int, *, contains: bytes | None = None, timeout: float = 10.0) -> float | None:
        """Arrival time of the first chunk at index >= since (containing `contains`, which may span chunks)."""
        deadline = time.perf_counter() + timeout
        with self._cond:
            while True:
                seen = b""
                for i in range(since, len(self.chunks)):
                    t, data = self.chunks[i]
                    if not data:
                        return None
                    if contains is None:
                        return t
                    seen = seen[-len(contains):] + data
                    if contains in seen:
                        return t
                left = deadline - time.perf_counter()
                if left <= 0:
                    return None
                self._cond.wait(left)

    def quiet_for(self, seconds: float, timeout: float = 30.0, since: float | None = None) -> bool:
        """Wait until nothing was written for `seconds` (the screen settled), counting from `since` at the
        earliest (a perf_counter time): quiet *after* that moment, not only before it."""
        deadline = time.perf_counter() + timeout
        while time.perf_counter() < deadline:
            with self._lock:
                last = self.chunks[-1][0] if self.chunks else self.started_at
            if since is not None:
                last = max(last, since)
            if time.perf_counter() - last >= seconds:
                return True
            time.sleep(min(0.05, seconds))
        return False

    def written(self, t0: float, t1: float) -> tuple[int, int]:
        """(bytes, writes) that arrived in [t0, t1)."""
        with self._lock:
            sel = [len(d) for t, d in self.chunks if t0 <= t < t1]
        return sum(sel), len(sel)

    def chunks_between(self, t0: float, t1: float) -> list[tuple[float, bytes]]:
        """Every (arrival time, bytes) in [t0, t1): what was written, to see why."""
        with self._lock:
            return [(t, d) for t, d in self.chunks if t0 <= t < t1 and d]

    def text(self) -> bytes:
        with self._lock:
            return b"".join(d for _, d in self.chunks)
