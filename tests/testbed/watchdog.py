"""A deadline for code that may never give the event loop back (a regex backtracking for minutes): after
`seconds` a helper process sends SIGUSR1 and the main thread raises TimeoutError where it is (Python's regex
engine stops on a signal). The signal comes from outside the interpreter: a thread of this process could not
run while the regex engine holds the GIL. The test then fails instead of hanging the run."""

from __future__ import annotations

import os
import signal
import subprocess
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any


@contextmanager
def watchdog(seconds: float, what: str) -> Iterator[None]:
    def expire(signum: int, frame: Any) -> None:
        raise TimeoutError(f"{what}: still running after {seconds:g} s")

    previous = signal.signal(signal.SIGUSR1, expire)
    helper = subprocess.Popen(["sh", "-c", f"sleep {seconds:g} && kill -USR1 {os.getpid()}"],
                              start_new_session=True)
    try:
        yield
    finally:
        os.killpg(helper.pid, signal.SIGKILL)  # the shell and its sleep
        helper.wait()
        signal.signal(signal.SIGUSR1, previous)
