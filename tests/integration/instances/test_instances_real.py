"""The instances source on the real OpenStack test cloud: build states in the pane, instance.stuck naming
nova-compute on compute-02 (and then that it is down), instance.error leading with the fault, the instance
screen with a port, a volume and the create request id, and changes-since against real nova."""

from __future__ import annotations

import time
from datetime import UTC, datetime
from typing import Any

import pytest

from tests.integration.instances.conftest import make_collector
from tests.testbed.openstack import (
    OpenStackCloud,
    attached_volume,
    error_server,
    server_on,
    service_killed,
    wait_server_status,
)
from tests.testbed.poller import Poller
from tests.testbed.wait import until_pilot as until
from tui.app import StacktopApp
from tui.collectors.instances import parse_time
from tui.config import Config
from tui.models.instances import InstancesSnapshot
from tui.screens.instance import InstanceScreen
from tui.widgets.instances_pane import InstancesPane

pytestmark = pytest.mark.integration


def history(poller: Poller, server_id: str) -> list[tuple[float, str, str | None, str | None, float | None]]:
    """(t, status, task_state, since basis, in-state-for) of one server, each time it changed."""
    out: list[tuple[float, str, str | None, str | None, float | None]] = []
    for p in poller.polls:
        s = p.snapshot.server(server_id)
        if s is None:
            continue
        row = (round(p.t, 1), s.status, s.task_state, s.task_since_basis, s.in_state_for(p.snapshot.taken_at))
        if not out or out[-1][1:4] != row[1:4]:
            out.append(row)
    return out


@pytest.mark.parametrize("slow_compute02", [25], indirect=True)
async def test_boot_on_slow_compute_shows_build_states_then_leaves_default_view(
        openstack_cloud: OpenStackCloud, slow_compute02: float, healthy: Any) -> None:
    collector = make_collector(openstack_cloud)
    app = StacktopApp(Config(), collectors=[collector])
    async with app.run_test(size=(160, 48)) as pilot:
        pane = app.query_one("#pane-instances", InstancesPane)
        await until(pilot, lambda: app.observations.get("instances") is not None
                    and app.observations["instances"].ok, "the first poll", 60)
        assert pane.table is not None
        t0 = time.monotonic()
        with server_on(healthy, "compute-02", wait=False) as srv:
            states: list[tuple[float, str, str]] = []

            def shown() -> bool:
                if srv.id in pane.table.shown_keys:
                    cells = [str(c) for c in pane.table.get_row(srv.id)]
                    if not states or states[-1][1:] != (cells[1], cells[2]):  # status, task_state
                        states.append((round(time.monotonic() - t0, 1), cells[1], cells[2]))
                    return cells[2] == "spawning"
                return False

            await until(pilot, shown, "the server in spawning in the attention view", 60)
            row = [str(c) for c in pane.table.get_row(srv.id)]
            assert row[1] == "BUILD" and row[4] == "compute-02" and row[5] == "nova-compute@compute-02"
            wait_server_status(healthy, srv.id, {"ACTIVE"}, timeout=slow_compute02 + 60)
            await until(pilot, lambda: (shown() or True) and srv.id not in pane.table.shown_keys,
                        "the ACTIVE server to leave the attention view", 30)
            print(f"\n[timing] pane saw {states}; gone from the default view at {time.monotonic() - t0:.1f} s")
            await pilot.press("tab")
            await pilot.press("a")
            await until(pilot, lambda: srv.id in pane.table.shown_keys, "the server in the `a` (all) view", 10)
            assert str(pane.table.get_row(srv.id)[1]) == "ACTIVE"
    await collector.aclose()


