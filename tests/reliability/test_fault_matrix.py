"""The fault matrix: every HTTP fault on every source of the simulated cloud, and every Galera node fault.

For each: only that source degrades (its own parts: a services section, its endpoint check, its pane's
source), it keeps its last data, every reason is one readable line naming what failed, nothing reaches
stdout/stderr as a traceback, and the source recovers by itself on the first poll after the fault ends.
TLS failures are in test_tls.py, the UI side (stale marking, keypress during a hang) in test_fault_ui.py.
"""

from __future__ import annotations

import asyncio
import time
from typing import Any

import pytest

from tests.reliability.world import OPENSTACK_TIMEOUT, OWN_PARTS, RABBITMQ_TIMEOUT, World, assert_readable, degraded
from tui.sim.faults import FAULTS, GALERA_FAULTS, TRICKLE_INTERVAL_S

HTTP_FAULTS = [f for f in FAULTS if f != "tls"]


def _names(sim: Any, source: str, fault: str) -> tuple[str, ...]:
    names = (f"127.0.0.1:{sim.port(source)}",)
    if fault == "huge":
        return ("max_body_mb",)
    return (*names, "timed out") if fault in ("hang", "trickle", "redirect") else names


def _check_kept(source: str, before: dict[str, Any], during: dict[str, Any]) -> None:
    """The degraded part still holds the rows of its last good read."""
    svc_b, svc_d = before["services"].snapshot, during["services"].snapshot
    if source in ("nova", "neutron", "cinder"):
        attr = {"nova": "compute", "neutron": "network", "cinder": "volume"}[source]
        b, d = getattr(svc_b, attr), getattr(svc_d, attr)
        assert d.rows == b.rows and d.rows, f"{attr} rows were not kept"
        assert d.read_at == b.read_at, "kept rows must say when they were read"
    if source == "nova":
        inst_b, inst_d = before["instances"], during["instances"]
        assert inst_d.snapshot is inst_b.snapshot and inst_d.ok_at == inst_b.ok_at
        assert inst_d.snapshot.servers, "the last server list is kept"
    if source == "rabbitmq":
        assert during["rabbitmq"].snapshot is before["rabbitmq"].snapshot
        assert during["rabbitmq"].ok_at == before["rabbitmq"].ok_at
    if source == "keystone":  # the token is still valid: the listings go on, fresh
        assert svc_d.compute.read_at > svc_b.compute.read_at and not svc_d.compute.error


async def _reader_left(sim: Any) -> None:
    """Every read of a trickling answer ended by its own deadline (a source's timeout at most): none is left
    in a worker thread after the runner gave up. The simulator notices a client gone at its next byte (0.5 s)."""
    limit = time.monotonic() + max(OPENSTACK_TIMEOUT, RABBITMQ_TIMEOUT) + 2 + 2 * TRICKLE_INTERVAL_S
    while sim.faults.trickling and time.monotonic() < limit:
        await asyncio.sleep(0.1)
    assert not sim.faults.trickling, f"{sim.faults.trickling} read(s) of a trickling answer outlived their deadline"


# The OpenStack sources through both clients: openstacksdk's (`stacktop snapshot`, configs the light path does
# not handle) and the light one the dashboard reads through from its first poll on.
CASES = [pytest.param(source, fault, kind, id=f"{kind}-{fault}-{source}")
         for kind in ("sdk", "light") for source in OWN_PARTS if kind == "sdk" or source != "rabbitmq"
         for fault in HTTP_FAULTS]


@pytest.mark.parametrize(("source", "fault", "client_kind"), CASES)
async def test_http_fault(sim: Any, source: str, fault: str, client_kind: str,
                          capfd: pytest.CaptureFixture[str]) -> None:
    world: World = sim.shared_world(client_kind)
    try:
        before = await world.poll()
        assert degraded(before) == {}, "the simulated cloud must start healthy"
        sim.faults.set(source, fault)
        try:
            during = await world.poll()
            detail_errors = None
            if source == "placement":  # read on demand only: the instance screen's allocations
                server = next(iter(during["instances"].snapshot.servers))
                detail = await world.collectors["instances"].instance_detail(server.id)
                detail_errors = detail.errors
            if fault in ("trickle", "redirect"):
                await _reader_left(sim)
        finally:
            sim.faults.clear()
        bad = degraded(during)
        own, primary = OWN_PARTS[source]
        assert set(bad) <= own, f"{fault} on {source} degraded other sources: {sorted(set(bad) - own)}"
        if primary:
            assert primary in bad, f"{fault} on {source} went unnoticed: {bad}"
        for reason in bad.values():
            assert_readable(reason, names=_names(sim, source, fault))
        if detail_errors is not None:
            assert set(detail_errors) == {"allocations"}, detail_errors
            assert_readable(detail_errors["allocations"], names=_names(sim, source, fault))
        _check_kept(source, before, during)

        after = await world.poll()
        assert degraded(after) == {}, f"no recovery after {fault} on {source} ended"
        assert after["instances"].ok_at > before["instances"].ok_at
        assert after["rabbitmq"].ok_at > before["rabbitmq"].ok_at
        if client_kind == "light":  # no fault sent it to openstacksdk: the light client's own lines were judged
            assert world.client is not None and getattr(world.client, "backend", None) == "light"
    finally:
        await world.end_test()
    out, err = capfd.readouterr()
    assert "Traceback" not in out + err


@pytest.mark.parametrize("fault", GALERA_FAULTS)
async def test_galera_node_fault(sim: Any, fault: str, capfd: pytest.CaptureFixture[str]) -> None:
    world: World = sim.shared_world()
    node = world.config.galera.nodes[0]
    try:
        before = await world.poll()
        assert degraded(before) == {}
        world.galera_faults.set_node(node, fault)
        try:
            during = await world.poll()
        finally:
            world.galera_faults.clear()
        bad = degraded(during)
        assert set(bad) == {f"galera:{node}"}, f"{fault} on {node}: {bad}"
        assert_readable(bad[f"galera:{node}"])
        assert during["galera"].error is None, "the other nodes still answer: the source stands"
        kinds = {f.kind for f in during["galera"].findings if f.subject == node}
        assert kinds, f"no finding names the failing node {node}"
        # A failed node is retried after a backoff (1 s after a first failure; a hang's second try may end
        # only when the fault is cleared, so the backoff can start after `during` returned): recovery is due
        # once the backoff has passed, by itself, with no other action.
        after = await world.poll()
        deadline = time.monotonic() + 3 * world.collectors["galera"].node_timeout + 2
        while degraded(after) and time.monotonic() < deadline:
            await asyncio.sleep(0.25)
            after = await world.poll()
        assert degraded(after) == {}, f"no recovery after {fault} on {node} ended"
    finally:
        await world.end_test()
    out, err = capfd.readouterr()
    assert "Traceback" not in out + err


async def test_every_galera_node_down_keeps_the_last_cluster_view(sim: Any) -> None:
    world: World = sim.shared_world()
    try:
        before = await world.poll()
        for node in world.config.galera.nodes:
            world.galera_faults.set_node(node, "refused")
        during = await world.poll()
        assert set(degraded(during)) == {"galera"}
        assert during["galera"].snapshot is before["galera"].snapshot
        assert_readable(during["galera"].error or "", names=("no Galera node answers",))
        world.galera_faults.clear()
        assert degraded(await world.poll()) == {}
    finally:
        await world.end_test()
