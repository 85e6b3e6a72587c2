"""Command mode and drill-downs: `:` lines run, host, server and finding screens opened."""

from __future__ import annotations

from typing import TYPE_CHECKING

from textual.widgets import Input

from tui.appparts.pieces import command_input_class
from tui.widgets.drilldown import DrillDown

if TYPE_CHECKING:  # these load after the first paint, where they are used
    from tui.commands import History


class CommandsPart:
    """Command mode (`:`), help, and the drill-down screens a command or `enter` opens."""

    @property
    def command_history(self) -> History:
        """The command line's history (up/down), made when the command line first needs it."""
        if self._command_history is None:
            from tui.commands import History

            self._command_history = History()
        return self._command_history

    def action_command(self, prefill: str = "") -> None:
        self._input_lines()
        box = self.screen_stack[0].query_one("#command", command_input_class())
        if len(self.screen_stack) > 1:
            self.pop_screen()
        box.value = prefill
        box.cursor_position = len(prefill)
        self._open_line(box)

    def _command_line_done(self, box: Input) -> None:
        """Enter on the command line: it closes and the command runs; a command that fails opens it again with
        what was typed and the error in the line itself (its top border), for the engineer to fix or esc."""
        line = box.value.strip()
        self._close_line(box)
        self._activate(self.active_index)
        if not line:
            return
        self.command_history.add(line)
        error = self._run_command(line)
        if error is not None and len(self.screen_stack) == 1:
            self.action_command(box.value or line)
            box.show_error(error)
        elif error is not None:
            self.notify(error, severity="warning")

    def run_command(self, line: str) -> bool:
        """Run one command line (`:host compute-01`) from the palette; an error is a notice on the status line."""
        error = self._run_command(line)
        if error is not None:
            self.notify(error, severity="warning")
        return error is None

    def _run_command(self, line: str) -> str | None:
        """Run one command line; its error as one line, or None when it ran."""
        from tui import command_handlers, commands

        try:
            command, args, name = commands.parse(line, replaying=self.replaying)
            command_handlers.handler(command)(self, args, name)
        except commands.CommandError as exc:
            return str(exc)
        return None

    def on_drill_down(self, message: DrillDown) -> None:
        """A pane's `enter`: the host screen, the instance screen (by id, id prefix or name) or a finding's."""
        message.stop()
        if message.target == "host":
            self.open_host(message.name)
        elif message.target == "finding":
            from tui.screens.finding import FindingScreen

            self.push_screen(FindingScreen(message.name))
        else:
            self.open_server(message.name)

    def open_host(self, name: str) -> None:
        from tui.screens.host import HostScreen

        self.push_screen(HostScreen(name))

    def open_server(self, ref: str) -> None:
        """:server ID|NAME - by id, id prefix or exact name among the servers the instances source knows."""
        from tui.screens.instance import InstanceScreen

        snap = getattr(self.observations.get("instances"), "snapshot", None)
        servers = list(getattr(snap, "servers", ()) or ())
        matches = [s for s in servers if s.id == ref] or [s for s in servers if s.name == ref] \
            or [s for s in servers if s.id.startswith(ref)]
        if len(matches) > 1:
            from tui.commands import CommandError

            raise CommandError(f":server {ref}: {len(matches)} servers match - give more of the id")
        self.push_screen(InstanceScreen(matches[0].id if matches else ref))

    def command_choices(self, command: str) -> list[str]:
        """What tab completes after `:command `: clouds, the hosts the dashboard knows, servers' names and ids."""
        if command == "cloud":
            return list(self.clouds)
        if command in ("host", "trace-down"):
            from tui.screens.known_hosts import known_hosts

            return sorted(known_hosts(self))
        if command in ("server", "trace-boot"):
            snap = getattr(self.observations.get("instances"), "snapshot", None)
            servers = list(getattr(snap, "servers", ()) or ())
            return [*(s.name for s in servers if s.name), *(s.id for s in servers)]
        return []

    def action_help(self) -> None:
        from tui.screens.help import HelpScreen

        if not isinstance(self.screen, HelpScreen):
            self.push_screen(HelpScreen(below=self.screen))

