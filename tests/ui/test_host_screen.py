"""Host drill-down, `:audit` and `:fit` driven by Pilot against the simulated cloud (tui.sim, manual clock).

The reads are the real ones (tui.openstack.placement_reads over HTTP to the simulator); the app reaches the cloud
through the instances collector's client, as it does in production.
"""

from __future__ import annotations

import asyncio
import uuid
from collections.abc import Callable, Iterator
from typing import Any

import pytest
from textual.worker import WorkerState

from tests.testbed.wait import until_pilot
from tui.app import StacktopApp
from tui.collectors.instances import InstancesCollector
from tui.config import Config
from tui.freshness import utc_clock_time
from tui.openstack import connect
from tui.screens.audit import AuditScreen
from tui.screens.fit import FitScreen
from tui.screens.host import HostScreen
from tui.screens.instance import InstanceScreen
from tui.sim import start_demo
from tui.sim.demo import Demo
from tui.sim.model import Consumer
from tui.sim.model import Migration as SimMigration


def make_demo(storyline: bool) -> Demo:
    return start_demo(instances=30, hosts=3, queues=5, churn=0, storyline=storyline, manual=True,
                      service_down_time=20, agent_down_time=20)


@pytest.fixture
def demo() -> Iterator[Demo]:
    d = make_demo(storyline=False)
    try:
        yield d
    finally:
        d.stop()


@pytest.fixture
def story_demo() -> Iterator[Demo]:
    d = make_demo(storyline=True)
    try:
        yield d
    finally:
        d.stop()


def app_for(demo: Demo) -> StacktopApp:
    cfg = demo.config().openstack
    collector = InstancesCollector(cfg, client_factory=lambda: connect(cfg), clock=demo.now, interval=5.0,
                                   timeout=20)
    return StacktopApp(Config(), collectors=[collector], clock=lambda: demo.clock.time())


async def until(pilot: Any, probe: Callable[[], Any], what: str, timeout: float = 30.0) -> Any:
    return await until_pilot(pilot, probe, what, timeout, interval=0.05)


def text_of(screen: Any, selector: str) -> str:
    return str(screen.query_one(selector).render())


async def test_audit_finds_the_storyline_stale_allocation_then_host_screen_labels_it(story_demo: Demo) -> None:
    demo = story_demo
    demo.advance(31)  # the storyline writes an allocation for a consumer that is no instance at +30 s
    consumer = demo.engine.story_state["stale_consumer"]
    stale_host = demo.engine.story_state["stale_host"]
    app = app_for(demo)
    async with app.run_test(size=(180, 50)) as pilot:
        await pilot.press("colon", *"audit", "enter")
        screen = await until(pilot, lambda: isinstance(app.screen, AuditScreen) and app.screen, "the audit screen")
        await until(pilot, lambda: screen.report is not None or screen.error, "the audit report")
        assert screen.report is not None, screen.error
        phases = {p for p, done, total in screen.progress_seen if done == total}
        assert "provider allocations" in phases, screen.progress_seen
        stale = [f for f in screen.findings if f.kind == "placement.stale_allocation"]
        assert [f.subject for f in stale] == [consumer]
        f = stale[0]
        assert f.evidence["host"] == stale_host and f.evidence["resources"] == {"VCPU": 4, "MEMORY_MB": 8192,
                                                                               "DISK_GB": 80}
        assert f.evidence["verdict"] == "stale" and f.evidence["label"] == "unknown (consumer_type INSTANCE)"
        assert screen.table is not None
        top = screen.table.shown_keys[0]
        row = [str(c) for c in screen.table.get_row(top)]
        assert row[0] == stale_host, "hosts with stale consumers first"
        assert row[5] == "1" and "placement says" in row[6] and "VCPU used" in row[6]
        assert "1 stale" in text_of(screen, "#audit-status")
        assert text_of(screen, "#read-at") == f"audit read {utc_clock_time(demo.clock.time())} (r refreshes)"
        assert consumer[:8] in text_of(screen, "#audit-findings")

        await pilot.press("enter")  # the highlighted row (the stale host) -> its host screen
        host = await until(pilot, lambda: isinstance(app.screen, HostScreen) and app.screen, "the host screen")
        assert host.host == stale_host
        await until(pilot, lambda: host.detail is not None or host.error, "the host detail")
        assert host.detail is not None, host.error
        body = text_of(host, "#host-detail")
        line = next(ln for ln in body.splitlines() if consumer in ln)
        assert "unknown" in line and "stale" in line
        assert [f.subject for f in host.placement_findings] == [consumer]
        await pilot.press("escape")
        await until(pilot, lambda: isinstance(app.screen, AuditScreen), "back to the audit")
        await pilot.press("escape")
        await until(pilot, lambda: not isinstance(app.screen, AuditScreen), "back to the panes")


