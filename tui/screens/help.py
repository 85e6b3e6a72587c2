"""`?`: what every key does."""

from __future__ import annotations

from collections.abc import Iterable
from typing import ClassVar

from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.screen import ModalScreen, Screen
from textual.widgets import Static

from tui.dashboard import dashboard
from tui.safetext import escape
from tui.widgets.key_scroll import KeyScroll

INTRO = "[b]stacktop[/b] - the control plane at a glance. Read-only: it never changes the cloud."
OUTRO = """Pane borders say how fresh their data is: [green]ok · every 10s[/green], [yellow]STALE 47s[/yellow],
[red]ERROR <reason> - last ok 2m ago[/red], PAUSED · read 12:03:04 while p pauses refresh. A failing source
keeps its last rows, dimmed.
Filters are regexes; a leading ! inverts. ctrl+p opens the palette (themes, screenshot, commands).

Press esc or ? to close."""

# what the marks in the tables mean (the panes put them there: instances, services, RabbitMQ, every table)
LEGEND: tuple[tuple[str, str], ...] = (
    ("!! name", "a server stuck, critical (e.g. its host's nova-compute is down); ! name: stuck, warning"),
    ("~4m", "an age that rests on nova's updated_at or created, not on stacktop's own observation"),
    ("≤ 30s", "a heartbeat within the late mark; 54s · down in 5s: late, counting down to DOWN"),
    ("?", "not reported yet (a fresh queue's counts, a node's state)"),
    ("name ▲ / ▼", "the column the table is sorted by, ascending / descending (s, S)"),
    ("…", "a cell cut to fit the pane: widen the terminal, or scroll sideways (left / right)"),
    ("colours", "red critical, yellow warning, cyan info, dim stale; the focused pane's border is never red"),
    ("times", "every time shown is UTC (HH:MM:SS), as the header says"),
)

KEY_NAMES = {"question_mark": "?", "slash": "/", "colon": ":", "escape": "esc", "enter": "enter",
             "shift+tab": "shift+tab", "ctrl+q": "ctrl+q", "ctrl+p": "ctrl+p"}


def _key_label(key: str) -> str:
    return ", ".join(KEY_NAMES.get(k, k) for k in key.split(","))


def screen_keys(screens: Iterable[tuple[str, Iterable[BindingType]]]) -> list[tuple[str, str]]:
    """The drill-down screens' own keys (not esc, shown elsewhere): (key, what it does and on which screens)."""
    where: dict[tuple[str, str], list[str]] = {}
    for name, bindings in screens:
        for binding in bindings:
            if isinstance(binding, Binding) and binding.show and binding.description and binding.key != "escape":
                what = "refresh: read it again" if binding.key == "r" else binding.tooltip or binding.description
                where.setdefault((_key_label(binding.key), what), []).append(name)
    return [(key, f"{what} ({', '.join(names)})") for (key, what), names in where.items()]


def current_keys(name: str, bindings: Iterable[BindingType]) -> list[str]:
    """The lines that list the keys of the screen help was opened on (its own bindings, shown or not)."""
    keys: list[tuple[str, str]] = []
    for binding in bindings:
        if isinstance(binding, Binding) and binding.description:
            keys.append((_key_label(binding.key), binding.tooltip or binding.description))
    keys.append(("q", "back (as esc)"))
    return [f"[b]On this screen ({escape(name)})[/b]", *(f"  [b]{escape(k):<10}[/b] {escape(d)}" for k, d in keys),
            ""]


def help_text(bindings: Iterable[Binding], extra: Iterable[tuple[str, str]] = (),
              screens: Iterable[tuple[str, Iterable[BindingType]]] = (),
              current: tuple[str, Iterable[BindingType]] | None = None, replaying: bool = False) -> str:
    """Every key (from the live bindings, so never out of date), the drill-down screens' keys and every :
    command; first the keys of `current` (name, bindings), the screen help was opened on, if not the
    dashboard."""
    from tui.commands import available

    seen: set[str] = set()
    keys: list[tuple[str, str]] = [("ctrl+q", "quit"), ("ctrl+p", "command palette")]
    for binding in [*bindings, *[Binding(k, "", d) for k, d in extra]]:
        label = _key_label(binding.key)
        if label in seen or not binding.description:
            continue
        seen.add(label)
        keys.append((label, binding.tooltip or binding.description))
    lines = [INTRO, "", *(current_keys(*current) if current is not None else ()), "[b]Keys[/b]"]
    lines += [f"  [b]{escape(k):<10}[/b] {escape(d)}" for k, d in keys]
    on_screens = screen_keys(screens)
    if on_screens:
        lines += ["", "[b]On the drill-down screens[/b]"]
        lines += [f"  [b]{escape(k):<10}[/b] {escape(d)}" for k, d in on_screens]
    lines += ["", "[b]Commands[/b] (type : then the command; tab completes; up/down recall)"]
    lines += [f"  [b]{escape(c.usage):<18}[/b] {escape(c.help)}" for c in available(replaying)]
    lines += ["", "[b]Marks[/b]"]
    lines += [f"  [b]{escape(mark):<10}[/b] {escape(meaning)}" for mark, meaning in LEGEND]
    return "\n".join([*lines, "", OUTRO])


