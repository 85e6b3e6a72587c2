"""Hostile journals and rotation storms (issue #39): an operator's notes survive any volume of snapshots, an
oversized snapshot is written cut (marked) instead of rotating the journal every poll, and crafted journals
(order runs that repeat rows, gzip bombs, a kind that is a dict, year 0, NaN and -1e308 times, a `class` naming
a module to import) give one line and a non-zero exit, never a traceback, in bounded memory.

Memory is measured in a child process (its own peak RSS: VmHWM, which starts again at exec, unlike ru_maxrss
that keeps the forking test process's), under an address-space limit so that a regression fails the test
instead of taking the machine's memory."""

from __future__ import annotations

import asyncio
import gzip
import json
import os
import subprocess
import sys
import time
import uuid
import zlib
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from tui.export import to_markdown
from tui.journal_codec import SNAPSHOT_CLASSES, apply, class_name, load_class
from tui.models.galera import GaleraSnapshot
from tui.models.instances import Fault, InstancesSnapshot, Server
from tui.models.observation import Observation
from tui.models.placement import AuditDigest
from tui.models.rabbitmq import RabbitSnapshot
from tui.models.services import ServicesSnapshot
from tui.recorder import NOTE_MAX, Journal, Recorder, load_journal, read_journal
from tui.replay import ReplayClock, ReplayCollector, SourceError, Timeline, without_repeats
from tui.rules.stuck import instance_findings

ROOT = Path(__file__).resolve().parents[2]
MB = 1024 * 1024
PEAK_MB = 200  # every crafted journal below is read under this peak RSS (the attacks took 1.25 GB to 3 GB and more)
T0 = datetime(2026, 12, 7, 10, 0, tzinfo=UTC)

# runs `python -m tui ARGS` under an address-space cap and writes its peak RSS (kB) to the file given first
_MEASURED = """
import resource, runpy, sys
resource.setrlimit(resource.RLIMIT_AS, (1536 * 1024 * 1024, resource.RLIM_INFINITY))
out, sys.argv = sys.argv[1], ["stacktop", *sys.argv[2:]]
try:
    runpy.run_module("tui", run_name="__main__")
finally:
    with open(out, "w") as f:
        f.write(next(line.split()[1] for line in open("/proc/self/status") if line.startswith("VmHWM:")))
"""


def _measured(tmp_path: Path, *args: str, code: str = _MEASURED) -> tuple[subprocess.CompletedProcess[str], float]:
    """(the finished process, its peak RSS in MB)."""
    peak = tmp_path / "peak.txt"
    env = {k: v for k, v in os.environ.items() if k not in ("STACKTOP_CONFIG", "OS_CLOUD")}
    env.update(PYTHONPATH=str(ROOT), HOME=str(tmp_path), XDG_STATE_HOME=str(tmp_path))
    proc = subprocess.run([sys.executable, "-c", code, str(peak), *args], capture_output=True, text=True,
                          env=env, cwd=ROOT, timeout=300, stdin=subprocess.DEVNULL)
    return proc, int(peak.read_text()) / 1024 if peak.exists() else float("inf")


def no_journals(home: Path) -> str:
    """How an error names the default [recorder] dir under this HOME, which holds no journal."""
    return f"{home}/.local/share/stacktop/recordings; it holds no journal yet"


def _one_line(proc: subprocess.CompletedProcess[str]) -> str:
    assert "Traceback" not in proc.stderr, proc.stderr[-3000:]
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1, proc.stderr[-3000:]
    return lines[0]


# ------------------------------------------------------------------------------------------------ rotation storm
def _error_servers(count: int, poll: int) -> tuple[Server, ...]:
    """ERROR servers with 4 KB fault details that change every poll (each poll's patch is as big as a full)."""
    return tuple(Server(id=str(uuid.UUID(int=i)), name=f"vm-{i}", status="ERROR", host=f"c{i % 7}",
                        fault=Fault(code=500, message=f"No valid host was found (poll {poll})",
                                    created=T0 - timedelta(minutes=5),
                                    details=f"poll {poll} " + ("Traceback: File nova/x.py line 1\n" * 140)[:4096]))
                 for i in range(count))