@pytest.mark.parametrize("slow_compute02", [120], indirect=True)
async def test_stuck_spawning_names_nova_compute_on_compute02_then_says_it_is_down(
        slow_compute02: float, healthy: Any, poller: Poller) -> None:
    with server_on(healthy, "compute-02", wait=False) as srv:
        t0 = time.monotonic()
        try:
            poll = await poller.until(lambda p: p.about(srv.id, "instance.stuck"), timeout=90,
                                      what="instance.stuck (spawning > 5 s)")
        except TimeoutError as exc:
            raise AssertionError(f"{exc}; the server as polled: {history(poller, srv.id)}") from None
        stuck = poll.about(srv.id, "instance.stuck")
        assert stuck is not None
        assert stuck.evidence["task_state"] == "spawning" and stuck.evidence["owner"] == "nova-compute"
        assert stuck.evidence["host"] == "compute-02" and stuck.severity == "warning"
        assert "owner nova-compute on compute-02" in stuck.summary and "is down" not in stuck.summary
        assert "nova-compute on compute-02" in stuck.next_step and "libvirt on compute-02" in stuck.next_step
        create_rid = next(a["request_id"] for a in healthy.compute.get(
            f"/servers/{srv.id}/os-instance-actions").json()["instanceActions"] if a["action"] == "create")
        assert stuck.evidence["request_id"] == create_rid and f"(grep {create_rid})" in stuck.next_step
        stuck_at = time.monotonic() - t0
        with service_killed(healthy, "nova-compute-02", wait_down=False):
            killed = time.monotonic()
            poll = await poller.until(
                lambda p: (f := p.about(srv.id, "instance.stuck")) is not None
                and "nova-compute on compute-02 is down" in f.summary, timeout=90,
                what="the stuck finding to say compute-02's nova-compute is down")
            down = poll.about(srv.id, "instance.stuck")
            assert down is not None and down.severity == "critical"
            assert down.next_step.startswith("nova-compute on compute-02 is down")
            assert poll.snapshot.server(srv.id).task_state == "spawning"  # type: ignore[union-attr]
            print(f"\n[timing] stuck after {stuck_at:.1f} s of the boot; compute-02 killed -> finding says down "
                  f"after {time.monotonic() - killed:.1f} s (service_down_time 20 s, poll {poller.interval:g} s)")


async def test_impossible_flavor_error_leads_with_no_valid_host(healthy: Any, poller: Poller) -> None:
    with error_server(healthy) as srv:
        poll = await poller.until(lambda p: p.about(srv.id, "instance.error"), timeout=60,
                                  what="instance.error for the x.huge server")
        err = poll.about(srv.id, "instance.error")
        assert err is not None and err.summary.startswith("No valid host was found")
        assert err.evidence["fault_code"] == 500 and err.evidence["host"] is None
        assert err.evidence["fault_origin"] == "nova-scheduler / placement" and err.severity == "warning"
        assert isinstance(err.evidence["fault_created"], datetime)


async def test_instance_screen_shows_port_volume_and_create_request_id(
        openstack_cloud: OpenStackCloud, healthy: Any) -> None:
    collector = make_collector(openstack_cloud)
    app = StacktopApp(Config(), collectors=[collector])
    with server_on(healthy, "compute-01", network="provider") as srv, attached_volume(healthy, srv) as vol:
        actions = healthy.compute.get(f"/servers/{srv.id}/os-instance-actions").json()["instanceActions"]
        create_rid = next(a["request_id"] for a in actions if a["action"] == "create")
        port = next(p for p in healthy.network.get(f"/ports?device_id={srv.id}").json()["ports"])
        async with app.run_test(size=(160, 48)) as pilot:
            await until(pilot, lambda: app.observations.get("instances") is not None
                        and app.observations["instances"].ok, "the first poll", 60)
            app.push_screen(InstanceScreen(srv.id))
            screen = await until(pilot, lambda: isinstance(app.screen, InstanceScreen) and app.screen,
                                 "the instance screen", 10)
            await until(pilot, lambda: screen.detail is not None or screen.error, "the detail", 60)
            assert screen.detail is not None, screen.error
            text = str(screen.query_one("#instance-body").render())
            d = screen.detail
            assert [p.id for p in d.ports] == [port["id"]] and port["id"] in text
            assert d.ports[0].binding_host == "compute-01" and d.ports[0].vif_type == "ovs"
            assert d.ports[0].fixed_ips and d.ports[0].fixed_ips[0] in text
            assert [v.id for v in d.volumes] == [vol.id] and vol.id in text
            assert d.volumes[0].delete_on_termination is False and "delete_on_termination no" in text
            assert d.volumes[0].attach_status == "attached to this server on compute-01"
            assert create_rid in text and d.actions[-1].request_id == create_rid
            assert "Did it get a host? yes: compute-01" in text
            assert "Is the recorded host healthy? yes" in text
            assert "Do placement's allocations match its host? yes" in text
    await collector.aclose()


