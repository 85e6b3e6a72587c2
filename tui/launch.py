"""The `stacktop` command (and `python -m tui`): no automatic garbage collection from its first import on.

Importing Textual and the dashboard builds ~60,000 long-lived objects (modules, classes, styles); automatic
collections would walk them again and again before the first frame (~10 ms of CPU on a 2-core host). So the
hold of tui.gcpolicy starts here, before tui.cli is imported: the dashboard gives the collections back at its
first frame, every other command (snapshot, export, init, replay) as soon as the command line is read.
"""

from __future__ import annotations

from tui import gcpolicy


def main() -> int:
    gcpolicy.hold_until_first_frame()
    try:
        from tui.cli import main as run

        return run()
    finally:
        gcpolicy.end_hold()