def stuck_migration(demo: Demo, source: str, dest: str) -> tuple[str, str, str]:
    """On the simulator: a server moved source -> dest whose migration still holds the source allocation
    (status confirming), a port of it bound to source with binding_failed, an orphan allocation on source."""
    e = demo.engine
    with e.lock:
        inst = next(i for i in e.instances.values() if i.host == dest)
        mig = SimMigration(len(e.migrations) + 1, str(uuid.uuid4()), inst.id, source, dest,
                           e.host_by_name[dest].host_ip, "confirming", "migration", inst.project_id, inst.user_id,
                           created=e.t - 60, updated=e.t - 30)
        e.migrations.append(mig)
        e.consumers[mig.uuid] = Consumer(mig.uuid, inst.project_id, inst.user_id, consumer_type="MIGRATION")
        e.providers[e.host_by_name[source].hypervisor_id].allocate(mig.uuid, {"VCPU": 2, "MEMORY_MB": 4096,
                                                                             "DISK_GB": 40})
        orphan = str(uuid.uuid4())
        e.providers[e.host_by_name[source].hypervisor_id].allocate(orphan, {"VCPU": 1, "MEMORY_MB": 128})
        port = next(p for p in e.ports.values() if p.host == source)
        port.vif_type = "binding_failed"
        port.status = "DOWN"
    return mig.uuid, orphan, port.id


