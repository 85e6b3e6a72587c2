"""One truth per cloud: over the simulated storyline (default, hostile names, OVN, RabbitMQ 4; 300 simulated
seconds on the manual clock, every source polled every STEP, the session recorded to a journal), at every poll,
for every server and every control-plane service (and its host), the owner, state and severity are the same in:
the pane's row, the instance screen's five questions and the host screen (each built by the screen's own
builder over the observation the screen reads), the findings (the source's and the findings pane's), the
snapshot's JSON report of the same observations, the export of the session's journal (the findings open at
that time), and the replay of that journal at the same frame (the recorded observations judged by the runner
and the cloud's judge, as `stacktop replay` does). Between two polls, as the clock ticks on, the panes still show
the last poll's judgement.
"""

from __future__ import annotations

import dataclasses
import json
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest
from rich.text import Text

from tui.config import Config
from tui.export import findings_table
from tui.gallery import SEED, START, GalleryApp, Tour
from tui.models.finding import SEVERITY_ORDER, Finding
from tui.models.instances import BUILD_QUEUED, InstanceDetail, InstancesSnapshot
from tui.models.judged import JudgedRow, latest_view
from tui.recorder import Journal, Recorder, read_journal
from tui.replay import Player
from tui.rules.finding_detail import host_of, owner_of
from tui.rules.judge import CloudJudge
from tui.runner import CollectorRunner
from tui.screens.host import host_findings
from tui.screens.instance import detail_text, live_detail
from tui.sim import start_demo
from tui.snapshot import to_report
from tui.widgets.instances_pane import COLUMNS as INSTANCE_COLUMNS
from tui.widgets.instances_pane import InstancesPane
from tui.widgets.services_pane import COLUMNS as SERVICE_COLUMNS
from tui.widgets.services_pane import ServicesPane, build_rows, host_sections, judged_sections, utc_datetime

WALK_S = 300.0
STEP = 10.0
MARK = {"!! ": "critical", "! ": "warning"}
DOWN_KINDS = ("nova.service_enabled_but_down", "nova.service_down", "neutron.agent_down", "cinder.service_down")


def worst(findings: list[Finding]) -> str | None:
    return min((f.severity for f in findings), key=lambda s: SEVERITY_ORDER[s]) if findings else None


def plain(markup: str) -> str:
    return " ".join(Text.from_markup(markup).plain.split())


def about_service(findings: tuple[Finding, ...] | list[Finding], binary: str, host: str) -> list[Finding]:
    out = []
    for f in findings:
        hosts = [f.evidence["host"]] if f.evidence.get("host") else list(f.evidence.get("hosts") or ())
        if (f.evidence.get("binary") or f.evidence.get("service")) == binary and \
                host in {str(h).split("@")[0] for h in hosts}:
            out.append(f)
    return out


@dataclass(frozen=True)
class Frame:
    """What the live session judged at one poll: the rows of each source, the findings the findings pane lists."""

    at: float
    services: dict[str, JudgedRow]
    instances: dict[str, JudgedRow]
    shown: dict[tuple[str, str], Finding]  # (kind, subject) -> the finding the findings pane lists
    failed: dict[str, bool]  # source -> its poll failed (a read that timed out: shown as failed, replayed so)


def judgement(f: Finding) -> tuple[str, str, str | None]:
    """What a finding judges: its severity, its owner and the owner's host (as the finding screen reads them)."""
    return f.severity, owner_of(f), host_of(f)


# ---- the live views at one poll ----------------------------------------------------------------------------
def check_services(app: GalleryApp, pane: ServicesPane, report: dict[str, Any], at: float) -> None:
    obs = app.observations["services"]
    assert obs.view is not None and obs.view.judged_at == obs.ok_at, at
    judged: dict[str, JudgedRow] = dict(obs.view.rows)
    reported = {r["key"]: r for r in report["judged"]["services"]["rows"]}
    assert pane.table is not None
    shown = set(pane.table.shown_keys)
    now = app.now_utc()
    hosts = {row.host.split("@")[0] for section in obs.snapshot.sections for row in section.rows}
    # the host screen: its table and its findings, built as the screen builds them from the same observation
    on_screen: dict[str, str] = {}
    listed: dict[str, dict[tuple[str, str], str]] = {}
    for host in hosts:
        rows = build_rows(host_sections(judged_sections(obs), host), now, utc_datetime(obs.ok_at))
        on_screen.update({key: str(cells[SERVICE_COLUMNS.index("state")]) for key, cells in rows
                          if not key.startswith("hdr:")})
        listed[host] = {f.key: f.severity for f in host_findings(obs.findings, host)}
    for section in obs.snapshot.sections:
        for row in section.rows:
            j = judged[row.key]
            told = about_service(obs.findings, row.binary, j.subject)
            # the finding: its owner and severity are the row's
            assert j.severity == worst(told), (at, row.key, j, [(f.kind, f.severity) for f in told])
            assert j.owner == row.binary, (at, row.key)
            # a down finding only about a row judged down; a row late at the poll has none
            if any(f.kind in DOWN_KINDS for f in told):
                assert j.state == "down", (at, row.key, j.state, [f.kind for f in told])
            if j.state == "late" and row.enabled and not row.forced_down:
                assert not any(f.kind in DOWN_KINDS for f in told), (at, row.key)
            # the snapshot's JSON report
            r = reported[row.key]
            assert (r["state"], r["owner"], r["severity"]) == (j.state, j.owner, j.severity), (at, row.key)
            unknown = row.state.upper() == "UNKNOWN"
            # the host screen: the row's state in its table, every finding about the row in its list
            if not unknown:
                assert on_screen[row.key].lower() == j.state, (at, row.key, on_screen[row.key], j.state)
            assert all(listed[j.subject].get(f.key) == f.severity for f in told), (at, row.key, listed[j.subject])
            # the pane's row
            if row.key in shown and not unknown:
                cell = str(pane.table.get_row(row.key)[SERVICE_COLUMNS.index("state")])
                assert cell.lower() == j.state, (at, row.key, cell, j.state)