def _observe(recorder: Recorder, poll: int, count: int) -> None:
    taken = T0 + timedelta(seconds=10 * poll)
    snap = InstancesSnapshot(taken_at=taken, servers=_error_servers(count, poll))
    findings = tuple(instance_findings(snap, taken, {}))
    at = taken.timestamp()
    recorder.observe(Observation(source="instances", snapshot=snap, error=None, ok_at=at, tried_at=at,
                                 duration_s=0.1, findings=findings))


def _close(recorder: Recorder) -> None:
    """Close once the writer thread took everything queued (Journal.close waits 10 s for the rest: a loaded
    machine encodes megabytes of snapshots slowly)."""
    deadline = time.monotonic() + 300
    while recorder.journal.pending() and time.monotonic() < deadline:
        time.sleep(0.05)
    recorder.close()


def test_notes_survive_a_rotation_storm_and_snapshots_are_cut_not_rotated_every_poll(tmp_path: Path) -> None:
    max_bytes = 1 * MB
    recorder = Recorder(Journal(tmp_path, name="j.jsonl", max_bytes=max_bytes, keep=3))
    _observe(recorder, 0, 400)  # 400 servers x 4 KB details, their findings too: a full line of ~3.5 MB
    recorder.note("rebooted compute c3 by hand at +15 s", subject="host:c3")
    for poll in range(1, 16):
        _observe(recorder, poll, 400)
    _close(recorder)

    files = sorted(tmp_path.glob("j.jsonl*"))
    assert [f.name for f in files] == ["j.jsonl", "j.jsonl.1.gz", "j.jsonl.2.gz", "j.jsonl.3.gz"], \
        "the storm rotated past what is kept: the file the note was first written to is gone"
    live = tmp_path / "j.jsonl"
    for file in files:
        lines = gzip.decompress(file.read_bytes()) if file.suffix == ".gz" else file.read_bytes()
        assert max(len(line) for line in lines.split(b"\n")) < max_bytes // 2, f"{file.name}: a line over half a file"
        events = read_journal(file)
        notes = [e for e in events if e["type"] == "note"]
        assert [n["text"] for n in notes] == ["rebooted compute c3 by hand at +15 s"], f"{file.name} lost the note"
        if file != live:  # the file being written holds what came since its rotation: 0, 1 or 2 polls
            assert sum(1 for e in events if e["type"] == "snapshot") >= 2, f"{file.name}: a rotation per poll"
    report = to_markdown(live)
    assert "rebooted compute c3 by hand at +15 s" in report and "## Notes\n\n(none)" not in report
    assert "recorded snapshots were cut** to fit the journal file" in report

    timeline = Timeline(load_journal(live).events)
    state = timeline.state_at("instances", timeline.end)
    assert state is not None and isinstance(state.snapshot, InstancesSnapshot)
    assert 0 < len(state.snapshot.servers) < 400, "rows left out to fit"
    assert "characters cut]" in (state.snapshot.servers[0].fault.details or ""), "long texts shortened, marked"
    markers = [e for _, e in timeline.notes if e["type"] == "cut"]
    assert markers and markers[0]["source"] == "instances" and markers[0]["cut"]["rows"] > 0


def test_a_carried_note_does_not_move_the_start_of_a_replay() -> None:
    carried = {**NOTE, "ts": "2026-12-07T09:00:00+00:00", "carried": True}
    timeline = Timeline([carried, GALERA])
    assert timeline.start == GALERA["at"] and timeline.notes[0][1]["text"] == "looked at db1"


def test_a_carried_note_is_read_once_across_the_files_of_a_journal(tmp_path: Path) -> None:
    recorder = Recorder(Journal(tmp_path, name="j.jsonl", max_bytes=1 * MB, keep=5))
    recorder.note("first look: 300 servers in ERROR")
    for poll in range(6):
        _observe(recorder, poll, 300)
    _close(recorder)
    rotated = sorted(tmp_path.glob("j.jsonl.*.gz"), key=lambda f: int(f.name.split(".")[2]), reverse=True)
    assert len(rotated) >= 2
    events = [e for file in [*rotated, tmp_path / "j.jsonl"] for e in read_journal(file)]
    assert sum(1 for e in events if e["type"] == "note") == len(rotated) + 1, "in every file"
    timeline = Timeline(without_repeats(events))
    assert [e["text"] for _, e in timeline.notes if e["type"] == "note"] == ["first look: 300 servers in ERROR"]