async def test_host_screen_sections_and_migration_held_by_a_dead_source(demo: Demo) -> None:
    source, dest = demo.engine.hosts[1].name, demo.engine.hosts[2].name
    mig, orphan, port = stuck_migration(demo, source, dest)
    with demo.engine.lock:
        booted = demo.engine.boot("canary", demo.engine.projects[0], "m1.small", host=source,
                                  durations=(1.0, 1.0, 1.0, 300.0))
    demo.advance(5)  # the canary is spawning
    demo.inject("kill_compute", host=source)
    demo.advance(25)  # past service_down_time (20 s)
    app = app_for(demo)
    async with app.run_test(size=(180, 60)) as pilot:
        await pilot.press("colon", *f"host {source}", "enter")
        screen = await until(pilot, lambda: isinstance(app.screen, HostScreen) and app.screen, "the host screen")
        await until(pilot, lambda: screen.detail is not None or screen.error, "the host detail")
        d = screen.detail
        assert d is not None, screen.error
        assert d.errors == {}
        assert d.compute is not None and d.compute.down
        body = text_of(screen, "#host-detail")
        assert "nova-compute  DOWN" in body
        assert f"{source}  id {demo.engine.host_by_name[source].hypervisor_id}" in body  # hypervisor
        assert "Open vSwitch agent" in body
        port_line = next(ln for ln in body.splitlines() if port in ln)
        assert "binding_failed" in port_line and "DOWN" in port_line
        ports_at = body.index("Ports bound to this host")
        assert body[ports_at:].splitlines()[1].startswith(f" {port}"), "binding_failed first"
        assert "2 flagged" in body, "binding_failed, and the DOWN port of the build stuck on the dead compute"
        assert screen.servers is not None and booted.id in screen.servers.shown_keys
        canary = [str(c) for c in screen.servers.get_row(booted.id)]
        assert canary[1:3] == ["BUILD", "spawning"], canary
        assert screen.servers.shown_keys[0] == booted.id, "a server in a task state first"
        assert "Servers on this host" not in body, "the servers have their own table, first"
        mig_line = next(ln for ln in body.splitlines() if ln.startswith(f" {mig}"))
        assert "confirming" in mig_line and f"{source} -> {dest}" in mig_line
        assert f"source nova-compute on {source} is down" in mig_line
        # placement: inventories with capacity, consumers labelled
        assert "VCPU              64         0      4        256" in body
        consumer_line = next(ln for ln in body.splitlines() if ln.startswith(f"   {mig}"))
        assert f"migration (confirming, migration, {source} -> {dest})" in consumer_line
        assert "migration_stuck" in consumer_line
        orphan_line = next(ln for ln in body.splitlines() if ln.startswith(f"   {orphan}"))
        assert "unknown" in orphan_line and "stale" in orphan_line
        instance_lines = [ln for ln in body.splitlines() if "instance " in ln and "(ACTIVE, host " + source in ln]
        assert instance_lines, "legitimate consumers are labelled instance (name, state, host)"
        kinds = {(f.kind, f.subject) for f in screen.placement_findings}
        assert kinds == {("placement.migration_stuck", mig), ("placement.stale_allocation", orphan)}
        assert "phantom capacity: placement says" in body

        await pilot.press("escape")  # the destination's screen also says the migration's source is down
        app.run_command(f"host {dest}")
        other = await until(pilot, lambda: isinstance(app.screen, HostScreen) and app.screen.host == dest
                            and app.screen.detail is not None and app.screen, "the destination's host screen")
        line = next(ln for ln in text_of(other, "#host-detail").splitlines() if ln.startswith(f" {mig}"))
        assert f"source nova-compute on {source} is down" in line
        await pilot.press("escape")
        app.run_command(f"host {source}")
        screen = await until(pilot, lambda: isinstance(app.screen, HostScreen) and app.screen.host == source
                             and app.screen.detail is not None and app.screen, "the source's host screen again")
        d, read_at = screen.detail, screen.read_at
        assert read_at is not None and f"details read {utc_clock_time(read_at)} (r refreshes)" in screen.read_at_text

        demo.inject("start_compute", host=source)  # the compute comes back: no longer stuck
        demo.advance(11)
        await pilot.press("r")
        await until(pilot, lambda: screen.detail is not d and screen.detail is not None, "the detail read again")
        assert {f.kind for f in screen.placement_findings} == {"placement.stale_allocation"}
        assert screen.read_at == read_at + 11, "the read-at line says when the refresh read"
        assert f"details read {utc_clock_time(read_at + 11)} (r refreshes)" in screen.read_at_text
        assert screen.read_at_text.startswith("control plane not read: not running"), screen.read_at_text
        await pilot.press("escape")
        await until(pilot, lambda: not isinstance(app.screen, HostScreen), "back to the panes")


async def test_host_screen_lists_its_servers_first_and_enter_opens_one(demo: Demo) -> None:
    host = demo.engine.hosts[1].name
    with demo.engine.lock:
        booted = demo.engine.boot("canary", demo.engine.projects[0], "m1.small", host=host,
                                  durations=(1.0, 1.0, 1.0, 300.0))
    demo.advance(5)
    app = app_for(demo)
    async with app.run_test(size=(120, 34)) as pilot:
        await until(pilot, lambda: "instances" in app.runners, "the sources to start")  # the dashboard is up
        app.run_command(f"host {host}")
        screen = await until(pilot, lambda: isinstance(app.screen, HostScreen) and app.screen, "the host screen")
        for _ in range(3):  # a loaded machine: a read that timed out is read again (r), as an engineer would
            await until(pilot, lambda: screen.detail is not None or screen.error, "the host screen's read")
            if screen.detail is not None:
                break
            reads = screen.reads
            await pilot.press("r")
            await until(pilot, lambda: screen.reads > reads, "the host read again")  # noqa: B023
        assert screen.detail is not None, f"the host screen's read failed: {screen.error}"
        scroll = screen.query_one("#host-scroll")
        assert [child.id for child in scroll.children][:2] == ["host-servers-title", "host-servers"], \
            "the servers before the services, ports and placement"
        assert screen.servers is not None and screen.focused is screen.servers
        assert "Servers on this host" in text_of(screen, "#host-servers-title")
        assert screen.servers.region.y < screen.region.bottom, "on screen without scrolling"
        screen.servers.move_cursor(row=screen.servers.get_row_index(booted.id))
        await pilot.press("enter")
        instance = await until(pilot, lambda: isinstance(app.screen, InstanceScreen) and app.screen,
                               "the instance screen")
        assert instance.server_id == booted.id
        await pilot.press("escape")
        await until(pilot, lambda: app.screen is screen, "back to the host screen")


