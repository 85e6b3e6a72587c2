"""The base of every pane: one source, its latest Observation, freshness in the border.

A pane never blanks on error: it keeps the last rows, dims them (class -stale) and says `STALE 47s` or
`ERROR <reason> - last ok 2m ago` in its border. Subclasses implement render_snapshot() and usually own a
KeyedTable (self.table) that `/` filters and `enter` drills into.
"""

from __future__ import annotations

import io
import time
from typing import TYPE_CHECKING, Any, ClassVar

from rich.text import Text
from textual.app import ComposeResult
from textual.containers import Vertical
from textual.widgets import Static

from tui.dashboard import dashboard
from tui.freshness import freshness
from tui.models.observation import Observation
from tui.safetext import escape
from tui.widgets.column_fit import ColumnRule
from tui.widgets.observed import Observed, keys_first, superseded

if TYPE_CHECKING:  # the table (DataTable and its row diffing) loads after the first paint, with the body
    from tui.tablediff import RowFilter
    from tui.widgets.keyed_table import KeyedTable

LEVELS = ("ok", "stale", "error", "loading", "off")
MESSAGE_LINES = 2  # a pane's status line in up to this many lines, else its brief form: rows stay in view


_MEASURE: list[Any] = []  # one Console to measure with (building one per call costs more than the wrap)


def lines_needed(markup: str | Text, width: int) -> int:
    """How many lines a Textual markup string (or a Text) wraps to in `width` cells."""
    if width <= 0:
        return 1
    from textual.content import Content

    if not _MEASURE:
        from rich.console import Console

        _MEASURE.append(Console(width=200, color_system=None, file=io.StringIO()))
    text = markup if isinstance(markup, Text) else Text(Content.from_markup(markup).plain)
    return len(text.wrap(_MEASURE[0], width))
DIMMING = {"stale", "error"}  # the classes a rule under the pane depends on (DEFAULT_CSS: the table's opacity)


