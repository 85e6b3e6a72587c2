"""The Finding contract and the snapshot JSON/exit codes built on it."""

from __future__ import annotations

import json
from dataclasses import FrozenInstanceError
from datetime import UTC, datetime

import pytest

from tests.unit.fakes import ScriptedCollector
from tui.models.finding import Finding, sort_findings, worst_severity
from tui.snapshot import collect_once, exit_code, to_report


def make(sev: str = "warning", kind: str = "nova.service_down", subject: str = "compute-01") -> Finding:
    return Finding(severity=sev, kind=kind, subject=subject, summary="nova-compute on compute-01 is down",  # type: ignore[arg-type]
                   evidence={"updated_at": datetime(2026, 1, 1, tzinfo=UTC), "age_s": 75},
                   next_step="journalctl -u nova-compute on compute-01", source="services")


def test_finding_is_frozen_and_validated() -> None:
    f = make()
    with pytest.raises(FrozenInstanceError):
        f.severity = "info"  # type: ignore[misc]
    with pytest.raises(TypeError):
        f.evidence["x"] = 1  # type: ignore[index]
    with pytest.raises(ValueError):
        make(sev="fatal")
    with pytest.raises(ValueError):
        make(kind="nodot")


def test_finding_json_roundtrip() -> None:
    f = make()
    data = json.loads(json.dumps(f.to_dict()))
    assert data == {
        "severity": "warning", "kind": "nova.service_down", "subject": "compute-01",
        "summary": "nova-compute on compute-01 is down",
        "evidence": {"updated_at": "2026-01-01T00:00:00+00:00", "age_s": 75},
        "next_step": "journalctl -u nova-compute on compute-01", "source": "services",
    }
    assert Finding.from_dict(data).key == f.key


def test_sorting_and_worst() -> None:
    fs = [make("info", "a.b"), make("critical", "z.z"), make("warning", "c.d")]
    assert [f.severity for f in sort_findings(fs)] == ["critical", "warning", "info"]
    assert worst_severity(fs) == "critical" and worst_severity([]) is None


@pytest.mark.parametrize(
    ("collectors", "code"),
    [
        ([ScriptedCollector("a", [1]), ScriptedCollector("b", [2])], 0),
        ([ScriptedCollector("a", [1], severity="info")], 0),
        ([ScriptedCollector("a", [1], severity="warning"), ScriptedCollector("b", [2], severity="info")], 1),
        ([ScriptedCollector("a", [1], severity="critical"), ScriptedCollector("b", [2], severity="warning")], 2),
        ([ScriptedCollector("a", [1], severity="critical"), ScriptedCollector("b", ["fail"])], 3),
        ([ScriptedCollector("a", ["hang"], timeout=0.05)], 3),
        ([], 3),
    ],
)
async def test_snapshot_exit_codes(collectors: list[ScriptedCollector], code: int) -> None:
    observations = await collect_once(collectors)  # type: ignore[arg-type]
    assert exit_code(observations) == code
    assert all(c.closed for c in collectors)


async def test_snapshot_report_shape() -> None:
    obs = await collect_once([ScriptedCollector("a", [4], severity="critical"), ScriptedCollector("b", ["fail"])])
    report = json.loads(json.dumps(to_report(obs, generated_at=0.0)))
    assert report["generated_at"] == "1970-01-01T00:00:00+00:00"
    assert set(report["sources"]) == {"a", "b"}
    assert report["sources"]["a"]["ok"] is True and report["sources"]["a"]["error"] is None
    assert report["sources"]["b"]["ok"] is False and "401" in report["sources"]["b"]["error"]
    assert report["sources"]["b"]["last_ok"] is None
    assert report["findings"][0]["kind"] == "a.test" and report["findings"][0]["severity"] == "critical"
    assert report["data"] == {"a": {"value": 4}, "b": None}
