"""The simulator's small-site Galera (demo-west: two data nodes + garbd) read by the real collector and rules:
healthy with the arbitrator counted, the arbitrator gone is a finding naming it."""

from __future__ import annotations

import asyncio
from datetime import UTC, datetime

from tui.collectors.galera import build
from tui.rules.quorum import verdict
from tui.sim import start_demo, start_demo_clouds


def test_two_data_nodes_and_garbd_read_like_the_real_cluster() -> None:
    demo = start_demo(instances=5, hosts=2, queues=5, churn=0, storyline=False, galera_arbitrator=True)
    try:
        cfg = demo.config()
        assert cfg.galera.arbitrators == ("sim-garbd:4567",) and cfg.galera.expected_size == 3
        (c,) = build(cfg, connector=demo.galera_connector)
        snap = asyncio.run(c.collect())
        assert [n.cluster_size for n in snap.nodes] == [3, 3]
        assert [n.incoming_addresses for n in snap.nodes] == ["sim-db-1:3306,sim-db-2:3306,"] * 2
        assert c.findings(snap, datetime.now(UTC)) == [] and verdict(snap) == "healthy"
        demo.engine.galera_arbitrators_up = False
        snap = asyncio.run(c.collect())
        assert [(f.kind, f.subject) for f in c.findings(snap, datetime.now(UTC))] == [
            ("galera.arbitrator_missing", "sim-garbd:4567")]
    finally:
        demo.stop()


def test_demo_west_is_the_two_nodes_and_garbd_shape() -> None:
    clouds = start_demo_clouds(instances=5, hosts=2, queues=5, churn=0, storyline=False)
    try:
        west = clouds.config().clouds[1]
        assert west.name == "demo-west" and west.galera.arbitrators == ("sim-garbd:4567",)
        assert len(west.galera.nodes) == 2 and west.galera.expected_size == 3
    finally:
        clouds.stop()
