"""The small pieces the dashboard app and its parts share: the message a runner's observation travels in, the
set-up's result (LateStart) and the thread it runs in, the top bar, and the command line's classes (loaded
after the first paint)."""

from __future__ import annotations

import asyncio
import contextlib
import threading
from collections.abc import Callable
from typing import TYPE_CHECKING

from textual.message import Message
from textual.widgets import Static

from tui.config import Config
from tui.models.observation import Observation

if TYPE_CHECKING:
    from textual.command import Provider

    from tui.widgets.command_input import CommandInput


class ObservationMessage(Message):
    """A runner's latest observation (of `cloud`). A slow UI drops older ones of the same source and cloud."""

    def __init__(self, observation: Observation, cloud: str | None = None) -> None:
        super().__init__()
        self.observation = observation
        self.cloud = cloud

    def can_replace(self, message: Message) -> bool:
        return (isinstance(message, ObservationMessage) and message.cloud == self.cloud
                and message.observation.source == self.observation.source)


class LateStart:
    """What a set-up run after the first frame hands the app before its sources start (`stacktop --demo`: its
    simulated clouds): the config to poll and the Galera connection seam of each cloud. (A plain class: a
    dataclass is ~1 ms of code generation at import, before the first frame.)"""

    __slots__ = ("config", "galera_connectors")

    def __init__(self, config: Config, galera_connectors: dict[str, object] | None = None) -> None:
        self.config = config
        self.galera_connectors = dict(galera_connectors or {})


def in_thread(fn: Callable[[], LateStart]) -> asyncio.Future[LateStart]:
    """fn() in a daemon thread (a quit does not wait for it), its result or exception on this loop's future."""
    loop = asyncio.get_running_loop()
    done: asyncio.Future[LateStart] = loop.create_future()

    def settle(result: LateStart | None, error: BaseException | None) -> None:
        if done.done():
            return
        if error is not None:
            done.set_exception(error)
        else:
            done.set_result(result)  # type: ignore[arg-type]

    def run() -> None:
        result, error = None, None
        try:
            result = fn()
        except Exception as exc:
            error = exc
        with contextlib.suppress(RuntimeError):  # the loop is closed: the app has quit meanwhile
            loop.call_soon_threadsafe(settle, result, error)

    threading.Thread(target=run, name="stacktop-setup", daemon=True).start()
    return done


def stacktop_commands() -> type[Provider]:
    """The palette's stacktop commands, loaded when the palette first opens (App.COMMANDS takes a callable)."""
    from tui.widgets.command_input import StacktopCommands

    return StacktopCommands


def command_input_class() -> type[CommandInput]:
    """The command line's class, loaded with the lines after the first paint (or when a line is asked for)."""
    from tui.widgets.command_input import CommandInput

    return CommandInput


class TopBar(Static):
    DEFAULT_CSS = "TopBar { height: 1; background: $panel; color: $text; padding: 0 1; }"
