"""Hostile journals (issue #22) through `stacktop export` and `stacktop replay`, as subprocesses: lines that are
not journal entries are skipped with ONE warning line giving their count; a file with nothing readable, or
with a schema this stacktop does not read, is refused with one line and exit 3; never a traceback."""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from tui.recorder import JournalError, load_journal
from tui.replay import ReplayClock, ReplayCollector, SourceError, Timeline

GOOD = [
    {"schema_version": 2, "ts": "2026-12-02T11:00:00+00:00", "type": "note", "text": "start", "subject": "session"},
    {"schema_version": 2, "ts": "2026-12-02T11:00:05+00:00", "type": "finding_raised", "source": "galera",
     "finding": {"severity": "critical", "kind": "galera.quorum_lost", "subject": "db1", "summary": "no quorum"}},
]


def _journal(tmp_path: Path, lines: list[bytes]) -> Path:
    path = tmp_path / "j.jsonl"
    path.write_bytes(b"\n".join(lines) + b"\n")
    return path


def _good() -> list[bytes]:
    return [json.dumps(e).encode() for e in GOOD]


def _cli(*args: str) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if k not in ("STACKTOP_CONFIG", "OS_CLOUD")}
    return subprocess.run([sys.executable, "-m", "tui", *args], capture_output=True, text=True, env=env,
                          timeout=60, stdin=subprocess.DEVNULL)


def test_export_skips_lines_that_are_not_entries_with_one_warning(tmp_path: Path) -> None:
    garbage = [b"[1, 2, 3]", b"42", b'"a string"', b'{"schema_version": 2, "ts": "2026-12', b"\xff\xfe\x00binary",
               b'{"no": "type"}', b'{"type": "finding_raised", "finding": 7}', b"null"]
    path = _journal(tmp_path, [_good()[0], *garbage, _good()[1]])
    proc = _cli("export", str(path), "--markdown")
    assert proc.returncode == 0, proc.stderr
    assert proc.stderr == (f"{path}: skipped 8 lines that are not journal entries (line 2: not a JSON object "
                           "with a type)\n")
    assert "galera.quorum_lost" in proc.stdout and "start" in proc.stdout


def test_export_of_a_binary_file_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "j.jsonl"
    path.write_bytes(bytes(range(256)) * 64)
    proc = _cli("export", str(path), "--markdown")
    assert proc.returncode == 3 and "Traceback" not in proc.stderr and proc.stdout == ""
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith(f"{path}: not a stacktop journal (all ")
    assert "lines are not journal entries; line 1: not JSON) - give a file from [recorder] dir (" in lines[0]


@pytest.mark.parametrize("command", ["export", "replay"])
def test_unknown_schema_is_refused_naming_the_readable_ones(tmp_path: Path, command: str) -> None:
    future = {**GOOD[1], "schema_version": 999}
    path = _journal(tmp_path, [_good()[0], json.dumps(future).encode()])
    proc = _cli(command, str(path))
    assert proc.returncode == 3 and "Traceback" not in proc.stderr
    assert proc.stderr == (f"{path}: journal schema 999 - this stacktop reads schemas 1, 2; use the stacktop "
                           "version that recorded it\n")


@pytest.mark.parametrize("content", [b"[]\n[1]\n", b"\x80\x81\x82\n\xc3\x28\n", b"3.14\n", b'{"truncated": \n'])
def test_replay_of_nothing_readable_is_refused(tmp_path: Path, content: bytes) -> None:
    path = tmp_path / "j.jsonl"
    path.write_bytes(content)
    proc = _cli("replay", str(path))
    assert proc.returncode == 3 and "Traceback" not in proc.stderr
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith(f"{path}: not a stacktop journal"), proc.stderr


def test_replay_of_a_directory_is_one_line(tmp_path: Path) -> None:
    proc = _cli("export", str(tmp_path))
    assert proc.returncode == 3 and "Traceback" not in proc.stderr
    assert len(proc.stderr.strip().splitlines()) == 1


def test_controls_in_a_journal_path_or_line_stay_escaped(tmp_path: Path) -> None:
    path = tmp_path / "j\x1b[2J.jsonl"
    path.write_bytes(b"[1]\n")
    with pytest.raises(JournalError) as err:
        load_journal(path)
    assert "\x1b" not in str(err.value) and "\\x1b[2J" in str(err.value)


def test_a_damaged_snapshot_patch_is_a_source_error_not_a_crash() -> None:
    events = [
        {"schema_version": 2, "type": "snapshot", "source": "galera", "at": 100.0, "class": None,
         "full": {"nodes": []}, "findings": []},
        {"schema_version": 2, "type": "snapshot", "source": "galera", "at": 101.0, "class": None,
         "delta": {"L": ["id"], "u": {"x": {"=": 1}}, "o": ["x"]}},
    ]
    timeline = Timeline(events)
    clock = ReplayClock(timeline.start)
    clock.jump(102.0)
    collector = ReplayCollector(timeline, "galera", clock)
    with pytest.raises(SourceError) as err:
        asyncio.run(collector.collect())
    assert "galera cannot be read" in str(err.value)
