"""Journal: transitions only, secrets never written, rotation, torn lines, export with notes."""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

import pytest

from tui.export import findings_table, to_markdown
from tui.models.finding import Finding
from tui.models.observation import Observation
from tui.recorder import SCHEMA_VERSION, ChangeTracker, Journal, Recorder, read_journal

SECRET = "Pa55w0rd-zz9!"


@dataclass(frozen=True)
class Snap:
    states: dict[str, dict[str, str]]

    def journal_states(self) -> dict[str, dict[str, str]]:
        return self.states


def finding(subject: str, severity: str = "critical") -> Finding:
    return Finding(severity=severity, kind="nova.service_down", subject=subject, summary=f"{subject} down",  # type: ignore[arg-type]
                   next_step="look", source="services")


def obs(t: float, snap: Snap | None = None, findings: tuple[Finding, ...] = (), error: str | None = None,
        ok_at: float | None = None) -> Observation:
    return Observation(source="services", snapshot=snap, error=error, ok_at=t if error is None else ok_at,
                       tried_at=t, duration_s=0.1, findings=findings)


def test_tracker_records_transitions_not_repeats() -> None:
    tr = ChangeTracker()
    s1 = Snap({"svc:compute-01": {"state": "up"}, "svc:compute-02": {"state": "up"}})
    s2 = Snap({"svc:compute-01": {"state": "up"}, "svc:compute-02": {"state": "down"}})
    assert [e["type"] for e in tr.observe(obs(100, s1))] == ["baseline"]
    assert tr.observe(obs(110, s1)) == []
    events = tr.observe(obs(120, s2, (finding("compute-02"),)))
    assert [e["type"] for e in events] == ["finding_raised", "state_changed"]
    assert events[1]["object"] == "svc:compute-02" and events[1]["after"] == {"state": "down"}
    assert tr.observe(obs(130, s2, (finding("compute-02"),))) == []
    failed = tr.observe(obs(140, error="timed out after 20s", ok_at=130))
    assert [e["type"] for e in failed] == ["source_failed"]
    assert tr.observe(obs(150, error="timed out after 20s", ok_at=130)) == [], "no repeat while still failing"
    back = tr.observe(obs(160, s1))
    assert [e["type"] for e in back] == ["source_recovered", "finding_cleared", "state_changed"]


def test_journal_never_holds_a_secret_and_flushes_each_line(tmp_path: Path) -> None:
    journal = Journal(tmp_path, name="j.jsonl", secrets=[SECRET])
    rec = Recorder(journal)
    rec.observe(obs(100, error=f"401 for user admin password {SECRET}", ok_at=None))
    rec.note(f"typed the password {SECRET} by mistake", subject="server:abc")
    rec.close()
    text = (tmp_path / "j.jsonl").read_text()
    assert SECRET not in text and "***" in text
    events = read_journal(tmp_path / "j.jsonl")
    assert all(e["schema_version"] == SCHEMA_VERSION for e in events)
    assert events[-1]["type"] == "note" and events[-1]["subject"] == "server:abc"


def test_rotation_is_size_bounded(tmp_path: Path) -> None:
    journal = Journal(tmp_path, name="j.jsonl", max_bytes=2000, keep=3)
    for i in range(200):
        journal.write({"type": "note", "text": f"line {i} " + "x" * 50})
    journal.close()
    files = sorted(p.name for p in tmp_path.iterdir())
    assert files == ["j.jsonl", "j.jsonl.1.gz", "j.jsonl.2.gz", "j.jsonl.3.gz"], "rotated files are gzipped"
    assert all(p.stat().st_size < 2200 for p in tmp_path.iterdir())
    assert read_journal(tmp_path / "j.jsonl")[-1]["text"].startswith("line 199 ")
    newest_rotated = read_journal(tmp_path / "j.jsonl.1.gz")
    oldest_rotated = read_journal(tmp_path / "j.jsonl.3.gz")
    assert newest_rotated and oldest_rotated, "a gzipped journal reads as a plain one"
    n = [int(e["text"].split()[1]) for e in oldest_rotated + newest_rotated + read_journal(tmp_path / "j.jsonl")]
    assert n == sorted(n), "the numbers run oldest file (.3) to the live one"


