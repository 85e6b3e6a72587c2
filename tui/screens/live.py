"""Drill-down screens that follow their sources live.

A screen opened from the dashboard shows data built from one or more sources (the instance screen: the instances
source; the host screen: the services source; a finding: the source that raised it, or every source for a triage
hint). The app hands every new observation of the cloud on screen to the screens above the dashboard (an
`Observed` message, rendered in the screen's own queue after any pending key, tui/widgets/observed.py); a
LiveScreen re-renders from it when it is one of its SOURCES, keeping its scroll and cursor.

Its read-at line (tui.widgets.read_at) says when the data shown was read, in UTC, and turns into `STALE · read
HH:MM:SS UTC (N ago)` once a source stops answering: its last attempt failed, or nothing new came for ~3 poll
intervals (checked once a second, so a stopped runner is noticed too). Screens that also read on their own
(`r` Refresh) add the time of that read to the line.
"""

from __future__ import annotations

from typing import ClassVar

from textual.screen import Screen

from tui.freshness import coarse_age, read_at, utc_clock_time
from tui.models.observation import Observation
from tui.screens.context import context
from tui.widgets.observed import Observed, keys_first
from tui.widgets.read_at import ReadAtLine

EVERY_SOURCE = "*"


class LiveScreen(Screen[None]):
    """A drill-down screen re-rendered from each new observation of its sources.

    Subclasses set SOURCES (or EVERY_SOURCE), compose a ReadAtLine with id `read-at`, call `follow_live()` on
    mount and implement `observed()`; `own_reads()` adds the screen's on-demand reads to the read-at line."""

    SOURCES: ClassVar[tuple[str, ...]] = ()
    SOURCE_NAMES: ClassVar[dict[str, str]] = {"services": "control plane", "instances": "instances",
                                              "rabbitmq": "RabbitMQ", "galera": "Galera", "placement": "placement"}

    def follow_live(self) -> None:
        """From the subclass's on_mount: the read-at line now, then checked once a second (a source that stops
        sends nothing: only the clock says it went stale)."""
        self.refresh_read_at()
        self.set_interval(1.0, self.refresh_read_at)

    def sources(self) -> tuple[str, ...]:
        """The sources this screen is built from now (EVERY_SOURCE: each one the app holds)."""
        if EVERY_SOURCE in self.SOURCES:
            return tuple(sorted(context(self.app).observations))
        return self.SOURCES

    def follows(self, source: str) -> bool:
        return EVERY_SOURCE in self.sources() or source in self.sources()

    async def on_observed(self, message: Observed) -> None:
        obs = message.observation
        if not self.follows(obs.source) or not self.is_attached:
            return
        await keys_first(self)
        if context(self.app).observation(obs.source) is not obs:
            return  # a newer one is on its way (or the cloud switched): render that one
        self.observed(obs)
        self.refresh_read_at()

    def observed(self, observation: Observation) -> None:
        """Re-render from the app's latest observations (`observation` is the one that just came)."""

    def own_reads(self) -> list[tuple[str, str]]:
        """(text, level) of this screen's own on-demand reads, for the read-at line."""
        return []

    def read_again(self) -> None:
        """The screen's own on-demand reads once more (the app calls it when its sources start after the screen
        opened); a screen without own reads has nothing to do."""

    def source_freshness(self, source: str, *, named: bool = False) -> tuple[str, str]:
        ctx = context(self.app)
        obs = ctx.observation(source)
        what = self.SOURCE_NAMES.get(source, source) if named else ""
        if obs is None and not ctx.running(source):
            return f"{what or 'source'} not read: not running".strip(), "off"
        return read_at(obs, ctx.now(), ctx.interval(source), paused=ctx.paused, what=what)

    def freshness_parts(self) -> list[tuple[str, str]]:
        sources = self.sources()
        named = len(sources) > 1 or bool(self.own_reads())
        return [self.source_freshness(s, named=named) for s in sources] + self.own_reads()

    def refresh_read_at(self) -> None:
        if not self.is_attached:
            return
        for line in self.query("#read-at").results(ReadAtLine):
            line.show(self.freshness_parts())

    @property
    def read_at_text(self) -> str:
        """What the read-at line says now (tests, the curious)."""
        return "  ·  ".join(t for t, _ in self.freshness_parts() if t)


OWN_READ_EVERY_S = 30.0  # a screen's own reads are read again at least this often (the app's clock)


def own_block_read(at: float | None, now: float, every: float, *, paused: bool = False,
                   error: str | None = None) -> tuple[str, str]:
    """(text, level) beside a block a screen read on its own, re-read every `every` seconds:
    `read 14:13:20 UTC (<1m ago)`; `STALE · read 14:13:20 UTC (2m ago) · why` once older than the re-reads
    allow (Observation.is_stale) or when the last one failed; `PAUSED · read ...` while refresh is paused."""
    if at is None:
        return ("not read", "off") if error is None else (f"STALE · could not read: {error}", "stale")
    obs = Observation("own", ok_at=at, tried_at=at, error=error)
    text, level = read_at(obs, now, every, paused=paused)
    if level == "ok" and not paused:
        text += f" ({coarse_age(max(0.0, now - at))} ago)"
    return text, level


def own_read_due(last_try: float | None, now: float, every: float, *, reading: bool, paused: bool) -> bool:
    """The screen's own reads are due again: tried once, not under way, not paused, `every` seconds since."""
    return last_try is not None and not reading and not paused and now - last_try >= every


def own_read(what: str, at: float | None, *, reading: bool = False, error: str | None = None) -> tuple[str, str]:
    """The read-at part of an on-demand read: `what read 14:13:20 UTC (r refreshes)`."""
    if reading:
        return f"{what}: reading...", "loading"
    if at is None:
        return (f"{what}: not read", "off") if error is None else (f"{what}: could not read", "stale")
    failed = " · the last refresh failed" if error is not None else ""
    return f"{what} read {utc_clock_time(at)}{failed} (r refreshes)", "stale" if error is not None else "ok"
