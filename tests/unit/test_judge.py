"""The poll's judgement (tui.rules.judge), built by the runner: each cloud judges with its own thresholds and its
own latest observations, however the polls of two clouds interleave; the newest cloud view wins."""

from __future__ import annotations

import asyncio
from collections.abc import Mapping, Sequence
from datetime import UTC, datetime, timedelta
from typing import Any

from tui.collectors.base import BaseCollector
from tui.config import Thresholds
from tui.models.finding import Finding
from tui.models.judged import latest_view
from tui.models.observation import Observation
from tui.models.services import KeystoneCheck, SectionRead, ServiceRow, ServicesSnapshot
from tui.rules.judge import CloudJudge
from tui.rules.liveness import services_findings
from tui.runner import CollectorRunner

READ_AT = datetime(2026, 1, 1, 12, 0, tzinfo=UTC)


def snapshot() -> ServicesSnapshot:
    def row(host: str, age: float) -> ServiceRow:
        return ServiceRow(section="compute", binary="nova-compute", host=host, id=host, zone="nova",
                          updated_at=READ_AT - timedelta(seconds=age), age_at_read_s=age)

    return ServicesSnapshot(taken_at=READ_AT, keystone=KeystoneCheck("http://ks:5000/v3", "c"),
                            compute=SectionRead("compute", (row("compute-01", 2), row("compute-02", 90)), READ_AT),
                            network=SectionRead("network", (), READ_AT), volume=SectionRead("volume", (), READ_AT))


class Services(BaseCollector):
    """Answers the very same snapshot object to every cloud: only the cloud's thresholds tell them apart."""

    name = "services"
    takes_judged_rows = True

    def __init__(self, snap: ServicesSnapshot, thresholds: Thresholds) -> None:
        self.snap, self.thresholds = snap, thresholds
        self.interval, self.timeout = 10.0, 5.0

    async def collect(self) -> Any:
        return self.snap

    def findings(self, snapshot: Any, now: datetime,
                 judged_rows: Mapping[str, Sequence[Any]] | None = None) -> list[Finding]:
        return services_findings(snapshot, now, self.thresholds, judged_rows)


def cloud(snap: ServicesSnapshot, down_time: float) -> CollectorRunner:
    th = Thresholds(service_down_time=down_time)
    return CollectorRunner(Services(snap, th), clock=READ_AT.timestamp, judge=CloudJudge(th, configured={"services"}),
                           thresholds=th)


def compute_cell(obs: Observation) -> str:
    assert obs.cloud_view is not None and obs.cloud_view.summary is not None
    cell = obs.cloud_view.summary.cell("compute")
    assert cell is not None
    return cell.text


async def test_two_clouds_do_not_share_a_judgement() -> None:
    snap = snapshot()
    strict, lenient = cloud(snap, 60.0), cloud(snap, 300.0)
    for _ in range(3):  # the two clouds' polls interleave, on the same snapshot object at the same moment
        a, b = await asyncio.gather(strict.run_once(), lenient.run_once())
        assert a.view is not None and b.view is not None
        assert a.view.rows["compute:compute-02"].state == "down", "90 s past a 60 s down time"
        assert b.view.rows["compute:compute-02"].state == "up", "90 s within a 300 s down time (late at 150 s)"
        assert compute_cell(a) == "1/2 up" and compute_cell(b) == "2/2 up"
        assert {f.kind for f in a.findings} >= {"nova.service_enabled_but_down"}
        assert not [f for f in b.findings if f.kind.startswith("nova.service")]
        assert a.cloud_view is not None and b.cloud_view is not None
        assert a.cloud_view.level == "critical" and b.cloud_view.level == "ok"


async def test_the_newest_cloud_view_wins_whatever_order_the_observations_arrive_in() -> None:
    snap = snapshot()
    runner = cloud(snap, 60.0)
    first = await runner.run_once()
    second = await runner.run_once()
    assert first.cloud_view is not None and second.cloud_view is not None
    assert second.cloud_view.seq > first.cloud_view.seq
    # the app keeps the latest observation of each source: an older one arriving last does not win
    assert latest_view({"services": first, "other": second}) is second.cloud_view


async def test_a_judgement_that_fails_is_a_finding_and_the_loop_goes_on(monkeypatch: Any) -> None:
    import tui.runner

    def broken(*_: Any, **__: Any) -> Observation:
        raise KeyError("no such cell")

    monkeypatch.setattr(tui.runner, "judged", broken)
    runner = cloud(snapshot(), 60.0)
    obs = await runner.run_once()
    assert obs.error is None and obs.view is None
    failed = [f for f in obs.findings if f.kind == "stacktop.rules_failed"]
    assert failed and "KeyError" in failed[0].summary
    assert (await runner.run_once()).error is None, "the next poll runs"
