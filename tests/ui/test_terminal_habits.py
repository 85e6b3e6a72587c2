"""What a k9s / htop user expects in the first hour: notices on one status line (a burst of criticals is one
summary), a `:` command's error and tab's candidates in the command line itself, j/k, a help that scrolls at
once and lists the screen's own keys, q back / Q quit, ctrl+c in plain words, a clock and times or ages (`t`),
the palette's theme remembered, esc closing the Keys panel."""

from __future__ import annotations

from datetime import datetime
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest

from tests.testbed.wait import until_pilot
from tui.app import StacktopApp
from tui.collectors.base import BaseCollector
from tui.config import Config
from tui.models.finding import Finding
from tui.models.observation import Observation
from tui.screens.finding import FindingScreen
from tui.screens.help import HelpScreen
from tui.screens.host import HostScreen
from tui.uistate import UIState, state_path
from tui.widgets.breadcrumb import Breadcrumb
from tui.widgets.findings_pane import BURST_S, FindingsPane, row_key
from tui.widgets.key_scroll import KeyScroll

NOW = datetime(2026, 3, 1, 14, 2, 10).timestamp()


def crit(subject: str) -> Finding:
    return Finding("critical", "nova.service_enabled_but_down", subject, f"nova-compute on {subject} is down",
                   {"host": subject}, next_step="look at it")


class Fixed(BaseCollector):
    name = "services"
    interval = 0.2
    timeout = 5.0

    def __init__(self, findings: list[Finding]) -> None:
        self.out = findings

    async def collect(self) -> dict[str, Any]:
        return {"ok": True}

    def findings(self, snapshot: Any, now: datetime) -> list[Finding]:
        return list(self.out)


def status_line(app: StacktopApp) -> str:
    return app.screen.query_one(Breadcrumb).shown_text


def command_line(app: StacktopApp) -> Any:
    return app.screen_stack[0].query_one("#command")


# ----- 2. notices never cover data ------------------------------------------------------------------------------

async def test_a_burst_of_new_criticals_is_one_summary_on_the_status_line() -> None:
    clock = [NOW]
    app = StacktopApp(Config(), collectors=[], clock=lambda: clock[0])
    async with app.run_test(size=(160, 48)) as pilot:
        pane = app.query_one(FindingsPane)
        for i, seconds in enumerate((0, 20, 30)):  # three criticals within a minute of each other
            clock[0] = NOW + seconds
            pane.findings = [crit(f"compute-0{j}") for j in range(i + 1)]
            pane._pending_toast = {pane.findings[-1].key: pane.findings[-1]}
            pane._flush_toast()
        await pilot.pause()
        assert pane.toasts[-1].startswith("3 new critical findings since 14:02:10"), pane.toasts
        line = status_line(app)
        assert "new critical: 3 new critical findings since 14:02:10" in line, line
        clock[0] += BURST_S + 1  # the next one, a minute after: a notice of its own
        pane.findings = [*pane.findings, crit("compute-09")]
        pane._pending_toast = {pane.findings[-1].key: pane.findings[-1]}
        pane._flush_toast()
        await pilot.pause()
        assert pane.toasts[-1].startswith("nova.service_enabled_but_down compute-09:"), pane.toasts


@pytest.mark.parametrize("line, error", [
    ("bogus", "unknown command :bogus"),
    ("cloud nope", ":cloud nope: no such cloud"),
])
async def test_a_commands_error_is_shown_in_the_command_line_itself(line: str, error: str) -> None:
    app = StacktopApp(Config(), collectors=[])
    async with app.run_test(size=(120, 34)) as pilot:
        await pilot.press("colon", *line, "enter")
        await pilot.pause()
        box = command_line(app)
        assert box.has_class("-shown") and box.value == line, "the line stays open with what was typed"
        assert box.border_title is not None and error in str(box.border_title), box.border_title
        assert not [n for n in app._notifications if error in str(n.message)], "not a notice elsewhere"
        await pilot.press("backspace")
        await pilot.pause()
        assert not box.border_title, "editing the line clears its error"
        await pilot.press("escape")
        assert not box.has_class("-shown")


# ----- 4. k9s / htop habits ---------------------------------------------------------------------------------------

async def test_j_and_k_move_the_cursor_in_a_table() -> None:
    findings = [crit(f"compute-0{i}") for i in range(4)]
    app = StacktopApp(Config(), collectors=[Fixed(findings)])
    async with app.run_test(size=(160, 48)) as pilot:
        pane = app.query_one(FindingsPane)
        await until_pilot(pilot, lambda: pane.table is not None and pane.table.row_count >= 4, "the rows")
        app.show_source("findings")
        await pilot.pause()
        assert pane.table is not None and pane.table.cursor_row == 0
        await pilot.press("j", "j")
        assert pane.table.cursor_row == 2
        await pilot.press("k")
        assert pane.table.cursor_row == 1


