"""A replay offers only what works there: no note or refresh key, no command that reads the cloud itself;
`]` / `[` step a fixed, shown amount; the breadcrumb names what is replayed; a source with nothing recorded
yet is absent, not "failing"."""

from __future__ import annotations

from datetime import datetime
from pathlib import Path
from typing import Any

from tests.testbed.wait import until_pilot
from tests.unit.test_replay_ui import record_sim
from tui import commands
from tui.app import StacktopApp
from tui.collectors.base import BaseCollector
from tui.config import Config
from tui.errors import SourceAbsent
from tui.models.finding import Finding
from tui.replay import Player
from tui.replay_app import STEP_S, ReplayApp
from tui.widgets.breadcrumb import Breadcrumb
from tui.widgets.findings_pane import FindingsPane


def footer(app: StacktopApp) -> dict[str, str]:
    return {b.binding.key: b.binding.description for b in app.screen.active_bindings.values()
            if b.binding.show and b.enabled}


async def test_a_replay_offers_only_what_works_and_steps_a_shown_amount(tmp_path: Path) -> None:
    path, _seen, _host = await record_sim(tmp_path)
    player = Player.from_journal(path)
    player.clock.pause()
    app = ReplayApp(Config(), player, name=path.name)
    async with app.run_test(size=(160, 48)) as pilot:
        await pilot.pause()
        keys = footer(app)
        assert "n" not in keys and "r" not in keys, keys
        assert keys.get("right_square_bracket") == f"+{STEP_S:g}s" and keys.get("left_square_bracket") == \
            f"-{STEP_S:g}s", keys
        assert f"] [ ±{STEP_S:g}s" in app._topbar_text()
        assert "trace-down" not in commands.complete("tr", replaying=True)
        assert app.query_one("#breadcrumb", Breadcrumb).text.startswith("j.jsonl > "), "what is replayed"
        start, end = player.timeline.start, player.timeline.end
        await pilot.press("right_square_bracket")
        await pilot.pause()
        assert player.clock.now() == min(end, start + STEP_S)
        told = [str(n.message) for n in app._notifications]  # on the status line (a newer notice may follow)
        assert any(f"+{min(end - start, STEP_S):.0f} s: at" in m for m in told), told
        await pilot.press("left_square_bracket")
        await pilot.pause()
        assert player.clock.now() == start
        await pilot.press("n", "p")  # no note line opens: p is the pause key it is
        await pilot.pause()
        assert not any(box.has_class("-shown") for box in app.query("Input"))


class NotYetRecorded(BaseCollector):
    name = "placement"
    interval = 0.2
    timeout = 5.0

    async def collect(self) -> Any:
        raise SourceAbsent("replay: placement was not recorded yet at this point of the journal")

    def findings(self, snapshot: Any, now: datetime) -> list[Finding]:
        return []


async def test_a_source_not_recorded_yet_is_not_failing() -> None:
    app = StacktopApp(Config(), collectors=[NotYetRecorded()])
    async with app.run_test(size=(160, 48)) as pilot:
        pane = app.query_one(FindingsPane)
        await until_pilot(pilot, lambda: "placement" in pane.by_source, "its observation")
        pane.refresh_freshness(app.clock())
        assert "failing" not in str(pane.border_subtitle), pane.border_subtitle
