"""The finding screen's looks (SVG snapshots): a finding whole, and the same finding once it cleared.

Deterministic: one scripted source with a frozen clock that polls only when asked, times shown in UTC. A failure
shows the visual diff in snapshot_report.html; review it, and only then update with `--snapshot-update`.
"""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

from tests.testbed.wait import until_pilot
from tui.app import StacktopApp
from tui.collectors.base import BaseCollector
from tui.config import Config
from tui.models.finding import Finding
from tui.screens.finding import FindingScreen
from tui.widgets.findings_pane import FindingsPane

FROZEN = 1_790_000_000.0  # 2026-09-21 14:13:20 UTC
KEY = "nova.service_enabled_but_down|compute-02"


def down_finding() -> Finding:
    return Finding(
        severity="critical", kind="nova.service_enabled_but_down", subject="compute-02",
        summary="nova-compute on compute-02 is down but enabled: no heartbeat for 1m (down after 60 s); it is still "
                "offered work it cannot do",
        evidence={"binary": "nova-compute", "host": "compute-02", "zone": "nova", "status": "enabled",
                  "state": "down", "updated_at": datetime.fromtimestamp(FROZEN - 75, UTC), "heartbeat_age_s": 75.0,
                  "down_time_s": 60, "forced_down": False,
                  "disabled_reason": "[b]tenant markup[/b] \x1b[31mand a terminal control",
                  "command": ["openstack", "compute", "service", "set", "--disable", "compute-02", "nova-compute"]},
        next_step="on compute-02: is nova-compute running, what does its log say? If it runs, its reports do not "
                  "arrive: check nova-conductor and RabbitMQ. Until fixed: openstack compute service set --disable "
                  "compute-02 nova-compute",
        source="services")


class Scripted(BaseCollector):
    """Reports the finding while `down` holds; polls only when asked (a long interval)."""

    name = "compute"
    interval = 3600.0
    timeout = 5.0

    def __init__(self) -> None:
        self.down = True

    async def collect(self) -> Any:
        return {"down": self.down}

    def findings(self, snapshot: Any, now: datetime) -> list[Finding]:
        return [down_finding()] if snapshot["down"] else []


async def open_finding(app: StacktopApp, pilot: Any) -> FindingScreen:
    pane = app.query_one(FindingsPane)
    await until_pilot(pilot, lambda: pane.table is not None and KEY in pane.table.shown_keys, "the finding", 15,
                      interval=0.05)
    await until_pilot(pilot, lambda: pane.toasts, "its toast", 15, interval=0.05)
    assert pane.table is not None
    app._activate(app.panes.index(pane))
    pane.table.move_cursor(row=pane.table.get_row_index(KEY))
    await pilot.press("enter")
    screen = await until_pilot(pilot, lambda: isinstance(app.screen, FindingScreen) and app.screen,
                               "the finding screen", 15, interval=0.05)
    app.clear_notifications()
    return screen  # type: ignore[no-any-return]


def test_finding_screen_snapshot(snap_compare, utc) -> None:  # type: ignore[no-untyped-def]
    app = StacktopApp(Config(), collectors=[Scripted()], clock=lambda: FROZEN)

    async def run_before(pilot: Any) -> None:
        await open_finding(app, pilot)
        await pilot.pause()

    assert snap_compare(app, terminal_size=(120, 34), run_before=run_before)


def test_finding_screen_cleared_snapshot(snap_compare, utc) -> None:  # type: ignore[no-untyped-def]
    clock = [FROZEN]
    source = Scripted()
    app = StacktopApp(Config(), collectors=[source], clock=lambda: clock[0])

    async def run_before(pilot: Any) -> None:
        screen = await open_finding(app, pilot)
        source.down = False
        clock[0] += 42
        app.action_refresh_now()
        await until_pilot(pilot, lambda: screen.cleared_at is not None, "the finding to clear", 15, interval=0.05)
        await pilot.pause()

    assert snap_compare(app, terminal_size=(120, 34), run_before=run_before)
