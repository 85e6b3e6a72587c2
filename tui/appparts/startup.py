"""Starting the sources and handing their observations to the widgets."""

from __future__ import annotations

import asyncio
import logging
from functools import partial
from typing import TYPE_CHECKING

from tui import clouds as cloudset
from tui import gcpolicy, sources
from tui.appparts.pieces import LateStart, ObservationMessage, in_thread
from tui.models.observation import Observation
from tui.safetext import clean
from tui.widgets.findings_pane import FindingsPane
from tui.widgets.observed import AllObserved, Observed

if TYPE_CHECKING:  # these load after the first paint, where they are used
    from tui.collectors.base import Collector


# once the sources start, frames wait (at most this long, and no longer than the first key) until every pane has
# its source's first read: the first triage is laid out and drawn once, not once per pane as each read comes
FIRST_TRIAGE_HOLD_S = 1.0


class StartupPart:
    """The sources: built after the first paint (after the set-up, if any), one runner each, their
    observations handed to the widgets; the first triage drawn once."""

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
            self.run_worker(self._set_up(in_thread(self._setup)), name="setup", group="setup", exit_on_error=False)

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

