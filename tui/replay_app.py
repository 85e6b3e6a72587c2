"""`stacktop replay JOURNAL`: the dashboard, fed by replay collectors (tui.replay) instead of live ones.

Same panes, same runners, same findings pane: only the collectors and the clock differ. The app's clock is the
replay clock, so ages, freshness and the top bar show recorded time: it stands still while paused and stops at
the journal's last event (END), and each replayed observation carries the time its snapshot was recorded, so
every age, countdown and late/down judgement is the recorded poll's, at any speed. `p` pauses (the clock and the
runners), `+` / `-` double / halve the speed, `]` jumps a minute ahead. Notes and exercise results pop up as the replay
passes them. No journal is written while replaying.
"""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path
from typing import ClassVar

from textual.binding import Binding, BindingType

import tui.app
from tui.app import StacktopApp, TopBar
from tui.config import Config
from tui.freshness import human_age
from tui.models.observation import Observation
from tui.replay import Player, cut_message
from tui.safetext import escape

TOAST_HEAD = 600  # characters of a journal's note or exercise text copied into a toast (App.notify cuts at 500)


def _head(value: object) -> str:
    text = value if isinstance(value, str) else str(value)
    return text[:TOAST_HEAD]


class ReplayApp(StacktopApp):
    CSS_PATH = str(Path(tui.app.__file__).with_name("app.tcss"))
    TITLE = "stacktop replay"
    replaying = True  # drill-down screens read nothing live (tui.screens.context)
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("plus", "faster", "Faster", tooltip="replay twice as fast"),
        Binding("minus", "slower", "Slower", tooltip="replay half as fast"),
        Binding("right_square_bracket", "skip", "+1 min", tooltip="jump a minute ahead"),
    ]

    def __init__(self, config: Config, player: Player, *, name: str = "journal") -> None:
        super().__init__(config, collectors=list(player.collectors), clock=player.clock.now, recorder=None)
        self.player = player
        self.journal_name = name
        self._shown_until = player.timeline.start - 1

    def on_mount(self) -> None:  # Textual calls StacktopApp.on_mount too (each class's handler, base first)
        # the runners wait a recorded interval between polls (their collectors' interval: staleness is judged
        # as recorded); the replay reads its next frame every poll_s of real time while its clock runs
        self.set_interval(self.player.poll_s, self._follow_clock)

    def _follow_clock(self) -> None:
        if self.player.clock.paused or self.paused:
            return
        for runner in self.runners.values():
            runner.refresh_now()

    def _topbar_text(self) -> str:
        player = getattr(self, "player", None)
        if player is None:  # during StacktopApp.__init__/compose
            return "[b]stacktop[/b] replay"
        now = player.clock.now()
        clock = datetime.fromtimestamp(min(now, player.timeline.end), UTC).strftime("%Y-%m-%d %H:%M:%SZ")
        if player.finished:
            state = "[reverse] END [/]"
        elif player.clock.paused:
            state = "[reverse] PAUSED [/]"
        else:
            state = f"at {player.clock.speed:g}x"
        return (f"[b]stacktop[/b]  replaying {escape(self.journal_name)} {state}  recorded {clock}  "
                f"{player.position()}  (+/- speed, ] skip, p pause)")

    def _tick(self) -> None:
        super()._tick()
        now = self.player.clock.now()
        for event in self.player.timeline.notes_between(self._shown_until, now):
            # a crafted journal's note may be megabytes: only what a toast shows is copied (App.notify cuts there)
            if event.get("type") == "note":
                self.notify(f"note ({_head(event.get('subject'))}): {_head(event.get('text'))}", timeout=6)
            elif event.get("type") in ("cut", "snapshot_omitted"):
                self.notify(cut_message(event), severity="warning", timeout=8)
            else:
                self.notify(f"exercise {_head(event.get('name'))}: {_head(event.get('summary'))}", timeout=8)
        self._shown_until = now

    def border_freshness(self, obs: Observation | None, now: float, interval: float,
                         configured: bool) -> tuple[str, str]:
        """A pane's border in a replay: how often the source was recorded, not the replay's own polling."""
        text, level = super().border_freshness(obs, now, interval, configured)
        if level != "ok" or self.paused or obs is None:
            return text, level
        source = obs.source
        recorded = self.player.timeline.recorded_interval(source)
        return ("replayed · recorded every " + human_age(recorded) if recorded else "replayed"), level

    def action_note(self) -> None:
        self.notify("a replay writes no notes: notes go into the journal of a live session", severity="warning")

    def _retop(self) -> None:
        if self.screen_stack:
            self.screen_stack[0].query_one("#topbar", TopBar).update(self._topbar_text())

    def action_toggle_pause(self) -> None:
        if self.player.clock.paused:
            self.player.clock.resume()
        else:
            self.player.clock.pause()
        super().action_toggle_pause()

    def action_faster(self) -> None:
        self.player.clock.set_speed(self.player.clock.speed * 2)
        self._retop()

    def action_slower(self) -> None:
        self.player.clock.set_speed(self.player.clock.speed / 2)
        self._retop()

    def action_skip(self) -> None:
        self.player.clock.jump(self.player.clock.now() + 60)
        self.action_refresh_now()
        self._retop()
