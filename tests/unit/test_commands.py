from __future__ import annotations

import pytest

from tui import commands


def test_parse_with_args_and_aliases() -> None:
    cmd, args, name = commands.parse(":host compute-01")
    assert cmd.name == "host" and args == ["compute-01"] and name == "host"
    cmd, args, name = commands.parse("svc")
    assert cmd.name == "services" and args == [] and name == "svc"


@pytest.mark.parametrize(("line", "message"), [
    (":", "empty command - type :help for the list"),
    (":hots x", "unknown command :hots - did you mean :host?"),
    (":zzz", "unknown command :zzz - type :help for the list"),
    (":host", ":host NAME: missing NAME"),
])
def test_parse_errors_are_one_line(line: str, message: str) -> None:
    with pytest.raises(commands.CommandError) as err:
        commands.parse(line)
    assert str(err.value) == message


def test_complete_and_history() -> None:
    assert commands.complete("se")[:2] == ["services", "server"]
    assert commands.complete(":gal") == ["galera"]
    h = commands.History()
    for line in ("services", "host a", "host a", "galera"):
        h.add(line)
    assert h.items == ["services", "host a", "galera"]
    assert h.prev() == "galera" and h.prev() == "host a" and h.next() == "galera" and h.next() == ""


def test_every_command_has_its_handler_and_every_handler_its_command() -> None:
    from tui import command_handlers

    for command in commands.COMMANDS:
        assert callable(command_handlers.handler(command)), command.name
    assert set(command_handlers.HANDLERS) == {c.name for c in commands.COMMANDS}
