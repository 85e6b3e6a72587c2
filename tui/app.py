"""The Textual app: wiring, bindings, screens. It only renders what the runners publish.

StacktopApp composes its jobs from named parts: the dashboard's state below Textual (tui.core.DashboardCore:
clouds, runners, observations, silences, pause, the clock), and one part per job (tui.appparts: keys first, the
lines, the sources, the clouds and the top bar, silences and pause, the panes, notes, commands). It keeps the
Textual wiring: bindings, composition, mounting, size, toasts, the handlers Textual finds by decorator."""

from __future__ import annotations

import contextlib
import time
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, ClassVar

from textual import on
from textual.app import App, ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Grid
from textual.driver import Driver
from textual.events import Resize
from textual.notifications import SeverityLevel
from textual.screen import Screen
from textual.theme import Theme
from textual.timer import Timer
from textual.widgets import Input

from tui import abandon, gcpolicy
from tui import clouds as cloudset
from tui.appparts.clouds import CloudsPart
from tui.appparts.commands import CommandsPart
from tui.appparts.controls import ControlsPart
from tui.appparts.keys import KeysPart
from tui.appparts.lines import LinesPart
from tui.appparts.notes import NotesPart
from tui.appparts.panes import PanesPart
from tui.appparts.pieces import LateStart, ObservationMessage, TopBar, stacktop_commands
from tui.appparts.startup import StartupPart
from tui.config import Config
from tui.core import DashboardCore
from tui.safetext import clean
from tui.widgets.breadcrumb import Breadcrumb
from tui.widgets.dashboard_screen import DashboardScreen, StableFooter
from tui.widgets.findings_pane import FindingsPane
from tui.widgets.focus_colour import focus_colour
from tui.widgets.panes import pane_class, pane_order
from tui.widgets.too_small import TooSmall, too_small
from tui.widgets.too_small import message as too_small_message
from tui.widgets.triage_row import TriageRow

if TYPE_CHECKING:  # these load after the first paint, where they are used
    from textual.widget import Widget

    from tui.collectors.base import Collector
    from tui.commands import History
    from tui.recorder import Recorder
    from tui.uistate import UIState

__all__ = ["LateStart", "ObservationMessage", "StacktopApp", "TopBar"]

NARROW_WIDTH = 120
NOTICE_MAX_S = 15.0  # the longest a notice stays on the status line (a newer one replaces it at once)
NOTICE_MAX_CHARS = 500  # the longest a notice's text is: a 50 MB note from a journal must not become a 2 GB one

# Plain black and white with bright, distinct severities: for projectors, low-vision users and bad terminals.
HIGH_CONTRAST = Theme(
    name="stacktop-high-contrast", primary="#ffffff", secondary="#ffff00", accent="#00ffff",
    foreground="#ffffff", background="#000000", surface="#000000", panel="#1a1a1a",
    success="#00ff00", warning="#ffff00", error="#ff3030", dark=True,
    variables={"stacktop-focus": "#00ffff"},  # the focused pane's border: cyan, never the red of a critical
)
NARROW_HEIGHT = 34


