"""What each `:` command does (tui.commands says what it is): HANDLERS binds every command name to its handler,
called as handler(app, args, name) on the UI loop. The basic ones are here; a view's own commands live in its
screen module and are imported where they run, so start-up does not load every screen."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from tui import commands
from tui.sources import FINDINGS_COMMANDS, SOURCES, pane_for_command

Handler = Callable[[Any, list[str], str], None]


def show_pane(app: Any, args: list[str], name: str = "") -> None:
    app.show_source(pane_for_command()[name])


def open_host(app: Any, args: list[str], name: str = "") -> None:
    from tui.screens.host import HostScreen
    from tui.screens.known_hosts import unknown_host

    problem = unknown_host(app, args[0])
    if problem is not None:
        raise commands.CommandError(f":host {args[0]}: {problem}")
    app.push_screen(HostScreen(args[0]))


def open_server(app: Any, args: list[str], name: str = "") -> None:
    app.open_server(args[0])


def switch_cloud(app: Any, args: list[str], name: str = "") -> None:
    app.cloud_command(args[0])


def show_help(app: Any, args: list[str], name: str = "") -> None:
    app.action_help()


def quit_app(app: Any, args: list[str], name: str = "") -> None:
    app.exit()


def silence(app: Any, args: list[str], name: str = "") -> None:
    from tui.models.silence import DEFAULT_S, parse_duration

    try:
        seconds = parse_duration(args[0]) if args else DEFAULT_S
    except ValueError as exc:
        raise commands.CommandError(f":silence {exc}") from None
    app.silence_selected(seconds)


def open_audit(app: Any, args: list[str], name: str = "") -> None:
    from tui.screens.audit import open_audit as run

    run(app, args, name)


def open_fit(app: Any, args: list[str], name: str = "") -> None:
    from tui.screens.fit import open_fit as run

    run(app, args, name)


def trace_boot(app: Any, args: list[str], name: str = "") -> None:
    from tui.screens.trace import trace_boot as run

    run(app, args, name)


def trace_down(app: Any, args: list[str], name: str = "") -> None:
    from tui.screens.trace import trace_down as run

    run(app, args, name)


def trace_request(app: Any, args: list[str], name: str = "") -> None:
    from tui.screens.trace import trace_request as run

    run(app, args, name)


HANDLERS: dict[str, Handler] = {
    **{s.commands[0]: show_pane for s in SOURCES if s.commands},
    FINDINGS_COMMANDS[0]: show_pane,
    "host": open_host,
    "server": open_server,
    "audit": open_audit,
    "fit": open_fit,
    "trace-boot": trace_boot,
    "trace-down": trace_down,
    "trace-request": trace_request,
    "cloud": switch_cloud,
    "silence": silence,
    "help": show_help,
    "q": quit_app,
}


def handler(command: commands.Command) -> Handler:
    """The handler of a command of tui.commands.COMMANDS (each has one: tests/unit/test_commands.py)."""
    return HANDLERS[command.name]