def screen_state(text: str) -> str:
    """The state the instance screen's second answer names (its phase), else the header's status."""
    answer = text.split("What is the task state? ", 1)[1]
    if answer.startswith("BUILD with no task_state"):
        return BUILD_QUEUED
    if answer.startswith("none (status "):
        return answer.removeprefix("none (status ").split(",", 1)[0]
    return answer.split(" for ", 1)[0]


def check_instances(app: GalleryApp, pane: InstancesPane, report: dict[str, Any], at: float) -> None:
    obs = app.observations["instances"]
    assert obs.view is not None, at
    snap = obs.snapshot
    assert isinstance(snap, InstancesSnapshot)
    judged: dict[str, JudgedRow] = dict(obs.view.rows)
    reported = {r["key"]: r for r in report["judged"].get("instances", {}).get("rows", [])}
    view = latest_view(app.observations)
    assert view is not None
    shown_findings = {f.key: f for f in view.shown}
    assert pane.table is not None
    shown = set(pane.table.shown_keys)
    stuck_after = app.runners["instances"].collector.stuck
    for sid, j in judged.items():
        stuck = [f for f in obs.findings if f.kind == "instance.stuck" and f.subject == sid]
        told = [f for f in obs.findings if f.kind.startswith("instance.") and f.subject == sid]
        assert j.severity == worst(told), (at, sid)
        for f in stuck:
            # the finding names the owner the row names; the findings pane shows that same finding
            assert f.evidence["owner_label"] == j.owner_label, (at, sid, f.evidence["owner_label"], j.owner_label)
            assert f.evidence["owner_label"].replace(" on ", "@") == j.owner, (at, sid)
            assert shown_findings[f.key].severity == f.severity, (at, sid)
        # the snapshot's JSON report
        r = reported[sid]
        assert (r["state"], r["owner"], r["severity"]) == (j.state, j.owner, j.severity), (at, sid)
        # the instance screen: its five questions over its own read of the server (GET /servers/{id}: no host
        # the scheduler chose), made before this poll (the poll's server shown) or after it (the read shown)
        server = snap.server(sid)
        assert server is not None
        read = InstanceDetail(server=dataclasses.replace(server, cast_host=None))
        detail = live_detail(read, (obs.ok_at or 0.0) + (1.0 if round(at / STEP) % 2 else -1.0), obs)
        text = plain(detail_text(detail, app.now_utc(), stuck_after, server, snap))
        assert screen_state(text) == j.state, (at, sid, j.state, text[:400])
        if j.owner_label:
            assert f"; owner {j.owner_label};" in text, (at, sid, j.owner_label, text[:600])
        elif j.owner.startswith("fault: "):
            assert f"; it names {j.owner.removeprefix('fault: ')}" in text, (at, sid, j.owner, text[:600])
        # the pane's row
        if sid in shown:
            cells = pane.table.get_row(sid)
            assert str(cells[INSTANCE_COLUMNS.index("owner")]) == j.owner, (at, sid)
            task, status = (str(cells[INSTANCE_COLUMNS.index(c)]) for c in ("task_state", "status"))
            # a build cast to a host and not yet claimed: BUILD with no task_state (the phase BUILD_QUEUED)
            state = BUILD_QUEUED if (status, task) == ("BUILD", "") and j.state == BUILD_QUEUED else task or status
            assert state == j.state, (at, sid, state, j.state)
            name = str(cells[INSTANCE_COLUMNS.index("name")])
            mark = next((s for m, s in MARK.items() if name.startswith(m)), None)
            assert mark == worst(stuck), (at, sid, name, j.severity)


def check_panes_between_polls(app: GalleryApp, services: ServicesPane, instances: InstancesPane, at: float) -> None:
    """The clock ticked on since the poll (countdowns move): the panes still show the poll's judgement (a row
    late at the poll does not turn DOWN in the pane while its finding says late)."""
    rows = app.observations["services"].view.rows
    assert services.table is not None and instances.table is not None
    for key in services.table.shown_keys:
        if key in rows:
            cell = str(services.table.get_row(key)[SERVICE_COLUMNS.index("state")])
            assert cell.lower() == rows[key].state or cell == "UNKNOWN", (at, key, cell, rows[key].state)
    servers = app.observations["instances"].view.rows
    for sid in instances.table.shown_keys:
        if sid in servers:
            assert str(instances.table.get_row(sid)[INSTANCE_COLUMNS.index("owner")]) == servers[sid].owner, (at, sid)


