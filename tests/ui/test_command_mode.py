"""`:` command mode: each command opens its view; history; errors are one line."""

from __future__ import annotations

from tui.app import StacktopApp
from tui.config import Config
from tui.screens.help import HelpScreen
from tui.screens.host import HostScreen


async def test_colon_commands_open_their_views() -> None:
    app = StacktopApp(Config(), collectors=[])
    async with app.run_test(size=(80, 24)) as pilot:
        for line, source in (("galera", "galera"), ("queues", "rabbitmq"), ("findings", "findings"),
                             ("instances", "instances"), ("services", "services")):
            await pilot.press("colon", *line, "enter")
            await pilot.pause()
            active = app.active_pane()
            assert active is not None and source == active.SOURCE, line
        await pilot.press("colon", *"host compute-02", "enter")
        await pilot.pause()
        assert isinstance(app.screen, HostScreen) and app.screen.host == "compute-02"
        await pilot.press("escape")
        await pilot.press("colon", *"help", "enter")
        await pilot.pause()
        assert isinstance(app.screen, HelpScreen)
        await pilot.press("escape")
        await pilot.pause()
        # history: up recalls the last command
        await pilot.press("colon", "up")
        assert app.query_one("#command").value == "help"  # type: ignore[attr-defined]
        await pilot.press("escape")
        # completion: tab extends a unique prefix
        await pilot.press("colon", *"gal", "tab")
        assert app.query_one("#command").value == "galera "  # type: ignore[attr-defined]
        await pilot.press("escape")
        await pilot.press("colon", "q", "enter")
        await pilot.pause()
    assert not app.is_running


async def test_unknown_command_is_a_one_line_warning() -> None:
    app = StacktopApp(Config(), collectors=[])
    async with app.run_test(size=(160, 48)) as pilot:
        assert app.run_command("hots x") is False
        await pilot.pause()
        assert any("did you mean :host?" in str(n.message) for n in app._notifications)
