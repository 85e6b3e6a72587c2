"""One journal per session: two sessions started in the same second each write their own file (a unique name,
created exclusively, never appended to), and a journal that holds two sessions' lines anyway (written by an
older stacktop, or by hand) or a snapshot with two rows of one id is refused by `stacktop export` and
`stacktop replay` with one line naming the problem, exit 3, instead of rows shown twice or a crash."""

from __future__ import annotations

import asyncio
import dataclasses
import json
from datetime import UTC, datetime
from itertools import zip_longest
from pathlib import Path
from typing import Any

import pytest

from tui import cli
from tui.collectors.registry import build_collectors
from tui.config import Config, RecorderConfig
from tui.errors import SourceError
from tui.models.observation import Observation
from tui.recorder import Journal, Recorder, read_journal
from tui.replay import ReplayClock, ReplayCollector, Timeline
from tui.runner import CollectorRunner
from tui.sim import start_demo

EXIT_UNKNOWN = 3


class _Frozen(datetime):
    """The recorder's clock standing still: every session starts in the same second."""

    @classmethod
    def now(cls, tz: Any = None) -> _Frozen:  # type: ignore[override]
        return cls(2026, 12, 7, 10, 0, 0, tzinfo=tz or UTC)


def test_two_sessions_started_in_the_same_second_write_two_journals(tmp_path: Path,
                                                                    monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr("tui.recorder.datetime", _Frozen)
    config = dataclasses.replace(Config(), recorder=RecorderConfig(dir=str(tmp_path)))
    first, second = cli._recorder(config), cli._recorder(config)  # what `stacktop --demo` makes, twice
    try:
        assert first.journal.path != second.journal.path
        first.note("from the first session")
        second.note("from the second session")
    finally:
        first.close()
        second.close()
    journals = sorted(tmp_path.glob("stacktop-*.jsonl"))
    assert len(journals) == 2, journals
    assert all(p.name.startswith("stacktop-20261207T100000Z-") for p in journals)
    for journal, text in ((first.journal.path, "from the first session"), (second.journal.path, "from the second")):
        notes = [e["text"] for e in read_journal(journal) if e["type"] == "note"]
        assert len(notes) == 1 and notes[0].startswith(text), (journal, notes)


def test_a_journal_is_never_appended_to_another_sessions_file(tmp_path: Path,
                                                              monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr("tui.recorder.datetime", _Frozen)
    probe = Journal(tmp_path)
    taken = probe.path
    probe.close()
    before = taken.read_bytes()
    again = Journal(tmp_path)  # the same second, the same process: the name it would take exists
    try:
        assert again.path != taken
    finally:
        again.close()
    assert taken.read_bytes() == before, "the other session's journal is left as it is"


async def record_session(demo: Any, path: Path, polls: int) -> None:
    """A short session on the simulated cloud: services and instances polled `polls` times."""
    collectors = [c for c in build_collectors(demo.config()) if c.name in ("services", "instances")]
    recorder = Recorder(Journal(path.parent, name=path.name))

    def publish(obs: Observation) -> None:
        recorder.observe(obs)

    runners = [CollectorRunner(c, publish, clock=lambda: demo.now().timestamp()) for c in collectors]
    for _ in range(polls):
        for r in runners:
            await r.run_once()
        demo.advance(5)
    for c in collectors:
        await c.aclose()
    recorder.close()


@pytest.fixture
async def two_sessions(tmp_path: Path) -> tuple[Path, Path]:
    """Two sessions of the same cloud at the same time, recorded each to its own journal."""
    demo = start_demo(instances=20, hosts=3, queues=5, churn=0, storyline=False, manual=True,
                      service_down_time=20, agent_down_time=20)
    try:
        demo.inject("kill_compute", host=demo.engine.hosts[0].name)
        demo.advance(30)  # reported down: both sessions raise its finding
        a, b = tmp_path / "a.jsonl", tmp_path / "b.jsonl"
        await record_session(demo, a, 3)
        await record_session(demo, b, 3)
    finally:
        demo.stop()
    return a, b


def interleave(a: Path, b: Path, out: Path, *, keep_session_lines: bool = True) -> Path:
    """What two sessions appending to one file wrote: their lines, alternately."""
    lines_a, lines_b = a.read_text().splitlines(), b.read_text().splitlines()
    mixed = [line for pair in zip_longest(lines_a, lines_b) for line in pair if line is not None]
    if not keep_session_lines:  # as an older stacktop wrote them: no session line
        mixed = [line for line in mixed if json.loads(line)["type"] != "session"]
    out.write_text("\n".join(mixed) + "\n")
    return out


def refused(path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """`stacktop export` and `stacktop replay` of the journal: both exit 3 with one line on stderr, and no
    report nor dashboard; returns the two lines."""
    ran: list[str] = []
    monkeypatch.setattr("tui.replay_app.ReplayApp.run", lambda self, *a, **k: ran.append("replay app"))
    said = []
    for command in (["export", str(path)], ["replay", str(path)]):
        code = cli.main(command)
        out, err = capsys.readouterr()
        lines = err.strip().splitlines()
        assert code == EXIT_UNKNOWN and len(lines) == 1 and out == "", (command, code, out, err)
        assert lines[0].startswith(f"{path}: ") and "Traceback" not in err
        said.append(lines[0])
    assert not ran, "the replay never starts on such a journal"
    return said


def test_two_interleaved_sessions_are_refused_by_export_and_replay(
        two_sessions: tuple[Path, Path], tmp_path: Path, capsys: pytest.CaptureFixture[str],
        monkeypatch: pytest.MonkeyPatch) -> None:
    a, b = two_sessions
    for path in (a, b):  # each session's own journal reads fine
        assert cli.main(["export", str(path)]) == 0
        capsys.readouterr()
    for marked in (True, False):  # with this stacktop's session lines, and as an older one wrote it
        mixed = interleave(a, b, tmp_path / f"mixed-{marked}.jsonl", keep_session_lines=marked)
        for line in refused(mixed, capsys, monkeypatch):
            assert "two sessions interleaved in one file" in line, line


def test_a_snapshot_with_two_rows_of_one_id_is_refused_by_export_and_replay(
        two_sessions: tuple[Path, Path], tmp_path: Path, capsys: pytest.CaptureFixture[str],
        monkeypatch: pytest.MonkeyPatch) -> None:
    a, _ = two_sessions
    events = [json.loads(line) for line in a.read_text().splitlines()]
    full = next(e for e in events if e["type"] == "snapshot" and e["source"] == "instances" and "full" in e)
    servers = full["full"]["servers"]
    servers.append(dict(servers[0]))  # the same server twice
    damaged = tmp_path / "twice.jsonl"
    damaged.write_text("\n".join(json.dumps(e) for e in events) + "\n")
    for line in refused(damaged, capsys, monkeypatch):
        assert "duplicate row keys in a recorded instances snapshot" in line and servers[0]["id"] in line, line
    # played anyway (the timeline, under the command line's check): the pane says the journal is damaged there,
    # it never gets two rows of one key (a table cannot show them)
    timeline = Timeline(events)
    collector = ReplayCollector(timeline, "instances", ReplayClock(timeline.end, end=timeline.end))
    with pytest.raises(SourceError, match="the journal is damaged at this point"):
        asyncio.run(collector.collect())
