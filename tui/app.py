"""The Textual app: wiring, bindings, screens. It only renders what the runners publish."""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import ClassVar

from textual import on
from textual.app import App, ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Grid
from textual.events import Resize
from textual.message import Message
from textual.theme import Theme
from textual.widgets import DataTable, Footer, Input, Static

from tui import commands, gcpolicy
from tui.collectors.base import Collector
from tui.config import Config
from tui.models.observation import Observation
from tui.recorder import Recorder
from tui.runner import CollectorRunner
from tui.screens.help import HelpScreen
from tui.widgets.command_input import CommandInput, StacktopCommands
from tui.widgets.findings_pane import FindingsPane
from tui.widgets.panes import PANE_ORDER, pane_class
from tui.widgets.source_pane import SourcePane
from tui.widgets.too_small import TooSmall, too_small
from tui.widgets.too_small import message as too_small_message
from tui.widgets.triage_row import TriageRow

NARROW_WIDTH = 120

# Plain black and white with bright, distinct severities: for projectors, low-vision users and bad terminals.
HIGH_CONTRAST = Theme(
    name="stacktop-high-contrast", primary="#ffffff", secondary="#ffff00", accent="#00ffff",
    foreground="#ffffff", background="#000000", surface="#000000", panel="#1a1a1a",
    success="#00ff00", warning="#ffff00", error="#ff3030", dark=True,
)
NARROW_HEIGHT = 34


class ObservationMessage(Message):
    """A runner's latest observation. A slow UI drops older ones of the same source."""

    def __init__(self, observation: Observation) -> None:
        super().__init__()
        self.observation = observation

    def can_replace(self, message: Message) -> bool:
        return isinstance(message, ObservationMessage) and message.observation.source == self.observation.source


class TopBar(Static):
    DEFAULT_CSS = "TopBar { height: 1; background: $panel; color: $text; padding: 0 1; }"


