"""What a terminal shows: the bytes a PtyApp received, fed in order into a pyte virtual screen.

A key's effect is judged on the screen, not on the byte stream: a frame may reach the pty in several reads,
write a line in pieces (only the cells that changed), or move the cursor between words, so a pattern over the
bytes can miss a frame that shows the effect or match one that does not yet. The screen is what a person
sees; the time of a key's effect is the arrival of the read after which the screen first shows it.
"""

from __future__ import annotations

import itertools
import re
import time
from collections.abc import Sequence

import pyte

from bench.ptyapp import PtyApp

_BOX = re.compile("[\u2500-\u259f]")  # box lines, blocks (scroll bars): pane furniture, not text
_SPACES = re.compile(r"\s+")


def _flat(text: str) -> str:
    return _SPACES.sub(" ", _BOX.sub(" ", text)).strip()


def pane_texts(lines: Sequence[str]) -> list[str]:
    """The text between two vertical pane borders (│), joined down the rows that share both borders' columns:
    a line that wraps inside a pane reads as one, whatever the pane beside it shows on the same rows."""
    panes: dict[tuple[int, int], list[str]] = {}
    for line in lines:
        borders = [i for i, ch in enumerate(line) if ch == "│"]
        for left, right in itertools.pairwise(borders):
            panes.setdefault((left, right), []).append(line[left + 1 : right])
    return [_flat(" ".join(parts)) for parts in panes.values()]


class PtyScreen:
    """A pyte screen of the app's size that follows everything the app wrote, read by read."""

    def __init__(self, app: PtyApp) -> None:
        self.app = app
        self.screen = pyte.Screen(app.cols, app.rows)
        self.stream = pyte.ByteStream(self.screen)
        self.fed = 0  # reads fed so far (an index into app.chunks)
        self.closed = False
        # the last wait's effect appeared in the read that took away what `covers` matched (a toast over it):
        # it was painted under the toast earlier, when is not known
        self.uncovered = False

    def text(self) -> str:
        """The screen's lines, box lines out and spaces collapsed: one line of text per terminal row; then,
        after an empty line, each pane's text on one line (see pane_texts)."""
        lines = self.screen.display
        rows = "\n".join(_flat(line) for line in lines)
        return rows + "\n\n" + "\n".join(pane_texts(lines))

    def shows(self, patterns: Sequence[re.Pattern[str]], gone: Sequence[re.Pattern[str]] = ()) -> bool:
        """Every one of `patterns` found in the screen's text, and none of `gone`."""
        text = self.text()
        return all(p.search(text) is not None for p in patterns) and not any(p.search(text) for p in gone)

    def feed_until(self, index: int) -> None:
        """Feed the reads before `index` (what the screen showed when read `index` arrived)."""
        with self.app._lock:
            new = self.app.chunks[self.fed : index]
        for _, data in new:
            self.fed += 1
            if not data:
                self.closed = True
                return
            self.stream.feed(data)

    def wait(
        self,
        since: int,
        patterns: Sequence[re.Pattern[str]],
        timeout: float,
        gone: Sequence[re.Pattern[str]] = (),
        covers: re.Pattern[str] | None = None,
    ) -> float | None:
        """Arrival time of the first read (index >= since) after which the screen shows every one of
        `patterns` and none of `gone`; None when it does not within `timeout` or the app closed the terminal.
        The reads before `since` are fed first (the screen as it was when the key was sent). covers: what
        shows while something lies over the screen (a toast); see `uncovered`."""
        self.feed_until(since)
        self.uncovered = False
        covered = False  # seen over the screen after the key, before its effect
        deadline = time.perf_counter() + timeout
        while not self.closed:
            with self.app._cond:
                if self.fed >= len(self.app.chunks):
                    left = deadline - time.perf_counter()
                    if left <= 0:
                        return None
                    self.app._cond.wait(min(left, 0.5))
                new = self.app.chunks[self.fed :]
            for t, data in new:
                self.fed += 1
                if not data:
                    self.closed = True
                    return None
                self.stream.feed(data)
                if self.shows(patterns, gone):
                    self.uncovered = covered and covers is not None and covers.search(self.text()) is None
                    return t
                covered = covers is not None and covers.search(self.text()) is not None
            if time.perf_counter() > deadline:
                return None
        return None
