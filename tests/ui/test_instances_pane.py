"""The instances pane and screen, driven by Pilot with the real InstancesCollector reading the simulated cloud
(tui.sim, manual clock): default attention view, `a` toggles all, rows updated in place through the build
states, stuck + compute down, enter -> instance screen (five questions, create request id), h -> host screen."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from datetime import datetime
from typing import Any

import pytest

from tests.testbed.sim_instances import sim_instances
from tests.testbed.wait import until_pilot
from tui.app import StacktopApp
from tui.config import Config
from tui.models.finding import Finding
from tui.models.instances import InstancesSnapshot
from tui.screens.instance import InstanceScreen
from tui.sim import start_demo
from tui.sim.demo import Demo
from tui.widgets.instances_pane import InstancesPane


@pytest.fixture
def demo() -> Iterator[Demo]:
    d = start_demo(instances=40, hosts=3, queues=5, churn=0, storyline=False, manual=True,
                   service_down_time=20, agent_down_time=20)
    try:
        yield d
    finally:
        d.stop()




async def until(pilot: Any, probe: Callable[[], Any], what: str, timeout: float = 30.0) -> Any:
    return await until_pilot(pilot, probe, what, timeout, interval=0.05)


def boot(demo: Demo, host: str, spawn_s: float = 60.0) -> str:
    with demo.engine.lock:
        inst = demo.engine.boot("canary", demo.engine.projects[0], "m1.small", host=host,
                                durations=(2.0, 2.0, 1.0, spawn_s))
        return inst.id


def row_cells(pane: InstancesPane, key: str) -> list[str]:
    assert pane.table is not None
    return [str(c) for c in pane.table.get_row(key)]


def snapshot_of(app: StacktopApp) -> InstancesSnapshot | None:
    obs = app.observations.get("instances")
    return obs.snapshot if obs is not None and isinstance(obs.snapshot, InstancesSnapshot) else None


async def test_attention_view_toggle_build_states_in_place_stuck_and_compute_down(demo: Demo) -> None:
    collector = sim_instances(demo)
    app = StacktopApp(Config(), collectors=[collector], clock=lambda: demo.clock.time())
    async with app.run_test(size=(160, 48)) as pilot:
        pane = app.query_one("#pane-instances", InstancesPane)
        # the table is mounted right after the first paint (SourcePane._mount_body)
        await until(pilot, lambda: pane.table is not None and snapshot_of(app) is not None,
                    "the table and the first poll")
        assert pane.table is not None
        assert pane.table.row_count == 0, "40 ACTIVE servers: nothing worth attention"
        assert "40 servers" in str(pane.query_one(".pane-message").render())

        await pilot.press("tab")  # focus the instances pane (services is first)
        await pilot.press("a")
        await until(pilot, lambda: pane.table.row_count == 40, "all 40 rows after `a`")
        await pilot.press("a")
        await until(pilot, lambda: pane.table.row_count == 0, "attention only again")

        host = demo.engine.hosts[1].name
        sid = boot(demo, host)
        await until(pilot, lambda: sid in pane.table.shown_keys, "the booted server in the attention view")
        assert row_cells(pane, sid)[1:3] == ["BUILD", "scheduling"]
        assert row_cells(pane, sid)[5] == "nova-scheduler"
        seen = {"scheduling"}
        for _ in range(5):  # walk sim time through the build states; the row is updated, never re-added
            demo.advance(1.5)
            await until(pilot, lambda: (snap := snapshot_of(app)) is not None and snap.taken_at >= demo.now(),
                        "a poll after the clock step")
            await pilot.pause(0.1)
            seen.add(row_cells(pane, sid)[2])
        assert {"networking", "spawning"} <= seen, seen
        assert row_cells(pane, sid)[4] == host
        assert row_cells(pane, sid)[5] == f"nova-compute@{host}"

        demo.advance(25)  # spawning for > 20 s: stuck
        await until(pilot, lambda: any(f.kind == "instance.stuck" and f.subject == sid
                                       for f in app.observations["instances"].findings), "instance.stuck")
        stuck = next(f for f in app.observations["instances"].findings if f.kind == "instance.stuck")
        assert stuck.evidence["owner"] == "nova-compute" and stuck.evidence["host"] == host
        await until(pilot, lambda: pane.table.get_row(sid)[0].style == "yellow", "warning styling")
        assert str(pane.table.get_row(sid)[0]) == "! canary"

        demo.inject("kill_compute", host=host)
        demo.advance(25)  # > service_down_time (20 s)
        await until(pilot, lambda: any(f.kind == "instance.stuck" and f"nova-compute on {host} is down" in f.summary
                                       for f in app.observations["instances"].findings), "compute down in the finding")
        await until(pilot, lambda: pane.table.get_row(sid)[0].style == "bold red", "critical styling")
        assert str(pane.table.get_row(sid)[0]) == "!! canary"

        # enter -> instance screen: five questions and the create action's request id
        pane.table.move_cursor(row=pane.table.get_row_index(sid))
        await pilot.press("enter")
        await until(pilot, lambda: isinstance(app.screen, InstanceScreen), "the instance screen")
        screen = app.screen
        assert isinstance(screen, InstanceScreen)
        await until(pilot, lambda: screen.detail is not None or screen.error, "the instance detail")
        assert screen.detail is not None, screen.error
        text = str(screen.query_one("#instance-body").render())
        create = next(a for a in screen.detail.actions if a.action == "create")
        assert create.request_id.startswith("req-") and create.request_id in text
        assert "Five questions" in text and f"nova-compute on {host} is down" in text
        assert "Did it get a host? yes" in text
        await pilot.press("h")
        await pilot.pause(0.1)
        from tui.screens.host import HostScreen

        assert isinstance(app.screen, HostScreen) and app.screen.host == host
        await pilot.press("escape")
        await pilot.press("escape")
        await until(pilot, lambda: not isinstance(app.screen, (InstanceScreen, HostScreen)), "back to the panes")


async def test_error_server_row_and_leaves_view_when_deleted(demo: Demo) -> None:
    collector = sim_instances(demo)
    app = StacktopApp(Config(), collectors=[collector], clock=lambda: demo.clock.time())
    async with app.run_test(size=(160, 48)) as pilot:
        pane = app.query_one("#pane-instances", InstancesPane)
        await until(pilot, lambda: snapshot_of(app) is not None, "the first poll")
        with demo.engine.lock:
            sid = demo.engine.boot("bigdata", demo.engine.projects[0], "x.huge", fail="novalidhost",
                                   durations=(1.0, 1.0, 1.0, 1.0)).id
        demo.advance(2)
        await until(pilot, lambda: pane.table is not None and sid in pane.table.shown_keys
                    and row_cells(pane, sid)[1] == "ERROR", "the ERROR row")
        assert row_cells(pane, sid)[5] == "fault: nova-scheduler / placement"
        err = next(f for f in app.observations["instances"].findings if f.kind == "instance.error")
        assert err.summary.startswith("No valid host was found")
        with demo.engine.lock:
            demo.engine.delete(sid)
        demo.advance(5)
        await until(pilot, lambda: sid not in pane.table.shown_keys, "the deleted server to leave")
        assert sid not in collector.index.servers


def test_rows_order_marks_and_status_line() -> None:
    from datetime import UTC, timedelta

    from tui.models.instances import Fault, HostHealth, Server
    from tui.rules.stuck import instance_findings
    from tui.widgets.instances_pane import instance_rows, status_line

    now = datetime(2026, 3, 1, 12, 0, tzinfo=UTC)

    def srv(sid: str, status: str, task: str | None, age: float = 0.0, **kw: Any) -> Server:
        since = now - timedelta(seconds=age) if (task or status == "BUILD") else None
        return Server(id=sid * 8, name=f"vm-{sid}", status=status, task_state=task, task_since=since,
                      task_since_basis="updated_at" if since else None, project_id="p" * 32, **kw)

    snap = InstancesSnapshot(taken_at=now, servers=(
        srv("a", "ACTIVE", None), srv("b", "BUILD", "networking", 30, host="c1"),
        srv("c", "BUILD", "spawning", 700, host="c2"), srv("d", "ERROR", None, fault=Fault(500, "No valid host")),
        srv("e", "BUILD", "spawning", 900, host="c1"), srv("f", "BUILD", None, 5, host="c1")),
        hosts={"c1": HostHealth("c1", "up", "enabled"), "c2": HostHealth("c2", "down", "enabled")})
    findings = instance_findings(snap, now, {"spawning": 600.0, "default": 1800.0})
    from tui.rules.judge import instance_rows as judged_rows

    rows = instance_rows(snap, findings, judged=judged_rows(snap, findings))  # owners as the poll judged them
    assert [k[0] for k, _ in rows] == ["c", "e", "d", "b", "f"], "critical stuck, warning stuck, ERROR, busy"
    cells = dict(rows)
    assert str(cells["c" * 8][0]) == "!! vm-c" and str(cells["e" * 8][0]) == "! vm-e"
    assert cells["c" * 8][3] == "~11m" and cells["c" * 8][5] == "nova-compute@c2"  # in state for, owner
    assert cells["d" * 8][5] == "fault: nova-scheduler / placement"
    assert cells["f" * 8][5] == "nova-compute@c1", "BUILD with no task_state: queued for nova-compute"
    assert len(instance_rows(snap, findings, show_all=True)) == 6
    line = status_line(snap, findings, show_all=False, shown=5)
    assert "6 servers" in line and "2 stuck" in line and "1 ERROR" in line and "nova-compute down on c2" in line


def test_rows_made_with_the_memo_are_the_rows_made_without_it() -> None:
    """instance_rows with its memo (kept from one snapshot to the next: cells by server, places in the last
    rows) gives exactly the rows it gives without one, as servers change, come, go, age and get findings; an
    unchanged server keeps its very cells, in both views."""
    import random
    from datetime import UTC, timedelta

    from tui.models.instances import Fault, Server
    from tui.rules.stuck import instance_findings
    from tui.widgets.instances_pane import RowMemo, instance_rows

    rng = random.Random(7)
    start = datetime(2026, 3, 1, 12, 0, tzinfo=UTC)

    def server(i: int, now: datetime) -> Server:
        status, task = rng.choice([("ACTIVE", None)] * 6 + [("SHUTOFF", None), ("ERROR", None),
                                                              ("BUILD", "spawning"), ("ACTIVE", "rebooting")])
        since = now - timedelta(seconds=rng.randrange(0, 3000)) if task else None
        return Server(id=f"{i:08x}-0000", name=rng.choice(["web", "db", "api"]) + f"-{rng.randrange(50):02d}",
                      status=status, task_state=task, task_since=since,
                      task_since_basis="updated_at" if since else None, project_id="p" * 32,
                      host=f"c{i % 7}", fault=Fault(500, "No valid host") if status == "ERROR" else None)

    memo = RowMemo()
    servers = [server(i, start) for i in range(400)]
    for poll in range(6):
        now = start + timedelta(seconds=70 * poll)
        if poll:
            for _ in range(25):  # changed servers (a new state of the same server), one gone, one new
                at = rng.randrange(len(servers))
                servers[at] = server(int(servers[at].id[:8], 16), now)
            servers.pop(rng.randrange(len(servers)))
            servers.insert(rng.randrange(len(servers)), server(10_000 + poll, now))
        rng.shuffle(servers)  # the listing's order is no promise
        snap = InstancesSnapshot(taken_at=now, servers=tuple(servers))
        findings = instance_findings(snap, now, {"spawning": 600.0, "default": 1800.0})
        for show_all in (False, True):
            before = dict(memo)
            rows = instance_rows(snap, findings, show_all=show_all, memo=memo)
            assert rows == instance_rows(snap, findings, show_all=show_all), (poll, show_all)
            kept = [key for key, cells in rows if key in before and before[key][1] is cells]
            assert show_all is False or poll == 0 or len(kept) > len(rows) // 2, "unchanged servers keep their cells"
        attention = dict(instance_rows(snap, findings, memo=memo))
        every = dict(instance_rows(snap, findings, show_all=True, memo=memo))
        assert all(every[key] is cells for key, cells in attention.items()), "both views share a server's cells"
    last = instance_rows(snap, findings, show_all=True, memo=memo)
    again = InstancesSnapshot(taken_at=snap.taken_at, servers=tuple(servers))  # a poll where nothing changed
    assert instance_rows(again, findings, show_all=True, memo=memo) is last, "the same rows: the same list"
    servers[0] = server(int(servers[0].id[:8], 16), snap.taken_at)
    changed = InstancesSnapshot(taken_at=snap.taken_at, servers=tuple(servers))
    rows = instance_rows(changed, findings, show_all=True, memo=memo)
    assert rows is not last and rows == instance_rows(changed, findings, show_all=True)


async def test_instance_screen_says_since_when_and_on_what_basis(demo: Demo) -> None:
    """Question 2 gives the task_state's age with its start and basis: the dashboard's own observation when it
    saw this state, else nova's updated_at (refresh paused: the state changed since the last poll)."""
    collector = sim_instances(demo)
    app = StacktopApp(Config(), collectors=[collector], clock=lambda: demo.clock.time())
    async with app.run_test(size=(160, 48)) as pilot:
        await until(pilot, lambda: snapshot_of(app) is not None, "the first poll")
        sid = boot(demo, demo.engine.hosts[1].name)
        await until(pilot, lambda: (snap := snapshot_of(app)) is not None and (s := snap.server(sid)) is not None
                    and s.task_state == "scheduling", "the build seen in scheduling")
        await pilot.press("p")  # refresh paused: the dashboard keeps its observation (scheduling)
        await pilot.pause(0.3)
        demo.advance(7)  # scheduling 2 s, networking 2 s, block_device_mapping 1 s: spawning since ~2 s
        app.run_command(f"server {sid}")
        await until(pilot, lambda: isinstance(app.screen, InstanceScreen) and app.screen.detail is not None,
                    "the instance detail")
        screen = app.screen
        assert isinstance(screen, InstanceScreen) and screen.detail is not None
        assert snapshot_of(app).server(sid).task_state == "scheduling"  # type: ignore[union-attr]
        server = screen.detail.server
        assert server.task_state == "spawning" and server.updated_at is not None
        text = str(screen.query_one("#instance-body").render())
        age = int((demo.now() - server.updated_at).total_seconds())
        assert (f"What is the task state? spawning for {age}s (since {server.updated_at:%H:%M:%S}, nova's "
                "updated_at; threshold 20s)") in text, text
        assert "for ?" not in text and "(?)" not in text
        await pilot.press("escape")
        await pilot.press("p")  # refresh again: the dashboard sees spawning; the screen says what it saw
        await until(pilot, lambda: (s := snapshot_of(app).server(sid)) is not None  # type: ignore[union-attr]
                    and s.task_state == "spawning", "the dashboard seeing spawning")
        known = snapshot_of(app).server(sid)  # type: ignore[union-attr]
        assert known is not None and known.task_since is not None
        app.run_command(f"server {sid}")
        await until(pilot, lambda: isinstance(app.screen, InstanceScreen) and app.screen.detail is not None,
                    "the instance detail, again")
        text = str(app.screen.query_one("#instance-body").render())
        basis = {"observed": "first seen by stacktop", "updated_at": "nova's updated_at"}[known.task_since_basis or ""]
        assert f"(since {known.task_since:%H:%M:%S}, {basis}; threshold 20s)" in text, text