async def test_help_scrolls_at_once_and_lists_the_screens_own_keys() -> None:
    finding = crit("compute-01")
    app = StacktopApp(Config(), collectors=[Fixed([finding])])
    async with app.run_test(size=(100, 30)) as pilot:
        pane = app.query_one(FindingsPane)
        await until_pilot(pilot, lambda: finding in pane.findings, "the finding")
        app.push_screen(FindingScreen(row_key(finding)))
        await pilot.pause()
        await pilot.press("question_mark")
        await pilot.pause()
        assert isinstance(app.screen, HelpScreen)
        scroll = app.screen.query_one(KeyScroll)
        assert app.screen.focused is scroll, "the help has the keys at once"
        text = str(app.screen.query_one("#help-text").render())
        own = text[text.index("On this screen"):text.index("Keys")]
        assert "copy the command the next step names" in own and "enter" in own, own
        await pilot.press("j", "j", "pagedown")
        await pilot.pause()
        assert scroll.scroll_y > 0, "j and page down scroll it, no tab first"
        await pilot.press("q")
        await pilot.pause()
        assert isinstance(app.screen, FindingScreen), "q closes help"


async def test_tab_completes_hosts_servers_and_commands_with_a_candidate_list(monkeypatch: pytest.MonkeyPatch
                                                                               ) -> None:
    import tui.screens.known_hosts as known

    monkeypatch.setattr(known, "known_hosts", lambda app: {"compute-01", "compute-02", "ctl-1"})
    app = StacktopApp(Config(), collectors=[])
    async with app.run_test(size=(120, 34)) as pilot:
        servers = [SimpleNamespace(name="web-1", id="7f01ec30-aaaa"), SimpleNamespace(name="web-2", id="8e2-bb")]
        app.clouds[app.active_cloud].observations["instances"] = Observation(
            "instances", snapshot=SimpleNamespace(servers=servers))
        box = command_line(app) if app._inputs_mounted else None
        await pilot.press("colon", *"host comp", "tab")
        box = command_line(app)
        assert box.value == "host compute-0", box.value
        assert "compute-01" in str(box.border_title) and "compute-02" in str(box.border_title), box.border_title
        await pilot.press("escape", "colon", *"server we", "tab")
        assert box.value == "server web-", box.value
        assert "web-1" in str(box.border_title) and "web-2" in str(box.border_title)
        await pilot.press("escape", "colon", *"tr", "tab")
        assert box.value == "trace-", box.value
        for name in ("trace-boot", "trace-down", "trace-request"):
            assert name in str(box.border_title), box.border_title


async def test_q_goes_back_on_a_drill_down_and_Q_quits() -> None:
    app = StacktopApp(Config(), collectors=[])
    async with app.run_test(size=(120, 34)) as pilot:
        app.push_screen(HostScreen("compute-01"))
        await pilot.pause()
        await pilot.press("q")
        await pilot.pause()
        assert app.is_running and len(app.screen_stack) == 1, "q went back to the dashboard"
        app.push_screen(HostScreen("compute-01"))
        await pilot.pause()
        await pilot.press("Q")
        await pilot.pause()
    assert app.return_code == 0 and not app.is_running


async def test_ctrl_c_says_which_keys_quit_in_plain_words() -> None:
    app = StacktopApp(Config(), collectors=[])
    async with app.run_test(size=(120, 34)) as pilot:
        await pilot.press("ctrl+c")
        await pilot.pause()
        line = status_line(app)
        assert "ctrl+q, Q or :q quits" in line and "[b]" not in line, line


async def test_a_clock_and_t_toggles_times_and_ages() -> None:
    clock = [NOW]
    finding = crit("compute-01")
    app = StacktopApp(Config(), collectors=[Fixed([finding])], clock=lambda: clock[0])
    async with app.run_test(size=(160, 48)) as pilot:
        pane = app.query_one(FindingsPane)
        await until_pilot(pilot, lambda: finding in pane.findings, "the finding")
        assert "14:02 UTC" in str(app.query_one("#topbar").render()), "the clock"
        table = pane.table
        assert table is not None

        def since() -> str:
            return str(table.get_cell(row_key(finding), table.ordered_columns[-1].key))

        assert since() == "14:02:10"
        clock[0] += 300
        await pilot.press("t")
        await pilot.pause()
        assert since() == "5m ago", since()
        assert "14:07 UTC · ages (t)" in str(app.query_one("#topbar").render())
        await pilot.press("t")
        await pilot.pause()
        assert since() == "14:02:10"


async def test_the_theme_picked_is_remembered_in_a_state_file(tmp_path: Path) -> None:
    state = UIState(state_path({"XDG_CONFIG_HOME": str(tmp_path)}))
    app = StacktopApp(Config(), collectors=[])
    app.ui_state = state
    async with app.run_test(size=(120, 34)) as pilot:
        app.theme = "nord"  # what the palette's Theme does
        await pilot.pause()
    assert state.path == tmp_path / "stacktop" / "state.toml"
    assert state.read_theme() == "nord"
    again = StacktopApp(Config(), collectors=[])
    again.ui_state = state
    async with again.run_test(size=(120, 34)) as pilot:
        await pilot.pause()
        assert again.theme == "nord", "read at start"


def test_a_broken_state_file_is_ignored(tmp_path: Path) -> None:
    path = tmp_path / "state.toml"
    path.write_text("[ui\ntheme = ", encoding="utf-8")
    assert UIState(path).read_theme() is None
    assert UIState(tmp_path / "missing.toml").read_theme() is None


async def test_esc_closes_the_palettes_keys_panel() -> None:
    app = StacktopApp(Config(), collectors=[])
    async with app.run_test(size=(120, 34)) as pilot:
        app.action_show_help_panel()
        await pilot.pause()
        assert app.screen.query("HelpPanel")
        await pilot.press("escape")
        await pilot.pause()
        assert not app.screen.query("HelpPanel")
