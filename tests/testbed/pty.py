"""Reading what a program in a pseudo-terminal writes (the real-terminal tests)."""

from __future__ import annotations

import os
import select
import time


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
