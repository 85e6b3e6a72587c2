"""Every printable key typed into the note line goes into the note: `/` (the filter's key), `:` (the command
line's) and `n` (the note's) included, as typed one by one and in one burst; the filter stays as it was."""

from __future__ import annotations

from pathlib import Path

from tui.app import StacktopApp
from tui.config import Config
from tui.recorder import Journal, Recorder, read_journal

TEXT = "restarted nova/compute on c-01: see /var/log/nova? n=2 (ok)"


async def test_slash_colon_and_n_typed_into_a_note_go_into_the_note(tmp_path: Path) -> None:
    recorder = Recorder(Journal(tmp_path, name="j.jsonl"))
    app = StacktopApp(Config(), collectors=[], recorder=recorder)
    async with app.run_test(size=(160, 48)) as pilot:
        await pilot.pause()
        await pilot.press("n", *TEXT)
        await pilot.pause()
        note = app.query_one("#note")
        assert note.value == TEXT
        assert not app.query_one("#filter").has_class("-shown"), "the filter line stayed shut"
        assert not app.query_one("#command").has_class("-shown"), "the command line stayed shut"
        await pilot.press("enter")
        await pilot.pause()
        pane = app.active_pane()
        assert pane is None or pane.table is None or pane.table.row_filter.text == ""
    recorder.close()
    notes = [e["text"] for e in read_journal(tmp_path / "j.jsonl") if e["type"] == "note"]
    assert notes == [TEXT]
