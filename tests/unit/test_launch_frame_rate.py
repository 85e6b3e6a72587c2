"""The `stacktop` command lets Textual draw up to 240 frames a second (tui.launch): a key whose effect lands in
a second frame (the footer's sort, the breadcrumb) shows 4-8 ms after the first instead of 17-33 ms. A
TEXTUAL_FPS the user set is kept."""

from __future__ import annotations

from tests.fresh_python import fresh_python

READ_RATE = (
    "import os, sys\n"
    "{setup}\n"
    "sys.argv = ['stacktop', '--version']\n"
    "from tui import launch\n"
    "try:\n"
    "    launch.main()\n"
    "except SystemExit:\n"
    "    pass\n"
    "import textual.constants\n"
    "print('rate', textual.constants.MAX_FPS)\n"
)


def test_the_command_draws_up_to_240_frames_a_second() -> None:
    out = fresh_python(READ_RATE.format(setup="os.environ.pop('TEXTUAL_FPS', None)"))
    assert "rate 240" in out


def test_a_frame_rate_the_user_set_is_kept() -> None:
    out = fresh_python(READ_RATE.format(setup="os.environ['TEXTUAL_FPS'] = '30'"))
    assert "rate 30" in out
