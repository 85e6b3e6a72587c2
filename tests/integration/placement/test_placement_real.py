"""Placement on the real OpenStack test cloud: an orphan allocation found by `:audit` and labelled *unknown*
on the host screen; a cold migration whose source compute was killed before the confirm -> migration_stuck
(not stale), cleared by restarting that compute; `:fit` for a flavor no host can take and for one both can;
the host screen of compute-02 with its servers, its agent and its provider's inventories."""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any

import pytest

from tests.integration.placement.conftest import os_config, poll
from tests.testbed.openstack import (
    OpenStackCloud,
    migration_held_allocation,
    orphan_allocation,
    server_on,
    start_service,
)
from tests.testbed.wait import until_pilot
from tui.app import StacktopApp
from tui.collectors.instances import InstancesCollector
from tui.config import Config
from tui.models.finding import Finding
from tui.openstack.placement_reads import audit_cloud, explain_fit
from tui.rules.allocations import audit_findings
from tui.screens.audit import AuditScreen
from tui.screens.fit import FitScreen
from tui.screens.host import HostScreen

pytestmark = pytest.mark.integration


def app_for(cloud: OpenStackCloud) -> StacktopApp:
    """The app reaches the cloud through the instances collector's own client, as in production."""
    from tui.openstack import connect

    cfg = os_config(cloud)
    return StacktopApp(Config(), collectors=[InstancesCollector(cfg, client_factory=lambda: connect(cfg))])


async def until(pilot: Any, probe: Callable[[], Any], what: str, timeout: float = 60.0) -> Any:
    return await until_pilot(pilot, probe, what, timeout)


def text_of(screen: Any, selector: str) -> str:
    return str(screen.query_one(selector).render())


async def open_host(app: StacktopApp, pilot: Any, host: str) -> HostScreen:
    await until(pilot, lambda: "instances" in app.runners, "the sources to start")
    app.run_command(f"host {host}")
    screen = await until(pilot, lambda: isinstance(app.screen, HostScreen) and app.screen, "the host screen")
    await until(pilot, lambda: screen.detail is not None or screen.error, f"the detail of {host}")
    assert screen.detail is not None, screen.error
    return screen


async def test_orphan_allocation_is_stale_and_the_host_screen_labels_it_unknown(
        openstack_cloud: OpenStackCloud, healthy: Any) -> None:
    app = app_for(openstack_cloud)
    with orphan_allocation(healthy, "compute-01", {"VCPU": 1, "MEMORY_MB": 128}) as orphan:
        async with app.run_test(size=(180, 60)) as pilot:
            await until(pilot, lambda: "instances" in app.runners, "the sources to start")
            t0 = time.monotonic()
            app.run_command("audit")
            audit = await until(pilot, lambda: isinstance(app.screen, AuditScreen) and app.screen, "the audit")
            await until(pilot, lambda: audit.report is not None or audit.error, "the audit report")
            assert audit.report is not None, audit.error
            took = time.monotonic() - t0
            mine = [f for f in audit.findings if f.subject == orphan.consumer]
            assert [f.kind for f in mine] == ["placement.stale_allocation"], [f.summary for f in audit.findings]
            f = mine[0]
            assert f.evidence["provider"] == orphan.provider_id and f.evidence["host"] == "compute-01"
            assert f.evidence["resources"] == {"VCPU": 1, "MEMORY_MB": 128}
            assert f.evidence["verdict"] == "stale" and f.evidence["kind"] == "unknown"
            assert any(line.startswith("placement says") for line in f.evidence["phantom"])
            assert orphan.consumer[:8] in text_of(audit, "#audit-findings")
            assert took < 30, f"the audit of a 2-compute cloud took {took:.1f} s"

            await pilot.press("escape")
            host = await open_host(app, pilot, "compute-01")
            body = text_of(host, "#host-detail")
            line = next(ln for ln in body.splitlines() if ln.startswith(f"   {orphan.consumer}"))
            assert "VCPU 1, MEMORY_MB 128" in line and "unknown" in line and "stale" in line
            assert orphan.consumer in {f.subject for f in host.placement_findings}


def stuck_for(findings: list[Finding], consumer: str) -> Finding | None:
    return next((f for f in findings if f.subject == consumer and f.kind == "placement.migration_stuck"), None)


