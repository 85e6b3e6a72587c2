"""bench.ptyscreen: a key's effect is read on a virtual screen of what the app wrote, so a line written in
pieces counts once whole, a line wrapped inside its pane reads as one, and an effect that only showed when a
toast over it went away is told apart (its paint time is not known)."""

from __future__ import annotations

import re
import threading
from typing import Any

from bench.ptyscreen import PtyScreen, pane_texts


class Written:
    """What an app wrote, read by read (the PtyApp fields PtyScreen reads)."""

    def __init__(self, reads: list[bytes], cols: int = 40, rows: int = 6) -> None:
        self.cols, self.rows = cols, rows
        self._lock = threading.Lock()
        self._cond = threading.Condition(self._lock)
        self.chunks: list[tuple[float, bytes]] = [(float(i), data) for i, data in enumerate(reads)]


def at(row: int, col: int, text: str) -> bytes:
    return f"\x1b[{row};{col}H{text}".encode()


def screen_of(reads: list[bytes], **size: Any) -> PtyScreen:
    return PtyScreen(Written(reads, **size))  # type: ignore[arg-type]


def test_an_effect_written_in_pieces_counts_at_the_read_that_completes_it() -> None:
    reads = [at(1, 1, "sort: default"), at(1, 7, "name ▲ "), at(2, 1, "showing all 10,"), at(2, 16, "000 (a")]
    screen = screen_of(reads)
    assert screen.wait(1, [re.compile("sort: name ▲")], timeout=1) == 1.0
    assert screen.wait(2, [re.compile(r"showing all 10,000 \(a")], timeout=1) == 3.0
    assert screen.wait(4, [re.compile("nothing")], timeout=0.05) is None


def test_an_effect_already_on_screen_before_the_key_is_not_taken_for_its_effect() -> None:
    screen = screen_of([at(1, 1, "sort: name ▲"), at(3, 1, "x")])
    screen.feed_until(1)
    assert screen.shows([re.compile("sort: name ▲")])
    screen.feed_until(2)
    assert screen.shows([re.compile("x")])
    assert screen.shows([re.compile("x")], gone=[re.compile("sort: name")]) is False


def test_a_line_wrapped_inside_its_pane_reads_whole_beside_another_pane() -> None:
    lines = [
        "│services row 1 │202 servers · all 202│",
        "│services row 2 │shown (a: attention) │",
        "╰───────────────┴─────────────────────╯",
    ]
    texts = pane_texts(lines)
    assert "202 servers · all 202 shown (a: attention)" in texts
    assert "services row 1 services row 2" in texts


def test_an_effect_uncovered_by_a_toast_going_away_is_told_apart() -> None:
    toast = re.compile("new critical")
    effect = [re.compile("showing all")]
    under = [at(1, 1, "new critical"), at(1, 1, "showing all 10 ")]  # the toast up after the key, then gone
    screen = screen_of(under)
    assert screen.wait(0, effect, timeout=1, covers=toast) == 1.0 and screen.uncovered
    plain = screen_of([at(1, 1, "showing all 10 "), at(2, 1, "new critical")])
    assert plain.wait(0, effect, timeout=1, covers=toast) == 0.0 and not plain.uncovered
    # a toast already up when the key was sent, gone in the read that shows the effect (a new screen took it
    # away): the effect's time is known
    before = screen_of([at(1, 1, "new critical"), at(1, 1, "showing all 10 ")])
    assert before.wait(1, effect, timeout=1, covers=toast) == 1.0 and not before.uncovered
