"""Silences, pause and refresh: what the engineer tells the dashboard about its findings and its polls."""

from __future__ import annotations

from tui.appparts.pieces import TopBar
from tui.freshness import TIME_ZONE, clock_time
from tui.models.finding import Finding
from tui.widgets.findings_pane import FindingsPane


class ControlsPart:
    """Silences (`x`, `X`, `:silence`), pause (`p`) and refresh now (`r`)."""

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

    def action_refresh_now(self) -> None:
        for runner in self.runners.values():  # the cloud on screen
            runner.refresh_now()

