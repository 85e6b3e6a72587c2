"""The first triage is drawn once: from the start of the sources until every pane has its source's first read,
no frame is drawn (each pane's fill would lay out and draw the whole screen again); a key ends the wait at
once, and so does FIRST_TRIAGE_HOLD_S when a source does not answer."""

from __future__ import annotations

import asyncio
from datetime import datetime
from typing import Any

import pytest

import tui.appparts.startup
from tests.testbed.render import rendered
from tests.testbed.wait import until_pilot
from tests.unit.test_triage_rules import TH, instances, rabbit, services
from tui.app import StacktopApp
from tui.collectors.base import BaseCollector
from tui.config import Config
from tui.models.finding import Finding
from tui.widgets.source_pane import SourcePane


class Gated(BaseCollector):
    """Its snapshot once `gate` is set (at once when there is no gate)."""

    def __init__(self, name: str, snapshot: Any, gate: asyncio.Event | None = None) -> None:
        self.name, self.snapshot, self.gate = name, snapshot, gate
        self.interval, self.timeout = 3600.0, 600.0

    async def collect(self) -> Any:
        if self.gate is not None:
            await self.gate.wait()
        return self.snapshot

    def findings(self, snapshot: Any, now: datetime) -> list[Finding]:
        return []


def pane(app: StacktopApp, source: str) -> SourcePane:
    return next(p for p in app.panes if source == p.SOURCE)


def filled(app: StacktopApp, source: str) -> bool:
    table = pane(app, source).table
    return pane(app, source).observation is not None and table is not None and table.row_count > 0


async def started(gate: asyncio.Event) -> tuple[StacktopApp, list[Gated]]:
    collectors = [Gated("services", services()), Gated("rabbitmq", rabbit(empty_queues=["conductor"])),
                  Gated("instances", instances(), gate)]
    return StacktopApp(Config(thresholds=TH), collectors=collectors), collectors  # type: ignore[arg-type]


async def test_no_frame_until_every_pane_has_its_first_read(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(tui.appparts.startup, "FIRST_TRIAGE_HOLD_S", 600.0)
    gate = asyncio.Event()
    app, _ = await started(gate)
    async with app.run_test(size=(160, 48)) as pilot:
        await until_pilot(pilot, lambda: filled(app, "services") and filled(app, "rabbitmq"), "two panes filled",
                          20.0, interval=0.05)
        frames = app.frames
        await pilot.pause(0.3)
        assert app.frames == frames, "a frame was drawn while the instances pane waited for its first read"
        gate.set()
        await until_pilot(pilot, lambda: app.frames > frames, "the first triage's frame", 20.0, interval=0.05)
        assert pane(app, "instances").observation is not None
        assert "nova-conductor" in rendered(app)


async def test_a_key_ends_the_wait_at_once(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(tui.appparts.startup, "FIRST_TRIAGE_HOLD_S", 600.0)
    gate = asyncio.Event()
    app, _ = await started(gate)
    async with app.run_test(size=(160, 48)) as pilot:
        await until_pilot(pilot, lambda: filled(app, "services"), "the services pane filled", 20.0, interval=0.05)
        frames = app.frames
        await pilot.press("tab")
        await until_pilot(pilot, lambda: app.frames > frames, "the key's frame", 20.0, interval=0.05)
        assert "nova-conductor" in rendered(app)
        gate.set()


async def test_a_source_that_does_not_answer_holds_no_longer_than_the_limit(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(tui.appparts.startup, "FIRST_TRIAGE_HOLD_S", 0.3)
    gate = asyncio.Event()  # never set: the instances source never answers
    app, _ = await started(gate)
    async with app.run_test(size=(160, 48)) as pilot:
        await until_pilot(pilot, lambda: filled(app, "services"), "the services pane filled", 20.0, interval=0.05)
        await until_pilot(pilot, lambda: "nova-conductor" in rendered(app), "the services rows drawn", 20.0,
                          interval=0.05)
        assert pane(app, "instances").observation is None
        gate.set()
