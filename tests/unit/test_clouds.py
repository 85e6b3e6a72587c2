"""Several clouds, the pure parts: health badges, cycling and name matching, the journal's cloud tags,
the export and replay of a several-cloud journal."""

from __future__ import annotations

from pathlib import Path

from tui.clouds import badge, match_name, next_name
from tui.export import findings_table, to_markdown
from tui.models.finding import Finding
from tui.models.observation import Observation
from tui.recorder import Journal, Recorder, read_journal
from tui.replay import Timeline

NOW = 10_000.0


def finding(severity: str, subject: str = "compute-02") -> Finding:
    return Finding(severity=severity, kind="nova.service_enabled_but_down", subject=subject, summary="down",
                   next_step="look", source="services")


def obs(source: str, *findings: Finding, ok_at: float | None = NOW - 5, error: str | None = None) -> Observation:
    return Observation(source=source, snapshot={"n": 1}, ok_at=ok_at, tried_at=NOW - 5, error=error,
                       findings=findings)


def test_badge_is_the_worst_severity_and_says_stale() -> None:
    assert badge("east", {}, NOW, {}).text == "east ..."
    assert badge("east", {"services": obs("services")}, NOW, {"services": 10}).text == "east ok"
    warn = badge("east", {"services": obs("services", finding("warning")), "galera": obs("galera")}, NOW, {})
    assert (warn.level, warn.text) == ("warning", "east WARN")
    crit = badge("east", {"services": obs("services", finding("warning"), finding("critical", "compute-03"))},
                 NOW, {"services": 10})
    assert (crit.level, crit.text) == ("critical", "east CRIT")
    # 5 min old: stale against a 10 s interval, not against an inactive cloud's 120 s
    old = {"services": obs("services", ok_at=NOW - 300)}
    assert badge("west", old, NOW, {"services": 10}).text == "west STALE"
    assert badge("west", old, NOW, {"services": 120}).text == "west ok"
    failing = {"services": obs("services", finding("critical"), error="refused")}
    assert badge("west", failing, NOW, {"services": 10}).text == "west CRIT STALE"
    active = badge("west", {}, NOW, {}, active=True)
    assert "reverse" in active.markup() and "reverse" not in badge("west", {}, NOW, {}).markup()


def test_next_name_wraps_and_match_name_takes_unique_prefixes() -> None:
    assert next_name(["a", "b", "c"], "c") == "a" and next_name(["a", "b"], "a", -1) == "b"
    assert match_name(["prod", "prod-east", "lab"], "prod") == ["prod"]
    assert match_name(["prod-west", "prod-east", "lab"], "prod") == ["prod-west", "prod-east"]
    assert match_name(["prod", "lab"], "x") == []


def test_several_cloud_journal_tags_events_exports_and_replays_one_cloud(tmp_path: Path) -> None:
    recorder = Recorder(Journal(tmp_path, name="j.jsonl"))
    for cloud, at in (("east", NOW), ("west", NOW + 1)):
        recorder.observe(obs("services", ok_at=at), cloud=cloud)
    recorder.observe(obs("services", finding("critical"), ok_at=NOW + 2), cloud="west")
    recorder.observe(obs("services", finding("critical"), ok_at=NOW + 3), cloud="east")
    recorder.observe(obs("services", ok_at=NOW + 4), cloud="west")
    recorder.cloud = "west"
    recorder.note("looked at west")
    recorder.close()
    header, *events = read_journal(tmp_path / "j.jsonl")
    assert header["type"] == "session"  # the file's own first line: whose journal it is, of no one cloud
    assert all(e.get("cloud") in ("east", "west") for e in events), events
    # the same finding in two clouds is two rows: west's cleared, east's still open
    rows = findings_table(events)
    assert [(r["subject"], r["cleared"] is not None) for r in rows] == [("west: compute-02", True),
                                                                         ("east: compute-02", False)]
    report = to_markdown(tmp_path / "j.jsonl")
    assert "| west/services |" in report and "looked at west" in report
    # replay plays one cloud: the first recorded, or the one asked for
    assert Timeline(events).cloud == "east"
    west = Timeline(events, cloud="west")
    assert [e.at for e in west.per_source["services"] if e.kind == "snapshot"] == [NOW + 1, NOW + 2, NOW + 4]
