"""Triage on the real test bed: the real collectors polled together, the triage rules over what they publish.

`Triage` polls a set of collectors every POLL_S through CollectorRunner (as the app does) and waits, with a
deadline, for a predicate over the hints; it keeps the timeline so a test can say when a hint appeared.
A deliberately killed process is kept dead by tests.testbed.openstack.KillGuard.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from tui.models.finding import Finding
from tui.models.observation import Observation
from tui.rules.triage import triage_hints
from tui.runner import CollectorRunner

POLL_S = 2.0


@dataclass
class Poll:
    t: float  # seconds since the Triage started
    observations: dict[str, Observation]
    hints: list[Finding]

    def kinds(self) -> list[tuple[str, str]]:
        return [(h.kind, h.subject) for h in self.hints]

    def findings(self) -> list[tuple[str, str]]:
        return sorted((f.kind, f.subject) for o in self.observations.values() for f in o.findings)


@dataclass
class Triage:
    collectors: list[Any]
    interval: float = POLL_S
    polls: list[Poll] = field(default_factory=list)
    t0: float = field(default_factory=time.monotonic)

    def __post_init__(self) -> None:
        self.runners = [CollectorRunner(c) for c in self.collectors]
        self.observations: dict[str, Observation] = {}

    async def once(self) -> Poll:
        for obs in await asyncio.gather(*(r.run_once() for r in self.runners)):
            self.observations[obs.source] = obs
        poll = Poll(time.monotonic() - self.t0, dict(self.observations), triage_hints(self.observations))
        self.polls.append(poll)
        return poll

    async def until(self, pred: Callable[[Poll], Any], *, timeout: float, what: str) -> Poll:
        deadline = time.monotonic() + timeout
        while True:
            start = time.monotonic()
            poll = await self.once()
            if pred(poll):
                return poll
            if time.monotonic() >= deadline:
                errors = {s: o.error for s, o in poll.observations.items() if o.error}
                raise AssertionError(f"timed out after {timeout:.0f} s waiting for {what}; last hints "
                                     f"{poll.kinds()}, findings {poll.findings()}, source errors {errors}")
            await asyncio.sleep(max(0.0, self.interval - (time.monotonic() - start)))

    async def aclose(self) -> None:
        await asyncio.gather(*(c.aclose() for c in self.collectors), return_exceptions=True)


