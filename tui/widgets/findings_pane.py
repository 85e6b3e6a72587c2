"""Every source's findings in one table, most severe first."""

from __future__ import annotations

from collections.abc import Iterable

from rich.text import Text

from tui.models.finding import Finding, sort_findings
from tui.models.observation import Observation
from tui.widgets.source_pane import SourcePane

SEVERITY_STYLE = {"critical": "bold red", "warning": "yellow", "info": "cyan"}


def finding_rows(findings: Iterable[Finding]) -> list[tuple[str, tuple[object, ...]]]:
    return [
        (
            f"{f.kind}|{f.subject}",
            (Text(f.severity.upper(), style=SEVERITY_STYLE[f.severity]), f.kind, f.subject, f.summary,
             f.next_step),
        )
        for f in sort_findings(list(findings))
    ]


class FindingsPane(SourcePane):
    SOURCE = "findings"
    TITLE = "findings"
    COLUMNS = ("severity", "kind", "subject", "summary", "next step")

    def __init__(self, **kwargs: object) -> None:
        super().__init__(**kwargs)  # type: ignore[arg-type]
        self.by_source: dict[str, Observation] = {}

    def show_all(self, observations: dict[str, Observation]) -> None:
        self.by_source = dict(observations)
        if not self._mounted:
            return
        findings = [f for obs in observations.values() for f in obs.findings]
        if self.table is not None:
            self.table.sync(finding_rows(findings))
        counts = {s: sum(1 for f in findings if f.severity == s) for s in ("critical", "warning", "info")}
        self.set_message(
            "No findings." if not findings
            else "  ".join(f"{n} {s}" for s, n in counts.items() if n)
        )
        self.refresh_freshness(self._now())

    def on_mount(self) -> None:
        super().on_mount()
        if self.by_source:
            self.show_all(self.by_source)

    def refresh_freshness(self, now: float) -> None:
        failing = [obs.source for obs in self.by_source.values() if obs.error is not None]
        if not self.by_source:
            runners = getattr(self.app, "runners", None)
            text, level = ("waiting for the first poll", "loading") if runners else ("no sources", "off")
            self.border_subtitle = text
        else:
            self.border_subtitle = f"sources failing: {', '.join(failing)}" if failing else "all sources ok"
            level = "stale" if failing else "ok"
        for name in ("ok", "stale", "error", "loading", "off"):
            self.set_class(level == name, f"-{name}")
