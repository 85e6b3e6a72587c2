"""The `:` command line (completion, history) and the same commands in the palette (ctrl+p)."""

from __future__ import annotations

from typing import Any, ClassVar

from textual.binding import Binding, BindingType
from textual.command import DiscoveryHit, Hit, Hits, Provider
from textual.widgets import Input

from tui import commands
from tui.dashboard import dashboard
from tui.notices import cut
from tui.safetext import escape


class CommandInput(Input):
    DEFAULT_CSS = """
    CommandInput { border-title-color: $text-muted; border-title-align: left; }
    CommandInput.-error { border-title-color: $error; border-title-style: bold; }
    """
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("up", "history_prev", show=False),
        Binding("down", "history_next", show=False),
        Binding("left_square_bracket", "history_prev", show=False),
        Binding("right_square_bracket", "history_next", show=False),
    ]

    def _history(self) -> commands.History:
        return self.app.command_history  # type: ignore[attr-defined, no-any-return]

    def action_history_prev(self) -> None:
        line = self._history().prev()
        if line is not None:
            self.value = line
            self.cursor_position = len(line)

    def action_history_next(self) -> None:
        self.value = self._history().next()
        self.cursor_position = len(self.value)

    def show_error(self, error: str) -> None:
        """A command's error, in the line itself (its top border): what was typed stays, to fix or esc."""
        self._say(error, "-error")

    def _say(self, text: str, kind: str) -> None:
        """One line on the command line's top border (an error, or the candidates of a tab); cleared as the
        line changes."""
        self.border_title = escape(cut(" ".join(text.split()), max((self.size.width or self.app.size.width) - 6, 20)))
        self.set_class(kind == "-error", "-error")
        self._said_for = self.value

    def on_input_changed(self, event: Input.Changed) -> None:
        # a Changed posted before the line was said about (closed, opened again) is stale: its value is gone
        if self.border_title and event.value == self.value != getattr(self, "_said_for", None):
            self.border_title = None
            self.remove_class("-error")

    def complete(self) -> None:
        """Tab: complete the command name (the first word), or its argument from what the dashboard knows
        (commands, hosts, servers, clouds): when unambiguous, or extend the common part; the candidates are
        listed on the line's top border."""
        word, sep, rest = self.value.lstrip(":").partition(" ")
        if sep:
            command = commands.find(word)
            dash = dashboard(self.app)
            choices = None if dash is None else dash.command_choices
            if command is None or " " in rest.strip() or not callable(choices):
                return
            typed = rest.strip()
            options = sorted({c for c in choices(command.name) if c.startswith(typed)})
            prefix = f"{word} "
        else:
            typed = word
            dash = dashboard(self.app)
            replaying = dash is not None and dash.replaying
            options = [name for name in commands.complete(word, replaying) if name.startswith(word)]
            prefix = ""
        if not options:
            self._say(f"no {'command' if not sep else 'choice'} starts with '{typed}'", "-candidates")
            return
        common = options[0]
        for option in options[1:]:
            while not option.startswith(common):
                common = common[:-1]
        self.value = prefix + common + (" " if len(options) == 1 and not prefix else "")
        self.cursor_position = len(self.value)
        if len(options) > 1:
            self._say(f"{len(options)}: " + "  ".join(options), "-candidates")


class StacktopCommands(Provider):
    """Every `:` command in the command palette. Commands taking arguments open the `:` line prefilled."""

    def _run(self, command: commands.Command) -> Any:
        app: Any = self.app
        if command.args:
            return lambda: app.action_command(f"{command.name} ")
        return lambda: app.run_command(command.name)

    def _clouds(self) -> list[tuple[str, str, Any]]:
        """(`:cloud NAME`, help, run) for each cloud of a several-cloud session, as Textual markup (the palette
        parses prompts and help as markup; cloud names come from the config)."""
        app: Any = self.app
        dash = dashboard(app)
        names = list(dash.clouds) if dash is not None else []
        if len(names) < 2:
            return []
        return [(f":cloud {escape(name)}", f"switch to cloud {escape(name)}",
                 lambda name=name: app.run_command(f"cloud {name}")) for name in names]

    def _commands(self) -> list[commands.Command]:
        dash = dashboard(self.app)
        return commands.available(dash is not None and dash.replaying)

    async def discover(self) -> Hits:
        for command in self._commands():
            yield DiscoveryHit(command.usage, self._run(command), help=command.help)
        for text, help_text, run in self._clouds():
            yield DiscoveryHit(text, run, help=help_text)

    async def search(self, query: str) -> Hits:
        matcher = self.matcher(query)
        for command in self._commands():
            score = matcher.match(f"{command.usage} {command.help}")
            if score > 0:
                yield Hit(score, matcher.highlight(command.usage), self._run(command), help=command.help)
        for text, help_text, run in self._clouds():
            score = matcher.match(f"{text} {help_text}")
            if score > 0:
                yield Hit(score, matcher.highlight(text), run, help=help_text)