def test_the_attention_view_and_status_line_from_the_snapshots_attention_subset() -> None:
    """The pane's default view, the status line and the rules use the snapshot's attention subset (found once
    per snapshot): the same rows, counts and findings as a scan of every server; a stuck finding about a server
    outside the subset still shows it."""
    from datetime import UTC, timedelta

    from tui.models.instances import Fault, Server
    from tui.rules.stuck import instance_error, instance_findings, instance_stuck, worth_attention
    from tui.widgets.instances_pane import instance_rows, status_line

    now = datetime(2026, 3, 1, 12, 0, tzinfo=UTC)
    stuck = {"spawning": 600.0, "default": 1800.0}

    def srv(sid: str, status: str, task: str | None, age: float = 0.0, **kw: Any) -> Server:
        since = now - timedelta(seconds=age) if (task or status == "BUILD") else None
        return Server(id=sid * 8, name=f"vm-{sid}", status=status, task_state=task, task_since=since,
                      task_since_basis="observed" if since else None, project_id="p" * 32, **kw)

    servers = (*(srv(f"{i:02d}", "ACTIVE", None) for i in range(40)),
               srv("b", "BUILD", None, 30, host="c1"), srv("e", "ERROR", None, fault=Fault(500, "No valid host")),
               srv("s", "ACTIVE", "rebooting", 4000, host="c1"), srv("x", "SHUTOFF", None),
               srv("d", "BUILD", "spawning", 700, host="c2"))
    snap = InstancesSnapshot(taken_at=now, servers=servers)
    assert snap.attention == tuple(s for s in servers if worth_attention(s))
    assert snap.attention is snap.attention, "found once per snapshot"
    findings = instance_findings(snap, now, stuck)
    every = []
    for s in servers:
        every += [f for f in (instance_stuck(s, now, stuck, snap.hosts, poll_interval_s=snap.poll_interval_s),
                              instance_error(s, now)) if f is not None]
    assert findings == every and {f.subject for f in findings} >= {"s" * 8, "d" * 8, "e" * 8}
    odd = Finding(severity="warning", kind="instance.stuck", subject="07" * 8, summary="stuck", source="instances")
    rows = instance_rows(snap, (*findings, odd))
    assert {k for k, _ in rows} == {s.id for s in snap.attention} | {"07" * 8}
    line = status_line(snap, findings, show_all=False, shown=len(rows))
    assert "45 servers" in line and "2 in a task_state" in line and "1 ERROR" in line and "2 stuck" in line
