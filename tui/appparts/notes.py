"""Notes and screenshots: what the engineer records of the session."""

from __future__ import annotations

import time
from pathlib import Path

from textual.widgets import Input


class NotesPart:
    """Notes (`n`) and screenshots, written beside the journal when a recorder runs."""

    def note_subject(self) -> tuple[str | None, str | None]:
        """(subject, source) of what is selected: the active pane's highlighted row, else the session."""
        pane = self.active_pane()
        if pane is None or pane.table is None:
            return None, None
        key = pane.table.cursor_key()
        return (f"{pane.SOURCE}:{pane.row_name(key)}" if key else None), pane.SOURCE

    def action_note(self) -> None:
        if self.recorder is None:
            self.notify("notes need the recorder ([recorder] dir)", severity="warning")
            return
        subject, _ = self.note_subject()
        self._input_lines()
        box = self.query_one("#note", Input)
        box.placeholder = f"note on {subject or 'the session'} (enter saves, esc cancels)"
        self._open_line(box)

    def _note_done(self, box: Input) -> None:
        text = box.value.strip()
        if text and self.recorder is not None:
            subject, source = self.note_subject()
            self.recorder.note(text, subject=subject, source=source)
            self.notify(f"note saved on {subject or 'the session'}", timeout=2)
        self._close_line(box)
        self._activate(self.active_index)

    def deliver_screenshot(self, filename: str | None = None, path: str | None = None,
                           time_format: str | None = None) -> str | None:
        """Every screenshot (palette -> Screenshot, which calls this directly, or the screenshot action): written
        here, at once, and the toast says where. With a recorder it goes beside the journal and is entered in
        it, so that `stacktop export` links it; else into `path`, the downloads folder or the current one.
        Not Textual's delivery: it writes in a thread and toasts its own verdict about its own file only."""
        filename = filename or f"stacktop-{time.strftime('%Y%m%dT%H%M%SZ', time.gmtime())}.svg"
        if path is not None:
            folder = Path(path).expanduser()
        elif self.recorder is not None:
            folder = self.recorder.journal.directory
        else:
            from textual.app import user_downloads_path

            downloads = user_downloads_path()
            folder = downloads if downloads.is_dir() else Path.cwd()
        target = (folder / filename).resolve()
        try:
            target.write_text(self.export_screenshot(), encoding="utf-8")
        except OSError as exc:
            self.notify(f"screenshot not saved to {target}: {exc.strerror}", title="Screenshot", severity="error")
            return None
        if self.recorder is not None:
            self.recorder.screenshot(str(target))
        self.notify(f"screenshot saved to {target}", title="Screenshot", timeout=4)
        return str(target)