class StacktopApp(App[None]):
    CSS_PATH = "app.tcss"
    TITLE = "stacktop"
    ENABLE_COMMAND_PALETTE = True
    AUTO_FOCUS = None
    COMMANDS = App.COMMANDS | {StacktopCommands}

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("question_mark", "help", "Help", tooltip="this help"),
        Binding("q", "quit", "Quit", tooltip="quit stacktop"),
        Binding("p", "toggle_pause", "Pause", tooltip="pause / resume refresh"),
        Binding("r", "refresh_now", "Refresh", tooltip="refresh every source now"),
        Binding("slash", "filter", "Filter", tooltip="filter the focused table (regex, ! inverts, esc clears)"),
        Binding("colon", "command", "Command", tooltip="command mode (:host NAME, :server ID, ...)"),
        Binding("n", "note", "Note", tooltip="write a note on the selected row (or the session) to the journal"),
        Binding("tab", "next_pane", "Next pane", priority=True, tooltip="next pane"),
        Binding("shift+tab", "previous_pane", "Prev pane", show=False, priority=True, tooltip="previous pane"),
        Binding("enter", "drill_down", "Drill down", show=False, tooltip="drill down into the selected row"),
        Binding("escape", "back", "Back", show=False, tooltip="back / close / clear the filter"),
    ]

    def __init__(
        self,
        config: Config | None = None,
        *,
        collectors: list[Collector] | None = None,
        clock: Callable[[], float] = time.time,
        recorder: Recorder | None = None,
        galera_connector: object | None = None,
    ) -> None:
        super().__init__()
        self.config = config or Config()
        self._given_collectors = collectors
        self.runners: dict[str, CollectorRunner] = {}
        self.observations: dict[str, Observation] = {}
        self.paused = False
        self.active_index = 0
        self.clock = clock
        self.recorder = recorder
        self.galera_connector = galera_connector
        self.command_history = commands.History()
        self._topbar_shown = ""

    # ----- layout -------------------------------------------------------------------------------------
    def _configured(self, source: str) -> tuple[bool, float]:
        c = self.config
        if self._given_collectors is not None:
            intervals = {col.name: col.interval for col in self._given_collectors}
            return source in intervals, intervals.get(source, 10.0)
        if source in ("services", "instances"):
            return bool(c.openstack.cloud), c.openstack.interval
        if source == "rabbitmq":
            return c.rabbitmq.configured, c.rabbitmq.interval
        if source == "galera":
            return c.galera.configured, c.galera.interval
        return False, 10.0

    def compose(self) -> ComposeResult:
        yield TooSmall(id="too-small")
        yield TopBar(self._topbar_text(), id="topbar")
        yield TriageRow(id="triage")
        with Grid(id="panes"):
            for source, title in PANE_ORDER:
                configured, interval = self._configured(source)
                cls = pane_class(source, title)
                yield cls(interval=interval, configured=configured, id=f"pane-{source}")
            yield FindingsPane(interval=10.0, configured=True, id="pane-findings")
        yield Input(placeholder="filter: regex, !inverts, esc clears", id="filter")
        yield Input(placeholder="note (enter saves, esc cancels)", id="note")
        yield CommandInput(placeholder=":command (tab completes, up/down history, esc cancels)", id="command")
        yield Footer()

    @property
    def panes(self) -> list[SourcePane]:
        if not self.screen_stack:  # shutting down
            return []
        return list(self.screen_stack[0].query(SourcePane))

    def on_mount(self) -> None:
        self.register_theme(HIGH_CONTRAST)
        self._apply_size(self.size.width, self.size.height)
        self._activate(0)
        self.set_interval(1.0, self._tick)
        self.call_after_refresh(self._start_sources)

    def on_resize(self, event: Resize) -> None:
        self._apply_size(event.size.width, event.size.height)

    def _apply_size(self, width: int, height: int) -> None:
        self.screen_stack[0].set_class(width < NARROW_WIDTH or height < NARROW_HEIGHT, "-narrow")
        small = too_small(width, height)
        self.screen_stack[0].set_class(small, "-too-small")
        if small:
            self.screen_stack[0].query_one("#too-small", TooSmall).update(too_small_message(width, height))

    # ----- sources ------------------------------------------------------------------------------------
    def _start_sources(self) -> None:
        """After the first paint: build collectors (heavy imports happen here) and start one runner each."""
        if self._given_collectors is not None:
            collectors = self._given_collectors
        else:
            from tui.collectors.registry import build_collectors

            collectors = build_collectors(self.config, galera_connector=self.galera_connector)
        for collector in collectors:
            runner = CollectorRunner(collector, self._publish, clock=self.clock)
            runner.paused = self.paused
            self.runners[collector.name] = runner
            self.run_worker(runner.run(), name=collector.name, group=f"collector:{collector.name}",
                            exclusive=True, exit_on_error=False)

    def _publish(self, observation: Observation) -> None:
        self.post_message(ObservationMessage(observation))

    def on_observation_message(self, message: ObservationMessage) -> None:
        obs = message.observation
        self.observations[obs.source] = obs
        gcpolicy.after_poll()  # no 100-300 ms full collections of the big heap in the middle of a keypress
        if self.recorder is not None:
            self.recorder.observe(obs)
        for pane in self.panes:
            if obs.source == pane.SOURCE:
                pane.show(obs)
        for pane in self.panes:
            if isinstance(pane, FindingsPane):
                pane.show_all(self.observations)
        for row in self.screen_stack[0].query(TriageRow) if self.screen_stack else ():
            row.show_all(self.observations)

    def _tick(self) -> None:
        """Once a second: ages only (no I/O here)."""
        now = self.clock()
        if not self.screen_stack:
            return
        text = self._topbar_text()
        if text != self._topbar_shown:  # Static.update repaints even the same text
            self._topbar_shown = text
            for bar in self.screen_stack[0].query("#topbar").results(TopBar):  # none while shutting down
                bar.update(text)
        for pane in self.panes:
            pane.refresh_freshness(now)

    def _topbar_text(self) -> str:
        cloud = "demo (simulated cloud)" if self.config.demo else (self.config.openstack.cloud or "no cloud")
        state = "[reverse] PAUSED [/]" if self.paused else "live"
        insecure = "  [b reverse red] INSECURE: TLS verification off [/]" if self.config.openstack.insecure else ""
        return f"[b]stacktop[/b]  cloud [b]{cloud}[/b]  {state}  read-only{insecure}"

    # ----- actions ------------------------------------------------------------------------------------
    def action_help(self) -> None:
        if not isinstance(self.screen, HelpScreen):
            self.push_screen(HelpScreen())

    def action_toggle_pause(self) -> None:
        self.paused = not self.paused
        for runner in self.runners.values():
            if self.paused:
                runner.pause()
            else:
                runner.resume()
        self.query_one("#topbar", TopBar).update(self._topbar_text())
        self.notify("refresh paused: p resumes" if self.paused else "refresh resumed", timeout=2)

    def action_refresh_now(self) -> None:
        for runner in self.runners.values():
            runner.refresh_now()

    def _activate(self, index: int) -> None:
        panes = self.panes
        if not panes:
            return
        self.active_index = index % len(panes)
        for i, pane in enumerate(panes):
            pane.set_class(i == self.active_index, "-active")
        active = panes[self.active_index]
        if active.table is not None:
            active.table.focus()
        else:
            self.screen_stack[0].set_focus(None)

    def action_next_pane(self) -> None:
        if isinstance(self.focused, CommandInput):
            self.focused.complete()
            return
        if len(self.screen_stack) > 1:
            self.screen.focus_next()
            return
        self._activate(self.active_index + 1)

    def action_previous_pane(self) -> None:
        if len(self.screen_stack) > 1:
            self.screen.focus_previous()
            return
        self._activate(self.active_index - 1)

    def active_pane(self) -> SourcePane | None:
        panes = self.panes
        return panes[self.active_index] if panes else None

    def action_filter(self) -> None:
        box = self.query_one("#filter", Input)
        box.add_class("-shown")
        box.focus()

    @on(Input.Changed, "#filter")
    def _filter_changed(self, event: Input.Changed) -> None:
        pane = self.active_pane()
        if pane is not None:
            pane.apply_filter(event.value)

    @on(Input.Submitted, "#filter")
    def _filter_submitted(self, event: Input.Submitted) -> None:
        self._activate(self.active_index)

    def on_unmount(self) -> None:
        gcpolicy.release()
        if self.recorder is not None:
            self.recorder.close()

    def note_subject(self) -> tuple[str | None, str | None]:
        """(subject, source) of what is selected: the active pane's highlighted row, else the session."""
        pane = self.active_pane()
        if pane is None or pane.table is None:
            return None, None
        key = pane.table.cursor_key()
        return (f"{pane.SOURCE}:{key}" if key else None), pane.SOURCE

    def action_note(self) -> None:
        if self.recorder is None:
            self.notify("notes need the recorder ([recorder] dir)", severity="warning")
            return
        subject, _ = self.note_subject()
        box = self.query_one("#note", Input)
        box.placeholder = f"note on {subject or 'the session'} (enter saves, esc cancels)"
        box.add_class("-shown")
        box.focus()

    @on(Input.Submitted, "#note")
    def _note_submitted(self, event: Input.Submitted) -> None:
        text = event.value.strip()
        if text and self.recorder is not None:
            subject, source = self.note_subject()
            self.recorder.note(text, subject=subject, source=source)
            self.notify(f"note saved on {subject or 'the session'}", timeout=2)
        event.input.value = ""
        event.input.remove_class("-shown")
        self._activate(self.active_index)

    def action_screenshot(self, filename: str | None = None, path: str | None = None) -> None:
        """Palette -> screenshot: also keep a copy beside the journal, for the post-incident export."""
        saved = self.deliver_screenshot(filename, path)
        if self.recorder is not None and saved:
            import shutil

            try:
                copy = shutil.copy(saved, self.recorder.journal.directory)
                self.recorder.journal.write({"type": "screenshot", "path": str(copy)})
            except OSError as exc:
                self.notify(f"screenshot not copied to the recorder folder: {exc.strerror}", severity="warning")

    # ----- command mode --------------------------------------------------------------------------------
    def action_command(self, prefill: str = "") -> None:
        box = self.screen_stack[0].query_one("#command", CommandInput)
        if len(self.screen_stack) > 1:
            self.pop_screen()
        box.value = prefill
        box.add_class("-shown")
        box.focus()
        box.cursor_position = len(prefill)

    @on(Input.Submitted, "#command")
    def _command_submitted(self, event: Input.Submitted) -> None:
        line = event.value.strip()
        event.input.value = ""
        event.input.remove_class("-shown")
        self._activate(self.active_index)
        if line:
            self.command_history.add(line)
            self.run_command(line)

    def run_command(self, line: str) -> bool:
        """Run one command line (`:host compute-01`); errors become a one-line notification."""
        try:
            command, args, name = commands.parse(line)
            command.resolve()(self, args, name)
        except commands.CommandError as exc:
            self.notify(str(exc), severity="warning")
            return False
        return True

    def show_source(self, source: str) -> None:
        while len(self.screen_stack) > 1:
            self.pop_screen()
        for index, pane in enumerate(self.panes):
            if source == pane.SOURCE:
                self._activate(index)
                return

    def open_server(self, ref: str) -> None:
        """:server ID|NAME - by id, id prefix or exact name among the servers the instances source knows."""
        from tui.screens.instance import InstanceScreen

        snap = getattr(self.observations.get("instances"), "snapshot", None)
        servers = list(getattr(snap, "servers", ()) or ())
        matches = [s for s in servers if s.id == ref] or [s for s in servers if s.name == ref] \
            or [s for s in servers if s.id.startswith(ref)]
        if len(matches) > 1:
            self.notify(f":server {ref}: {len(matches)} servers match - give more of the id", severity="warning")
            return
        self.push_screen(InstanceScreen(matches[0].id if matches else ref))

    def action_back(self) -> None:
        if len(self.screen_stack) > 1:
            self.pop_screen()
            return
        for box in self.query(Input).results(Input):
            if box.has_class("-shown"):
                box.value = ""
                box.remove_class("-shown")
                self._activate(self.active_index)

    def action_drill_down(self) -> None:
        pane = self.active_pane()
        if pane is not None:
            pane.drill_down()

    @on(DataTable.RowSelected)
    def _row_selected(self, event: DataTable.RowSelected) -> None:
        for pane in self.panes:
            if pane.table is event.data_table:
                pane.drill_down()
