"""A note is bounded everywhere: the note line takes NOTE_MAX_CHARS (a huge paste goes in cut, and says so), the
journal keeps no more, and a crafted journal's multi-megabyte note replays as a notice of at most NOTICE_MAX_CHARS
(it was a 2.67 GB toast for 50 MB, with `q` ignored for 52 s)."""

from __future__ import annotations

import json
import time
from pathlib import Path

from textual import events

import tui.app
import tui.recorder
from tests.testbed.wait import until_pilot
from tui.app import StacktopApp
from tui.config import Config
from tui.recorder import Journal, Recorder, read_journal
from tui.replay import Player
from tui.replay_app import ReplayApp

NOTE_MAX_CHARS = getattr(tui.recorder, "NOTE_MAX_CHARS", 2000)
TOAST_MAX_CHARS = tui.app.NOTICE_MAX_CHARS
BIG = 4 * 1024 * 1024  # 4 MB: enough to tell a cap from none, without hurting a shared machine on the old code


async def test_a_huge_paste_into_the_note_line_is_cut_and_the_journal_keeps_no_more(tmp_path: Path) -> None:
    recorder = Recorder(Journal(tmp_path, name="j.jsonl"))
    recorder.note("y" * BIG)  # a note from elsewhere (an exercise, a script) is cut too
    app = StacktopApp(Config(), collectors=[], recorder=recorder)
    async with app.run_test(size=(160, 48)) as pilot:
        await pilot.pause()
        await pilot.press("n")
        app.post_message(events.Paste("x" * BIG))
        await until_pilot(pilot, lambda: app.query_one("#note").value, "the paste typed in", 30, interval=0.05)
        assert len(app.query_one("#note").value) == NOTE_MAX_CHARS
        assert any(f"at most {NOTE_MAX_CHARS:,} characters" in str(n.message) for n in app._notifications)
        await pilot.press("enter")
        await pilot.pause()
    recorder.close()
    recorded, typed = [e["text"] for e in read_journal(tmp_path / "j.jsonl") if e["type"] == "note"]
    # the recorder keeps NOTE_MAX_CHARS of a longer note, its head and tail, and marks the cut
    assert len(recorded) <= NOTE_MAX_CHARS + 40 and "characters cut]" in recorded
    assert len(typed) == NOTE_MAX_CHARS


async def test_a_crafted_journal_with_a_huge_note_replays_a_short_toast_and_quits(tmp_path: Path) -> None:
    path = tmp_path / "j.jsonl"
    entries = [{"schema_version": 2, "ts": "2026-12-02T11:00:00+00:00", "type": "note", "text": "L" * BIG,
                "subject": "s" * BIG},
               {"schema_version": 2, "ts": "2026-12-02T11:00:05+00:00", "type": "note", "text": "end",
                "subject": "session"}]
    path.write_text("\n".join(json.dumps(e) for e in entries) + "\n")
    player = Player.from_journal(path, speed=1.0)
    app = ReplayApp(Config(), player, name=path.name)
    async with app.run_test(size=(160, 48)) as pilot:
        await until_pilot(pilot, lambda: any("note (sss" in str(n.message) for n in app._notifications),
                          "the note's toast", 60, interval=0.05)
        sizes = [len(str(n.message)) + len(str(n.title)) for n in app._notifications]
        assert max(sizes) <= 2 * TOAST_MAX_CHARS, sizes
        began = time.monotonic()
        await pilot.press("q")
        await until_pilot(pilot, lambda: not app.is_running, "the replay to quit", 60, interval=0.05)
        assert time.monotonic() - began < 10  # generous for a loaded machine