async def test_replay_shows_where_a_snapshot_was_recorded_cut(tmp_path: Path) -> None:
    from tui.config import Config
    from tui.replay import Player
    from tui.replay_app import ReplayApp

    recorder = Recorder(Journal(tmp_path, name="j.jsonl", max_bytes=1 * MB))
    for poll in range(3):
        _observe(recorder, poll, 300)
    _close(recorder)
    # the newest file holding the snapshots (the three polls may fill a file, which then rotates)
    journal = next(f for f in (tmp_path / "j.jsonl", tmp_path / "j.jsonl.1.gz")
                   if any(e["type"] == "snapshot" for e in load_journal(f).events))
    player = Player(Timeline(load_journal(journal).events), speed=100)
    app = ReplayApp(Config(), player, name="j.jsonl")
    async with app.run_test(size=(160, 48)) as pilot:
        for _ in range(50):
            await pilot.pause(0.1)
            toasts = [n.message for n in app._notifications]
            if any("recorded cut to fit the journal file" in t for t in toasts):
                break
        assert any(t.startswith("instances: recorded cut to fit the journal file (") and
                   t.endswith("raise [recorder] max_file_mb to record it whole") for t in toasts), toasts


def test_a_huge_note_is_cut_when_recorded(tmp_path: Path) -> None:
    recorder = Recorder(Journal(tmp_path, name="j.jsonl"))
    recorder.note("start " + "x" * (5 * MB) + " end")
    _close(recorder)
    (note,) = [e for e in read_journal(tmp_path / "j.jsonl") if e.get("type") != "session"]
    assert len(note["text"]) < NOTE_MAX + 100 and note["text"].startswith("start ") and note["text"].endswith(" end")
    assert "characters cut]" in note["text"]


# ------------------------------------------------------------------------------------------------ crafted journals
def _write(path: Path, events: list[dict[str, object]]) -> Path:
    path.write_text("".join(json.dumps(e) + "\n" for e in events))
    return path


BASE = {"schema_version": 2, "ts": "2026-12-07T10:00:00+00:00"}
NOTE = {**BASE, "type": "note", "text": "looked at db1", "subject": "session"}
GALERA = {**BASE, "type": "snapshot", "source": "galera", "at": 1796637600.0, "class": None,
          "full": {"nodes": []}, "findings": []}


def _runs_bomb(path: Path) -> Path:
    """A full list of 10,000 rows, then a ~120 KB patch whose order repeats all of them 10,000 times (1e8 ids)."""
    rows = [{"id": f"s{i}"} for i in range(10_000)]
    full = {**BASE, "type": "snapshot", "source": "instances", "at": 1796637600.0, "class": None,
            "full": {"servers": rows}, "findings": []}
    delta = {**BASE, "type": "snapshot", "source": "instances", "at": 1796637610.0, "class": None,
             "delta": {"d": {"servers": {"L": ["id"], "u": {}, "n": {}, "r": [[0, 10_000]] * 10_000}}}}
    return _write(path, [full, delta])


_REPLAY_ONE = """
import asyncio, resource, sys
resource.setrlimit(resource.RLIMIT_AS, (1536 * 1024 * 1024, resource.RLIM_INFINITY))
from tui.recorder import load_journal
from tui.replay import ReplayClock, ReplayCollector, Timeline
out, journal, source = sys.argv[1:4]
try:
    timeline = Timeline(load_journal(journal).events)
    clock = ReplayClock(timeline.start)
    clock.jump(timeline.end)
    try:
        asyncio.run(ReplayCollector(timeline, source, clock).collect())
        print("replayed")
    except Exception as exc:
        print(type(exc).__name__, exc)
    print("tui.__main__ imported" if "tui.__main__" in sys.modules else "tui.__main__ not imported")
finally:
    with open(out, "w") as f:
        f.write(next(line.split()[1] for line in open("/proc/self/status") if line.startswith("VmHWM:")))
"""