async def test_changes_since_on_real_nova_and_deleted_leave(healthy: Any, poller: Poller) -> None:
    first = await poller.once()
    assert first.snapshot.poll.mode == "full"
    with server_on(healthy, "compute-01") as srv:
        poll = await poller.until(lambda p: srv.id in poller.collector.index.servers, timeout=30,
                                  what="the new server in the index")
        assert poll.snapshot.poll.mode == "changes-since"
    gone = await poller.until(lambda p: srv.id not in poller.collector.index.servers, timeout=30,
                              what="the deleted server to leave the index")
    snap: InstancesSnapshot = gone.snapshot
    assert snap.poll.mode == "changes-since" and snap.poll.deleted >= 1
    # what nova answers to changes-since: only servers updated at/after the time sent (other tests share the
    # cloud, so the count is not asserted: the bound is)
    quiet = await poller.once()
    since = quiet.snapshot.poll.changes_since
    assert since is not None
    raw, requests = poller.collector.list_servers(since)
    assert requests == 1
    floor = since.replace(microsecond=0)
    assert all((parse_time(r["updated"]) or datetime.min.replace(tzinfo=UTC)) >= floor for r in raw), raw


async def test_attention_first_on_real_nova_reads_the_error_server_not_the_active_one(
        openstack_cloud: OpenStackCloud, healthy: Any) -> None:
    """The dashboard's first read (ERROR, BUILD, then every other task_state, one filtered list each) against
    real nova: every filter is accepted (a refused one would fall back to the full list, not partial), the
    ERROR server is in it and the ACTIVE one is not; the next poll lists every server."""
    collector = make_collector(openstack_cloud, attention_first=True)
    try:
        with server_on(healthy, "compute-01") as active, error_server(healthy) as err:
            first = await collector.collect()
            assert first.partial and first.poll.mode == "attention"
            ids = {s.id for s in first.servers}
            assert err.id in ids and active.id not in ids
            assert all(s.phase or s.status == "ERROR" for s in first.servers)
            second = await collector.collect()
            assert not second.partial and second.poll.mode == "full"
            assert {err.id, active.id} <= {s.id for s in second.servers}
    finally:
        await collector.aclose()


async def test_oneshot_read_lists_every_server_of_a_down_compute_and_only_attention_elsewhere(
        openstack_cloud: OpenStackCloud, healthy: Any) -> None:
    """`stacktop snapshot`'s read against real nova: the servers worth attention, plus every server of a compute
    whose nova-compute is down by the admin `host` filter (the triage counts them), not the ACTIVE server of a
    healthy compute."""
    collector = make_collector(openstack_cloud)
    collector.prepare_oneshot()
    try:
        with server_on(healthy, "compute-02") as on_down, server_on(healthy, "compute-01") as elsewhere, \
                error_server(healthy) as err, service_killed(healthy, "nova-compute-02"):
            snap = await collector.collect()
            assert snap.partial and snap.listed_hosts == ("compute-02",), snap.listed_hosts
            ids = {s.id for s in snap.servers}
            assert {on_down.id, err.id} <= ids and elsewhere.id not in ids
            down = snap.servers_on("compute-02")
            assert down is not None and on_down.id in {s.id for s in down}
            assert all(s.host == "compute-02" or s.phase or s.status == "ERROR" for s in snap.servers)
            assert snap.servers_on("compute-01") is None  # not listed: its instances are not all known
    finally:
        await collector.aclose()
