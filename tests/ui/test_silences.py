"""Silencing a finding (`x`, `:silence 2h`, `X` lifts): it stays in the findings pane, dimmed and last, saying
until when, but no longer counts in the header, colours the cloud's badge or raises a toast; the journal records
the silence and its lifting, and the export lists them."""

from __future__ import annotations

from datetime import datetime
from pathlib import Path
from typing import Any

import pytest

from tests.testbed.wait import until_pilot
from tui import clouds as cloudset
from tui.app import StacktopApp
from tui.collectors.base import BaseCollector
from tui.config import Config, OpenStackConfig
from tui.export import to_markdown
from tui.models.finding import Finding
from tui.models.silence import MAX_S, Silences, parse_duration
from tui.recorder import Journal, Recorder, read_journal
from tui.widgets.findings_pane import FindingsPane, row_key

WARN = Finding(severity="warning", kind="rabbitmq.queues_no_consumer", subject="notifications queues",
               summary="2 notification queues hold 9,000 messages with 0 consumers", source="services")
CRIT = Finding(severity="critical", kind="nova.service_enabled_but_down", subject="compute-02",
               summary="nova-compute on compute-02 is down but enabled", source="services")


class Fixed(BaseCollector):
    name = "services"
    interval = 0.2
    timeout = 5.0

    def __init__(self, findings: list[Finding]) -> None:
        self.out = findings

    async def collect(self) -> dict[str, Any]:
        return {"ok": True}

    def findings(self, snapshot: Any, now: datetime) -> list[Finding]:
        return list(self.out)


def select(pane: FindingsPane, finding: Finding) -> None:
    assert pane.table is not None
    pane.table.move_cursor(row=pane.table.shown_keys.index(f"{finding.kind}|{finding.subject}"))
    assert pane.selected() == finding


def test_durations() -> None:
    assert parse_duration("30m") == 1800 and parse_duration("2h") == 7200 and parse_duration("1d") == 86400
    assert parse_duration("90s") == 90 and parse_duration("45") == 2700, "a bare number is minutes"
    for bad in ("", "soon", "10s", "8d", "-5m", "1e9h"):
        with pytest.raises(ValueError):
            parse_duration(bad)
    assert parse_duration("7d") == MAX_S


def test_silences_end_by_themselves() -> None:
    s = Silences()
    s.add(CRIT.key, 100.0)
    assert s.silenced(CRIT, 99.0) and not s.silenced(WARN, 99.0)
    assert not s.silenced(CRIT, 100.0) and s.active(100.0) == {}
    assert not s.remove(CRIT.key)


def test_a_silenced_finding_does_not_colour_the_badge() -> None:
    from tui.models.observation import Observation

    obs = {"services": Observation(source="services", snapshot={}, findings=(WARN,), ok_at=10.0, tried_at=10.0)}
    s = Silences()
    assert cloudset.badge("east", obs, 11.0, {"services": 10.0}, silences=s).level == "warning"
    s.add(WARN.key, 11.0 + 3600)
    assert cloudset.badge("east", obs, 11.0, {"services": 10.0}, silences=s).level == "ok"
    assert cloudset.badge("east", obs, 11.0 + 3601, {"services": 10.0}, silences=s).level == "warning"


async def test_x_silences_the_selected_finding_and_X_lifts_it(tmp_path: Path) -> None:
    recorder = Recorder(Journal(tmp_path, name="j.jsonl"))
    app = StacktopApp(Config(openstack=OpenStackConfig(cloud="c")), collectors=[Fixed([CRIT, WARN])],
                      recorder=recorder)
    async with app.run_test(size=(160, 48)) as pilot:
        pane = app.query_one(FindingsPane)
        await until_pilot(pilot, lambda: CRIT in pane.findings and WARN in pane.findings, "both findings shown")
        app.show_source("findings")
        await pilot.pause()
        select(pane, CRIT)
        await pilot.press("x")
        await until_pilot(pilot, lambda: CRIT.key in pane.silenced, "the critical is silenced")
        message = str(pane.query_one(".pane-message").render())
        assert message.startswith("1 critical  1 warning  ·  1 silenced (X lifts)"), message  # the triage hint
        assert pane.table.shown_keys[-1] == "nova.service_enabled_but_down|compute-02", "silenced: last"
        cells = pane.table.get_row("nova.service_enabled_but_down|compute-02")
        assert str(cells[0]) == "CRITICAL" and str(cells[-1]) == "silenced"
        assert str(cells[3]).startswith("to ") and "dim" in str(cells[0].style)
        loud_widths = [len(str(c)) for c in pane.table.get_row(row_key(WARN))]
        assert pane.table.fitted[0] == max(8, loud_widths[0]), "the silenced row widens no severity column"
        assert pane.table.fitted[-1] <= 8 + 1, "nor the since column (HH:MM:SS, its sort mark)"
        assert app.cloud_badges()[0].level == "warning", "the silenced critical no longer colours the badge"

        # `:silence 2h` on the other one
        select(pane, WARN)
        await pilot.press(":", *"silence 2h", "enter")
        await until_pilot(pilot, lambda: WARN.key in pane.silenced, ":silence 2h")
        assert app.cloud_badges()[0].level == "ok"
        assert pane.silenced[WARN.key] - app.clock() == pytest.approx(7200, abs=60)

        # X lifts the critical's silence
        select(pane, CRIT)
        await pilot.press("X")
        await until_pilot(pilot, lambda: CRIT.key not in pane.silenced, "X lifts it")
        assert app.cloud_badges()[0].level == "critical"
    recorder.close()
    events = [e for e in read_journal(tmp_path / "j.jsonl") if e.get("type") in ("silence", "unsilence")]
    assert [(e["type"], e["kind"], e.get("for_s")) for e in events] == [
        ("silence", CRIT.kind, 3600), ("silence", WARN.kind, 7200), ("unsilence", CRIT.kind, None)]
    report = to_markdown(tmp_path / "j.jsonl")
    assert "## Silenced findings" in report and "silence lifted: nova.service_enabled_but_down compute-02" in report


async def test_a_bad_duration_is_one_line_and_silences_nothing(tmp_path: Path) -> None:
    app = StacktopApp(Config(openstack=OpenStackConfig(cloud="c")), collectors=[Fixed([WARN])])
    async with app.run_test(size=(160, 48)) as pilot:
        pane = app.query_one(FindingsPane)
        await until_pilot(pilot, lambda: WARN in pane.findings, "the finding shown")
        app.show_source("findings")
        select(pane, WARN)
        await pilot.press(":", *"silence soon", "enter")
        await pilot.pause()
        assert not pane.silenced
        line = app.query_one("#command")
        assert line.has_class("-shown") and line.value == "silence soon", "the line stays open, as typed"
        assert "not a duration: 'soon'" in str(line.border_title), "the error is in the command line itself"
