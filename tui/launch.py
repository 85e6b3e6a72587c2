"""The `stacktop` command (and `python -m tui`): no automatic garbage collection from its first import on.

Importing Textual and the dashboard builds ~60,000 long-lived objects (modules, classes, styles); automatic
collections would walk them again and again before the first frame (~10 ms of CPU on a 2-core host). So the
hold of tui.gcpolicy starts here, before tui.cli is imported: the dashboard gives the collections back at its
first frame, every other command (snapshot, export, init, replay) as soon as the command line is read.

Textual draws at most 60 frames a second by default, and after a frame that took long it waits one to two
frame periods before the next. A key's effect often lands in two frames (the table first; the footer's
`sort:` or the breadcrumb laid out again in the next), so the second one came 17-33 ms after the first. At
240 frames a second that wait is 4-8 ms; frames are still drawn only when something changed. TEXTUAL_FPS,
when set, is left as it is.
"""

from __future__ import annotations

import os

from tui import gcpolicy

FRAMES_PER_SECOND = 240


def set_frame_rate() -> None:
    """Textual's frame rate (read when textual.constants is first imported), unless TEXTUAL_FPS is set."""
    os.environ.setdefault("TEXTUAL_FPS", str(FRAMES_PER_SECOND))


def main() -> int:
    set_frame_rate()
    gcpolicy.hold_until_first_frame()
    try:
        from tui.cli import main as run

        return run()
    finally:
        gcpolicy.end_hold()
