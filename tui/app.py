"""The Textual app: wiring, bindings, screens. It only renders what the runners publish."""

from __future__ import annotations

import asyncio
import contextlib
import logging
import threading
import time
from collections.abc import Callable
from datetime import UTC, datetime
from functools import partial
from pathlib import Path
from typing import TYPE_CHECKING, Any, ClassVar

from textual import events, on
from textual.app import App, ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Grid
from textual.css.query import NoMatches
from textual.driver import Driver
from textual.events import Resize
from textual.message import Message
from textual.notifications import SeverityLevel
from textual.screen import Screen
from textual.theme import Theme
from textual.widgets import Footer, Input, Static

from tui import abandon, gcpolicy, sources
from tui import clouds as cloudset
from tui.config import Config
from tui.freshness import TIME_ZONE, clock_time, freshness
from tui.models.finding import Finding
from tui.models.observation import Observation
from tui.safetext import clean, escape
from tui.widgets.breadcrumb import Breadcrumb
from tui.widgets.dashboard_screen import DashboardScreen, StableFooter
from tui.widgets.drilldown import DrillDown
from tui.widgets.findings_pane import FindingsPane
from tui.widgets.focus_colour import focus_colour
from tui.widgets.observed import AllObserved, Observed
from tui.widgets.panes import pane_class, pane_order
from tui.widgets.source_pane import SourcePane
from tui.widgets.too_small import TooSmall, too_small
from tui.widgets.too_small import message as too_small_message
from tui.widgets.triage_row import TriageRow

if TYPE_CHECKING:  # these load after the first paint, where they are used
    from textual.command import Provider
    from textual.widget import Widget
    from textual.widgets import DataTable

    from tui.collectors.base import Collector
    from tui.commands import History
    from tui.models.silence import Silences
    from tui.recorder import Recorder
    from tui.runner import CollectorRunner
    from tui.widgets.command_input import CommandInput

NARROW_WIDTH = 120
TOAST_MAX_S = 5.0  # the longest a toast stays (a critical other cloud's included: its badge stays red)
KEY_FIRST_S = 0.25  # renders wait at most this long for a pending key's frame (a key may change nothing)
# the collection after a poll (tui/gcpolicy.py, 20-110 ms with 10,000 servers held) waits until no key came for
# this long, so that it falls between keys, not in front of one; it waits at most GC_PUT_OFF_MAX_S
GC_KEY_QUIET_S = 0.15
GC_PUT_OFF_MAX_S = 5.0
# once the sources start, frames wait (at most this long, and no longer than the first key) until every pane has
# its source's first read: the first triage is laid out and drawn once, not once per pane as each read comes
FIRST_TRIAGE_HOLD_S = 1.0

# Plain black and white with bright, distinct severities: for projectors, low-vision users and bad terminals.
HIGH_CONTRAST = Theme(
    name="stacktop-high-contrast", primary="#ffffff", secondary="#ffff00", accent="#00ffff",
    foreground="#ffffff", background="#000000", surface="#000000", panel="#1a1a1a",
    success="#00ff00", warning="#ffff00", error="#ff3030", dark=True,
    variables={"stacktop-focus": "#00ffff"},  # the focused pane's border: cyan, never the red of a critical
)
NARROW_HEIGHT = 34


class ObservationMessage(Message):
    """A runner's latest observation (of `cloud`). A slow UI drops older ones of the same source and cloud."""

    def __init__(self, observation: Observation, cloud: str | None = None) -> None:
        super().__init__()
        self.observation = observation
        self.cloud = cloud

    def can_replace(self, message: Message) -> bool:
        return (isinstance(message, ObservationMessage) and message.cloud == self.cloud
                and message.observation.source == self.observation.source)


class LateStart:
    """What a set-up run after the first frame hands the app before its sources start (`stacktop --demo`: its
    simulated clouds): the config to poll and the Galera connection seam of each cloud. (A plain class: a
    dataclass is ~1 ms of code generation at import, before the first frame.)"""

    __slots__ = ("config", "galera_connectors")

    def __init__(self, config: Config, galera_connectors: dict[str, object] | None = None) -> None:
        self.config = config
        self.galera_connectors = dict(galera_connectors or {})


def _in_thread(fn: Callable[[], LateStart]) -> asyncio.Future[LateStart]:
    """fn() in a daemon thread (a quit does not wait for it), its result or exception on this loop's future."""
    loop = asyncio.get_running_loop()
    done: asyncio.Future[LateStart] = loop.create_future()

    def settle(result: LateStart | None, error: BaseException | None) -> None:
        if done.done():
            return
        if error is not None:
            done.set_exception(error)
        else:
            done.set_result(result)  # type: ignore[arg-type]

    def run() -> None:
        result, error = None, None
        try:
            result = fn()
        except Exception as exc:
            error = exc
        with contextlib.suppress(RuntimeError):  # the loop is closed: the app has quit meanwhile
            loop.call_soon_threadsafe(settle, result, error)

    threading.Thread(target=run, name="stacktop-setup", daemon=True).start()
    return done


def _stacktop_commands() -> type[Provider]:
    """The palette's stacktop commands, loaded when the palette first opens (App.COMMANDS takes a callable)."""
    from tui.widgets.command_input import StacktopCommands

    return StacktopCommands


def _command_input() -> type[CommandInput]:
    """The command line's class, loaded with the lines after the first paint (or when a line is asked for)."""
    from tui.widgets.command_input import CommandInput

    return CommandInput


