"""k9s-style command mode (`:`): the command table, parsing and completion. No Textual here.

This is what a command is (name, help, arguments, aliases); what it does is bound in the app layer
(tui.command_handlers.HANDLERS: name -> handler(app, args, name), called on the UI loop, never blocking: I/O
starts a worker). Adding a command = one line here plus its handler in the module that owns the view, named in
HANDLERS, so app.py does not grow with every feature.
"""

from __future__ import annotations

import difflib
from dataclasses import dataclass

from tui.sources import FINDINGS_COMMANDS, SOURCES


@dataclass(frozen=True)
class Command:
    name: str
    help: str
    args: str = ""  # usage of the arguments, e.g. "NAME"; empty = none
    aliases: tuple[str, ...] = ()
    live: bool = False  # reads the cloud itself (not the dashboard's last reads): not in a replay

    @property
    def usage(self) -> str:
        return f":{self.name} {self.args}".rstrip()


COMMANDS: list[Command] = [
    *(Command(s.commands[0], f"focus the {s.title} pane", aliases=s.commands[1:]) for s in SOURCES if s.commands),
    Command(FINDINGS_COMMANDS[0], "focus the findings pane", aliases=FINDINGS_COMMANDS[1:]),
    Command("host", "open a host's drill-down", args="NAME"),
    Command("server", "open an instance's screen", args="ID|NAME"),
    Command("audit", "stale-allocation audit of every placement provider", live=True),
    Command("fit", "why won't FLAVOR fit, host by host", args="FLAVOR [TRAIT...]", live=True),
    Command("trace-boot", "exercise: task_state sequence of SERVER (or the next new one) with owners",
            args="[SERVER]", live=True),
    Command("trace-down", "exercise: how long until the API reports nova-compute on HOST down", args="HOST",
            live=True),
    Command("trace-request", "exercise: follow REQUEST_ID through nova's events and the configured logs",
            args="REQUEST_ID", live=True),
    Command("cloud", "switch to cloud NAME (c cycles)", args="NAME"),
    Command("silence", "silence the selected finding for DURATION (30m, 2h, 1d; default 1h; X lifts it)",
            args="[DURATION]"),
    Command("help", "show every key and command"),
    Command("q", "quit stacktop", aliases=("quit",)),
]


class CommandError(ValueError):
    """A line that is not a valid command; str() is the one line shown to the user."""


def available(replaying: bool = False) -> list[Command]:
    """The commands that work here: in a replay, none that reads the cloud itself."""
    return [c for c in COMMANDS if not (replaying and c.live)]


def find(name: str) -> Command | None:
    for command in COMMANDS:
        if name == command.name or name in command.aliases:
            return command
    return None


def parse(line: str, replaying: bool = False) -> tuple[Command, list[str], str]:
    """':host compute-01' -> (Command host, ['compute-01'], 'host'). replaying: a command that reads the cloud
    itself is refused (a replay reads nothing live)."""
    words = line.strip().lstrip(":").split()
    if not words:
        raise CommandError("empty command - type :help for the list")
    command = find(words[0])
    if command is None:
        near = complete(words[0]) or difflib.get_close_matches(words[0], [c.name for c in COMMANDS], n=1)
        hint = f"did you mean :{near[0]}?" if near else "type :help for the list"
        raise CommandError(f"unknown command :{words[0]} - {hint}")
    if replaying and command.live:
        raise CommandError(f":{command.name} reads the cloud itself: not in a replay (only in a live session)")
    if command.args and not command.args.startswith("[") and len(words) < 2:  # "[X]": optional
        raise CommandError(f"{command.usage}: missing {command.args}")
    return command, words[1:], words[0]


def complete(prefix: str, replaying: bool = False) -> list[str]:
    """Command names (not aliases) starting with prefix, then those containing it (in a replay, those that work
    there)."""
    prefix = prefix.lstrip(":").lower()
    names = [c.name for c in available(replaying)]
    starts = [n for n in names if n.startswith(prefix)]
    return starts + [n for n in names if prefix in n and n not in starts]


class History:
    """Previously run command lines, newest last; prev()/next() walk it like a shell."""

    def __init__(self, limit: int = 100) -> None:
        self.items: list[str] = []
        self.limit = limit
        self.cursor = 0

    def add(self, line: str) -> None:
        if line and (not self.items or self.items[-1] != line):
            self.items.append(line)
            del self.items[: -self.limit]
        self.cursor = len(self.items)

    def prev(self) -> str | None:
        if not self.items:
            return None
        self.cursor = max(0, self.cursor - 1)
        return self.items[self.cursor]

    def next(self) -> str:
        self.cursor = min(len(self.items), self.cursor + 1)
        return self.items[self.cursor] if self.cursor < len(self.items) else ""
