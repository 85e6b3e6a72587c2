"""The findings pane under a flood: thousands of findings of one kind are one row with their count, the status
line counts all of them, and a poll rebuilds only the rows that changed (a poll of any source used to rebuild
every finding row)."""

from __future__ import annotations

from datetime import datetime
from typing import Any

import pytest

from tests.testbed.wait import until_pilot
from tests.unit.test_triage_rules import NOW, TH, rabbit
from tui.app import StacktopApp
from tui.collectors.base import BaseCollector
from tui.config import Config
from tui.models.finding import Finding
from tui.widgets import findings_pane
from tui.widgets.findings_pane import FindingsPane


class Flooding(BaseCollector):
    """A source whose findings are whatever the test put in `findings`."""

    name = "rabbitmq"

    def __init__(self) -> None:
        self.interval, self.timeout = 3600.0, 5.0
        self.current: list[Finding] = []

    async def collect(self) -> Any:
        return rabbit()

    def findings(self, snapshot: Any, now: datetime) -> list[Finding]:
        return list(self.current)


def _stale(n: int) -> list[Finding]:
    return [Finding("info", "placement.stale_allocation", f"consumer-{i:05d}", f"stale allocation {i}",
                    {}, "", "rabbitmq") for i in range(n)]


def _warnings(changed: str = "") -> list[Finding]:
    return [Finding("warning", "rabbitmq.queue_growing", f"q{i}", f"queue q{i} grows{changed if i == 2 else ''}",
                    {}, "", "rabbitmq") for i in range(5)]


def _cell(pane: FindingsPane, key: str, column: str) -> str:
    assert pane.table is not None
    value = pane.table.get_cell(key, column)
    return getattr(value, "plain", str(value))


async def test_a_flood_is_one_row_and_a_poll_rebuilds_only_the_rows_that_changed(
        monkeypatch: pytest.MonkeyPatch) -> None:
    source = Flooding()
    source.current = _stale(3000) + _warnings()
    app = StacktopApp(Config(thresholds=TH), collectors=[source],  # type: ignore[arg-type]
                      clock=lambda: NOW.timestamp())
    async with app.run_test(size=(160, 48)) as pilot:
        pane = app.query_one(FindingsPane)
        await until_pilot(pilot, lambda: pane.table is not None and pane.table.row_count == 6, "six rows", 20.0,
                          interval=0.05)
        assert pane.table is not None
        assert "placement.stale_allocation|*" in pane.table.shown_keys
        assert "3,000 findings" in _cell(pane, "placement.stale_allocation|*", "summary")
        assert "5 warning" in pane._message_text and "3000 info" in pane._message_text

        built: list[str] = []
        real = getattr(findings_pane, "finding_row", None)

        def counting(f: Finding, since: str, until: float | None) -> Any:
            built.append(f.subject)
            assert real is not None
            return real(f, since, until)

        monkeypatch.setattr(findings_pane, "finding_row", counting, raising=False)
        # one warning reads differently and the flood grows: two rows rebuilt, the four others kept as they are
        source.current = _stale(3100) + _warnings(changed=" faster")
        app.action_refresh_now()
        await until_pilot(pilot, lambda: _cell(pane, "rabbitmq.queue_growing|q2", "summary").endswith("faster"),
                          "the changed row", 20.0, interval=0.05)
        assert "3,100 findings" in _cell(pane, "placement.stale_allocation|*", "summary")
        assert sorted(built) == ["*", "q2"]
        assert pane.table.row_count == 6

        # the same findings again: no row rebuilt
        built.clear()
        source.current = list(source.current)
        app.action_refresh_now()
        await pilot.pause(0.5)
        assert built == []
