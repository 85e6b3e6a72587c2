"""One judgement per poll, whichever view shows it: over the simulated storyline (default, hostile names, OVN,
RabbitMQ 4; 300 simulated seconds on the manual clock, every source polled every STEP), at every poll, for
every server and every control-plane service (host), the owner, state and severity are the same in the pane's
row, the findings, the snapshot's JSON report of the same observations and the runner's judged view.
"""

from __future__ import annotations

import json
from typing import Any

import pytest

from tui.gallery import SEED, START, GalleryApp, Tour
from tui.models.finding import SEVERITY_ORDER, Finding
from tui.models.judged import JudgedRow, latest_view
from tui.rules.finding_detail import owner_of
from tui.sim import start_demo
from tui.snapshot import to_report
from tui.widgets.instances_pane import COLUMNS as INSTANCE_COLUMNS
from tui.widgets.instances_pane import InstancesPane
from tui.widgets.services_pane import COLUMNS as SERVICE_COLUMNS
from tui.widgets.services_pane import ServicesPane

WALK_S = 300.0
STEP = 10.0
MARK = {"!! ": "critical", "! ": "warning"}
DOWN_KINDS = ("nova.service_enabled_but_down", "nova.service_down", "neutron.agent_down", "cinder.service_down")


def worst(findings: list[Finding]) -> str | None:
    return min((f.severity for f in findings), key=lambda s: SEVERITY_ORDER[s]) if findings else None


def about_service(findings: tuple[Finding, ...], binary: str, host: str) -> list[Finding]:
    out = []
    for f in findings:
        hosts = [f.evidence["host"]] if f.evidence.get("host") else list(f.evidence.get("hosts") or ())
        if (f.evidence.get("binary") or f.evidence.get("service")) == binary and \
                host in {str(h).split("@")[0] for h in hosts}:
            out.append(f)
    return out


def check_services(app: GalleryApp, pane: ServicesPane, report: dict[str, Any], at: float) -> int:
    obs = app.observations["services"]
    assert obs.view is not None and obs.view.judged_at == obs.ok_at, at
    judged: dict[str, JudgedRow] = dict(obs.view.rows)
    reported = {r["key"]: r for r in report["judged"]["services"]["rows"]}
    assert pane.table is not None
    shown = set(pane.table.shown_keys)
    checked = 0
    for section in obs.snapshot.sections:
        for row in section.rows:
            j = judged[row.key]
            told = about_service(obs.findings, row.binary, j.subject)
            # the finding: its owner and severity are the row's; a down finding only about a row judged down
            assert j.severity == worst(told), (at, row.key, j, [(f.kind, f.severity) for f in told])
            assert all(owner_of(f) == j.owner == row.binary for f in told), (at, row.key)
            if any(f.kind in DOWN_KINDS for f in told):
                assert j.state == "down", (at, row.key, j.state, [f.kind for f in told])
            if j.state == "late" and row.enabled and not row.forced_down:
                assert not any(f.kind in DOWN_KINDS for f in told), (at, row.key)
            # the snapshot's JSON report
            r = reported[row.key]
            assert (r["state"], r["owner"], r["severity"]) == (j.state, j.owner, j.severity), (at, row.key)
            # the pane's row
            if row.key in shown and row.state.upper() != "UNKNOWN":
                cell = str(pane.table.get_row(row.key)[SERVICE_COLUMNS.index("state")])
                assert cell.lower() == j.state, (at, row.key, cell, j.state)
                checked += 1
    return checked


def check_instances(app: GalleryApp, pane: InstancesPane, report: dict[str, Any], at: float) -> int:
    obs = app.observations["instances"]
    assert obs.view is not None, at
    judged: dict[str, JudgedRow] = dict(obs.view.rows)
    reported = {r["key"]: r for r in report["judged"].get("instances", {}).get("rows", [])}
    view = latest_view(app.observations)
    assert view is not None
    shown_findings = {f.key: f for f in view.shown}
    assert pane.table is not None
    shown = set(pane.table.shown_keys)
    checked = 0
    for sid, j in judged.items():
        stuck = [f for f in obs.findings if f.kind == "instance.stuck" and f.subject == sid]
        told = [f for f in obs.findings if f.kind.startswith("instance.") and f.subject == sid]
        assert j.severity == worst(told), (at, sid)
        for f in stuck:
            # the finding names the owner the row names; the findings pane shows that same finding
            assert f.evidence["owner_label"] == j.owner_label, (at, sid, f.evidence["owner_label"], j.owner_label)
            assert f.evidence["owner_label"].replace(" on ", "@") == j.owner, (at, sid)
            assert shown_findings[f.key].severity == f.severity, (at, sid)
        r = reported[sid]
        assert (r["state"], r["owner"], r["severity"]) == (j.state, j.owner, j.severity), (at, sid)
        if sid in shown:
            cells = pane.table.get_row(sid)
            assert str(cells[INSTANCE_COLUMNS.index("owner")]) == j.owner, (at, sid)
            name = str(cells[INSTANCE_COLUMNS.index("name")])
            mark = next((s for m, s in MARK.items() if name.startswith(m)), None)
            assert mark == worst(stuck), (at, sid, name, j.severity)
            checked += 1
    return checked


def check_all(app: GalleryApp, services: ServicesPane, instances: InstancesPane, at: float) -> tuple[int, int]:
    report = json.loads(json.dumps(to_report(list(app.observations.values()), app.clock()), default=str))
    return check_services(app, services, report, at), check_instances(app, instances, report, at)


@pytest.mark.parametrize("options", [{}, {"hostile": True}, {"ovn": True}, {"rabbitmq4": True}],
                         ids=["default", "hostile", "ovn", "rabbitmq4"])
async def test_every_view_shows_the_polls_one_judgement(utc: None, options: dict[str, bool]) -> None:
    demo = start_demo(manual=True, seed=SEED, start=START, **options)
    try:
        app = GalleryApp(demo)
        async with app.run_test(size=(160, 48)) as pilot:
            tour = Tour(app, pilot)
            services = app.query_one(ServicesPane)
            instances = app.query_one(InstancesPane)
            await tour.poll()
            rows = servers = 0
            states: set[str] = set()
            while True:
                at = tour.elapsed
                checked = check_all(app, services, instances, at)
                rows, servers = rows + checked[0], servers + checked[1]
                states |= {r.state for r in app.observations["services"].view.rows.values()}
                if at >= WALK_S:
                    break
                demo.advance(STEP)
                # between two polls the clock ticks on (countdowns move): every view still shows the last poll's
                # judgement (a row late at the poll does not turn DOWN in the pane while its finding says late)
                for pane in (services, instances):  # what the app's 1 s tick does
                    pane.refresh_freshness(app.clock())
                await pilot.pause()
                check_all(app, services, instances, tour.elapsed)
                await tour.poll()
            assert rows and servers, "the panes showed rows to compare"
            assert "down" in states, "the storyline killed a compute within 300 s"
    finally:
        demo.stop()
