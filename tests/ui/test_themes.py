"""Themes: a high-contrast theme is registered; NO_COLOR is honoured (monochrome filter)."""

from __future__ import annotations

import pytest

from tui.app import StacktopApp
from tui.config import Config


async def test_high_contrast_theme_is_available() -> None:
    app = StacktopApp(Config(), collectors=[])
    async with app.run_test(size=(80, 24)) as pilot:
        assert "stacktop-high-contrast" in app.available_themes
        app.theme = "stacktop-high-contrast"
        await pilot.pause()
        assert app.current_theme.background == "#000000"


async def test_no_color_is_honoured(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("NO_COLOR", "1")
    app = StacktopApp(Config(), collectors=[])
    async with app.run_test(size=(80, 24)):
        assert app.no_color
