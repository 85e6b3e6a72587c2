"""The top bar and the clouds: badges, the tick, `c` and `:cloud`."""

from __future__ import annotations

import time

from tui import clouds as cloudset
from tui import sources
from tui.appparts.pieces import TopBar
from tui.freshness import TIME_ZONE
from tui.models.observation import Observation
from tui.safetext import escape
from tui.widgets.findings_pane import FindingsPane
from tui.widgets.triage_row import TriageRow


class CloudsPart:
    """Several clouds: the top bar's badges, the once-a-second tick, switching the cloud on screen."""

    def _tick(self) -> None:
        """Once a second: ages only (no I/O here)."""
        now = self.clock()
        if not self.screen_stack or self.key_pending():
            return  # a key's frame first: the next tick catches up (a late row's countdown rebuilds its pane)
        self._refresh_topbar()
        minute = int(now // 60)
        if self.show_ages and minute != self._ages_minute:
            self._ages_minute = minute
            for pane in self.panes:
                pane.times_changed(now)
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
                bar.update(text, layout=False)  # one line whatever the text: no layout of the screen

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
        # the clock: minutes only, so that a still cloud repaints the bar once a minute, not every second
        clock = time.strftime("%H:%M", time.gmtime(self.clock()))
        ages = " · ages (t)" if self.show_ages else ""
        return f"[b]stacktop[/b]  {cloud}  {state}  read-only  {clock} {TIME_ZONE}{ages}{insecure}"

    def action_toggle_times(self) -> None:
        """`t`: the tables' moments as times or as ages."""
        self.show_ages = not self.show_ages
        now = self.clock()
        self._ages_minute = int(now // 60)
        for pane in self.panes:
            pane.times_changed(now)
        self._refresh_topbar()

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

