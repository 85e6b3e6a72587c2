"""A flood of findings of one kind (10,000 INFO stale allocations from one placement audit) is one finding in
every view: the judged list the panes show, `snapshot` in every format, the journal and its export; the
counts and metrics still count every finding."""

from __future__ import annotations

import json

from tui.export import findings_table
from tui.models.finding import Finding
from tui.models.observation import Observation
from tui.recorder import ChangeTracker
from tui.snapshot import judged_once, to_report
from tui.snapshot_nagios import render_nagios
from tui.snapshot_plain import render_plain
from tui.snapshot_prometheus import render_prometheus

NOW = 1_790_000_000.0


def _stale(n: int, start: int = 0) -> tuple[Finding, ...]:
    return tuple(Finding("info", "placement.stale_allocation", f"consumer-{i:05d}",
                         f"allocation of consumer-{i:05d} on compute-{i % 1500:04d} has no server there",
                         {"host": f"compute-{i % 1500:04d}"}, "openstack resource provider allocation show",
                         "placement") for i in range(start, start + n))


def _few() -> tuple[Finding, ...]:
    return (Finding("warning", "placement.migration_stuck", "mig-1", "a migration holds two allocations",
                    {}, "", "placement"),
            Finding("info", "placement.stale_allocation_tiny", "c-1", "one of a kind", {}, "", "placement"))


def _observations(findings: tuple[Finding, ...]) -> list[Observation]:
    return judged_once([Observation("placement", snapshot=None, ok_at=NOW, tried_at=NOW, findings=findings)], NOW)


def test_ten_thousand_of_one_kind_are_one_shown_finding_with_the_count_and_the_first_subjects() -> None:
    obs = _observations(_stale(10_000) + _few())
    shown = obs[0].cloud_view.shown
    assert len(shown) == 3
    flood = next(f for f in shown if f.kind == "placement.stale_allocation")
    assert flood.severity == "info" and flood.evidence["count"] == 10_000
    assert flood.evidence["subjects"][:3] == ["consumer-00000", "consumer-00001", "consumer-00002"]
    assert "10,000" in flood.summary and "consumer-00000" in flood.summary
    assert {f.subject for f in shown if f.kind != "placement.stale_allocation"} == {"mig-1", "c-1"}


def test_a_few_of_one_kind_stay_one_row_each() -> None:
    obs = _observations(_stale(40) + _few())
    assert len(obs[0].cloud_view.shown) == 42


def test_every_snapshot_format_lists_the_flood_once_and_counts_all_of_it() -> None:
    obs = _observations(_stale(10_000) + _few())
    report = to_report(obs, NOW)
    assert len(report["findings"]) == 3
    plain = render_plain(obs)
    assert sum("placement.stale_allocation " in line for line in plain.splitlines()) == 1
    assert len(plain) < 5_000
    metrics = render_prometheus(obs, NOW).splitlines()
    assert 'stacktop_findings_by_severity{cloud="",region="",severity="info"} 10001' in metrics
    assert ('stacktop_findings{cloud="",region="",severity="info",kind="placement.stale_allocation"} 10000'
            in metrics)
    nagios = render_nagios(obs)
    assert "10001 info" in nagios.splitlines()[0] and "findings_info=10001" in nagios
    assert len(nagios) < 5_000


def test_the_journal_raises_a_flood_once_and_export_lists_it_once() -> None:
    tracker = ChangeTracker()
    first = tracker.observe(Observation("placement", ok_at=NOW, tried_at=NOW, findings=_stale(10_000)))
    raised = [e for e in first if e["type"] == "finding_raised"]
    assert len(raised) == 1 and raised[0]["finding"]["evidence"]["count"] == 10_000
    assert len(json.dumps(raised)) < 5_000
    # the flood grows: the same finding, nothing new to journal
    assert [e for e in tracker.observe(Observation("placement", ok_at=NOW + 10, tried_at=NOW + 10,
                                                   findings=_stale(10_050)))
            if e["type"].startswith("finding_")] == []
    # it shrinks below a flood: the group clears, its members are raised one by one
    last = tracker.observe(Observation("placement", ok_at=NOW + 20, tried_at=NOW + 20, findings=_stale(3)))
    assert [e["type"] for e in last if e["type"] == "finding_cleared"] == ["finding_cleared"]
    assert len([e for e in last if e["type"] == "finding_raised"]) == 3
    assert len(findings_table(first + last)) == 4


def test_a_simulated_audit_flood_is_one_shown_finding() -> None:
    import asyncio

    from tui.models.placement import AuditDigest
    from tui.openstack import connect
    from tui.openstack.placement_reads import audit_cloud
    from tui.rules.allocations import audit_findings
    from tui.sim import start_demo

    demo = start_demo(instances=300, hosts=20, queues=20, churn=0, storyline=False, manual=True, start=NOW)
    try:
        demo.inject("stale_allocations", count=500)
        digest = AuditDigest.of(asyncio.run(audit_cloud(connect(demo.config().openstack), every_capacity=False)))
        found = tuple(audit_findings(digest.judged))
    finally:
        demo.stop()
    assert sum(f.kind == "placement.stale_allocation" for f in found) == 500
    shown = _observations(found)[0].cloud_view.shown
    assert [f.evidence["count"] for f in shown if f.kind == "placement.stale_allocation"] == [500]


def test_a_flood_is_grouped_once_per_observation_not_at_every_judgement(monkeypatch) -> None:
    """Every poll of any source judges the cloud again: the flood of an unchanged observation is not walked
    again (a 10,000-finding audit would cost every poll of every source a pass over it)."""
    from tui.config import Thresholds
    from tui.rules import judge

    walked: list[int] = []
    real = judge.group_floods

    def counting(findings, *a, **kw):  # type: ignore[no-untyped-def]
        listed = list(findings)
        walked.append(len(listed))
        return real(listed, *a, **kw)

    monkeypatch.setattr(judge, "group_floods", counting)
    cloud = judge.CloudJudge(Thresholds())  # the runners' judge of one cloud
    cloud.judge(Observation("placement", ok_at=NOW, tried_at=NOW, findings=_stale(10_000)), NOW)
    for poll in range(5):  # another source polls five times; the audit's observation stays the same
        other = Observation("rabbitmq", ok_at=NOW + poll, tried_at=NOW + poll, findings=_few())
        view = cloud.judge(other, NOW + poll)
        assert [f.evidence["count"] for f in view.shown if f.kind == "placement.stale_allocation"] == [10_000]
    assert sum(n >= 10_000 for n in walked) == 1, walked