def live_frame(app: GalleryApp, services: ServicesPane, instances: InstancesPane, at: float) -> Frame:
    report = json.loads(json.dumps(to_report(list(app.observations.values()), app.clock()), default=str))
    check_services(app, services, report, at)
    check_instances(app, instances, report, at)
    view = latest_view(app.observations)
    assert view is not None
    reported = {(f["kind"], f["subject"]): (f["severity"], f["summary"]) for f in report["findings"]}
    listed = {f.key: (f.severity, f.summary) for f in view.shown}
    assert reported == listed, (at, set(reported) ^ set(listed))  # the snapshot lists the findings pane's findings
    return Frame(app.clock(), dict(app.observations["services"].view.rows),
                 dict(app.observations["instances"].view.rows), {f.key: f for f in view.shown},
                 {name: obs.error is not None for name, obs in app.observations.items()})


# ---- the journal of the session: its export and its replay, frame by frame --------------------------------
def _epoch(ts: Any) -> float:
    return datetime.fromisoformat(str(ts)).replace(tzinfo=UTC).timestamp() if ts else float("inf")


def check_export(journal: Path, frames: list[Frame]) -> None:
    """The export's findings table: at each frame's time, every finding the findings pane listed is open, with
    the same severity, owner and host."""
    table = findings_table(read_journal(journal))
    for frame in frames:
        open_ = {(r["kind"], r["subject"]): judgement(Finding.from_dict(r)) for r in table
                 if _epoch(r["raised"]) <= frame.at < _epoch(r["cleared"])}
        for key, finding in frame.shown.items():
            assert open_.get(key) == judgement(finding), (frame.at - START, key, judgement(finding), open_.get(key))


async def check_replay(journal: Path, config: Config, frames: list[Frame]) -> None:
    """The replay's runners, judged by the cloud's judge on the recorded clock, at each frame's time."""
    player = Player.from_journal(journal)
    player.clock.pause()
    judge = CloudJudge(config.thresholds, configured={c.name for c in player.collectors},
                       intervals={c.name: float(c.interval) for c in player.collectors})
    runners = [CollectorRunner(c, clock=player.clock.now, judge=judge, thresholds=config.thresholds)
               for c in player.collectors]
    for frame in frames:
        player.clock.jump(frame.at)
        observations = {r.name: await r.run_once() for r in runners}
        failed = {name: o.error is not None for name, o in observations.items()}
        assert failed == frame.failed, (frame.at - START, failed, frame.failed)
        for source, live in (("services", frame.services), ("instances", frame.instances)):
            replayed = observations[source].view
            assert replayed is not None
            assert dict(replayed.rows) == live, (frame.at - START, source, {
                k: (live.get(k), replayed.rows.get(k)) for k in set(live) | set(replayed.rows)
                if live.get(k) != replayed.rows.get(k)})
        view = latest_view(observations)
        assert view is not None
        replayed_shown = {f.key: (judgement(f), f.summary) for f in view.shown}
        live_shown = {k: (judgement(f), f.summary) for k, f in frame.shown.items()}
        assert replayed_shown == live_shown, (frame.at - START, {
            k: (live_shown.get(k), replayed_shown.get(k)) for k in set(live_shown) | set(replayed_shown)
            if live_shown.get(k) != replayed_shown.get(k)})


@pytest.mark.parametrize("options", [{}, {"hostile": True}, {"ovn": True}, {"rabbitmq4": True}],
                         ids=["default", "hostile", "ovn", "rabbitmq4"])
async def test_every_view_export_and_replay_tell_one_truth(utc: None, tmp_path: Path,
                                                          options: dict[str, bool]) -> None:
    demo = start_demo(manual=True, seed=SEED, start=START, **options)
    journal = Journal(tmp_path)
    frames: list[Frame] = []
    try:
        app = GalleryApp(demo, recorder=Recorder(journal))
        async with app.run_test(size=(160, 48)) as pilot:
            tour = Tour(app, pilot)
            services = app.query_one(ServicesPane)
            instances = app.query_one(InstancesPane)
            await tour.poll()
            while True:
                frames.append(live_frame(app, services, instances, tour.elapsed))
                if tour.elapsed >= WALK_S:
                    break
                demo.advance(STEP)
                for pane in (services, instances):  # what the app's 1 s tick does between polls
                    pane.refresh_freshness(app.clock())
                await pilot.pause()
                check_panes_between_polls(app, services, instances, tour.elapsed)
                await tour.poll()
            config = app.config
        journal.close()
        assert any(j.owner_label for f in frames for j in f.instances.values()), "servers with an owner"
        assert any(j.state == "down" for f in frames for j in f.services.values()), "a compute died"
        assert any(j.severity for f in frames for j in f.instances.values()), "a stuck server"
        check_export(journal.path, frames)
        await check_replay(journal.path, config, frames)
    finally:
        demo.stop()
