"""The envelope a collector runner publishes after every attempt."""

from __future__ import annotations

from dataclasses import field
from typing import Any

from tui.models.finding import Finding
from tui.records import record


@record
class Observation:
    """What one source looked like at one attempt.

    snapshot is the last *good* snapshot (kept when a later attempt fails); error is the reason the latest
    attempt failed, or None. ok_at / tried_at are epoch seconds (time.time()).
    """

    source: str
    snapshot: Any = None
    error: str | None = None
    ok_at: float | None = None
    tried_at: float | None = None
    duration_s: float | None = None
    findings: tuple[Finding, ...] = field(default_factory=tuple)
    configured: bool = True
    # the poll's judgement (tui.models.judged): this source's SourceView, and its cloud's CloudView as of this
    # poll; None for an observation nothing judged (built by hand, a source not run by a runner)
    view: Any = None
    cloud_view: Any = None

    @property
    def ok(self) -> bool:
        return self.error is None and self.ok_at is not None

    def age(self, now: float) -> float | None:
        """Seconds since the last good snapshot."""
        return None if self.ok_at is None else max(0.0, now - self.ok_at)

    def is_stale(self, now: float, interval: float) -> bool:
        """Stale = the data is older than three poll intervals (or the last attempt failed)."""
        if self.error is not None:
            return True
        age = self.age(now)
        return age is not None and age > max(3 * interval, interval + 10)