def drill_down_screens() -> list[tuple[str, Iterable[BindingType]]]:
    """The screens with keys of their own, by the name the operator knows them by."""
    from tui.screens.audit import AuditScreen
    from tui.screens.finding import FindingScreen
    from tui.screens.fit import FitScreen
    from tui.screens.host import HostScreen
    from tui.screens.instance import InstanceScreen
    from tui.screens.loglines import LogLinesScreen
    from tui.screens.trace import TraceScreen

    return [("finding", FindingScreen.BINDINGS), ("instance", InstanceScreen.BINDINGS),
            ("host", HostScreen.BINDINGS), ("audit", AuditScreen.BINDINGS),
            ("fit", FitScreen.BINDINGS), ("trace", TraceScreen.BINDINGS),
            ("log lines", LogLinesScreen.BINDINGS)]


class HelpScreen(ModalScreen[None]):
    """Every key; those of the screen it was opened on first. It scrolls at once (j/k, arrows, page keys)."""

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("escape", "dismiss", "Close"),
        Binding("question_mark", "dismiss", "Close"),
        # a modal screen hides the app's keys: q closes it as on every screen above the dashboard, Q quits
        Binding("q", "dismiss", "Close", show=False),
        Binding("Q", "app.quit", "Quit", show=False),
    ]

    DEFAULT_CSS = """
    HelpScreen { align: center middle; }
    HelpScreen > VerticalScroll { width: 86; max-width: 100%; height: auto; max-height: 100%;
                            border: round $stacktop-focus; background: $surface; padding: 0 1; }
    HelpScreen #help-text { width: 100%; height: auto; }
    """

    def __init__(self, below: Screen[object] | None = None) -> None:
        """below: the screen help was opened on (a drill-down's keys come first)."""
        super().__init__()
        self.below = below

    def compose(self) -> ComposeResult:
        from tui.widgets.keyed_table import KeyedTable

        # the app's keys that work here (a replay's own included, those it has not left out), then those of
        # every table (sort): both from the live bindings
        app_bindings = [*self._app_bindings(), *(b for b in KeyedTable.BINDINGS if isinstance(b, Binding))]
        dash = dashboard(self.app)
        with KeyScroll():
            yield Static(help_text(app_bindings, [("enter", "drill down"), ("escape", "back")],
                                   drill_down_screens(), self._current(), dash is not None and dash.replaying),
                         id="help-text")

    def _app_bindings(self) -> list[Binding]:
        app = self.app
        found: list[Binding] = []
        for cls in reversed(type(app).__mro__):
            if cls.__module__.startswith("tui."):
                found += [b for b in vars(cls).get("BINDINGS", ()) if isinstance(b, Binding)]
        # q's two actions depend on the screen (help is on top now): both are told; the rest as check_action says
        return [b for b in found if b.action in ("quit_dashboard", "close_screen", "resume")
                or app.check_action(b.action, ()) is not False]

    def _current(self) -> tuple[str, list[BindingType]] | None:
        """(name, keys) of the drill-down help was opened on; None on the dashboard."""
        below = self.below
        if below is None or below is self.app.screen_stack[0]:
            return None
        name = str(getattr(below, "crumb", "") or type(below).__name__.removesuffix("Screen").lower())
        return name, list(type(below).BINDINGS)

    def on_mount(self) -> None:
        self.query_one(KeyScroll).focus()  # the keys scroll it at once, not after a tab

    async def action_dismiss(self, result: None = None) -> None:
        self.dismiss(result)