async def test_migration_held_by_a_dead_source_is_stuck_not_stale_and_clears_on_restart(
        openstack_cloud: OpenStackCloud, healthy: Any, client: Any) -> None:
    seen: list[list[Finding]] = []

    async def audit() -> list[Finding]:
        report = await audit_cloud(client)
        seen.append(audit_findings(report.providers))
        return seen[-1]

    def last() -> str:
        return repr([(f.kind, f.subject[:8], f.summary[:90]) for f in seen[-1]]) if seen else "no audit"

    with migration_held_allocation(healthy, source="compute-02") as held:
        t0 = time.monotonic()

        async def stuck() -> Finding | None:
            return stuck_for(await audit(), held.migration_uuid)

        # the compute is reported down ~20 s after the kill (service_down_time): wait for the audit to see it
        f = await poll(stuck, timeout=60, what=f"migration_stuck for {held.migration_uuid}", last=last)
        t_stuck = time.monotonic() - t0
        assert f.evidence["host"] == "compute-02" and f.evidence["provider"] == held.source_provider_id
        assert f.evidence["status"] == "confirming" and f.evidence["source"] == "compute-02"
        assert f.evidence["source_state"] == "down" and f.evidence["dest"] == held.dest_host
        assert f.evidence["label"].startswith("migration (confirming")
        assert not any(g.subject == held.migration_uuid and g.kind == "placement.stale_allocation" for g in seen[-1])

        app = app_for(openstack_cloud)
        async with app.run_test(size=(180, 60)) as pilot:
            host = await open_host(app, pilot, "compute-02")
            assert host.detail is not None and host.detail.compute is not None and host.detail.compute.down
            body = text_of(host, "#host-detail")
            line = next(ln for ln in body.splitlines() if ln.startswith(f"   {held.migration_uuid}"))
            assert "migration (confirming, migration, compute-02 -> " in line and "migration_stuck" in line
            assert "nova-compute  DOWN" in body

        t1 = time.monotonic()
        start_service("nova-compute-02")  # it finishes the queued confirm and frees the allocation

        async def cleared() -> bool:
            return not any(g.subject == held.migration_uuid for g in await audit())

        await poll(cleared, timeout=90, what=f"no finding about {held.migration_uuid} after the restart", last=last)
        print(f"\nmigration_stuck seen {t_stuck:.1f} s after the scenario, cleared {time.monotonic() - t1:.1f} s "
              f"after the restart ({len(seen)} audits)")


async def test_fit_explains_why_x_huge_fits_nowhere_and_m1_tiny_fits_both(
        openstack_cloud: OpenStackCloud, healthy: Any, client: Any) -> None:
    huge = await explain_fit(client, "x.huge")
    assert huge.candidates == 0
    assert sorted(h.host or "" for h in huge.hosts) == ["compute-01", "compute-02"]
    for h in huge.hosts:
        assert any(r.startswith("DISK_GB: asks 10000000") for r in h.reasons), (h.host, h.reasons)

    async def both() -> Any:
        r = await explain_fit(client, "m1.tiny")
        return r if {h.host for h in r.hosts if h.candidate} == {"compute-01", "compute-02"} else None

    tiny = await poll(both, timeout=60, what="m1.tiny to fit on both computes (a parallel test may disable one)")
    assert all(not h.reasons for h in tiny.hosts)

    app = app_for(openstack_cloud)
    async with app.run_test(size=(160, 50)) as pilot:
        await until(pilot, lambda: "instances" in app.runners, "the sources to start")
        app.run_command("fit x.huge")
        screen = await until(pilot, lambda: isinstance(app.screen, FitScreen) and app.screen, "the fit screen")
        await until(pilot, lambda: screen.report is not None or screen.error, "the fit report")
        body = text_of(screen, "#fit-body")
        assert "fits nowhere" in body
        for host in ("compute-01", "compute-02"):
            line = next(ln for ln in body.splitlines() if ln.strip().startswith(f"{host}:"))
            assert "DISK_GB: asks 10000000" in line


