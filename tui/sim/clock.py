"""The simulator's own clock: wall-clock driven with a speed factor, or manual (tests step it)."""

from __future__ import annotations

import threading
import time
from datetime import UTC, datetime


class SimClock:
    """Sim time in epoch seconds.

    `speed` 1.0 tracks the wall clock (so ages computed by stacktop against its own clock are right);
    other speeds compress the storyline and make sim timestamps run ahead of the wall clock: pair them
    with a `now` taken from `clock.now()`. `manual=True` freezes time until `advance()` is called.
    """

    def __init__(self, start: float | None = None, *, speed: float = 1.0, manual: bool = False) -> None:
        if speed <= 0:
            raise ValueError("speed must be > 0")
        self.start = float(int(time.time() if start is None else start))
        self.speed = speed
        self.manual = manual
        self._lock = threading.Lock()
        self._wall0 = time.monotonic()
        self._offset = 0.0  # manual steps, in sim seconds

    def time(self) -> float:
        with self._lock:
            if self.manual:
                return self.start + self._offset
            return self.start + (time.monotonic() - self._wall0) * self.speed + self._offset

    def now(self) -> datetime:
        return datetime.fromtimestamp(self.time(), UTC)

    def elapsed(self) -> float:
        return self.time() - self.start

    def advance(self, seconds: float) -> None:
        """Step sim time forward (any mode)."""
        if seconds < 0:
            raise ValueError("the sim clock only moves forward")
        with self._lock:
            self._offset += seconds
