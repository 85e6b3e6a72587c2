"""The shell commands findings name, built from their words (an argv), never cut out of prose.

A rule that names a command gives the first one its next step names as `evidence["command"]` (a list of
words) and writes the same command into the prose with `shell_text`, so the screen shows exactly what `y`
copies. Every word is quoted with `shlex.quote`: a host, node, server or request id from the cloud, the broker
or a journal is one argument when the command is pasted into a POSIX shell, and nothing in it runs. An
operand that starts with `-` comes after `--`, so the command does not take it for an option.

A command with a control or invisible character in a word is not copyable (`copyable` gives None): stripping
the character would name another host, and keeping it would paste a control into the shell.
"""

from __future__ import annotations

import shlex
from collections.abc import Sequence

from tui.safetext import has_unsafe

MAX_WORDS = 64
MAX_CHARS = 4096


def command(*words: str, operands: Sequence[object] = ()) -> tuple[str, ...]:
    """The argv: `words` (the program, its subcommand and options), then `operands` (names from outside),
    after `--` when one of them starts with `-`."""
    ops = tuple(str(o) for o in operands)
    return (*words, *(("--",) if any(o.startswith("-") for o in ops) else ()), *ops)


def shell_text(argv: Sequence[str]) -> str:
    """The argv as one line a POSIX shell splits back into exactly these words."""
    return " ".join(shlex.quote(word) for word in argv)


def argv_of(value: object) -> tuple[str, ...] | None:
    """A command as a rule gives it (a list of strings; a journal's JSON gives a list), else None."""
    if not isinstance(value, (list, tuple)) or not value or len(value) > MAX_WORDS:
        return None
    if not all(isinstance(word, str) for word in value):
        return None
    return tuple(value)


def copyable(argv: Sequence[str] | None) -> str | None:
    """What `y` copies: the quoted command, or None when there is none or a word holds a control or invisible
    character (or the command is absurdly long)."""
    if not argv or any(has_unsafe(word) for word in argv):
        return None
    text = shell_text(argv)
    return text if len(text) <= MAX_CHARS else None