def test_order_runs_that_repeat_rows_are_a_source_error_in_bounded_memory(tmp_path: Path) -> None:
    path = _runs_bomb(tmp_path / "runs.jsonl")
    assert path.stat().st_size < 300_000
    proc, peak_mb = _measured(tmp_path, str(path), "instances", code=_REPLAY_ONE)
    assert proc.returncode == 0 and "Traceback" not in proc.stderr, proc.stderr[-3000:]
    assert proc.stdout.startswith("SourceError replay: the recorded snapshot of instances cannot be read (a patch's "
                                  "order runs repeat rows"), proc.stdout
    assert peak_mb < PEAK_MB, f"{peak_mb:.0f} MB"


def test_apply_refuses_runs_that_repeat_rows_before_expanding_them() -> None:
    old = [{"id": f"s{i}"} for i in range(100)]
    with pytest.raises(ValueError, match="repeat rows"):
        apply(old, {"L": ["id"], "u": {}, "n": {}, "r": [[0, 100], [0, 100]]})
    with pytest.raises(ValueError, match="not \\[start, length\\]"):
        apply(old, {"L": ["id"], "u": {}, "n": {}, "r": [[0, "x"]]})
    same = apply(old, {"L": ["id"], "u": {}, "n": {"t": {"id": "t"}}, "r": [[50, 50], "t", [0, 50]]})
    assert [e["id"] for e in same] == [f"s{i}" for i in range(50, 100)] + ["t"] + [f"s{i}" for i in range(50)]


