"""Scripted fake collectors for runner, snapshot and UI tests (not a stand-in for any real server)."""

from __future__ import annotations

import asyncio
from collections.abc import Iterable
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from tui.collectors.base import BaseCollector
from tui.errors import SourceError
from tui.models.finding import Finding


@dataclass(frozen=True)
class FakeSnapshot:
    value: int


class ScriptedCollector(BaseCollector):
    """Plays a script: an int -> snapshot with that value; "fail" -> SourceError; "hang" -> sleeps;
    "boom" -> a bug (RuntimeError). Repeats the last step when the script runs out."""

    def __init__(self, name: str, script: Iterable[Any], *, interval: float = 0.01, timeout: float = 0.2,
                 severity: str | None = None) -> None:
        self.name = name
        self.interval = interval
        self.timeout = timeout
        self.script = list(script)
        self.calls = 0
        self.active = 0
        self.max_active = 0
        self.closed = False
        self.severity = severity

    async def collect(self) -> FakeSnapshot:
        step = self.script[min(self.calls, len(self.script) - 1)]
        self.calls += 1
        self.active += 1
        self.max_active = max(self.max_active, self.active)
        try:
            if step == "fail":
                raise SourceError(f"{self.name} at http://example.invalid: 401 Unauthorized - check [x] user")
            if step == "hang":
                await asyncio.sleep(3600)
            if step == "boom":
                raise RuntimeError("collector bug\nsecond line")
            await asyncio.sleep(0)
            return FakeSnapshot(int(step))
        finally:
            self.active -= 1

    def findings(self, snapshot: FakeSnapshot, now: datetime) -> list[Finding]:
        if self.severity is None:
            return []
        return [Finding(severity=self.severity, kind=f"{self.name}.test", subject=f"thing-{snapshot.value}",  # type: ignore[arg-type]
                        summary="a test finding", evidence={"value": snapshot.value, "at": now},
                        next_step="look at it", source=self.name)]

    async def aclose(self) -> None:
        self.closed = True
