"""Handlers of the basic commands (the UI layer: these receive the running app)."""

from __future__ import annotations

from typing import Any

from tui.sources import pane_for_command


def show_pane(app: Any, args: list[str], name: str = "") -> None:
    app.show_source(pane_for_command()[name])


def open_host(app: Any, args: list[str], name: str = "") -> None:
    from tui.screens.host import HostScreen
    from tui.screens.known_hosts import unknown_host

    problem = unknown_host(app, args[0])
    if problem is not None:
        app.notify(f":host {args[0]}: {problem}", severity="warning")
        return
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
        app.notify(f":silence {exc}", severity="warning")
        return
    app.silence_selected(seconds)
