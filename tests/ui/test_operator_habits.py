"""Habits operators bring from k9s / htop: a legend for the marks in help, one time zone (UTC, said in the
header), and a focused-pane border that never reads as critical, in every theme."""

from __future__ import annotations

import time

import pytest

from tui.app import StacktopApp
from tui.config import Config
from tui.freshness import clock_time
from tui.screens.help import HelpScreen
from tui.widgets.focus_colour import FALLBACK, ansi16, focus_colour, reads_as_alarm


async def test_help_has_a_legend_for_the_marks() -> None:
    app = StacktopApp(Config(), collectors=[])
    async with app.run_test(size=(160, 48)) as pilot:
        await pilot.press("question_mark")
        await pilot.pause()
        assert isinstance(app.screen, HelpScreen)
        text = str(app.screen.query_one("#help-text").render())
        legend = text[text.index("Marks"):]
        for mark in ("!! name", "~4m", "▲", "…", "UTC"):
            assert mark in legend, (mark, legend)


async def test_header_says_utc_and_pane_times_are_utc(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("TZ", "America/New_York")
    time.tzset()
    try:
        assert clock_time(0) == "00:00:00", "UTC, whatever the local zone"
        app = StacktopApp(Config(), collectors=[], clock=lambda: 3 * 3600 + 25 * 60 + 7)
        async with app.run_test(size=(120, 34)) as pilot:
            await pilot.pause()
            assert "03:25 UTC" in str(app.query_one("#topbar").render()), "the clock, in UTC, as it says"
    finally:
        monkeypatch.delenv("TZ")
        time.tzset()


async def test_focused_pane_border_is_never_red_in_any_theme() -> None:
    app = StacktopApp(Config(), collectors=[])
    async with app.run_test(size=(120, 34)) as pilot:
        for theme in sorted(app.available_themes):
            app.theme = theme
            await pilot.pause()
            pane = app.active_pane()
            assert pane is not None and pane.has_class("-active")
            colour = pane.styles.border_top[1]
            variables = app.get_css_variables()
            assert not reads_as_alarm(colour.hex), (theme, colour.hex)
            assert colour.hex.lower() != variables["error"].lower()[:7], theme
            assert ansi16(colour) not in (1, 9), (theme, "red in 16 colours", colour.hex)
        app.theme = "stacktop-high-contrast"
        await pilot.pause()
        assert app.active_pane().styles.border_top[1].hex.lower() == "#00ffff"  # type: ignore[union-attr]


def test_focus_colour_falls_back_to_blue_when_the_primary_reads_as_an_alarm() -> None:
    assert focus_colour("#0178D4") == "#0178D4"
    for alarm in ("#ffa62b", "#ff0000", "#f92672", "#ffff00", "ansi_red", "ansi_bright_yellow"):
        assert focus_colour(alarm) == FALLBACK, alarm
    assert not reads_as_alarm(FALLBACK)
