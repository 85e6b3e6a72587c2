"""The control-plane pane, driven by Pilot with a scripted services snapshot: grouping and order, the
countdown ticking between polls, enter -> host screen, escape back, Keystone line, findings."""

from __future__ import annotations

import time
from datetime import UTC, datetime, timedelta
from typing import Any

from tests.testbed.wait import until_pilot
from tests.unit.fakes import ScriptedCollector
from tui.app import StacktopApp
from tui.config import Config, Thresholds
from tui.models.services import KeystoneCheck, SectionRead, ServiceRow, ServicesSnapshot
from tui.rules.liveness import services_findings
from tui.screens.host import HostScreen
from tui.widgets.findings_pane import FindingsPane
from tui.widgets.services_pane import ServicesPane

TH = Thresholds(service_down_time=60, agent_down_time=75, volume_service_down_time=60)


def make_snapshot(read_at: datetime, *, keystone_ok: bool = True) -> ServicesSnapshot:
    def row(section: str, binary: str, host: str, age: float, **kw: Any) -> ServiceRow:
        return ServiceRow(section=section, binary=binary, host=host, id=kw.pop("id", f"{binary}-{host}"),  # type: ignore[arg-type]
                          zone="nova", updated_at=read_at - timedelta(seconds=age), age_at_read_s=age, **kw)

    compute = (row("compute", "nova-compute", "compute-01", 2), row("compute", "nova-compute", "compute-02", 40),
               row("compute", "nova-conductor", "ctl-1", 3), row("compute", "nova-scheduler", "ctl-1", 4))
    network = (row("network", "neutron-openvswitch-agent", "compute-01", 5, agent_type="Open vSwitch agent"),
               row("network", "neutron-openvswitch-agent", "compute-02", 90, agent_type="Open vSwitch agent",
                   state="down"))
    volume = (row("volume", "cinder-volume", "compute-02@lvm", 3, id=""),)
    return ServicesSnapshot(
        taken_at=read_at,
        keystone=KeystoneCheck("http://127.0.0.1:5000/v3", "testcloud", ok=keystone_ok,
                               error=None if keystone_ok else "connection refused"),
        compute=SectionRead("compute", compute, read_at), network=SectionRead("network", network, read_at),
        volume=SectionRead("volume", volume, read_at), compute_microversion="2.96")


class SnapshotCollector(ScriptedCollector):
    def __init__(self, snapshot: ServicesSnapshot) -> None:
        super().__init__("services", [1], interval=30.0, timeout=1.0)
        self.snapshot = snapshot

    async def collect(self) -> Any:
        self.calls += 1
        return self.snapshot

    def findings(self, snapshot: Any, now: datetime) -> list:
        return services_findings(snapshot, now, TH)


async def wait_rows(pilot, pane: ServicesPane) -> None:  # type: ignore[no-untyped-def]
    for _ in range(200):
        if pane.table is not None and pane.table.row_count:
            return
        await pilot.pause(0.02)
    raise AssertionError("the services pane never got rows")


def cell(pane: ServicesPane, key: str, column: str) -> str:
    assert pane.table is not None
    value = pane.table.get_cell(key, column)
    return getattr(value, "plain", str(value))


