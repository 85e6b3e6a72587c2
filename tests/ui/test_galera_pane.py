"""Galera pane: verdict line, one keyed row per node, error rows, updates in place (Pilot)."""

from __future__ import annotations

import dataclasses
from datetime import UTC, datetime

from tui.app import StacktopApp
from tui.collectors.base import BaseCollector
from tui.config import Config
from tui.models.galera import NON_PRIMARY_CONF_ID, GaleraNode, GaleraSnapshot
from tui.models.judged import SourceView
from tui.models.observation import Observation
from tui.rules.judge import judge_source
from tui.rules.quorum import galera_findings
from tui.widgets.galera_pane import GaleraPane, node_rows, verdict_line
from tui.widgets.panes import pane_class

NOW = datetime(2026, 1, 1, 12, 0, tzinfo=UTC)
UUID = "3ed5d036-ee3b-11f1-a091-0ad27cc1aae1"


def node(n: int, **kw) -> GaleraNode:
    base = dict(address=f"127.0.0.1:331{n}", reachable=True, node_name=f"node{n}", cluster_name="prod",
                cluster_size=3, cluster_status="Primary", state_comment="Synced", ready=True, conf_id=7,
                state_uuid=UUID, recv_queue=0, send_queue=0, flow_control_active=False,
                flow_control_paused_share=0.0, last_committed=10, provider_version="26.4.23")
    base.update(kw)
    return GaleraNode(**base)


def judged(snapshot: GaleraSnapshot) -> SourceView:
    """The galera source's view of a poll of `snapshot` (what the pane paints its verdict from)."""
    return judge_source(Observation("galera", snapshot, ok_at=NOW.timestamp()), None)


def snap(*nodes: GaleraNode) -> GaleraSnapshot:
    return GaleraSnapshot(nodes=nodes, expected_size=3, taken_at=0.0)


HEALTHY = snap(node(1), node(2), node(3))
DEGRADED = snap(node(1, cluster_size=2, conf_id=8), node(2, cluster_size=2, conf_id=8),
                GaleraNode("127.0.0.1:3313", reachable=False, error="(2003) Can't connect to MySQL server"))
NO_QUORUM = snap(node(1, cluster_size=1, cluster_status="non-Primary", state_comment="Initialized", ready=False,
                      conf_id=NON_PRIMARY_CONF_ID),
                 GaleraNode("127.0.0.1:3312", reachable=False, error="(2003) refused"),
                 GaleraNode("127.0.0.1:3313", reachable=False, error="(2003) refused"))


def cells(s: GaleraSnapshot) -> dict[str, list[str]]:
    return {key: [str(c) for c in row] for key, row in node_rows(s, galera_findings(s, NOW))}


def test_rows_healthy_degraded_no_quorum() -> None:
    assert cells(HEALTHY)["127.0.0.1:3311"] == ["node1 127.0.0.1:3311", "yes", "3/3", "Primary", "Synced", "ON",
                                                "0%", "0/0", "7"]
    degraded = cells(DEGRADED)
    assert degraded["127.0.0.1:3312"][2] == "2/3"
    assert degraded["127.0.0.1:3313"][:2] == ["127.0.0.1:3313", "NO"]
    assert "Can't connect" in degraded["127.0.0.1:3313"][4]
    lost = cells(NO_QUORUM)["127.0.0.1:3311"]
    assert lost[2:6] + lost[8:] == ["1/3", "non-Primary", "Initialized", "OFF", "-1"]
    rows = dict(node_rows(NO_QUORUM, galera_findings(NO_QUORUM, NOW)))
    assert rows["127.0.0.1:3311"][0].style == "bold red"


def test_verdict_line() -> None:
    healthy = verdict_line(HEALTHY, judged(HEALTHY))
    assert healthy.startswith("[green]healthy[/]") and "cluster prod" in healthy
    assert "degraded 2/3, still Primary" in verdict_line(DEGRADED, judged(DEGRADED), galera_findings(DEGRADED, NOW))
    line = verdict_line(NO_QUORUM, judged(NO_QUORUM), galera_findings(NO_QUORUM, NOW))
    assert line.startswith("[bold red]NO QUORUM: reads fail (1047), writes fail[/]")


def test_login_refused_and_flow_control_cells() -> None:
    s = snap(node(1, flow_control_active=True, flow_control_paused_share=0.73), node(2),
             GaleraNode("127.0.0.1:3313", reachable=False, error="(1045) Access denied", auth_error=True))
    c = cells(s)
    assert c["127.0.0.1:3311"][6] == "ACTIVE 73%"
    assert c["127.0.0.1:3313"][1] == "login refused" and c["127.0.0.1:3313"][4] == "(1045) Access denied"
    first_poll = cells(snap(node(1, flow_control_paused_share=None), node(2), node(3)))
    assert first_poll["127.0.0.1:3311"][6] == "?"


class Playback(BaseCollector):
    """Hands out prepared snapshots, one per poll (a UI fixture, not a stand-in for the database)."""

    name = "galera"

    def __init__(self, snaps: list[GaleraSnapshot]) -> None:
        self.snaps = snaps
        self.calls = 0
        self.interval = 0.05
        self.timeout = 1.0

    async def collect(self) -> GaleraSnapshot:
        s = self.snaps[min(self.calls, len(self.snaps) - 1)]
        self.calls += 1
        return s

    def findings(self, snapshot, now):
        return galera_findings(snapshot, NOW)


async def test_pane_registered_and_updates_rows_in_place() -> None:
    assert pane_class("galera", "Galera") is GaleraPane
    healed = dataclasses.replace(HEALTHY, taken_at=1.0)
    collector = Playback([NO_QUORUM, NO_QUORUM, healed])
    app = StacktopApp(Config(), collectors=[collector])
    async with app.run_test(size=(160, 48)) as pilot:
        pane = app.query_one(GaleraPane)
        for _ in range(100):
            if pane.table is not None and pane.table.row_count == 3:
                break
            await pilot.pause(0.02)
        table = pane.table
        assert table.shown_keys == ["127.0.0.1:3311", "127.0.0.1:3312", "127.0.0.1:3313"]
        table.move_cursor(row=2)
        for _ in range(150):
            if collector.calls >= 3 and str(table.get_row("127.0.0.1:3313")[1]) == "yes":
                break
            await pilot.pause(0.02)
        assert str(table.get_row("127.0.0.1:3313")[1]) == "yes"
        assert table.cursor_key() == "127.0.0.1:3313"
        assert "healthy" in str(pane.query_one(".pane-message").render())


def test_verdict_line_names_the_arbitrator_the_data_nodes_count() -> None:
    both = "127.0.0.1:3311,127.0.0.1:3312,"
    present = GaleraSnapshot(nodes=(node(1, incoming_addresses=both, arbitrators_seen=1),
                                    node(2, incoming_addresses=both, arbitrators_seen=1)),
                             expected_size=3, taken_at=0.0, arbitrators=("garbd1:4567",))
    assert verdict_line(present, judged(present)).startswith("[green]healthy[/]  ·  arbitrator garbd1:4567 in  ·  ")
    gone = dataclasses.replace(present, nodes=tuple(dataclasses.replace(n, cluster_size=2, arbitrators_seen=0)
                                                    for n in present.nodes))
    line = verdict_line(gone, judged(gone), galera_findings(gone, NOW))
    assert line.startswith("[yellow]degraded 2/3, still Primary; arbitrator garbd1:4567 missing[/]")
    assert line.count("garbd1:4567") == 1
