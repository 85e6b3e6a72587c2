"""Criticals never arrive out of view: new critical rows land at the top of the findings table; when the
viewport is scrolled down, the table goes back to its top if the cursor stays on screen there, else the status
line says how many criticals are above ("2 critical above ↑") until they are scrolled into view."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from tests.testbed.wait import until_pilot
from tui.app import StacktopApp
from tui.collectors.base import BaseCollector
from tui.config import Config, OpenStackConfig
from tui.models.finding import Finding
from tui.widgets.findings_pane import FindingsPane

WARNINGS = [Finding(severity="warning", kind="rabbitmq.queue_no_consumer", subject=f"queue-{i:02}",
                    summary="nobody reads it", source="services") for i in range(40)]
CRITICALS = [Finding(severity="critical", kind="nova.service_enabled_but_down", subject=f"compute-0{i}",
                     summary="down but enabled", source="services") for i in (1, 2)]


class Changing(BaseCollector):
    name = "services"
    interval = 0.2
    timeout = 5.0

    def __init__(self) -> None:
        self.out = list(WARNINGS)

    async def collect(self) -> dict[str, Any]:
        return {"ok": True}

    def findings(self, snapshot: Any, now: datetime) -> list[Finding]:
        return list(self.out)


def message(pane: FindingsPane) -> str:
    return str(pane.query_one(".pane-message").render())


async def scrolled_down(app: StacktopApp, pilot: Any, collector: Changing, cursor: int) -> FindingsPane:
    pane = app.query_one(FindingsPane)
    await until_pilot(pilot, lambda: len(pane.findings) == 40, "the warnings shown")
    app.show_source("findings")
    assert pane.table is not None
    pane.table.move_cursor(row=cursor, animate=False)
    pane.table.scroll_to(y=4, animate=False, immediate=True)
    await pilot.pause()
    assert pane.table.scroll_offset.y == 4
    collector.out = CRITICALS + WARNINGS
    app.action_refresh_now()
    await until_pilot(pilot, lambda: len(pane.findings) > 40, "the criticals arrive")
    await pilot.pause(0.2)
    return pane


async def test_new_criticals_scroll_the_table_to_its_top_when_the_cursor_stays_in_view() -> None:
    collector = Changing()
    app = StacktopApp(Config(openstack=OpenStackConfig(cloud="c")), collectors=[collector])
    async with app.run_test(size=(80, 24)) as pilot:
        pane = await scrolled_down(app, pilot, collector, cursor=6)
        assert pane.table is not None
        await until_pilot(pilot, lambda: pane.table.scroll_offset.y == 0, "the table back at its top")
        assert pane.table.shown_keys[0].startswith(("nova.", "triage.")), "the worst first, on screen"
        assert "above" not in message(pane)


async def test_criticals_above_a_far_cursor_are_counted_in_the_status_line() -> None:
    collector = Changing()
    app = StacktopApp(Config(openstack=OpenStackConfig(cloud="c")), collectors=[collector])
    async with app.run_test(size=(80, 24)) as pilot:
        pane = await scrolled_down(app, pilot, collector, cursor=30)
        assert pane.table is not None
        criticals = sum(1 for f in pane.findings if f.severity == "critical")
        assert criticals >= 2
        await until_pilot(pilot, lambda: f"{criticals} critical above ↑" in message(pane), "the criticals above, said")
        assert pane.table.cursor_row > 20, "the cursor stays where the engineer put it"
        pane.table.scroll_to(y=0, animate=False, immediate=True)
        await until_pilot(pilot, lambda: "above" not in message(pane), "scrolled up to them: no longer above")