async def test_popping_the_host_screen_cancels_its_read(demo: Demo, monkeypatch: pytest.MonkeyPatch) -> None:
    started = asyncio.Event()

    async def slow(*args: Any, **kwargs: Any) -> Any:
        started.set()
        await asyncio.sleep(60)

    monkeypatch.setattr("tui.openstack.placement_reads.read_host", slow)
    app = app_for(demo)
    async with app.run_test(size=(120, 40)) as pilot:
        await until(pilot, lambda: "instances" in app.runners, "the sources to start")
        app.push_screen(HostScreen(demo.engine.hosts[0].name))
        await until(pilot, started.is_set, "the read to start")
        screen = app.screen
        [worker] = [w for w in app.workers if w.node is screen]
        assert worker.state == WorkerState.RUNNING
        await pilot.press("escape")
        await until(pilot, lambda: worker.state == WorkerState.CANCELLED, "the read to be cancelled")


async def test_host_screen_without_a_cloud_says_so() -> None:
    app = StacktopApp(Config(), collectors=[])
    async with app.run_test(size=(120, 40)) as pilot:
        await pilot.press("colon", *"host compute-09", "enter")
        screen = await until(pilot, lambda: isinstance(app.screen, HostScreen) and app.screen, "the host screen")
        await until(pilot, lambda: "no OpenStack cloud configured" in text_of(screen, "#host-detail"), "the notice")


async def test_fit_explains_every_host(demo: Demo) -> None:
    app = app_for(demo)
    hosts = [h.name for h in demo.engine.hosts]
    async with app.run_test(size=(160, 50)) as pilot:
        await pilot.press("colon", *"fit x.huge", "enter")
        screen = await until(pilot, lambda: isinstance(app.screen, FitScreen) and app.screen, "the fit screen")
        await until(pilot, lambda: screen.report is not None or screen.error, "the fit report")
        r = screen.report
        assert r is not None, screen.error
        assert r.candidates == 0 and sorted(h.host for h in r.hosts) == hosts
        assert all(h.reasons and h.reasons[0].startswith("DISK_GB: asks 700000, at most 2000") for h in r.hosts)
        body = text_of(screen, "#fit-body")
        assert text_of(screen, "#read-at") == f"placement read {utc_clock_time(demo.clock.time())} (r refreshes)"
        assert "fits nowhere" in body and "none: no single compute can hold this request" in body
        assert "Aggregate free capacity" in body

        app.run_command("fit m1.small HW_CPU_X86_AVX512F")  # typed above; here straight through the table
        screen = await until(pilot, lambda: isinstance(app.screen, FitScreen) and app.screen.traits and app.screen,
                             "the second fit screen")
        await until(pilot, lambda: screen.report is not None or screen.error, "the second report")
        r = screen.report
        assert r is not None, screen.error
        providers = demo.engine.providers
        avx = {h.name for h in demo.engine.hosts if "HW_CPU_X86_AVX512F" in providers[h.hypervisor_id].traits}
        assert {h.host for h in r.hosts if h.candidate} == avx and avx
        for h in r.hosts:
            if not h.candidate:
                assert h.reasons == ("lacks required trait HW_CPU_X86_AVX512F",)

        app.run_command("fit no-such-flavor")
        screen = await until(pilot, lambda: isinstance(app.screen, FitScreen) and app.screen.flavor == "no-such-flavor"
                             and app.screen, "the third fit screen")
        await until(pilot, lambda: screen.error, "the error")
        assert "no flavor named or with id 'no-such-flavor'" in screen.error