def test_every_journal_of_the_directory_stays_under_the_total_cap(tmp_path: Path) -> None:
    import os

    for day in range(5):  # earlier sessions' journals, oldest first
        old = tmp_path / f"stacktop-2026120{day}T000000Z.jsonl.1.gz"
        old.write_bytes(os.urandom(3000))
        os.utime(old, (1_000_000 + day, 1_000_000 + day))
    (tmp_path / "notes.md").write_text("not a journal: never touched")
    journal = Journal(tmp_path, name="stacktop-now.jsonl", max_bytes=2000, keep=3, max_total_bytes=12_000)
    for i in range(200):
        journal.write({"type": "note", "text": f"line {i} " + "x" * 50})
    journal.close()
    names = sorted(p.name for p in tmp_path.iterdir())
    total = sum(p.stat().st_size for p in tmp_path.glob("stacktop-*"))
    assert total <= 12_000, names
    assert "notes.md" in names and "stacktop-now.jsonl" in names
    assert "stacktop-20261200T000000Z.jsonl.1.gz" not in names, "the oldest go first"
    assert read_journal(tmp_path / "stacktop-now.jsonl")[-1]["text"].startswith("line 199 ")


def test_a_damaged_gzip_journal_is_one_line(tmp_path: Path) -> None:
    import gzip

    from tui.recorder import JournalError, load_journal

    path = tmp_path / "j.jsonl.1.gz"
    path.write_bytes(gzip.compress(b'{"type": "note", "text": "ok"}\n' * 100)[:-20])
    with pytest.raises(JournalError) as err:
        load_journal(path)
    assert "damaged gzip" in str(err.value) and "\n" not in str(err.value)


def test_torn_last_line_is_skipped(tmp_path: Path) -> None:
    path = tmp_path / "j.jsonl"
    path.write_text(json.dumps({"schema_version": 1, "type": "note", "text": "ok"}) + "\n{\"schema_ver")
    assert [e["text"] for e in read_journal(path)] == ["ok"]


def test_export_has_notes_findings_and_timeline(tmp_path: Path) -> None:
    journal = Journal(tmp_path, name="j.jsonl", secrets=[SECRET])
    rec = Recorder(journal)
    s = Snap({"a": {"state": "up"}})
    rec.observe(obs(100, s))
    rec.observe(obs(110, s, (finding("compute-02"),)))
    rec.note("compute-02 stopped by hand at 10:00", subject="host:compute-02")
    rec.observe(obs(130, s))
    rec.close()
    rows = findings_table(read_journal(tmp_path / "j.jsonl"))
    assert len(rows) == 1 and rows[0]["cleared"] is not None and rows[0]["kind"] == "nova.service_down"
    md = to_markdown(tmp_path / "j.jsonl")
    assert "compute-02 stopped by hand at 10:00" in md
    assert "nova.service_down" in md and "## Timeline" in md and SECRET not in md


def test_the_clouds_hints_and_a_changed_owner_are_recorded_for_the_export() -> None:
    """The export lists what the findings pane listed: the cloud's triage hints (judged after each poll, not a
    source's findings) are raised and cleared in the journal, and a finding whose owner or severity changed
    under the same key is a new row from then, the old one ended there."""
    from dataclasses import replace

    from tui.models.judged import CloudView

    tr = ChangeTracker()
    hint = Finding("warning", "triage.compute_down", "compute-02", "compute-02 is down", source="triage")
    stuck = Finding("warning", "instance.stuck", "vm-1", "owner nova-scheduler",
                    evidence={"owner": "nova-scheduler", "owner_label": "nova-scheduler"}, source="instances")
    moved = replace(stuck, summary="owner nova-compute on compute-02",
                    evidence={"owner": "nova-compute", "owner_label": "nova-compute on compute-02",
                              "host": "compute-02"})
    first = replace(obs(100, findings=(stuck,)), cloud_view=CloudView(1, 100.0, hints=(hint,)))
    events = tr.observe(first)
    assert [(e["type"], e["source"]) for e in events] == [("finding_raised", "services"), ("finding_raised", "triage")]
    second = replace(obs(110, findings=(moved,)), cloud_view=CloudView(2, 110.0))
    events += tr.observe(second)
    assert [(e["type"], e["source"]) for e in events[2:]] == [("finding_changed", "services"),
                                                              ("finding_cleared", "triage")]
    rows = {(r["kind"], r["summary"]): r for r in findings_table(events)}
    assert rows[("triage.compute_down", "compute-02 is down")]["cleared"] is not None
    assert rows[("instance.stuck", "owner nova-scheduler")]["cleared"] == rows[
        ("instance.stuck", "owner nova-compute on compute-02")]["raised"]
    assert rows[("instance.stuck", "owner nova-compute on compute-02")]["cleared"] is None