async def test_host_screen_of_compute02_lists_servers_agent_and_inventories(
        openstack_cloud: OpenStackCloud, healthy: Any) -> None:
    with server_on(healthy, "compute-02") as srv:
        app = app_for(openstack_cloud)
        async with app.run_test(size=(180, 60)) as pilot:
            host = await open_host(app, pilot, "compute-02")
            deadline = time.monotonic() + 60
            while (d := host.detail) is None or srv.id not in {s.id for s in d.servers}:
                # a shared, loaded cloud: a listing can time out; read again (r) until a deadline
                assert time.monotonic() < deadline, (f"{srv.id} not among the servers of compute-02: "
                                                     f"{[s.id for s in d.servers] if d else None}, errors "
                                                     f"{dict(d.errors) if d else host.error}")
                reads = host.reads
                await pilot.press("r")
                await until(pilot, lambda: host.reads > reads, "the detail read again")  # noqa: B023
            body = text_of(host, "#host-detail")
            assert host.servers is not None and srv.id in host.servers.shown_keys, "the server in the servers table"
            cells = [str(c) for c in host.servers.get_row(srv.id)]
            assert cells[0] == srv.name and "ACTIVE" in cells and "m1.tiny" in cells, cells
            assert any(a.agent_type == "Open vSwitch agent" for a in d.agents)
            assert "Open vSwitch agent  neutron-openvswitch-agent  alive" in body
            [provider] = [p for p in d.providers if p.is_root]
            assert provider.name == "compute-02" and provider.inventories is not None
            assert set(provider.inventories) >= {"VCPU", "MEMORY_MB", "DISK_GB"}
            vcpu = provider.inventories["VCPU"]
            row = next(ln.split() for ln in body.splitlines() if ln.startswith("  VCPU "))
            assert row[:5] == ["VCPU", str(vcpu.total), str(vcpu.reserved), f"{vcpu.allocation_ratio:g}",
                               str(vcpu.capacity)], row
            assert vcpu.capacity == int((vcpu.total - vcpu.reserved) * vcpu.allocation_ratio)
            mine = next(ln for ln in body.splitlines() if ln.startswith(f"   {srv.id}"))
            assert f"instance {srv.name} (ACTIVE, host compute-02)" in mine and mine.rstrip().endswith("ok")
            assert d.compute is not None and d.compute.state == "up"


async def test_background_audit_brings_the_orphan_to_the_findings_triage_and_snapshot(
        openstack_cloud: OpenStackCloud, healthy: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    """Nobody types `:audit`: the placement source (every [openstack] audit_interval) finds the orphan, and
    it reaches the findings pane, the triage row and `stacktop snapshot` (which runs the audit once)."""
    from dataclasses import replace

    from tui.collectors import placement
    from tui.collectors.registry import build_collectors
    from tui.snapshot import all_findings, collect_once, to_report
    from tui.widgets.findings_pane import FindingsPane

    monkeypatch.setattr(placement, "FIRST_DELAY_S", 0.0)  # the dashboard's first audit waits 30 s otherwise
    config = replace(Config(), openstack=os_config(openstack_cloud))
    assert config.openstack.audited, "the audit is on by default"
    with orphan_allocation(healthy, "compute-01", {"VCPU": 1, "MEMORY_MB": 128}) as orphan:
        app = StacktopApp(config)
        async with app.run_test(size=(180, 60)) as pilot:
            pane = app.query_one("#pane-findings", FindingsPane)
            await until(pilot, lambda: any(f.subject == orphan.consumer for f in pane.findings),
                        "the orphan in the findings pane", timeout=180)
            row = app._triage_row()
            assert row is not None and row.summary is not None
            cell = next(c for c in row.summary.cells if c.name == "placement")
            assert cell.level == "warning" and "1 stale allocation" in cell.text and "compute-01" in cell.text

        observations = await collect_once(build_collectors(config), deadline=120)
        report = to_report(observations)
        assert report["sources"]["placement"]["ok"], report["sources"]["placement"]
        stale = [f for f in all_findings(observations) if f.kind == "placement.stale_allocation"]
        assert [f.subject for f in stale] == [orphan.consumer]
        # the source reads inventories only for the providers worth a finding: this one's are read
        [digest] = [o.snapshot for o in observations if o.source == "placement"]
        assert [a.capacities.get("VCPU", 0) > 0 for a in digest.judged] == [True], digest.judged
    observations = await collect_once(build_collectors(config), deadline=120)
    assert not [f for f in all_findings(observations) if f.kind == "placement.stale_allocation"], \
        "gone with the allocation"
