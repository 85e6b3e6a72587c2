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


# ---- read or write: `y` offers a diagnostic (read-only) command first and marks a command that changes state ----
OPENSTACK_WRITES = frozenset({
    "set", "unset", "delete", "create", "add", "remove", "reboot", "start", "stop", "migrate", "evacuate",
    "rebuild", "resize", "lock", "unlock", "pause", "unpause", "suspend", "resume", "shelve", "unshelve",
    "abort", "confirm", "revert", "purge", "restore", "rescue", "unrescue", "force"})
OPENSTACK_READS = frozenset({"list", "show", "issue", "get", "check"})
READ_ONLY_PROGRAMS = frozenset({"grep", "virsh", "rabbitmq-diagnostics", "journalctl", "ss", "ping", "curl"})
SYSTEMCTL_READS = frozenset({"status", "is-active", "is-failed", "is-enabled", "show", "list-units", "cat"})
RABBITMQCTL_READS = frozenset({"status", "cluster_status", "environment", "report", "node_health_check"})
OPTIONS_WITH_VALUE = frozenset({"-n", "--node", "--os-cloud", "--os-region-name"})


def _verbs(argv: Sequence[str]) -> list[str]:
    """The words after the program, options (and the values of those that take one) left out."""
    words, skip = [], False
    for word in argv[1:]:
        if skip:
            skip = False
        elif word == "--":
            break
        elif word.startswith("-"):
            skip = word in OPTIONS_WITH_VALUE
        else:
            words.append(word)
    return words


def is_write(argv: Sequence[str]) -> bool:
    """Whether the command changes state (a service enabled or disabled, an app started, a node revived);
    a program it does not know counts as a write: only known reads are offered as diagnostics."""
    if not argv:
        return False
    program, verbs = argv[0], _verbs(argv)
    if program in READ_ONLY_PROGRAMS:
        return False
    if program == "openstack":  # `openstack RESOURCE [RESOURCE] VERB [OPERAND...]`: the first verb decides
        verb = next((w for w in verbs[:4] if w in OPENSTACK_WRITES or w in OPENSTACK_READS), None)
        return verb is None or verb in OPENSTACK_WRITES
    if program == "systemctl":
        return not verbs or verbs[0] not in SYSTEMCTL_READS
    if program == "rabbitmqctl":
        return not verbs or not (verbs[0] in RABBITMQCTL_READS or verbs[0].startswith("list_"))
    if program == "rabbitmq-queues":
        return not verbs or not (verbs[0].startswith(("check_", "list")) or verbs[0] == "quorum_status")
    if program == "nova-manage":  # `nova-manage CATEGORY ACTION`; `placement audit` only reports without --delete
        action = verbs[1] if len(verbs) > 1 else ""
        return not (action.startswith(("list", "show", "verify", "check"))
                    or (action == "audit" and "--delete" not in argv))
    return True


def _operand(argv: Sequence[str], index: int) -> str | None:
    operands = [w for w in argv if not w.startswith("-")]
    return operands[index] if len(operands) > abs(index) else None


def diagnostic_for(argv: Sequence[str]) -> tuple[str, ...] | None:
    """The read-only command that shows what a write command would change (to run first), if one is known."""
    if tuple(argv[:4]) == ("openstack", "compute", "service", "set"):
        host, binary = _operand(argv, -2), _operand(argv, -1)
        if host and binary:
            return command("openstack", "compute", "service", "list", "--host", host, "--service", binary)
    if argv and argv[0] in ("rabbitmqctl", "rabbitmq-upgrade") and "-n" in argv:
        at = list(argv).index("-n") + 1
        if at < len(argv):
            return command("rabbitmq-diagnostics", "-n", argv[at], "status")
    return None
