"""Drive a collector the way the runner does (collect, then the rules with `now`) and keep every poll, so an
integration test waits on what stacktop reports, with a deadline. Shared by the services and instances areas."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any, Generic, Protocol, TypeVar

from tui.models.finding import Finding

S = TypeVar("S")


class Collects(Protocol[S]):
    timeout: float

    async def collect(self) -> S: ...

    def findings(self, snapshot: S, now: datetime) -> list[Finding]: ...


@dataclass
class Poll(Generic[S]):
    t: float  # seconds since the poller started
    took: float
    snapshot: S
    findings: list[Finding]

    def kinds(self, kind: str) -> list[Finding]:
        return [f for f in self.findings if f.kind == kind]

    def about(self, subject: str, kind: str) -> Finding | None:
        return next((f for f in self.findings if f.kind == kind and f.subject == subject), None)


def describe_findings(poll: Poll[Any]) -> str:
    return f"findings {[(f.kind, f.subject[:8], f.summary[:80]) for f in poll.findings]}"


@dataclass
class Poller(Generic[S]):
    collector: Any  # Collects[S]: a services or instances collector
    interval: float
    describe: Callable[[Poll[S]], str] = describe_findings  # what a timeout says of the last poll
    polls: list[Poll[S]] = field(default_factory=list)
    t0: float = field(default_factory=time.monotonic)

    async def once(self) -> Poll[S]:
        start = time.monotonic()
        snap = await asyncio.wait_for(self.collector.collect(), timeout=self.collector.timeout)
        findings = self.collector.findings(snap, datetime.now(UTC))
        poll = Poll(start - self.t0, time.monotonic() - start, snap, findings)
        self.polls.append(poll)
        return poll

    async def until(self, pred: Callable[[Poll[S]], Any], *, timeout: float, what: str) -> Poll[S]:
        """Poll every `interval` until pred(poll) is truthy; TimeoutError names `what` and the last poll (or
        the last failure: a failing poll counts as "not yet", as in the runner)."""
        deadline = time.monotonic() + timeout
        while True:
            start = time.monotonic()
            last: object
            try:
                poll = await self.once()
            except (Exception, TimeoutError) as exc:
                last = f"poll failed: {type(exc).__name__}: {exc}"
            else:
                if pred(poll):
                    return poll
                last = self.describe(poll)
            if time.monotonic() >= deadline:
                raise TimeoutError(f"timed out after {timeout:.0f} s waiting for {what}; last: {last}")
            await asyncio.sleep(max(0.0, self.interval - (time.monotonic() - start)))
