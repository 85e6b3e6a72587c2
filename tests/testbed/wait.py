"""Poll with a deadline: the servers show changes seconds later, a fixed sleep is either slow or flaky."""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any, TypeVar

T = TypeVar("T")


def wait_for(probe: Callable[[], T], *, timeout: float, what: str, interval: float = 0.5) -> T:
    """Call probe() until it returns something truthy; return that. TimeoutError names `what` and the last
    value (or exception) seen, so a failing test says what it was waiting for."""
    deadline = time.monotonic() + timeout
    last: object = None
    while True:
        try:
            value = probe()
            if value:
                return value
            last = value
        except Exception as exc:  # a server restarting answers with errors for a while
            last = f"{type(exc).__name__}: {exc}"
        if time.monotonic() >= deadline:
            raise TimeoutError(f"timed out after {timeout:.0f} s waiting for {what} (last: {last!r})")
        time.sleep(interval)


async def until_pilot(pilot: Any, probe: Callable[[], T], what: str, timeout: float = 30.0,
                      interval: float = 0.2) -> T:
    """wait_for inside a Pilot test: the app keeps running between probes."""
    deadline = time.monotonic() + timeout
    while True:
        value = probe()
        if value:
            return value
        if time.monotonic() >= deadline:
            raise AssertionError(f"timed out after {timeout:.0f} s waiting for {what}")
        await pilot.pause(interval)
