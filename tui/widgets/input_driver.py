"""Textual's Linux driver, without waking ten times a second while no key comes.

Textual's input thread waits for the terminal with `select(0.1)` in a loop, waking every 100 ms (taking the
GIL from the collectors' threads) to see whether the app is exiting and whether a lone ESC has waited long
enough to be a key: about a fifth of the idle dashboard's CPU (docs/performance.md, "Idle"). QuietLinuxDriver's
input thread waits with no timeout while the parser holds nothing, and until the parser's own deadline when it
does; the exit event also writes to a pipe the thread waits on, so quitting (or suspending) does not wait
either.

The escape key: a terminal without the kitty keyboard protocol sends it as a lone ESC, the byte every escape
sequence (an arrow, shift+tab, a mouse event) begins with, and Textual waits 100 ms (`ESCDELAY`) for the rest
of a sequence before taking it for the key: a tenth of a second on every esc, which the dashboard uses to
clear a filter and to go back. A terminal writes a sequence in one go, so its bytes arrive in the same read:
an ESC that ends what was read is the key unless more comes within ESCAPE_KEY_S, tmux's escape-time (10 ms by
default since 3.5). Inside tmux, where the dashboard lives, tmux has already waited that long and passes on
whole sequences; a terminal that splits one (a slow serial line) wants ESCDELAY: with ESCDELAY set in the
environment, Textual's own wait of that many milliseconds applies instead.

Everything else is Textual's LinuxDriver (8.2.x): `input_loop` below is its `run_input_thread` with the
timeout and the pipe changed. `quiet_driver_class()` returns None on a Textual whose driver is not shaped
as expected, and the app then keeps Textual's own; the private items used are also listed and checked in
tui.widgets.textual_private.
"""

from __future__ import annotations

import contextlib
import os
import selectors
from codecs import getincrementaldecoder
from threading import Event
from typing import Any

from textual._loop import loop_last
from textual._time import get_time
from textual._xterm_parser import XTermParser
from textual.drivers.linux_driver import LinuxDriver

PARSER_TICK_S = 0.1  # Textual's own wait while an escape sequence is pending
ESCAPE_KEY_S = 0.010  # a lone ESC at the end of a read is the escape key once this passed with nothing more


def escape_key_wait() -> float | None:
    """How long a lone ESC that ends a read waits for more; None: Textual's wait (ESCDELAY set by the user)."""
    return None if os.environ.get("ESCDELAY") else ESCAPE_KEY_S


class WakingEvent(Event):
    """A threading.Event whose set() also makes a pipe readable (the input thread waits on it)."""

    def __init__(self) -> None:
        super().__init__()
        self.read_fd, self._write_fd = os.pipe()
        os.set_blocking(self.read_fd, False)
        os.set_blocking(self._write_fd, False)

    def set(self) -> None:
        super().set()
        with contextlib.suppress(OSError):  # a full pipe is awake already
            os.write(self._write_fd, b"x")

    def drain(self) -> None:
        with contextlib.suppress(OSError):
            while os.read(self.read_fd, 512):
                pass

    def close(self) -> None:
        for fd in (self.read_fd, self._write_fd):
            with contextlib.suppress(OSError):
                os.close(fd)


class QuietLinuxDriver(LinuxDriver):
    """LinuxDriver whose input thread sleeps until a key, an escape deadline or the exit event."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.exit_event = WakingEvent()

    def run_input_thread(self) -> None:
        input_loop(self)

    def close(self) -> None:
        super().close()
        event = self.exit_event
        if isinstance(event, WakingEvent) and (self._key_thread is None or not self._key_thread.is_alive()):
            event.close()


def input_loop(driver: Any) -> None:
    """LinuxDriver.run_input_thread (Textual 8.2), waiting without a timeout while nothing is pending."""
    wake: WakingEvent = driver.exit_event
    selector = selectors.SelectSelector()
    fileno = driver.fileno
    selector.register(fileno, selectors.EVENT_READ)
    selector.register(wake.read_fd, selectors.EVENT_READ)
    parser = XTermParser(driver._debug)
    feed, tick = parser.feed, parser.tick
    decode = getincrementaldecoder("utf-8")().decode
    escape_wait = escape_key_wait()
    lone_escape: list[float | None] = [None]  # when a read that ended with an ESC was fed to the parser

    def due() -> float | None:
        deadline = getattr(parser, "_timeout_time", 0.0)  # set while an escape sequence waits for more
        if deadline is None or lone_escape[0] is None or escape_wait is None:
            return deadline
        return min(deadline, lone_escape[0] + escape_wait)

    def timeout() -> float | None:
        deadline = due()
        if deadline is None:
            return None
        return max(0.0, min(PARSER_TICK_S, deadline - get_time()))

    def process(events: list[tuple[selectors.SelectorKey, int]], final: bool = False) -> None:
        keys = []
        for key, mask in events:
            if key.fd == wake.read_fd:
                wake.drain()
            elif mask & selectors.EVENT_READ:
                keys.append((key, mask))
        for last, _ in loop_last(keys):
            data = decode(os.read(fileno, 1024 * 4), final=final and last)
            if not data:  # stdin piped and closed
                break
            for event in feed(data):
                driver.process_message(event)
            lone_escape[0] = get_time() if data.endswith("\x1b") else None
        deadline = due()
        if lone_escape[0] is not None and deadline is not None and get_time() >= deadline:
            parser._timeout_time = deadline  # the ESC waited long enough: the parser's tick makes it the key
            lone_escape[0] = None
        for event in tick():
            driver.process_message(event)

    try:
        while not wake.is_set():
            process(selector.select(timeout()))
        selector.unregister(fileno)
        process(selector.select(PARSER_TICK_S), final=True)
    finally:
        selector.close()


def quiet_driver_class() -> type[LinuxDriver] | None:
    """QuietLinuxDriver when Textual's LinuxDriver is the one it was written against, else None."""
    needed = ("run_input_thread", "disable_input", "process_message")
    if not all(hasattr(LinuxDriver, name) for name in needed):
        return None
    parser = XTermParser(False)
    if not hasattr(parser, "_timeout_time") or not hasattr(parser, "tick"):
        return None
    return QuietLinuxDriver