class SourcePane(Vertical, can_focus=False):
    """Subclasses set SOURCE (collector name) and TITLE, and override compose_body/render_snapshot."""

    SOURCE: ClassVar[str] = ""
    TITLE: ClassVar[str] = ""
    COLUMNS: ClassVar[tuple[str, ...]] = ()
    # Columns whose changes are meaningful enough to flash once (never ages). Panes may override.
    HIGHLIGHT: ClassVar[tuple[str, ...]] = ("status", "state", "task_state", "consumers", "reachable", "ready",
                                            "alive", "severity")
    # The columns that give up width when the pane is narrow (names, free text), cut with "…" down to their
    # floor; the others keep their width (tui.widgets.column_fit). COLUMNS are listed in priority order.
    FIT: ClassVar[dict[str, ColumnRule]] = {}

    DEFAULT_CSS = """
    SourcePane { border: round $panel-lighten-2; height: 1fr; }
    SourcePane.-stale KeyedTable, SourcePane.-error KeyedTable { opacity: 60%; }
    SourcePane.-error { border: round $error; }
    SourcePane > .pane-message { color: $text-muted; padding: 0 1; height: auto; }
    """

    def __init__(self, *, interval: float = 10.0, configured: bool = True, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.interval = interval
        self.configured = configured
        self.observation: Observation | None = None
        self._rendered_snapshot: Any = None
        self.border_title = self.TITLE or self.SOURCE
        self.table: KeyedTable | None = None
        self._mounted = False
        self._composed = False
        self._message_text: str | None = None

    def compose(self) -> ComposeResult:
        # the message line is mounted with its first words (_show_message): a configured pane has none at the
        # first frame, and five empty Statics cost ~5 ms of CPU before it
        self._composed = True
        if self._message_text is None and not self.configured:
            self._message_text = self.not_configured_text()
        if self._message_text:
            yield self._message_line(self._message_text)
        # the body (compose_body: the table) is mounted right after the first paint, by _mount_body: five
        # DataTables cost ~40 ms of CPU before the first frame, while there are no rows to show anyway

    async def _mount_body(self) -> None:
        """After the first paint: mount compose_body(). self.table is set only once the table is mounted (its
        columns are added on mount), then whatever arrived meanwhile is rendered into it."""
        if not self.is_attached:
            return
        self.table = None
        body = list(self.compose_body())  # sets self.table
        table, self.table = self.table, None
        if body:
            await self.mount_all(body)
        self.table = table
        self.body_mounted()

    def body_mounted(self) -> None:
        """The body is there: render the latest observation into it; the active pane takes the focus."""
        if self.observation is not None:
            self._rendered_snapshot = None
            self.show(self.observation)
        if self.table is not None and self.has_class("-active") and self.screen.focused is None:
            self.table.focus()

    def compose_body(self) -> ComposeResult:
        if self.COLUMNS:
            from tui.widgets.keyed_table import KeyedTable

            self.table = KeyedTable(self.COLUMNS, highlight=self.HIGHLIGHT, fit=self.FIT, id=f"{self.SOURCE}-table")
            yield self.table

    def not_configured_text(self) -> str:
        return f"No {self.TITLE or self.SOURCE} source is configured (see config.example.toml, or try --demo)."

    def _now(self) -> float:
        dash = dashboard(self.app)
        clock = None if dash is None else dash.clock
        return clock() if callable(clock) else time.time()

    def on_mount(self) -> None:
        if not self._mounted:  # Textual calls each class's on_mount, and subclasses call super() too
            self.call_after_refresh(self._mount_body)
        self._mounted = True
        if self.observation is not None:
            self.show(self.observation)
        self.refresh_freshness(self._now())

    def _message_line(self, text: str) -> Static:
        return Static(text, classes="pane-message", id=f"{self.SOURCE}-message")

    def set_message(self, text: str) -> None:
        self._message_forms: tuple[str, str] | None = None
        self._show_message(text)

    def _show_message(self, text: str) -> None:
        if text == self._message_text:
            return  # Static.update re-lays out and repaints the pane even for the same text (every poll)
        self._message_text = text
        if not self._composed:
            return  # compose shows it
        lines = list(self.query_children(".pane-message").results(Static))
        if not lines:
            if text and self.is_attached:
                self.mount(self._message_line(text), before=0 if self.children else None)
            return
        for message in lines:
            # a re-layout repaints the pane's table too (~12 KB a poll): only when the line count changes
            height, width = message.content_size.height, message.content_size.width
            message.update(text, layout=False)
            if not width or message.get_content_height(self.size, self.app.size, width) != height:
                message.refresh(layout=True)

    def set_fitting_message(self, full: str, brief: str) -> None:
        """The status line: `full` when it fits in MESSAGE_LINES at the pane's width, else `brief` (again on
        every resize): at 120x34 a line wrapped to 7 lines left the pane no row."""
        self._message_forms = (full, brief)
        self._show_message(self._fitting_message(full, brief))

    def _fitting_message(self, full: str, brief: str) -> str:
        width = self.size.width - 2  # the message's padding
        return full if width <= 0 or lines_needed(full, width) <= MESSAGE_LINES else brief

    def on_resize(self) -> None:
        forms = getattr(self, "_message_forms", None)
        if forms is not None:
            self._show_message(self._fitting_message(*forms))

    async def on_observed(self, message: Observed) -> None:
        await keys_first(self)
        if superseded(self, message.observation):
            return  # another cloud is on screen now, or a newer observation of this source came
        self.show(message.observation)

    def show(self, obs: Observation) -> None:
        """Take a new observation; re-render only when the snapshot itself changed."""
        self.observation = obs
        if not self._mounted:
            return  # rendered by on_mount
        if obs.snapshot is not None and obs.snapshot is not self._rendered_snapshot:
            self._rendered_snapshot = obs.snapshot
            self.render_snapshot(obs.snapshot, obs)
        self.refresh_freshness(self._now())

    async def switch_to(self, obs: Observation | None, *, configured: bool, interval: float) -> None:
        """Show another cloud's source at once: its last observation (or nothing yet), its interval, and the
        "not configured" line when that cloud has no such source."""
        rebuild = configured != self.configured  # an unconfigured pane has no table: compose it again
        self.configured, self.interval = configured, interval
        self.observation = obs
        self._rendered_snapshot = None
        self._message_text = None
        if rebuild:
            self.table = None
            await self.recompose()
            await self._mount_body()  # compose() leaves the body to _mount_body (after the first paint)
        elif self.table is not None:
            self.table.reset()
        self.set_message("" if configured else self.not_configured_text())
        if obs is not None:
            self.show(obs)
        else:
            self.refresh_freshness(self._now())

    def render_snapshot(self, snapshot: Any, obs: Observation) -> None:
        """Draw the snapshot. The base shows a one-line summary; real panes override this."""
        self.set_message(escape(str(snapshot))[:200])

    def times_changed(self, now: float) -> None:
        """The tables' moments are to be shown the other way (times / ages, `t`), or the ages moved on: a pane
        with such a column shows its rows again."""

    def refresh_freshness(self, now: float) -> None:
        dash = dashboard(self.app)
        words = None if dash is None else dash.border_freshness  # the app's say: paused, replayed
        if callable(words):
            text, level = words(self.observation, now, self.interval, self.configured)
        else:
            text, level = freshness(self.observation, now, self.interval, configured=self.configured)
        if text != getattr(self, "_subtitle_text", None):  # assigning repaints the whole pane, even unchanged
            self._subtitle_text = text
            self.border_subtitle = escape(text)
        self.set_level(level)

    def set_level(self, level: str) -> None:
        """The pane's level class (-ok, -stale, -error, -loading, -off), restyling only what depends on it: the
        pane itself, and its subtree only when dimming changes (-stale / -error: the table's opacity).
        set_class restyled the whole subtree, the table's dozen component classes with it, at every source's
        first observation (loading -> ok): ~10 % of the CPU of the first triage in a profile."""
        changed = [name for name in LEVELS if self.has_class(f"-{name}") != (level == name)]
        if not changed:
            return
        for name in changed:
            self.set_class(level == name, f"-{name}", update=False)
        if not self.is_attached:
            return
        if DIMMING & set(changed):
            self.app.stylesheet.update_nodes(self.walk_children(with_self=True), animate=True)
        else:  # no rule under a pane depends on -ok / -loading / -off (app.tcss, DEFAULT_CSS above)
            self.app.stylesheet.update_nodes([self], animate=True)

    def filter_counted(self, row_filter: RowFilter, shown: int, total: int) -> None:
        """The table's filter let `shown` of `total` rows through: the title says so while a filter is on."""
        title = self.TITLE or self.SOURCE
        if row_filter.active:
            literal = (", invalid regex: searched literally" if row_filter.invalid
                       else ", too costly a regex: searched literally" if row_filter.costly else "")
            title = f"{title} · {shown:,} of {total:,} match /{row_filter.text}{literal}"
        if title != getattr(self, "_title_text", None):
            self._title_text = title
            self.border_title = escape(title)

    def row_name(self, key: str) -> str:
        """A row's key as a person reads it (a note names its row so). Keys of two parts joined by a unit
        separator (RabbitMQ: vhost, queue) read as the queue, with its vhost unless it is the default one."""
        first, separator, rest = key.partition("\x1f")
        if not separator:
            return key
        return rest if first == "/" else f"{rest} (vhost {first})"

    def apply_filter(self, text: str) -> None:
        if self.table is not None:
            self.table.set_filter(text)

    def drill_down(self) -> None:
        """Enter on a row. Panes with a drill-down screen override this."""
        return None