class TopBar(Static):
    DEFAULT_CSS = "TopBar { height: 1; background: $panel; color: $text; padding: 0 1; }"


class StacktopApp(App[None]):
    CSS_PATH = "app.tcss"
    NOTIFICATION_TIMEOUT = 3.0
    TITLE = "stacktop"
    ENABLE_COMMAND_PALETTE = True
    AUTO_FOCUS = None
    COMMANDS = App.COMMANDS | {_stacktop_commands}

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("question_mark", "help", "Help", tooltip="this help"),
        Binding("q", "quit", "Quit", tooltip="quit stacktop"),
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
        Binding("a", "toggle_all", "All/attention", tooltip="the active pane: every row / only those worth attention"),
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

    @property
    def command_history(self) -> History:
        """The command line's history (up/down), made when the command line first needs it."""
        if self._command_history is None:
            from tui.commands import History

            self._command_history = History()
        return self._command_history

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

    # ----- typing into a line ---------------------------------------------------------------------------
    async def on_event(self, event: events.Event) -> None:
        """While a line (filter, note, command) is open, every key and paste is typed into it here, in the
        app's own queue and in the order the keys came: a burst like `:instances<enter>` read in one go from
        the terminal must not run `n`, `c` or `s` as shortcuts before the line has the focus."""
        if isinstance(event, (events.Key, events.Paste)) and not event.is_forwarded:
            box = self._typing_line()
            if box is not None and await self._type_into(box, event):
                return
            self._key_time = event.time  # a line this key opens was opened after every key before it
        await super().on_event(event)
        if isinstance(event, events.MouseDown) and not event.is_forwarded:
            clicked = self._mouse_down_widget
            if isinstance(clicked, Input) and clicked.has_class("-shown"):
                self._typing = clicked  # back into a line left open
            elif clicked is not None and self._typing is not None:
                self._typing = None  # clicked elsewhere: keys are shortcuts again (the line stays open)

    def _typing_line(self) -> Input | None:
        """The open line keys go to, unless a screen (a drill-down, the palette) is on top of the dashboard."""
        box = self._typing
        if box is None or not self.screen_stack or self.screen is not self.screen_stack[0]:
            return None
        if not box.is_attached or not box.has_class("-shown"):
            self._typing = None
            return None
        return box

    async def _type_into(self, box: Input, event: events.Key | events.Paste) -> bool:
        """Type one key (or paste) into `box` now. False: not the line's, the app handles it as usual."""
        if isinstance(event, events.Paste):
            if event.text:
                self._insert(box, event.text.splitlines()[0] if event.text.splitlines() else "")
            return True
        key = event.key
        if key == "enter":
            self._submit_line(box)
        elif key == "escape":
            self.action_back()
        elif key == "tab" and isinstance(box, _command_input()):
            box.complete()
        elif key in ("tab", "shift+tab"):
            self._typing = None  # next / previous pane, as ever: the line stays open, keys are shortcuts again
            return False
        elif await self._check_bindings(key, priority=True):  # ctrl+q and the like
            pass
        elif bindings := box._bindings.key_to_bindings.get(key):  # the line's own: cursor, history, deletes
            await self.run_action(bindings[0].action, box)
        elif event.is_printable and event.character is not None:
            self._insert(box, event.character)
        return True  # every other key is the line's too (nothing happens), as with an Input that has focus

    async def _on_key(self, event: events.Key) -> None:
        """A key typed just before a line opened (`a/`, `s:` in one burst) comes back here from the table it
        was sent to only after the line took the focus (the line's key is a priority binding, run at once):
        it is still a shortcut for the widget that had the focus when it was typed, not lost to the line."""
        key_time, widget = self._before_line
        if self._typing is not None and widget is not None and event.time < key_time and widget.is_attached:
            for node in widget.ancestors_with_self:
                for binding in node._bindings.key_to_bindings.get(event.key, ()):
                    if not binding.priority and await self.run_action(binding.action, node):
                        event.prevent_default()
                        return

    @staticmethod
    def _insert(box: Input, text: str) -> None:
        selection = box.selection
        if selection.is_empty:
            box.insert_text_at_cursor(text)
        else:
            box.replace(text, *selection)

    def _open_line(self, box: Input) -> None:
        """Show `box` and send keys to it from now on; the focus is moved now, not after queued keys."""
        box.add_class("-shown")
        self._typing = box
        screen = self.screen_stack[0]
        self._before_line = (self._key_time, screen.focused)
        screen.set_focus(box)
        if screen.focused is not box:
            box.focus()

    def _close_line(self, box: Input) -> None:
        box.value = ""
        box.remove_class("-shown")
        if self._typing is box:
            self._typing = None

    def _submit_line(self, box: Input) -> None:
        """Enter on an open line: what its Input.Submitted handler does, at once."""
        if box.id == "command":
            self._command_line_done(box)
        elif box.id == "note":
            self._note_done(box)
        elif box.id == "filter":
            self._filter_done(box)
        else:
            self._close_line(box)

    # ----- keys before renders --------------------------------------------------------------------------
    def post_message(self, message: Message) -> bool:
        posted = super().post_message(message)
        if posted and isinstance(message, events.Key):
            self._key_at = time.monotonic()
            self._end_triage_hold()  # a key's frame never waits for the first triage
            self.call_later(self._key_handled)  # queued behind the key
        return posted

    def _key_handled(self) -> None:
        # the key went through the app; its repaint (if it has one) is done by the next refresh
        self.call_after_refresh(self._key_done)

    def _key_done(self) -> None:
        self._key_done_at = time.monotonic()

    def key_pending(self) -> bool:
        """A key was received, and neither was a frame drawn since nor did the key go through with nothing
        to repaint (for at most KEY_FIRST_S)."""
        key_at = self._key_at
        return key_at > max(self._frame_at, self._key_done_at) and time.monotonic() - key_at < KEY_FIRST_S

    def keys_coming(self) -> bool:
        """A key in the last GC_KEY_QUIET_S, or one still waiting for its frame (read from any thread)."""
        return time.monotonic() - self._key_at < GC_KEY_QUIET_S or self.key_pending()

    async def keys_first(self) -> None:
        """Renders of observations wait here while a key is pending: the key's frame goes out first. Each
        widget renders in its own queue, so the app (the key) runs while they wait; a newer observation for
        the same widget replaces the waiting one."""
        while self.key_pending():
            await asyncio.sleep(0.005)

    @property
    def runners(self) -> dict[str, CollectorRunner]:
        """The active cloud's runners, by source."""
        return self.clouds[self.active_cloud].runners

    @property
    def observations(self) -> dict[str, Observation]:
        """The active cloud's latest observations, by source."""
        return self.clouds[self.active_cloud].observations

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

    # ----- layout -------------------------------------------------------------------------------------
    def _configured(self, source: str) -> tuple[bool, float]:
        c = self.config
        given = self._given_collectors
        if self._cloud_collectors is not None:
            given = self._cloud_collectors.get(self.active_cloud, [])
        if given is not None:
            intervals = {col.name: col.interval for col in given}
            return source in intervals, intervals.get(source, 10.0)
        found = sources.spec(source)
        if found is None:
            return False, 10.0
        return found.configured(c), found.interval(c)

    def compose(self) -> ComposeResult:
        yield TopBar(self._topbar_text(), id="topbar")
        yield TriageRow(id="triage")
        yield Breadcrumb(id="breadcrumb")
        now = self.clock()
        with Grid(id="panes"):
            for index, (source, title) in enumerate(pane_order()):
                configured, interval = self._configured(source)
                cls = pane_class(source, title)
                # the level class the pane's first refresh_freshness sets, and -active for the pane on_mount
                # activates, given now: set then, each would restyle its pane once more before the first frame
                _, level = self.border_freshness(None, now, interval, configured)
                classes = f"-{level}" + (" -active" if index == self.active_index else "")
                yield cls(interval=interval, configured=configured, id=f"pane-{source}", classes=classes)
            # its first refresh_freshness, before any source runs: no sources, -off
            yield FindingsPane(interval=10.0, configured=True, id="pane-findings", classes="-off")
        yield StableFooter()
        # the filter, note and command lines (hidden until asked for) are mounted after the first paint

    def _input_lines(self) -> None:
        """Mount the filter, note and command lines, once: right after the first paint (three Inputs cost ~6 ms
        of CPU before the first frame), or at once when one is asked for before that."""
        if self._inputs_mounted or not self.screen_stack or not self.screen_stack[0].is_attached:
            return  # already there, or shutting down
        self._inputs_mounted = True
        screen = self.screen_stack[0]
        footer = next(iter(screen.query(Footer).results(Footer)), None)
        # no select-all on focus: the focus arrives after keys of the same burst were typed, and selecting them
        # made the next key replace them (`:instances` read in one go came out as `nces`)
        command_input = _command_input()
        screen.mount(Input(placeholder="filter: regex, !inverts, esc clears", id="filter", select_on_focus=False),
                     Input(placeholder="note (enter saves, esc cancels)", id="note", select_on_focus=False),
                     command_input(placeholder=":command (tab completes, up/down history, esc cancels)", id="command",
                                   select_on_focus=False),
                     before=footer)

    @property
    def panes(self) -> list[SourcePane]:
        if not self.screen_stack:  # shutting down
            return []
        screen = self.screen_stack[0]
        try:  # the grid's children: a CSS query walks the whole DOM, and this runs a few times a second
            grid = screen.get_child_by_id("panes")
        except NoMatches:
            return list(screen.query(SourcePane))
        return [child for child in grid.children if isinstance(child, SourcePane)]

    def on_mount(self) -> None:
        # every asyncio.to_thread read in a daemon thread: a read that never ends does not hold the quit
        abandon.install()
        self.register_theme(HIGH_CONTRAST)
        self._apply_size(self.size.width, self.size.height)
        self._activate(0)
        self.set_interval(1.0, self._tick)
        self.call_after_refresh(gcpolicy.first_frame)  # before the sources: start-up is frozen, GC back on
        self.call_after_refresh(self._sources_after_first_frame)
        self.call_after_refresh(self._input_lines)

    def on_resize(self, event: Resize) -> None:
        self._apply_size(event.size.width, event.size.height)

    @staticmethod
    def _size_classes(width: int, height: int) -> dict[str, bool]:
        return {"-narrow": width < NARROW_WIDTH or height < NARROW_HEIGHT, "-too-small": too_small(width, height)}

    def _apply_size(self, width: int, height: int) -> None:
        classes = self._size_classes(width, height)
        screen = self.screen_stack[0]
        screen.update_classes(classes)  # one restyle for both, none when they hold already
        if classes["-too-small"]:  # the notice is mounted the first time it is needed
            text = too_small_message(width, height)
            notice = next(iter(screen.query_children("#too-small").results(TooSmall)), None)
            if notice is None:
                screen.mount(TooSmall(text, id="too-small"))
            else:
                notice.update(text)

    # ----- sources ------------------------------------------------------------------------------------
    def _collectors(self, state: cloudset.CloudState) -> list[Collector]:
        if self._cloud_collectors is not None:
            return self._cloud_collectors.get(state.name, [])
        if self._given_collectors is not None:
            return self._given_collectors if state.name == self.active_cloud else []
        from tui.collectors.registry import build_collectors

        connector = self.galera_connectors.get(state.name, self.galera_connector)
        # the collectors stamp their reads with the clock the app judges them at (the demo's sim time)
        return build_collectors(state.config, galera_connector=connector, dashboard=True, clock=self.now_utc)

    @property
    def starting(self) -> bool:
        """The set-up before the sources (the demo's simulator) still runs: nothing can be read yet."""
        return self._setup is not None

    def _sources_after_first_frame(self) -> None:
        if self._setup is None:
            self._start_sources()
        else:
            # what the set-up builds lives as long as start-up's objects: no automatic collection walks it while
            # it is built (that doubled the simulator's build), and _start_sources freezes it
            gcpolicy.hold_until_first_frame()
            self.run_worker(self._set_up(_in_thread(self._setup)), name="setup", group="setup", exit_on_error=False)

    async def _set_up(self, setup: asyncio.Future[LateStart]) -> None:
        """The set-up, already running in a thread (the panes say loading..., keys work), then the sources on
        its config."""
        try:
            late = await setup
            await self._take_late_start(late)
        except Exception as exc:
            gcpolicy.end_hold()
            logging.getLogger("stacktop").error("the set-up before the sources failed", exc_info=exc)
            said = f"Could not start: {clean(str(exc)) or type(exc).__name__}"
            for pane in self.panes:
                if not isinstance(pane, FindingsPane):
                    pane.set_message(said)  # the panes would say loading... for ever
            self.notify(said, severity="error")
            return
        finally:
            self._setup = None
        self._start_sources()
        for screen in self.screen_stack[1:]:  # opened while the set-up ran: their own reads found no source yet
            read_again = getattr(screen, "read_again", None)
            if callable(read_again):
                read_again()

    async def _take_late_start(self, late: LateStart) -> None:
        """The set-up's config in place of the one the first frame was drawn from; a pane whose source it
        configures differently (or at another interval) is told."""
        for name, state in self.clouds.items():
            state.config = late.config.for_cloud(name)
        self.config = self.clouds[self.active_cloud].config
        self.galera_connectors = dict(late.galera_connectors)
        for pane in self.panes:
            if isinstance(pane, FindingsPane):
                continue
            configured, interval = self._configured(pane.SOURCE)
            if (configured, interval) != (pane.configured, pane.interval):
                await pane.switch_to(pane.observation, configured=configured, interval=interval)
        self._refresh_topbar()

    def _start_sources(self) -> None:
        """After the first paint: build collectors (heavy imports happen here) and start one runner each.
        With several clouds, those not on screen poll at [ui] inactive_cloud_interval (their badges)."""
        from tui.rules.judge import CloudJudge
        from tui.runner import CollectorRunner

        several = len(self.clouds) > 1
        for state in self.clouds.values():
            collectors = self._collectors(state)
            judge = CloudJudge(state.config.thresholds, configured={c.name for c in collectors},
                               intervals={c.name: float(c.interval) for c in collectors})
            for collector in collectors:
                runner = CollectorRunner(collector, partial(self._publish, state.name), clock=self.clock,
                                         judge=judge, thresholds=state.config.thresholds)
                runner.paused = self.paused
                if state.name != self.active_cloud:
                    runner.set_slow(self.config.ui.inactive_cloud_interval)
                state.runners[collector.name] = runner
                group = f"collector:{state.name}/{collector.name}" if several else f"collector:{collector.name}"
                self.run_worker(runner.run(), name=collector.name, group=group, exclusive=True,
                                exit_on_error=False)
        gcpolicy.first_frame()  # the collectors' imports are as long-lived as start-up's: frozen too
        active = self.clouds[self.active_cloud].runners
        self._hold_for_first_triage({p.SOURCE for p in self.panes if p.SOURCE in active})

    def _hold_for_first_triage(self, sources: set[str]) -> None:
        """No frame until each of these sources' first read reached its pane (FIRST_TRIAGE_HOLD_S at most): the
        reads come within a few hundred ms of each other, and each pane's fill would otherwise lay out and draw
        the whole screen again (40-50 ms of CPU each on a 2-core host, in the middle of the other reads)."""
        if not sources or self.paused or self._triage_hold is not None:
            return
        self._triage_waiting = set(sources)
        self._triage_hold = self.batch_update()
        self._triage_hold.__enter__()
        self.set_timer(FIRST_TRIAGE_HOLD_S, self._end_triage_hold)

    def _first_read_in(self, source: str) -> None:
        """A source's first read was posted to its pane: once every pane has one, the hold ends behind the
        renders already queued (each pane's queue, then the triage row's and the findings pane's)."""
        waiting = self._triage_waiting
        if source not in waiting:
            return
        waiting.discard(source)
        if waiting:
            return
        behind = [*self.panes, self._triage_row()]
        left = [len([w for w in behind if w is not None])]

        def caught_up() -> None:
            left[0] -= 1
            if left[0] <= 0:
                self._end_triage_hold()

        for widget in behind:
            if widget is not None:
                widget.call_later(caught_up)

    def _end_triage_hold(self) -> None:
        hold, self._triage_hold = self._triage_hold, None
        self._triage_waiting = set()
        if hold is not None:
            hold.__exit__(None, None, None)
            if self.screen_stack:
                self.screen.refresh()

    def _publish(self, cloud: str, observation: Observation) -> None:
        self.post_message(ObservationMessage(observation, cloud))

    def on_observation_message(self, message: ObservationMessage) -> None:
        obs = message.observation
        cloud = message.cloud if message.cloud in self.clouds else self.active_cloud
        if cloud != self.active_cloud:
            self._warn_if_turned_critical(cloud, obs)
        self.clouds[cloud].observations[obs.source] = obs
        self._collect_after_poll()  # no 100-300 ms full collections of the big heap in the middle of a keypress
        if self.recorder is not None:
            self.recorder.observe(obs, cloud=cloud if len(self.clouds) > 1 else None)
        if len(self.clouds) > 1:
            self._refresh_topbar()  # the badges
        if cloud != self.active_cloud:
            return
        # rendered in each widget's own message queue, not here: a key waiting in the app's queue would wait
        # for every observation queued before it (tui/widgets/observed.py)
        everything = AllObserved(self.observations)
        for pane in self.panes:
            if obs.source == pane.SOURCE:
                pane.post_message(Observed(obs))
            elif isinstance(pane, FindingsPane):
                pane.post_message(everything)
        row = self._triage_row()
        if row is not None:
            row.post_message(AllObserved(self.observations))
        for screen in self.screen_stack[1:]:  # drill-down screens follow their sources (tui/screens/live.py)
            screen.post_message(Observed(obs))
        if self._triage_waiting:
            self._first_read_in(obs.source)  # behind the renders just posted

    def _collect_after_poll(self) -> None:
        """gcpolicy.after_poll where no key waits for it: while keys come (one in the last GC_KEY_QUIET_S, or
        one still waiting for its frame) it is put off, and runs once when they stop (or GC_PUT_OFF_MAX_S
        after it was first put off). Several polls meanwhile need one collection."""
        now = time.monotonic()
        if self._gc_put_off_at is None:
            self._gc_put_off_at = now
            if now - self._key_at >= GC_KEY_QUIET_S and not self.key_pending():
                self._gc_put_off_at = None
                gcpolicy.after_poll(now)
            else:
                self.set_timer(GC_KEY_QUIET_S, self._collect_when_quiet)
        # else a collection is already put off: it covers this poll too

    def _collect_when_quiet(self) -> None:
        put_off_at = self._gc_put_off_at
        if put_off_at is None:
            return
        now = time.monotonic()
        keys_came = now - self._key_at < GC_KEY_QUIET_S or self.key_pending()
        if keys_came and now - put_off_at < GC_PUT_OFF_MAX_S:
            self.set_timer(GC_KEY_QUIET_S, self._collect_when_quiet)
            return
        self._gc_put_off_at = None
        gcpolicy.after_poll(now)

    def _triage_row(self) -> TriageRow | None:
        """The dashboard's triage row, by id: a CSS query walked the whole DOM on every observation."""
        if not self.screen_stack:
            return None
        try:
            row = self.screen_stack[0].get_child_by_id("triage")
        except NoMatches:
            return None
        return row if isinstance(row, TriageRow) else None

    def now_utc(self) -> datetime:
        """The app's clock (the demo's sim time, a replay's recorded time) as an aware UTC datetime."""
        return datetime.fromtimestamp(self.clock(), UTC)

    def _tick(self) -> None:
        """Once a second: ages only (no I/O here)."""
        now = self.clock()
        if not self.screen_stack or self.key_pending():
            return  # a key's frame first: the next tick catches up (a late row's countdown rebuilds its pane)
        self._refresh_topbar()
        for pane in self.panes:
            pane.refresh_freshness(now)
        row = self._triage_row()
        if row is not None:
            row.refresh_summary()  # STALE marks and heartbeat ages move between polls

    def _refresh_topbar(self) -> None:
        if not self.screen_stack:
            return
        text = self._topbar_text()
        if text != self._topbar_shown:  # Static.update repaints even the same text
            self._topbar_shown = text
            for bar in self.screen_stack[0].query("#topbar").results(TopBar):  # none while shutting down
                bar.update(text)

    def cloud_badges(self) -> list[cloudset.Badge]:
        """Every cloud's health (worst finding severity, STALE), in file order; the one on screen marked active."""
        now = self.clock()
        slow = self.config.ui.inactive_cloud_interval
        return [cloudset.badge(s.name, s.observations, now, s.intervals(None if s.name == self.active_cloud else slow),
                               active=s.name == self.active_cloud, silences=s.silences) for s in self.clouds.values()]

    # ----- silences ------------------------------------------------------------------------------------
    @property
    def silences(self) -> Silences:
        """The silenced findings of the cloud on screen."""
        return self.clouds[self.active_cloud].silences

    def selected_finding(self) -> Finding | None:
        """The finding `x` / `X` act on: the finding screen's, else the findings pane's highlighted row."""
        finding = getattr(self.screen, "finding", None)
        if isinstance(finding, Finding):
            return finding
        pane = self.active_pane()
        return pane.selected() if isinstance(pane, FindingsPane) else None

    def silence_selected(self, seconds: float = 3600.0) -> None:
        """Silence the selected finding for `seconds`: dimmed in the pane, left out of the badge, the header's
        counts and the toasts; written to the journal."""
        finding = self.selected_finding()
        if finding is None:
            self.notify("x silences a finding: select one in the findings pane (or open it)", severity="warning")
            return
        now = self.clock()
        until = now + seconds
        self.silences.add(finding.key, until)
        self._after_silence_change()
        until_text = clock_time(until)
        if self.recorder is not None:
            self.recorder.silence(finding.kind, finding.subject, severity=finding.severity, for_s=seconds,
                                  until=until)
        self.notify(f"silenced until {until_text} {TIME_ZONE}: {finding.kind} {finding.subject} (X lifts it)",
                    timeout=3)

    def unsilence_selected(self) -> None:
        finding = self.selected_finding()
        if finding is None or not self.silences.remove(finding.key):
            self.notify("X lifts a silence: select a silenced finding", severity="warning")
            return
        self._after_silence_change()
        if self.recorder is not None:
            self.recorder.unsilence(finding.kind, finding.subject)
        self.notify(f"silence lifted: {finding.kind} {finding.subject}", timeout=3)

    def _after_silence_change(self) -> None:
        for pane in self.panes:
            if isinstance(pane, FindingsPane):
                pane.show_all(pane.by_source)
        self._refresh_topbar()

    def action_silence(self) -> None:
        self.silence_selected()

    def action_unsilence(self) -> None:
        self.unsilence_selected()

    def _topbar_text(self) -> str:
        if len(self.clouds) > 1:
            cloud = cloudset.badges_markup(self.cloud_badges())
        else:
            name = "demo (simulated cloud)" if self.config.demo else (self.config.openstack.cloud or "no cloud")
            cloud = f"cloud [b]{escape(name)}[/b]"
        state = "[reverse] PAUSED [/]" if self.paused else "live"
        off = [part for part, sec in (("openstack", self.config.openstack), ("rabbitmq", self.config.rabbitmq),
                                      ("galera", self.config.galera)) if sec.insecure]
        insecure = f"  [b reverse red] INSECURE: TLS verification off ({', '.join(off)}) [/]" if off else ""
        return f"[b]stacktop[/b]  {cloud}  {state}  read-only  times {TIME_ZONE}{insecure}"

    def get_css_variables(self) -> dict[str, str]:
        """Textual's theme variables, plus $stacktop-focus: the focused pane's (and drill-down screens')
        border, in a colour that never reads as critical or warning (tui.widgets.focus_colour)."""
        variables = super().get_css_variables()
        if "stacktop-focus" not in self.current_theme.variables:
            variables["stacktop-focus"] = focus_colour(variables.get("primary"))
        return variables

    def notify(self, message: str, *, title: str = "", severity: SeverityLevel = "information",
               timeout: float | None = None, markup: bool = True) -> None:
        """Every toast (the app's and each screen's) is plain text: its message holds names, errors and ids
        from outside, which must never be parsed as markup nor reach the terminal as controls. Toasts sit at
        the top right (app.tcss) and go within TOAST_MAX_S: they must not hide rows for long."""
        timeout = min(self.NOTIFICATION_TIMEOUT if timeout is None else timeout, TOAST_MAX_S)
        super().notify(clean(message), title=clean(title), severity=severity, timeout=timeout, markup=False)

    # ----- several clouds ------------------------------------------------------------------------------
    def action_next_cloud(self) -> None:
        if len(self.clouds) < 2:
            self.notify("only one cloud is configured - add [[clouds]] entries (see config.example.toml)",
                        timeout=4)
            return
        self.call_later(self.switch_cloud, cloudset.next_name(list(self.clouds), self.active_cloud))

    def _warn_if_turned_critical(self, cloud: str, obs: Observation) -> None:
        """A cloud not on screen whose badge turns critical says so once (the badge alone is easy to miss)."""
        state = self.clouds[cloud]
        now, slow = self.clock(), self.config.ui.inactive_cloud_interval
        before = cloudset.badge(cloud, state.observations, now, state.intervals(slow)).level
        after = cloudset.badge(cloud, {**state.observations, obs.source: obs}, now, state.intervals(slow)).level
        if after == "critical" and before != "critical":
            worst = next((f for f in obs.findings if f.severity == "critical"), None)
            what = f": {worst.kind} {worst.subject}" if worst is not None else ""
            self.notify(f"cloud {cloud} turned critical{what} - c or :cloud {cloud} to look", title="other cloud",
                        severity="error", timeout=10, markup=False)

    def command_choices(self, command: str) -> list[str]:
        """What tab completes after `:command ` (cloud names for :cloud)."""
        return list(self.clouds) if command == "cloud" else []

    def cloud_command(self, typed: str) -> None:
        """:cloud NAME (or a unique prefix of it)."""
        matches = cloudset.match_name(self.clouds, typed)
        if len(matches) != 1:
            problem = "matches " + ", ".join(matches) if matches else "no such cloud"
            from tui.commands import CommandError

            raise CommandError(f":cloud {typed}: {problem} - one of {', '.join(self.clouds)}")
        self.call_later(self.switch_cloud, matches[0])

    async def switch_cloud(self, name: str) -> None:
        """Show `name`: every pane, the findings and the triage row swap to its last observations at once;
        the cloud left behind keeps polling, slower; the one shown polls now."""
        if name == self.active_cloud or name not in self.clouds:
            return
        old, new = self.clouds[self.active_cloud], self.clouds[name]
        for runner in old.runners.values():
            runner.set_slow(self.config.ui.inactive_cloud_interval)
        self.active_cloud = name
        self.config = new.config
        while len(self.screen_stack) > 1:  # a drill-down of the other cloud
            self.pop_screen()
        for pane in self.panes:
            if isinstance(pane, FindingsPane):
                self._first_seen[old.name] = pane.first_seen
                pane.swap(new.observations, self._first_seen.get(name, {}))
            else:
                configured, interval = self._configured(pane.SOURCE)
                await pane.switch_to(new.observations.get(pane.SOURCE), configured=configured, interval=interval)
        for row in self.screen_stack[0].query(TriageRow):
            row.show_all(new.observations)
        for runner in new.runners.values():
            runner.slow_interval = None
            spec = sources.spec(runner.name)
            if not self.paused and (spec is None or spec.has_pane):  # a background audit keeps its own pace
                runner.refresh_now()
        if self.recorder is not None:
            self.recorder.cloud = name
            self.recorder.journal.write({"type": "cloud_switched", "cloud": name, "from": old.name})
        self._refresh_topbar()
        self._activate(self.active_index)
        self.notify(f"cloud {name}", timeout=2)

    # ----- actions ------------------------------------------------------------------------------------
    def action_help(self) -> None:
        from tui.screens.help import HelpScreen

        if not isinstance(self.screen, HelpScreen):
            self.push_screen(HelpScreen())

    def action_pause(self) -> None:
        self.action_toggle_pause()

    def action_resume(self) -> None:
        self.action_toggle_pause()

    def action_toggle_pause(self) -> None:
        self.paused = not self.paused
        for runner in (r for state in self.clouds.values() for r in state.runners.values()):
            if self.paused:
                runner.pause()
            else:
                runner.resume()
        self.query_one("#topbar", TopBar).update(self._topbar_text())
        self.refresh_bindings()  # the footer: p Pause / p Resume
        now = self.clock()
        for pane in self.panes:  # the borders: PAUSED · read HH:MM:SS, or fresh again
            pane.refresh_freshness(now)
        self.notify("refresh paused: p resumes" if self.paused else "refresh resumed", timeout=2)

    def border_freshness(self, obs: Observation | None, now: float, interval: float,
                         configured: bool) -> tuple[str, str]:
        """What a pane's border says about its data (tui.freshness): while paused, when it was read."""
        return freshness(obs, now, interval, configured=configured, paused=self.paused)

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        if action in ("pause", "resume"):
            return self.paused == (action == "resume")
        # a drill-down screen on top: `a` is about the panes under it, not shown there
        return not (action == "toggle_all" and len(self.screen_stack) > 1)

    def action_toggle_all(self) -> None:
        pane = self.active_pane()
        toggle = getattr(pane, "action_toggle_all", None)
        if callable(toggle):
            toggle()
        else:
            self.notify("this pane always shows every row", timeout=2)

    def action_refresh_now(self) -> None:
        for runner in self.runners.values():  # the cloud on screen
            runner.refresh_now()

    def _activate(self, index: int) -> None:
        panes = self.panes
        if not panes:
            return
        self.active_index = index % len(panes)
        changed = [pane for i, pane in enumerate(panes) if pane.has_class("-active") != (i == self.active_index)]
        for pane in changed:
            pane.set_class(not pane.has_class("-active"), "-active", update=False)
        if changed:
            # only the two panes themselves: set_class restyles each pane's whole subtree at once, and a
            # table's restyle walks its dozen component classes (~40 % of a tab's CPU with the focus-within
            # restyle, now gone). No rule under a pane depends on -active (app.tcss: border, narrow display)
            self.stylesheet.update_nodes(changed, animate=True)
        active = panes[self.active_index]
        if active.table is not None:
            # now, not after the keys already queued (Widget.focus waits for them): one of them may open a line
            self.screen_stack[0].set_focus(active.table)
            if self.screen_stack[0].focused is not active.table:
                active.table.focus()
        else:
            self.screen_stack[0].set_focus(None)
        self.refresh_breadcrumb()

    def main_crumb(self) -> str:
        """The dashboard's part of the breadcrumb: the cloud on screen (with several clouds), the focused pane
        and its filter."""
        from tui.breadcrumb import join, pane_crumb

        cloud = self.active_cloud if len(self.clouds) > 1 else None
        pane = self.active_pane()
        if pane is None:
            return cloud or ""
        return join((cloud, pane_crumb(pane.SOURCE, pane.table.row_filter.text if pane.table is not None else "")))

    def refresh_breadcrumb(self) -> None:
        for crumb in self.screen_stack[0].query("#breadcrumb").results(Breadcrumb):
            crumb.refresh_crumbs()

    def action_next_pane(self) -> None:
        if isinstance(self.focused, _command_input()):
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
        self._input_lines()
        box = self.query_one("#filter", Input)
        pane = self.active_pane()
        box.value = pane.table.row_filter.text if pane is not None and pane.table is not None else ""
        box.cursor_position = len(box.value)
        box.select_all()  # now, as the line opens: what is typed next replaces the current filter
        self._open_line(box)

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

    def _filter_done(self, box: Input) -> None:
        """Enter: the filter stays applied (the breadcrumb shows it), the line closes, the table has the focus."""
        self._apply_filter(box.value)  # typed faster than its Input.Changed messages came
        from tui.tablediff import RowFilter

        if RowFilter(box.value).invalid:
            self.notify(f"/{box.value}: invalid regex, searching literally", severity="warning", timeout=4)
        box.remove_class("-shown")
        if self._typing is box:
            self._typing = None
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
        return (f"{pane.SOURCE}:{pane.row_name(key)}" if key else None), pane.SOURCE

    def action_note(self) -> None:
        if self.recorder is None:
            self.notify("notes need the recorder ([recorder] dir)", severity="warning")
            return
        subject, _ = self.note_subject()
        self._input_lines()
        box = self.query_one("#note", Input)
        box.placeholder = f"note on {subject or 'the session'} (enter saves, esc cancels)"
        self._open_line(box)

    @on(Input.Submitted, "#note")
    def _note_submitted(self, event: Input.Submitted) -> None:
        self._note_done(event.input)

    def _note_done(self, box: Input) -> None:
        text = box.value.strip()
        if text and self.recorder is not None:
            subject, source = self.note_subject()
            self.recorder.note(text, subject=subject, source=source)
            self.notify(f"note saved on {subject or 'the session'}", timeout=2)
        self._close_line(box)
        self._activate(self.active_index)

    def deliver_screenshot(self, filename: str | None = None, path: str | None = None,
                           time_format: str | None = None) -> str | None:
        """Every screenshot (palette -> Screenshot, which calls this directly, or the screenshot action): written
        here, at once, and the toast says where. With a recorder it goes beside the journal and is entered in
        it, so that `stacktop export` links it; else into `path`, the downloads folder or the current one.
        Not Textual's delivery: it writes in a thread and toasts its own verdict about its own file only."""
        filename = filename or f"stacktop-{time.strftime('%Y%m%dT%H%M%SZ', time.gmtime())}.svg"
        if path is not None:
            folder = Path(path).expanduser()
        elif self.recorder is not None:
            folder = self.recorder.journal.directory
        else:
            from textual.app import user_downloads_path

            downloads = user_downloads_path()
            folder = downloads if downloads.is_dir() else Path.cwd()
        target = (folder / filename).resolve()
        try:
            target.write_text(self.export_screenshot(), encoding="utf-8")
        except OSError as exc:
            self.notify(f"screenshot not saved to {target}: {exc.strerror}", title="Screenshot", severity="error")
            return None
        if self.recorder is not None:
            self.recorder.screenshot(str(target))
        self.notify(f"screenshot saved to {target}", title="Screenshot", timeout=4)
        return str(target)

    # ----- command mode --------------------------------------------------------------------------------
    def action_command(self, prefill: str = "") -> None:
        self._input_lines()
        box = self.screen_stack[0].query_one("#command", _command_input())
        if len(self.screen_stack) > 1:
            self.pop_screen()
        box.value = prefill
        box.cursor_position = len(prefill)
        self._open_line(box)

    @on(Input.Submitted, "#command")
    def _command_submitted(self, event: Input.Submitted) -> None:
        self._command_line_done(event.input)

    def _command_line_done(self, box: Input) -> None:
        line = box.value.strip()
        self._close_line(box)
        self._activate(self.active_index)
        if line:
            self.command_history.add(line)
            self.run_command(line)

    def run_command(self, line: str) -> bool:
        """Run one command line (`:host compute-01`); errors become a one-line notification."""
        from tui import commands

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

    def on_drill_down(self, message: DrillDown) -> None:
        """A pane's `enter`: the host screen, the instance screen (by id, id prefix or name) or a finding's."""
        message.stop()
        if message.target == "host":
            self.open_host(message.name)
        elif message.target == "finding":
            from tui.screens.finding import FindingScreen

            self.push_screen(FindingScreen(message.name))
        else:
            self.open_server(message.name)

    def open_host(self, name: str) -> None:
        from tui.screens.host import HostScreen

        self.push_screen(HostScreen(name))

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
        closed = False
        for box in self.query(Input).results(Input):
            if box.has_class("-shown"):
                self._close_line(box)
                closed = True
                if box.id == "filter":
                    self._apply_filter("")  # esc on the filter line clears it
                self._activate(self.active_index)
        pane = self.active_pane()
        if not closed and pane is not None and pane.table is not None and pane.table.row_filter.text:
            self._apply_filter("")  # a filter applied with enter: esc on the table clears it

    def _apply_filter(self, text: str) -> None:
        """Filter the active pane's table now (unless it already is), and say so in the breadcrumb."""
        pane = self.active_pane()
        if pane is not None and pane.table is not None and pane.table.row_filter.text != text:
            pane.apply_filter(text)
        self.refresh_breadcrumb()

    def action_drill_down(self) -> None:
        pane = self.active_pane()
        if pane is not None:
            pane.drill_down()

    def on_data_table_row_selected(self, event: DataTable.RowSelected) -> None:
        for pane in self.panes:
            if pane.table is event.data_table:
                pane.drill_down()
