"""The quiet input thread (tui/widgets/input_driver.py) over a pipe standing in for the terminal: keys and a
lone ESC arrive as Textual's would, it does not wake while nothing comes, and the exit event ends it at once."""

from __future__ import annotations

import contextlib
import os
import threading
import time
from collections.abc import Iterator
from typing import Any

from tui.widgets.input_driver import QuietLinuxDriver, WakingEvent, input_loop, quiet_driver_class


class FakeDriver:
    def __init__(self, fileno: int) -> None:
        self.fileno = fileno
        self._debug = False
        self.exit_event = WakingEvent()
        self.messages: list[Any] = []

    def process_message(self, message: Any) -> None:
        self.messages.append(message)

    def pressed(self) -> list[str]:
        return [getattr(m, "key", "") for m in self.messages]


def wait_for(pred: Any, timeout: float = 5.0) -> bool:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if pred():
            return True
        time.sleep(0.01)
    return False


@contextlib.contextmanager
def input_thread() -> Iterator[tuple[FakeDriver, int, threading.Thread]]:
    """The input loop on a pipe standing in for the terminal: (driver, the pipe's write end, the thread)."""
    read_fd, write_fd = os.pipe()
    driver = FakeDriver(read_fd)
    thread = threading.Thread(target=input_loop, args=(driver,), daemon=True)
    thread.start()
    try:
        yield driver, write_fd, thread
    finally:
        driver.exit_event.set()
        thread.join(timeout=5)
        driver.exit_event.close()
        os.close(read_fd)
        os.close(write_fd)


def test_keys_a_lone_escape_and_a_prompt_exit() -> None:
    with input_thread() as (driver, write_fd, thread):
        os.write(write_fd, b"a\t")
        assert wait_for(lambda: driver.pressed()[:2] == ["a", "tab"]), driver.pressed()
        os.write(write_fd, b"\x1b")  # a lone ESC: a key once the parser's short wait for more is over
        assert wait_for(lambda: "escape" in driver.pressed()), driver.pressed()
        os.write(write_fd, b"\x1b[A")  # an escape sequence: one key, not ESC + text
        assert wait_for(lambda: driver.pressed()[-1:] == ["up"]), driver.pressed()
        t0 = time.monotonic()
        driver.exit_event.set()
        thread.join(timeout=5)
        assert not thread.is_alive() and time.monotonic() - t0 < 1.0, "the exit event wakes the thread at once"


def test_it_sleeps_while_nothing_comes(monkeypatch: Any) -> None:
    """No timeout while the parser holds nothing: Textual's loop woke every 100 ms."""
    import selectors

    waits: list[float | None] = []
    real = selectors.SelectSelector.select

    def select(self: Any, timeout: float | None = None) -> Any:
        waits.append(timeout)
        return real(self, timeout)

    monkeypatch.setattr(selectors.SelectSelector, "select", select)
    with input_thread() as (driver, write_fd, _):
        time.sleep(0.5)
        assert waits == [None], f"one wait with no timeout in 0.5 s, not {len(waits)}"
        os.write(write_fd, b"\x1b")
        assert wait_for(lambda: "escape" in driver.pressed())
        assert any(w is not None and w <= 0.1 for w in waits), "a short wait while the ESC is pending"


def test_a_lone_escape_waits_briefly_unless_escdelay_is_set(monkeypatch: Any) -> None:
    """An ESC that ends what the terminal wrote is the escape key after ESCAPE_KEY_S, not Textual's 100 ms
    (what esc costs on a terminal without the kitty keyboard protocol); ESCDELAY set: Textual's own wait."""
    import selectors

    from tui.widgets.input_driver import ESCAPE_KEY_S, PARSER_TICK_S

    real = selectors.SelectSelector.select

    def waits_for_escape() -> list[float]:
        waits: list[float | None] = []

        def select(self: Any, timeout: float | None = None) -> Any:
            waits.append(timeout)
            return real(self, timeout)

        monkeypatch.setattr(selectors.SelectSelector, "select", select)
        with input_thread() as (driver, write_fd, _):
            os.write(write_fd, b"x\x1b")  # a key and a lone ESC in one read
            assert wait_for(lambda: driver.pressed()[-2:] == ["x", "escape"]), driver.pressed()
            os.write(write_fd, b"\x1b[Z")  # a sequence in one read stays one key
            assert wait_for(lambda: driver.pressed()[-1:] == ["shift+tab"]), driver.pressed()
        monkeypatch.setattr(selectors.SelectSelector, "select", real)
        return [w for w in waits if w is not None][:1]  # the wait for the ESC (not the one at exit)

    monkeypatch.delenv("ESCDELAY", raising=False)
    short = waits_for_escape()
    assert short and short[0] <= ESCAPE_KEY_S, short
    monkeypatch.setenv("ESCDELAY", "100")
    textual = waits_for_escape()
    assert textual and ESCAPE_KEY_S < textual[0] <= PARSER_TICK_S, textual


def test_the_app_uses_it_on_linux_unless_turned_off(monkeypatch: Any) -> None:
    from tui.app import StacktopApp

    assert quiet_driver_class() is QuietLinuxDriver
    monkeypatch.delenv("TEXTUAL_DRIVER", raising=False)
    assert StacktopApp().driver_class is QuietLinuxDriver
    monkeypatch.setenv("STACKTOP_QUIET_INPUT", "0")
    assert StacktopApp().driver_class.__name__ == "LinuxDriver"
