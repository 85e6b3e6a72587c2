"""`stacktop replay JOURNAL`: the dashboard, fed by replay collectors (tui.replay) instead of live ones.

Same panes, same runners, same findings pane: only the collectors and the clock differ. The app's clock is the
replay clock, so ages, freshness and the top bar show recorded time: it stands still while paused and stops at
the journal's last event (END), and each replayed observation carries the time its snapshot was recorded, so
every age, countdown and late/down judgement is the recorded poll's, at any speed. `p` pauses (the clock and the
runners), `+` / `-` double / halve the speed, `]` / `[` step STEP_S ahead / back (within the journal; the footer
and the top bar say how far). Notes and exercise results are told on the status line as the replay passes them.
No journal is written while replaying, so there is no note key; nothing is refreshed but by the replay clock, so
there is no `r`; the footer, help and `:` offer only what works here. The breadcrumb starts with the recorded
cloud (or, for a journal of one cloud, which does not name it, the journal's name).
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

TOAST_HEAD = 600  # characters of a journal's note or exercise text copied into a notice (App.notify cuts at 500)
STEP_S = 60.0  # `]` / `[`: how far one step moves the replay clock (recorded time)
NOT_IN_A_REPLAY = ("note", "refresh_now")  # keys of the live dashboard that do nothing in a replay: not offered


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
        Binding("right_square_bracket", "skip", f"+{STEP_S:g}s", tooltip=f"step {STEP_S:g} s ahead (recorded time)"),
        Binding("left_square_bracket", "back_step", f"-{STEP_S:g}s", tooltip=f"step {STEP_S:g} s back (recorded time)"),
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
                f"{player.position()}  (+/- speed, ] [ ±{STEP_S:g}s, p pause)")

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

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        if action in NOT_IN_A_REPLAY:
            return False  # not in the footer, and the key does nothing
        return super().check_action(action, parameters)

    def main_crumb(self) -> str:
        """The recorded cloud first (or the journal's name), then the pane as on the live dashboard."""
        from tui.breadcrumb import join

        return join((self.player.timeline.cloud or self.journal_name, super().main_crumb()))

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
        self._step(STEP_S)

    def action_back_step(self) -> None:
        self._step(-STEP_S)

    def _step(self, seconds: float) -> None:
        """Move the replay clock `seconds` (within the journal) and say how far it moved, and where it is."""
        timeline, clock = self.player.timeline, self.player.clock
        before = clock.now()
        to = max(timeline.start, min(timeline.end, before + seconds))
        clock.jump(to)
        if to < before:
            self._shown_until = to  # notes passed again are told again
        for runner in self.runners.values():
            runner.refresh_now()
        self._retop()
        edge = " (the end of the journal)" if to >= timeline.end else " (its start)" if to <= timeline.start else ""
        self.notify(f"{to - before:+.0f} s: at {self.player.position()}{edge}", timeout=3)