def _gzip_bomb(path: Path, line: bytes, total: int) -> Path:
    """A gzip file of `line` repeated to `total` bytes, written a megabyte at a time."""
    block = line * max(1, MB // len(line))
    packer = zlib.compressobj(9, zlib.DEFLATED, 31)  # 31: the gzip format
    with path.open("wb") as out:
        for _ in range(total // len(block)):
            out.write(packer.compress(block))
        out.write(packer.flush())
    return path


@pytest.mark.parametrize("payload", [
    json.dumps(NOTE).encode() + b"\n",  # valid entries: held, they would take GBs
    b"\n",  # blank lines
    b"a",  # one line of 700 MB
], ids=["notes", "blank", "one-line"])
def test_a_gzip_bomb_is_refused_in_bounded_memory(tmp_path: Path, payload: bytes) -> None:
    path = _gzip_bomb(tmp_path / "j.jsonl.1.gz", payload, 700 * MB)
    assert path.stat().st_size < 3 * MB
    proc, peak_mb = _measured(tmp_path, "export", str(path), "--markdown")
    assert proc.returncode == 3 and proc.stdout == ""
    line = _one_line(proc)
    assert line.startswith(f"{path}: a gzip file of {path.stat().st_size:,} bytes that decompresses past "), line
    assert line.endswith(" MB, more than 64 times its size - a gzip bomb, not a journal as stacktop writes them; "
                         "if it is one, give it gunzipped"), line
    assert peak_mb < PEAK_MB, f"{peak_mb:.0f} MB"


def test_a_line_longer_than_the_line_limit_is_skipped_unread(tmp_path: Path) -> None:
    path = tmp_path / "j.jsonl"
    with path.open("wb") as out:
        out.write(json.dumps(NOTE).encode() + b"\n")
        out.write(b'{"type": "note", "text": "' + b"y" * (70 * MB) + b'"}\n')
    proc, peak_mb = _measured(tmp_path, "export", str(path), "--markdown")
    assert proc.returncode == 0 and "looked at db1" in proc.stdout
    assert _one_line(proc) == f"{path}: skipped 1 line that is not a journal entry (line 2: longer than 64 MB)"
    assert peak_mb < PEAK_MB, f"{peak_mb:.0f} MB"


CRAFTED = {
    "kind-dict": ({**BASE, "type": "finding_raised", "source": "nova",
                   "finding": {"severity": "critical", "kind": {"a": 1}, "subject": "c1", "summary": "down"}},
                  "line 1: a finding's kind is not a text"),
    "year-0": ({**NOTE, "ts": "0001-01-01T00:00:00+01:00"}, "line 1: `ts` is not an ISO 8601 time from 1970 to 3000"),
    "nan": ({**GALERA, "at": float("nan")}, "line 1: `at` is not a time from 1970 to 3000"),
    "minus-1e308": ({**GALERA, "at": -1e308}, "line 1: `at` is not a time from 1970 to 3000"),
    "severity": ({**GALERA, "findings": [{"severity": "fatal", "kind": "galera.x", "subject": "db1",
                                          "summary": "s"}]},
                 "line 1: a finding's severity is not critical, warning or info"),
    "cut": ({**GALERA, "cut": {"rows": "x" * 100_000}}, "line 1: `cut` is not an object of counts"),
}


@pytest.mark.parametrize("command", ["export", "replay"])
@pytest.mark.parametrize("name", sorted(CRAFTED))
def test_a_crafted_journal_is_one_line_naming_the_problem(tmp_path: Path, command: str, name: str) -> None:
    event, why = CRAFTED[name]
    path = _write(tmp_path / f"{name}.jsonl", [event])
    proc = subprocess.run([sys.executable, "-m", "tui", command, str(path)], capture_output=True, text=True,
                          cwd=ROOT, timeout=60, stdin=subprocess.DEVNULL,
                          env={**os.environ, "PYTHONPATH": str(ROOT), "HOME": str(tmp_path)})
    assert proc.returncode == 3 and proc.stdout == ""
    assert _one_line(proc) == (f"{path}: not a stacktop journal (its line is not journal entries; {why}) - give a "
                               f"file from [recorder] dir ({no_journals(tmp_path)})")


def test_crafted_lines_beside_good_ones_are_skipped_and_the_export_reads(tmp_path: Path) -> None:
    path = _write(tmp_path / "j.jsonl", [NOTE, *(event for event, _ in CRAFTED.values())])
    contents = load_journal(path)
    assert contents.skipped == len(CRAFTED) and [e["type"] for e in contents.events] == ["note"]
    assert contents.warning(path) == (f"{path}: skipped {len(CRAFTED)} lines that are not journal entries (line 2: "
                                      "a finding's kind is not a text)")
    assert "looked at db1" in to_markdown(path, contents.events)


async def test_replay_of_a_journal_with_crafted_times_and_findings_runs(tmp_path: Path) -> None:
    from tui.config import Config
    from tui.replay import Player
    from tui.replay_app import ReplayApp

    path = _write(tmp_path / "j.jsonl", [NOTE, GALERA, *(event for event, _ in CRAFTED.values())])
    player = Player(Timeline(load_journal(path).events))
    app = ReplayApp(Config(), player, name=path.name)
    async with app.run_test(size=(160, 48)) as pilot:
        await pilot.pause(0.5)
        assert app.is_running and "recorded 2026-12-07 10:00:00Z" in app._topbar_text()


def test_a_huge_note_in_a_journal_is_read_cut(tmp_path: Path) -> None:
    path = _write(tmp_path / "j.jsonl", [{**NOTE, "text": "n" * (8 * MB)}])
    (note,) = load_journal(path).events
    assert len(note["text"]) < NOTE_MAX + 100 and "characters cut]" in note["text"]


def test_a_journal_file_over_the_read_limit_is_refused_unread(tmp_path: Path) -> None:
    path = tmp_path / "j.jsonl"
    with path.open("wb") as out:
        out.truncate(700 * MB)  # sparse: no disk taken
    proc, peak_mb = _measured(tmp_path, "export", str(path))
    assert proc.returncode == 3 and _one_line(proc) == (
        f"{path}: 700 MB, over the 640 MB a journal file is read to - not a journal stacktop wrote (its files "
        f"rotate at [recorder] max_file_mb, at most 512 MB); give a file from [recorder] dir ({no_journals(tmp_path)})")
    assert peak_mb < PEAK_MB, f"{peak_mb:.0f} MB"


def test_max_file_mb_is_at_most_what_the_readers_read(tmp_path: Path) -> None:
    from tui.config import ConfigError, load_config

    config = tmp_path / "c.toml"
    config.write_text("[recorder]\nmax_file_mb = 1024\n")
    with pytest.raises(ConfigError, match="must be between 1 and 512 MB"):
        load_config(str(config), env={})


def test_a_gzip_journal_within_its_bounds_still_reads(tmp_path: Path) -> None:
    path = tmp_path / "j.jsonl.1.gz"
    path.write_bytes(gzip.compress(b"".join(json.dumps({**NOTE, "text": f"n{i}"}).encode() + b"\n"
                                            for i in range(20_000))))
    events = load_journal(path).events
    assert [e["text"] for e in events] == [f"n{i}" for i in range(20_000)]


def test_a_snapshot_that_cannot_fit_even_cut_is_an_omitted_marker(tmp_path: Path) -> None:
    recorder = Recorder(Journal(tmp_path, name="j.jsonl", max_bytes=4096))  # lines of at most 2 KB
    _observe(recorder, 0, 100)
    recorder.note("still here")
    _close(recorder)
    events = read_journal(tmp_path / "j.jsonl")
    omitted = [e for e in events if e["type"] == "snapshot_omitted"]
    assert omitted and omitted[0]["source"] == "instances" and omitted[0]["limit"] == 2048
    assert "snapshot of instances not recorded: " in to_markdown(tmp_path / "j.jsonl", events)
    assert "still here" in to_markdown(tmp_path / "j.jsonl", events)


WRONG_SHAPES = [
    ({"source": "instances", "class": None, "full": {"servers": [{"id": "x"}]}},
     "the snapshot names no class stacktop replays"),
    ({"source": "galera", "class": "tui.models.galera:GaleraSnapshot", "full": {"nodes": 5}},
     "GaleraSnapshot.nodes: a number where the snapshot has tuple"),
    ({"source": "services", "class": "tui.models.services:ServicesSnapshot",
      "full": {"taken_at": "2026-12-07T10:00:00+00:00", "keystone": [1, 2]}},
     "ServicesSnapshot.keystone: a list where the snapshot has KeystoneCheck"),
    ({"source": "placement", "class": "tui.models.placement:AuditDigest",
      "full": {"taken_at": "0001-01-01T00:00:00+14:00"}}, "AuditDigest.taken_at: a time in the year 1"),
    ({"source": "rabbitmq", "class": "tui.models.rabbitmq:RabbitSnapshot",
      "full": {"taken_at": "2026-12-07T10:00:00+00:00", "queues": [{"name": "q", "vhost": "/", "messages": 1e300}]}},
     "RabbitSnapshot.queues: QueueInfo.messages: a number where the snapshot has int"),
]


def _shaped(tmp_path: Path) -> Path:
    return _write(tmp_path / "j.jsonl", [{**GALERA, **shape} for shape, _ in WRONG_SHAPES])


def test_a_snapshot_that_does_not_fit_its_class_is_that_sources_error(tmp_path: Path) -> None:
    timeline = Timeline(load_journal(_shaped(tmp_path)).events)
    clock = ReplayClock(timeline.start)
    for shape, why in WRONG_SHAPES:
        with pytest.raises(SourceError) as err:
            asyncio.run(ReplayCollector(timeline, str(shape["source"]), clock).collect())
        assert str(err.value) == (f"replay: the recorded snapshot of {shape['source']} cannot be read ({why}) - the "
                                  "journal is damaged at this point")


async def test_replay_of_snapshots_of_the_wrong_shape_runs(tmp_path: Path) -> None:
    from tui.config import Config
    from tui.replay import Player
    from tui.replay_app import ReplayApp

    app = ReplayApp(Config(), Player(Timeline(load_journal(_shaped(tmp_path)).events)), name="j.jsonl")
    async with app.run_test(size=(160, 48)) as pilot:
        for _ in range(30):
            await pilot.pause(0.1)
        assert app.is_running


def test_a_snapshot_without_a_required_field_names_it() -> None:
    timeline = Timeline([{**GALERA, "class": "tui.models.galera:GaleraSnapshot", "full": {"nodes": []}}])
    with pytest.raises(ValueError, match="missing 1 required positional argument: 'expected_size'"):
        timeline.state_at("galera", timeline.end)


def test_a_damaged_patch_waits_for_the_next_full_snapshot() -> None:
    full = {**GALERA, "class": "tui.models.galera:GaleraSnapshot",
            "full": {"taken_at": 1796637600.0, "nodes": [], "expected_size": 3}}
    delta = {k: v for k, v in full.items() if k != "full"}
    events = [full, {**delta, "at": GALERA["at"] + 10, "delta": {"d": {"nodes": {"i": {"7": {}}}}}},
              {**full, "at": GALERA["at"] + 20}]
    timeline = Timeline(events)
    with pytest.raises(ValueError, match="IndexError"):
        timeline.state_at("galera", GALERA["at"] + 15)
    state = timeline.state_at("galera", GALERA["at"] + 25)
    assert state is not None and isinstance(state.snapshot, GaleraSnapshot)


def test_an_exercise_section_from_a_journal_carries_no_link_or_image(tmp_path: Path) -> None:
    crafted = ("| step | at |\n| --- | --- |\n[click](javascript:alert(1)) ![pixel](https://x.example/p.png)\n"
               "<javascript:alert(2)> [ref]\n[ref]: javascript:alert(3)\n```\nleft open")
    path = _write(tmp_path / "j.jsonl", [{**BASE, "type": "exercise", "name": "trace-boot", "summary": "done",
                                          "markdown": crafted}])
    report = to_markdown(path)
    section = report[report.index("### trace-boot"):report.index("## Timeline")]
    assert "| step | at |" in section, "tables stay"
    assert "](" not in section.replace("\\](", "") and "<javascript" not in section
    assert "\\[click\\](javascript:alert(1)) !\\[pixel\\](https://x.example/p.png)" in section
    assert "\\[ref\\]: javascript:alert(3)" in section
    assert section.rstrip().endswith("left open\n```"), "an open code block is closed with the section"


# ------------------------------------------------------------------------------------------------ class allow-list
def test_a_class_outside_the_allow_list_is_never_imported(tmp_path: Path) -> None:
    path = _write(tmp_path / "j.jsonl", [{**GALERA, "class": "tui.__main__:main"}])
    proc, _ = _measured(tmp_path, str(path), "galera", code=_REPLAY_ONE)
    assert proc.returncode == 0 and "Traceback" not in proc.stderr, proc.stderr[-3000:]
    assert proc.stdout.splitlines() == [
        "SourceError replay: the recorded snapshot of galera cannot be read (the journal names a snapshot class "
        "stacktop does not replay: 'tui.__main__:main') - the journal is damaged at this point",
        "tui.__main__ not imported"]


@pytest.mark.parametrize("name", ["tui.__main__:main", "tui.cli:main", "os:system", "tui.models.instances:Server",
                                  "tui.models.instances:InstancesSnapshot.__init__"])
def test_load_class_refuses_every_name_off_the_list(name: str) -> None:
    with pytest.raises(ValueError, match="does not replay"):
        load_class(name)


def test_every_snapshot_class_of_a_collector_is_on_the_allow_list() -> None:
    for cls in (InstancesSnapshot, ServicesSnapshot, GaleraSnapshot, RabbitSnapshot, AuditDigest):
        assert f"{cls.__module__}:{cls.__qualname__}" in SNAPSHOT_CLASSES
    assert {load_class(name) for name in SNAPSHOT_CLASSES} == {InstancesSnapshot, ServicesSnapshot, GaleraSnapshot,
                                                               RabbitSnapshot, AuditDigest}
    assert class_name(InstancesSnapshot(taken_at=T0)) in SNAPSHOT_CLASSES


def test_a_class_off_the_list_is_a_source_error_in_process() -> None:
    timeline = Timeline([{**GALERA, "class": "tui.cli:main"}])
    clock = ReplayClock(timeline.start)
    with pytest.raises(SourceError, match=r"does not replay: 'tui\.cli:main'"):
        asyncio.run(ReplayCollector(timeline, "galera", clock).collect())