class StacktopApp(KeysPart, LinesPart, StartupPart, CloudsPart, ControlsPart, PanesPart, NotesPart, CommandsPart,
                  DashboardCore, App[None]):
    CSS_PATH = "app.tcss"
    NOTIFICATION_TIMEOUT = 3.0
    TITLE = "stacktop"
    ENABLE_COMMAND_PALETTE = True
    AUTO_FOCUS = None
    COMMANDS = App.COMMANDS | {stacktop_commands}

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("question_mark", "help", "Help", tooltip="this help"),
        # q: on the dashboard it quits, on a drill-down (or help) it goes back as esc does; Q and :q always quit
        Binding("q", "quit_dashboard", "Quit", tooltip="quit stacktop (on a drill-down: back)"),
        Binding("q", "close_screen", "Back", show=False, tooltip="back to the screen below"),
        Binding("Q", "quit", "Quit", key_display="shift+q", show=False, tooltip="quit stacktop, from any screen"),
        # one key, two names: the footer says what p does now (check_action shows one of the two)
        Binding("p", "pause", "Pause", tooltip="pause / resume refresh"),
        Binding("p", "resume", "Resume", tooltip="resume refresh"),
        Binding("r", "refresh_now", "Refresh", tooltip="refresh every source (of the cloud on screen) now"),
        # the three that open a line are priority bindings: run as the app takes the key from its queue, not
        # after a round trip through the focused table, so that the keys read with them go into the line (an
        # Input with the focus still gets these characters: Textual leaves out the bindings it consumes)
        Binding("slash", "filter", "Filter", priority=True,
                tooltip="filter the focused table (regex, ! inverts, esc clears)"),
        Binding("colon", "command", "Command", priority=True, tooltip="command mode (:host NAME, :server ID, ...)"),
        Binding("n", "note", "Note", priority=True,
                tooltip="write a note on the selected row (or the session) to the journal"),
        Binding("x", "silence", "Silence", show=False,
                tooltip="silence the selected finding for an hour (:silence 30m picks the time; X lifts it)"),
        Binding("X", "unsilence", "Lift silence", show=False, tooltip="lift the selected finding's silence"),
        Binding("c", "next_cloud", "Next cloud", show=False,
                tooltip="switch to the next cloud (:cloud NAME picks one)"),
        # app-level (not per pane) so the footer is the same whichever pane has focus: a footer that changes
        # recomposes (~40 widgets restyled and the whole screen repainted on every tab)
        Binding("t", "toggle_times", "Times/ages", show=False,
                tooltip="the tables' moments (since) as times (14:02:10) or as ages (5m ago)"),
        Binding("a", "toggle_all", "All/attention", tooltip="the active pane: every row / only those worth attention"),
        Binding("tab", "next_pane", "Next pane", priority=True, tooltip="next pane"),
        Binding("z", "zoom", "Zoom", show=False,
                tooltip="zoom the focused pane to the whole screen, its columns fitted again (z again: back)"),
        Binding("shift+tab", "previous_pane", "Prev pane", show=False, priority=True, tooltip="previous pane"),
        Binding("enter", "drill_down", "Drill down", show=False, tooltip="drill down into the selected row"),
        Binding("escape", "back", "Back", show=False, tooltip="back / close / clear the filter"),
        # esc closes the palette's Keys panel first, on any screen (only while it is open: check_action)
        Binding("escape", "hide_help_panel", "Close the keys panel", show=False, priority=True),
    ]

    replaying = False  # ReplayApp: a replay of a journal, nothing read live (tui.dashboard.Dashboard)
    # where the theme picked in the palette is remembered (tui.uistate; the `stacktop` command sets it): read at
    # mount, written when the theme changes after that. None: nothing read or written (tests, the gallery)
    ui_state: UIState | None = None
    _theme_restored = False

    def __init__(
        self,
        config: Config | None = None,
        *,
        collectors: list[Collector] | None = None,
        clock: Callable[[], float] = time.time,
        recorder: Recorder | None = None,
        galera_connector: object | None = None,
        cloud_collectors: dict[str, list[Collector]] | None = None,
        galera_connectors: dict[str, object] | None = None,
        cloud: str | None = None,
        setup: Callable[[], LateStart] | None = None,
    ) -> None:
        """collectors: the one cloud's collectors (tests, replay); cloud_collectors: per [[clouds]] name.
        galera_connector(s): the Galera collector's connection seam (the simulator's), one or per cloud.
        cloud: the cloud shown first (default: the first).
        setup: run in a thread after the first frame, before any source starts (`stacktop --demo` builds its
        simulator there); its LateStart's config replaces `config`, which must name the same clouds."""
        super().__init__()
        config = config or Config()
        names = [c.name for c in config.all_clouds()]
        self.clouds: dict[str, cloudset.CloudState] = {n: cloudset.CloudState(n, config.for_cloud(n)) for n in names}
        self.active_cloud = cloud if cloud in self.clouds else names[0]
        self.config = self.clouds[self.active_cloud].config
        self._given_collectors = collectors
        self._cloud_collectors = cloud_collectors
        self.galera_connectors = galera_connectors or {}
        self._first_seen: dict[str, dict[Any, float]] = {}  # findings pane's first-seen times, per cloud
        self.paused = False
        self.show_ages = False  # `t`: the tables' moments as ages, not times
        self._ages_minute = -1  # the minute the ages were last shown for (they move on once a minute)
        self.active_index = 0
        self.clock = clock
        self.recorder = recorder
        if recorder is not None and len(self.clouds) > 1:
            recorder.cloud = self.active_cloud  # notes and exercises say which cloud they were taken on
        self.galera_connector = galera_connector
        self._setup = setup
        self._command_history: History | None = None
        self._topbar_shown = ""
        self._inputs_mounted = False
        self._notice_timer: Timer | None = None  # looks at the status line again when its notice expires
        self._typing: Input | None = None  # the line keys go to (filter, note, command), set when it opens
        self._key_time = 0.0  # Message.time of the last key the app took from its queue
        self._before_line: tuple[float, Widget | None] = (0.0, None)  # that time and the focus, as a line opened
        self.frames = 0  # frames handed to the terminal (_display)
        self._frame_at = 0.0  # monotonic time of the last frame
        self._key_at = 0.0  # monotonic time of the last key received
        self._key_done_at = 0.0  # ... and of the refresh after the last key went through
        if recorder is not None:
            recorder.journal.hold = self.keys_coming  # no snapshot encoded beside a key's work
        self._gc_put_off_at: float | None = None  # when the collection after a poll was first put off
        # the first triage's hold (_hold_for_first_triage): the batch held, and the panes still waiting for a read
        self._triage_hold: contextlib.AbstractContextManager[None] | None = None
        self._triage_waiting: set[str] = set()

    def _fatal_error(self) -> None:
        """An unhandled exception (Textual then exits with return_code 1): its traceback goes to the log file,
        without Textual's locals (they may hold a password) and not to the terminal; the command line then
        prints one line saying where the log is (tui.cli)."""
        import logging

        error = self._exception
        logging.getLogger("stacktop").critical(
            "the dashboard stopped on an unhandled error", exc_info=(type(error), error, error.__traceback__)
            if error is not None else True)
        self.bell()
        self._close_messages_no_wait()

    def _display(self, screen: Screen[Any], renderable: Any) -> None:
        """Every frame Textual hands to the terminal goes through here (also headless, where nothing is
        written): counted, so tests can tell that a still cloud leaves the terminal alone (`frames`)."""
        if renderable is not None and not self._batch_count:
            self.frames += 1
            self._frame_at = time.monotonic()
        super()._display(screen, renderable)

    def get_default_screen(self) -> Screen[None]:
        # the size classes the first Resize sets, given now: set then, they restyled every widget before the
        # first frame
        size = self.size
        classes = " ".join(name for name, on in self._size_classes(size.width, size.height).items() if on)
        return DashboardScreen(id="_default", classes=classes)

    def get_driver_class(self) -> type[Driver]:
        """Textual's driver; on Linux one whose input thread sleeps until a key comes instead of waking every
        100 ms (tui/widgets/input_driver.py). STACKTOP_QUIET_INPUT=0 keeps Textual's own."""
        import os

        chosen = super().get_driver_class()
        if os.environ.get("STACKTOP_QUIET_INPUT", "1") == "0" or chosen.__name__ != "LinuxDriver":
            return chosen
        from tui.widgets.input_driver import quiet_driver_class

        return quiet_driver_class() or chosen

    def compose(self) -> ComposeResult:
        yield TopBar(self._topbar_text(), id="topbar")
        yield TriageRow(id="triage")
        yield Breadcrumb(id="breadcrumb")
        now = self.clock()
        order = pane_order()
        if self._findings_first(self.size.width, self.size.height):
            self.active_index = len(order)  # the findings pane, after the source panes
        with Grid(id="panes"):
            for index, (source, title) in enumerate(order):
                configured, interval = self._configured(source)
                cls = pane_class(source, title)
                # the level class the pane's first refresh_freshness sets, and -active for the pane on_mount
                # activates, given now: set then, each would restyle its pane once more before the first frame
                _, level = self.border_freshness(None, now, interval, configured)
                classes = f"-{level}" + (" -active" if index == self.active_index else "")
                yield cls(interval=interval, configured=configured, id=f"pane-{source}", classes=classes)
            # its first refresh_freshness, before any source runs: no sources, -off
            findings_active = " -active" if self.active_index == len(order) else ""
            yield FindingsPane(interval=10.0, configured=True, id="pane-findings", classes="-off" + findings_active)
        yield StableFooter()
        # the filter, note and command lines (hidden until asked for) are mounted after the first paint

    def on_mount(self) -> None:
        # every asyncio.to_thread read in a daemon thread: a read that never ends does not hold the quit
        abandon.install()
        self.register_theme(HIGH_CONTRAST)
        self._restore_theme()
        self._apply_size(self.size.width, self.size.height)
        self._activate(self.active_index)
        self.set_interval(1.0, self._tick)
        self.call_after_refresh(gcpolicy.first_frame)  # before the sources: start-up is frozen, GC back on
        self.call_after_refresh(self._sources_after_first_frame)
        self.call_after_refresh(self._input_lines)

    def _restore_theme(self) -> None:
        """The theme picked last time (tui.uistate), if it is still one Textual knows."""
        saved = self.ui_state.read_theme() if self.ui_state is not None else None
        if saved is not None and saved in self.available_themes:
            self.theme = saved
        self._theme_restored = True

    def watch_theme(self, theme: str) -> None:
        """A theme picked (the palette's Theme): remembered for the next start (tui.uistate), said on the
        status line."""
        if self.ui_state is None or not self._theme_restored:
            return
        problem = self.ui_state.save_theme(theme)
        if problem is not None:
            self.notify(problem, severity="warning")
        else:
            self.notify(f"theme {theme}: remembered in {self.ui_state.path}", timeout=4)

    def on_resize(self, event: Resize) -> None:
        self._apply_size(event.size.width, event.size.height)

    @staticmethod
    def _size_classes(width: int, height: int) -> dict[str, bool]:
        return {"-narrow": width < NARROW_WIDTH or height < NARROW_HEIGHT, "-too-small": too_small(width, height)}

    @staticmethod
    def _findings_first(width: int, height: int) -> bool:
        """A terminal that shows one pane at a time (narrower than NARROW_WIDTH or lower than NARROW_HEIGHT)
        shows the findings (what is broken) first."""
        return width < NARROW_WIDTH or height < NARROW_HEIGHT

    def _apply_size(self, width: int, height: int) -> None:
        classes = self._size_classes(width, height)
        screen = self.screen_stack[0]
        if not self.pane_chosen and self._findings_first(width, height) and self.panes \
                and self.active_index != len(self.panes) - 1:
            self._activate(len(self.panes) - 1)  # shrunk before any pane was chosen: the findings first
        screen.update_classes(classes)  # one restyle for both, none when they hold already
        if classes["-too-small"]:  # the notice is mounted the first time it is needed
            text = too_small_message(width, height)
            notice = next(iter(screen.query_children("#too-small").results(TooSmall)), None)
            if notice is None:
                screen.mount(TooSmall(text, id="too-small"))
            else:
                notice.update(text)

    def get_css_variables(self) -> dict[str, str]:
        """Textual's theme variables, plus $stacktop-focus: the focused pane's (and drill-down screens')
        border, in a colour that never reads as critical or warning (tui.widgets.focus_colour)."""
        variables = super().get_css_variables()
        if "stacktop-focus" not in self.current_theme.variables:
            variables["stacktop-focus"] = focus_colour(variables.get("primary"))
        return variables

    def notify(self, message: str, *, title: str = "", severity: SeverityLevel = "information",
               timeout: float | None = None, markup: bool = True) -> None:
        """Every notice (the app's and each screen's) is plain text: its message holds names, errors and ids
        from outside, which must never be parsed as markup nor reach the terminal as controls. It is shown on the
        status line (the breadcrumb line's right side, tui.notices), never as a toast over a pane, until it
        expires (at most NOTICE_MAX_S) or a newer one takes its place."""
        timeout = min(self.NOTIFICATION_TIMEOUT if timeout is None else timeout, NOTICE_MAX_S)
        if len(message) > NOTICE_MAX_CHARS:
            message = message[:NOTICE_MAX_CHARS - 1] + "…"
        title = title if len(title) <= NOTICE_MAX_CHARS else title[:NOTICE_MAX_CHARS - 1] + "…"
        super().notify(clean(message), title=clean(title), severity=severity, timeout=timeout, markup=False)

    def shown_notice(self) -> tuple[str, str] | None:
        """The status line's notice: the newest one not expired, as (one line of text, severity)."""
        from tui.notices import notice_text

        newest = max(self._notifications, key=lambda n: n.raised_at, default=None)
        return None if newest is None else (notice_text(str(newest.message), str(newest.title)), newest.severity)

    def _refresh_notifications(self) -> None:
        """Textual shows its notifications as toasts over the screen here: stacktop writes the newest on the
        status line of the dashboard and of the screen on top instead, and looks again when it expires."""
        stack = self.screen_stack
        for screen in {id(s): s for s in (stack[:1] + stack[-1:])}.values():
            for line in screen.query(Breadcrumb).results(Breadcrumb):
                line.refresh_crumbs()
        expiry = min((n.time_left for n in self._notifications), default=None)
        if expiry is not None:
            if self._notice_timer is not None:
                self._notice_timer.stop()
            self._notice_timer = self.set_timer(max(expiry, 0.05), self._refresh_notifications)

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        if action in ("pause", "resume"):
            return self.paused == (action == "resume")
        if action == "hide_help_panel":
            return bool(self.screen.query("HelpPanel"))
        if action in ("close_screen", "quit_dashboard"):  # q: back on a drill-down, quit on the dashboard
            return (len(self.screen_stack) > 1) == (action == "close_screen")
        # a drill-down screen on top: `a` is about the panes under it, not shown there
        return not (action == "toggle_all" and len(self.screen_stack) > 1)

    def action_quit_dashboard(self) -> None:
        self.exit()

    async def action_close_screen(self) -> None:
        """q on a screen above the dashboard: what its esc does (back, or stop and back)."""
        screen = self.screen
        for binding in screen._bindings.key_to_bindings.get("escape", ()):
            if await self.run_action(binding.action, screen):
                return
        if len(self.screen_stack) > 1:
            self.pop_screen()

    def action_help_quit(self) -> None:
        """ctrl+c (the reflex to quit): say, in plain words on the status line, which keys quit."""
        self.notify("ctrl+c does not quit: ctrl+q, Q or :q quits stacktop (q on the dashboard)", severity="warning")

    # ----- the lines' handlers (Textual finds them by decorator on the app's own class) -----------------
    @on(Input.Changed, "#filter")
    def _filter_changed(self, event: Input.Changed) -> None:
        """The filter follows the line as it is typed. A Changed that comes after the line changed again or
        closed (keys typed in a burst are all handled first) is stale: the line's close applied the filter."""
        if event.value != event.input.value or not event.input.has_class("-shown"):
            return
        pane = self.active_pane()
        if pane is not None:
            pane.apply_filter(event.value)
        self.refresh_breadcrumb()

    @on(Input.Submitted, "#filter")
    def _filter_submitted(self, event: Input.Submitted) -> None:
        self._filter_done(event.input)

    def on_unmount(self) -> None:
        gcpolicy.release()
        if self.recorder is not None:
            self.recorder.close()

    @on(Input.Submitted, "#note")
    def _note_submitted(self, event: Input.Submitted) -> None:
        self._note_done(event.input)

    @on(Input.Submitted, "#command")
    def _command_submitted(self, event: Input.Submitted) -> None:
        self._command_line_done(event.input)