async def test_grouped_down_and_late_first_countdown_ticks_enter_opens_host() -> None:
    clock = [time.time()]
    read_at = datetime.fromtimestamp(clock[0], UTC)
    collector = SnapshotCollector(make_snapshot(read_at))
    app = StacktopApp(Config(thresholds=TH), collectors=[collector], clock=lambda: clock[0])
    async with app.run_test(size=(160, 48)) as pilot:
        pane = app.query_one("#pane-services", ServicesPane)
        await wait_rows(pilot, pane)
        assert pane.table is not None
        keys = pane.table.shown_keys
        assert keys == [
            "hdr:compute", "compute:nova-compute-compute-02", "compute:nova-compute-compute-01",
            "compute:nova-conductor-ctl-1", "compute:nova-scheduler-ctl-1",
            "hdr:network", "network:neutron-openvswitch-agent-compute-02",
            "network:neutron-openvswitch-agent-compute-01",
            "hdr:volume", "volume:cinder-volume@compute-02@lvm",
        ]
        late = "compute:nova-compute-compute-02"
        assert cell(pane, late, "state") == "LATE"
        assert cell(pane, late, "heartbeat") == "40s · down in 20s"
        assert cell(pane, "network:neutron-openvswitch-agent-compute-02", "state") == "DOWN"
        assert cell(pane, "hdr:compute", "state") == "4, 1 late"
        # healthy: within the late mark (half of service_down_time 60 s), not an age that changes every poll
        assert cell(pane, "compute:nova-compute-compute-01", "heartbeat") == "≤ 30s"
        assert "Keystone ok" in str(pane.query_one("#services-message").render())

        clock[0] += 7  # no new poll: only the late row moves
        pane.refresh_freshness(clock[0])
        await pilot.pause()
        assert cell(pane, late, "heartbeat") == "47s · down in 13s"
        assert cell(pane, "compute:nova-compute-compute-01", "heartbeat") == "≤ 30s"

        clock[0] += 15  # past the down time: the verdict is the poll's (late, as the finding says) until the next
        pane.refresh_freshness(clock[0])
        await pilot.pause()
        assert cell(pane, late, "state") == "LATE"
        assert cell(pane, late, "heartbeat").endswith("down in 0s")
        app.runners["services"].refresh_now()  # the next poll judges it down: the pane and the finding together
        await until_pilot(pilot, lambda: cell(pane, late, "state") == "DOWN", "the next poll's verdict", 20.0,
                          interval=0.05)
        assert cell(pane, late, "heartbeat") == "1m ago"

        findings = app.query_one(FindingsPane)
        assert findings.table is not None
        assert "neutron.agent_down|neutron-openvswitch-agent@compute-02" in findings.table.shown_keys

        app._activate(app.panes.index(pane))
        pane.table.move_cursor(row=pane.table.get_row_index(late))
        await pilot.press("enter")
        await pilot.pause()
        assert isinstance(app.screen, HostScreen) and app.screen.host == "compute-02"
        host_table = app.screen.table
        assert host_table is not None
        assert host_table.shown_keys == [
            "hdr:compute", late, "hdr:network", "network:neutron-openvswitch-agent-compute-02",
            "hdr:volume", "volume:cinder-volume@compute-02@lvm"]
        text = str(app.screen.query_one("#host-findings").render())
        assert "neutron.agent_down" in text and "compute-01" not in text
        await pilot.press("escape")
        await pilot.pause()
        assert not isinstance(app.screen, HostScreen)


async def test_enter_on_a_header_row_does_nothing() -> None:
    clock = [time.time()]
    collector = SnapshotCollector(make_snapshot(datetime.fromtimestamp(clock[0], UTC)))
    app = StacktopApp(Config(thresholds=TH), collectors=[collector], clock=lambda: clock[0])
    async with app.run_test(size=(160, 48)) as pilot:
        pane = app.query_one("#pane-services", ServicesPane)
        await wait_rows(pilot, pane)
        app._activate(app.panes.index(pane))
        assert pane.table is not None and pane.table.cursor_key() == "hdr:compute"
        await pilot.press("enter")
        await pilot.pause()
        assert not isinstance(app.screen, HostScreen)


async def test_keystone_unreachable_line_and_finding() -> None:
    clock = [time.time()]
    snap = make_snapshot(datetime.fromtimestamp(clock[0], UTC), keystone_ok=False)
    app = StacktopApp(Config(thresholds=TH), collectors=[SnapshotCollector(snap)], clock=lambda: clock[0])
    async with app.run_test(size=(160, 48)) as pilot:
        pane = app.query_one("#pane-services", ServicesPane)
        await wait_rows(pilot, pane)
        assert "Keystone http://127.0.0.1:5000/v3 unreachable" in str(pane.query_one("#services-message").render())
        findings = app.query_one(FindingsPane)
        assert findings.table is not None
        assert "keystone.unreachable|http://127.0.0.1:5000/v3" in findings.table.shown_keys


async def test_sim_keystone_refusing_keeps_rows_and_other_panes() -> None:
    """On the simulated cloud: Keystone refusing connections -> keystone.unreachable; the control-plane rows
    and the RabbitMQ pane keep their data."""
    from tui.sim import start_demo
    from tui.widgets.source_pane import SourcePane

    demo = start_demo(storyline=False, instances=20, queues=30)
    try:
        app = StacktopApp(demo.config())
        async with app.run_test(size=(160, 48)) as pilot:
            pane = app.query_one("#pane-services", ServicesPane)
            rabbit = app.query_one("#pane-rabbitmq", SourcePane)
            findings = app.query_one(FindingsPane)
            deadline = time.monotonic() + 30
            while not (pane.table and pane.table.row_count and rabbit.table and rabbit.table.row_count):
                assert time.monotonic() < deadline, "panes never filled from the sim"
                await pilot.pause(0.1)
            rows, rabbit_rows = pane.table.row_count, rabbit.table.row_count
            demo.keystone_refusing(True)
            app.action_refresh_now()
            assert findings.table is not None
            deadline = time.monotonic() + 30
            while not any(k.startswith("keystone.unreachable|") for k in findings.table.shown_keys):
                assert time.monotonic() < deadline, "no keystone.unreachable"
                await pilot.pause(0.1)
            assert pane.table.row_count == rows
            assert "unreachable" in str(pane.query_one("#services-message").render())
            assert rabbit.table.row_count == rabbit_rows and str(rabbit.border_subtitle).startswith("ok")
            demo.keystone_refusing(False)
            app.action_refresh_now()
            deadline = time.monotonic() + 30
            while any(k.startswith("keystone.unreachable|") for k in findings.table.shown_keys):
                assert time.monotonic() < deadline, "keystone.unreachable did not clear"
                await pilot.pause(0.1)
    finally:
        demo.stop()


def test_a_poll_is_judged_once_for_the_findings_the_pane_and_the_triage_row(monkeypatch: Any) -> None:
    """The poll's judgement (tui.rules.judge, as the runner runs it): every row is judged once, for the findings,
    the pane's rows and the triage row's counts; painting the pane later judges nothing."""
    from tui.models.observation import Observation
    from tui.rules import liveness
    from tui.rules.judge import assess_services, judge_cloud, judged
    from tui.widgets.services_pane import judged_sections, rows_at

    read_at = datetime(2026, 1, 1, 12, 0, tzinfo=UTC)
    snapshot = make_snapshot(read_at)
    calls = []
    real = liveness.assess
    monkeypatch.setattr(liveness, "assess", lambda *a, **kw: calls.append(a) or real(*a, **kw))
    sections = assess_services(snapshot, read_at, TH)
    total = sum(len(s.rows) for s in snapshot.sections)
    assert len(calls) == total
    rows_by_section = {section.name: rows for section, _, rows in sections}
    findings = services_findings(snapshot, read_at, TH, rows_by_section)
    obs = judged(Observation("services", snapshot, ok_at=read_at.timestamp(), findings=tuple(findings)), TH, None,
                 read_at.timestamp(), sections)
    view = judge_cloud({"services": obs}, read_at.timestamp(), TH, configured={"services"})
    rows, _ = rows_at(judged_sections(obs), read_at, read_at + timedelta(seconds=5))
    assert len(calls) == total, "the findings, the cloud view and the pane reuse the poll's verdicts"
    assert view.summary is not None
    assert {c.name: c.text for c in view.summary.cells}["compute"] == "2/2 up, 1 late"
    assert any("compute-02" in str(cells) for _, cells in rows)
